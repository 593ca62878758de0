#include "Memory/Store.h"
#include "Memory/Hash.h"
#include "Memory/Schema.h"
#include "Memory/Signature.h"

#include "MemoryTestUtil.h"

using namespace accelopt;
using namespace accelopt::memory;
using namespace accelopt::memory::test;
using nlohmann::json;

namespace {

std::unique_ptr<Store> openStore(const std::string &path, int busyMs = 5000) {
  StoreOptions o;
  o.busyTimeoutMs = busyMs;
  auto s = Store::open(path, o);
  if (!s) {
    ADD_FAILURE() << llvm::toString(s.takeError());
    return nullptr;
  }
  return std::move(*s);
}

int64_t addKernel(Store &s, const std::string &name = "kernel") {
  KernelInfo info{name, "k/" + name + ".py", sha256Hex(name), "affine{ nl.load(hbm>sbuf) }"};
  auto id = s.upsertKernel(info);
  EXPECT_TRUE(bool(id));
  return id ? *id : 0;
}

NewCandidate candidate(int64_t kernel, std::optional<int64_t> run, const std::string &source, int iteration = 0,
                       std::optional<int64_t> parent = std::nullopt) {
  NewCandidate c;
  c.kernel = kernel;
  c.run = run;
  c.parent = parent;
  c.ops = json::array({{{"op", "split"}, {"loop", "L" + std::to_string(iteration)}, {"factor", 2}}});
  c.sourceHash = sourceHash(source);
  c.status = CandidateStatus::Correct;
  c.iteration = iteration;
  return c;
}

TEST(Hash, NormalisationIgnoresCommentsAndBlankLines) {
  EXPECT_EQ(sourceHash("a = 1  # one\n\n\nb = '#x'\n"), sourceHash("a = 1\nb = '#x'   \n"));
  EXPECT_NE(sourceHash("b = '#x'\n"), sourceHash("b = '#y'\n"));
  EXPECT_EQ(normalizeSource("s = \"\"\"doc # kept\n\n\"\"\"  # gone\n"), "s = \"\"\"doc # kept\n\n\"\"\"\n");
  EXPECT_EQ(opsHash(json::parse(R"([{"op":"split","loop":"L1"}])")),
            opsHash(json::parse(R"([{"loop":"L1","op":"split"}])")));
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Store, CreatesSchemaWithWal) {
  ScratchDir dir;
  auto s = openStore(dir.file("sub/dir/memory.db"));
  ASSERT_TRUE(s);
  auto v = s->schemaVersion();
  ASSERT_TRUE(bool(v));
  EXPECT_EQ(*v, CurrentSchemaVersion);
  for (const char *table :
       {"kernels", "runs", "candidates", "profiles", "experiences", "patterns", "beams", "schema_version"}) {
    auto n = s->database().queryInt(std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + table + "'");
    ASSERT_TRUE(bool(n));
    EXPECT_EQ(*n, 1) << table;
  }
  auto mode = s->database().prepare("PRAGMA journal_mode");
  ASSERT_TRUE(bool(mode));
  ASSERT_TRUE(bool(mode->step()));
  EXPECT_EQ(mode->getText(0), "wal");
  auto c = s->counts();
  ASSERT_TRUE(bool(c));
  EXPECT_EQ(c->kernels + c->runs + c->candidates + c->patterns, 0);
  // Reopening does not migrate again.
  s.reset();
  auto again = openStore(dir.file("sub/dir/memory.db"));
  ASSERT_TRUE(again);
  auto rows = again->database().queryInt("SELECT count(*) FROM schema_version");
  ASSERT_TRUE(bool(rows));
  EXPECT_EQ(*rows, CurrentSchemaVersion);
}

TEST(Store, MigratesFromVersion1) {
  ScratchDir dir;
  std::string path = dir.file("v1.db");
  {
    auto db = Database::open(path);
    ASSERT_TRUE(bool(db));
    ASSERT_FALSE(bool(migrate(**db, 1)));
    auto v = schemaVersion(**db);
    ASSERT_TRUE(bool(v));
    ASSERT_EQ(*v, 1);
    ASSERT_FALSE(bool((*db)->exec("INSERT INTO kernels(name, path, source_hash) VALUES ('old', 'o.py', 'h');"
                                  "INSERT INTO experiences(kernel, ops, speedup) VALUES (1, '[]', 1.5);")));
  }
  auto s = openStore(path);
  ASSERT_TRUE(s);
  auto v = s->schemaVersion();
  ASSERT_TRUE(bool(v));
  EXPECT_EQ(*v, 2);
  auto kernels = s->listKernels();
  ASSERT_TRUE(bool(kernels));
  ASSERT_EQ(kernels->size(), 1u);
  EXPECT_EQ((*kernels)[0].name, "old");
  auto exps = s->experiences();
  ASSERT_TRUE(bool(exps));
  ASSERT_EQ(exps->size(), 1u);
  EXPECT_EQ((*exps)[0].iteration, 0); // the column added by migration 2
  auto n = s->database().queryInt("SELECT count(*) FROM patterns");
  ASSERT_TRUE(bool(n));
}

TEST(Store, NewerSchemaIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("new.db");
  {
    auto s = openStore(path);
    ASSERT_TRUE(s);
    ASSERT_FALSE(bool(s->database().exec("INSERT INTO schema_version(version) VALUES (7)")));
  }
  auto s = Store::open(path);
  ASSERT_FALSE(bool(s));
  llvm::Error err = s.takeError();
  EXPECT_EQ(errorKind(err), MemoryError::NewerSchema);
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("schema version 7 is newer than this accelopt supports (2)"), std::string::npos) << msg;
}

TEST(Store, KernelsAreUpserted) {
  auto s = openStore(":memory:");
  ASSERT_TRUE(s);
  int64_t a = addKernel(*s, "a");
  EXPECT_EQ(addKernel(*s, "a"), a);
  EXPECT_NE(addKernel(*s, "b"), a);
  auto k = s->getKernel(a);
  ASSERT_TRUE(bool(k) && *k);
  EXPECT_EQ((*k)->name, "a");
  EXPECT_EQ((*k)->signature, "affine{ nl.load(hbm>sbuf) }");
  auto file = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  KernelInfo info = kernelInfoOf(file.kernels[0]);
  EXPECT_EQ(info.name, "kernel");
  EXPECT_EQ(info.path, "silu.py");
  EXPECT_EQ(info.signature, computeSignature(file.kernels[0]));
  EXPECT_EQ(info.sourceHash, sourceHash(file.source().text()));
}

TEST(Store, InsertDedupsByNormalisedHash) {
  auto s = openStore(":memory:");
  ASSERT_TRUE(s);
  int64_t k = addKernel(*s);
  auto run = s->beginRun(k, {{"beam", 4}});
  ASSERT_TRUE(bool(run));
  NewCandidate c = candidate(k, *run, "x = 1\n");
  c.profiles.push_back({"sim-trn2", 0.5, {{"latency", 0.5}, {"backend", "sim-trn2"}}});
  auto first = s->insertCandidate(c);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  EXPECT_TRUE(first->inserted);
  // Same text up to a comment: the same candidate.
  auto second = s->insertCandidate(candidate(k, *run, "x = 1   # again\n", 1));
  ASSERT_TRUE(bool(second));
  EXPECT_FALSE(second->inserted);
  EXPECT_EQ(second->id, first->id);
  // Another kernel may hold the same text.
  int64_t k2 = addKernel(*s, "other");
  auto third = s->insertCandidate(candidate(k2, std::nullopt, "x = 1\n"));
  ASSERT_TRUE(bool(third));
  EXPECT_TRUE(third->inserted);
  // Refused candidates have no source hash and are never merged.
  NewCandidate refused = candidate(k, *run, "");
  refused.sourceHash.clear();
  refused.status = CandidateStatus::Refused;
  refused.error = "split L3 refused: trip count 3 not divisible by 2";
  auto r1 = s->insertCandidate(refused), r2 = s->insertCandidate(refused);
  ASSERT_TRUE(bool(r1) && bool(r2));
  EXPECT_TRUE(r1->inserted && r2->inserted);
  auto rec = s->getCandidate(r1->id);
  ASSERT_TRUE(bool(rec) && *rec);
  EXPECT_EQ((*rec)->status, CandidateStatus::Refused);
  EXPECT_EQ((*rec)->error, refused.error);
  EXPECT_EQ((*rec)->sourceHash, "");
  auto profiles = s->profilesOf(first->id);
  ASSERT_TRUE(bool(profiles));
  ASSERT_EQ(profiles->size(), 1u);
  EXPECT_EQ((*profiles)[0].backend, "sim-trn2");
  EXPECT_EQ((*profiles)[0].profile["latency"], 0.5);
  ASSERT_FALSE(bool(s->addProfile(first->id, {"sim-trn1", 0.25, json::object()}).takeError()));
  auto best = s->bestLatency(first->id);
  ASSERT_TRUE(bool(best) && *best);
  EXPECT_DOUBLE_EQ(**best, 0.25);
  auto best2 = s->bestLatency(first->id, "sim-trn2");
  ASSERT_TRUE(bool(best2) && *best2);
  EXPECT_DOUBLE_EQ(**best2, 0.5);
  ASSERT_FALSE(bool(s->updateCandidateStatus(first->id, CandidateStatus::Incorrect, "mismatch at out[3]")));
  auto upd = s->getCandidate(first->id);
  ASSERT_TRUE(bool(upd) && *upd);
  EXPECT_EQ((*upd)->status, CandidateStatus::Incorrect);
  llvm::Error missing = s->updateCandidateStatus(999, CandidateStatus::Correct);
  EXPECT_EQ(errorKind(missing), MemoryError::NotFound);
  llvm::consumeError(std::move(missing));
  // Bad foreign keys are refused (foreign_keys = ON) and leave nothing behind.
  auto bad = s->insertCandidate(candidate(12345, std::nullopt, "y = 2\n"));
  ASSERT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
  auto c2 = s->counts();
  ASSERT_TRUE(bool(c2));
  EXPECT_EQ(c2->candidates, 4);
}

TEST(Store, LineageAndResumeState) {
  auto s = openStore(":memory:");
  ASSERT_TRUE(s);
  int64_t k = addKernel(*s);
  auto run = s->beginRun(k, {{"beam", 2}});
  ASSERT_TRUE(bool(run));
  auto root = s->insertCandidate(candidate(k, *run, "root\n", 0));
  ASSERT_TRUE(bool(root));
  auto child = s->insertCandidate(candidate(k, *run, "child\n", 1, root->id));
  ASSERT_TRUE(bool(child));
  auto grandchild = s->insertCandidate(candidate(k, *run, "grandchild\n", 2, child->id));
  ASSERT_TRUE(bool(grandchild));
  auto sibling = s->insertCandidate(candidate(k, *run, "sibling\n", 2, child->id));
  ASSERT_TRUE(bool(sibling));
  auto chain = s->lineage(grandchild->id);
  ASSERT_TRUE(bool(chain));
  ASSERT_EQ(chain->size(), 3u);
  EXPECT_EQ((*chain)[0].id, root->id);
  EXPECT_EQ((*chain)[1].id, child->id);
  EXPECT_EQ((*chain)[2].id, grandchild->id);
  auto none = s->lineage(4242);
  ASSERT_FALSE(bool(none));
  llvm::consumeError(none.takeError());

  ASSERT_FALSE(bool(s->recordBeam(*run, 1, {child->id})));
  ASSERT_FALSE(bool(s->recordBeam(*run, 2, {sibling->id, grandchild->id})));
  ASSERT_FALSE(bool(s->recordBeam(*run, 2, {grandchild->id, sibling->id}))); // replaces
  auto latest = s->latestRun(k, /*unfinishedOnly=*/true);
  ASSERT_TRUE(bool(latest) && *latest);
  EXPECT_EQ((*latest)->id, *run);
  EXPECT_EQ((*latest)->config["beam"], 2);
  auto state = s->loadRunState(*run);
  ASSERT_TRUE(bool(state)) << llvm::toString(state.takeError());
  EXPECT_EQ(state->lastIteration, 2);
  EXPECT_EQ(state->beamIteration, 2);
  ASSERT_EQ(state->beam.size(), 2u);
  EXPECT_EQ(state->beam[0].id, grandchild->id);
  EXPECT_EQ(state->beam[1].id, sibling->id);
  EXPECT_EQ(state->evaluatedHashes.size(), 4u);
  EXPECT_TRUE(state->evaluatedHashes.count(sourceHash("child\n")));
  EXPECT_EQ(state->evaluatedOps.size(), 3u); // iterations 0, 1, 2 have distinct ops
  ASSERT_FALSE(bool(s->setRunStatus(*run, RunStatus::Finished)));
  auto after = s->latestRun(k, true);
  ASSERT_TRUE(bool(after));
  EXPECT_FALSE(after->has_value());
  auto missing = s->loadRunState(99);
  ASSERT_FALSE(bool(missing));
  llvm::consumeError(missing.takeError());
}

TEST(Store, PatternsAreRetrievedByStructure) {
  auto s = openStore(":memory:");
  ASSERT_TRUE(s);
  auto silu = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  auto renamed = parseKernel("silu2.py", renamedSilu());
  auto rms = parseKernel("rms.py", readSource("nkibench/kernels/rmsnorm_M256_N512.py"));
  const nki::Kernel &k = silu.kernels[0];
  auto p1 = generalisePattern(k, {json::parse(R"({"op":"unroll","loop":"h","factor":2})")});
  auto p2 = generalisePattern(k, {json::parse(R"({"op":"interchange","outer":"L1","inner":"L2"})")});
  auto p3 = generalisePattern(rms.kernels[0], {json::parse(R"({"op":"split","loop":"L0","factor":2})")});
  ASSERT_TRUE(p1 && p2 && p3);
  int64_t kid = addKernel(*s);
  auto id1 = s->addPattern(*p1, kid), id2 = s->addPattern(*p2), id3 = s->addPattern(*p3);
  ASSERT_TRUE(id1 && id2 && id3);
  auto dup = s->addPattern(*p1);
  ASSERT_TRUE(bool(dup));
  EXPECT_EQ(*dup, *id1);
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(bool(s->recordPatternTry(*id2, true)));
  ASSERT_FALSE(bool(s->recordPatternTry(*id1, false)));
  llvm::Error err = s->recordPatternTry(777, true);
  EXPECT_EQ(errorKind(err), MemoryError::NotFound);
  llvm::consumeError(std::move(err));

  // The renamed copy has the same signature: exact matches, best win rate first.
  PatternQuery q;
  q.minSimilarity = 0.0;
  auto found = s->findPatterns(computeSignature(renamed.kernels[0]), q);
  ASSERT_TRUE(bool(found));
  ASSERT_EQ(found->size(), 3u);
  EXPECT_EQ((*found)[0].record.id, *id2);
  EXPECT_TRUE((*found)[0].exact);
  EXPECT_EQ((*found)[0].record.wins, 3);
  EXPECT_EQ((*found)[1].record.id, *id1);
  EXPECT_EQ((*found)[2].record.id, *id3);
  EXPECT_FALSE((*found)[2].exact);
  EXPECT_LT((*found)[2].similarity, 1.0);
  // A high similarity bar leaves the exact matches only.
  q.minSimilarity = 0.99;
  auto strict = s->findPatterns(computeSignature(renamed.kernels[0]), q);
  ASSERT_TRUE(bool(strict));
  EXPECT_EQ(strict->size(), 2u);
  // Retrieved patterns instantiate on the new kernel.
  auto inst = instantiatePattern((*found)[0].record.pattern, renamed.kernels[0]);
  ASSERT_TRUE(bool(inst));
  ASSERT_FALSE(inst->empty());
  EXPECT_EQ((*inst)[0].ops[0], json::parse(R"({"op":"interchange","outer":"L1","inner":"L2"})"));
  // Retrieval and instantiation in one call, on the renamed kernel.
  auto sugg = s->suggest(renamed.kernels[0], q);
  ASSERT_TRUE(bool(sugg)) << llvm::toString(sugg.takeError());
  ASSERT_EQ(sugg->size(), 2u);
  EXPECT_EQ((*sugg)[0].pattern, *id2);
  EXPECT_EQ(json((*sugg)[0].ops), json::parse(R"([{"op":"interchange","outer":"L1","inner":"L2"}])"));
  EXPECT_EQ((*sugg)[1].pattern, *id1);
  EXPECT_EQ(json((*sugg)[1].ops), json::parse(R"([{"op":"unroll","loop":"L2","factor":2}])"));
  EXPECT_DOUBLE_EQ((*sugg)[0].similarity, 1.0);
  EXPECT_GT((*sugg)[0].winRate, (*sugg)[1].winRate);
  auto rid = s->recordKernel(renamed.kernels[0]);
  ASSERT_TRUE(bool(rid));
  auto rk = s->getKernel(*rid);
  ASSERT_TRUE(bool(rk) && *rk);
  EXPECT_EQ((*rk)->name, "silu_kernel");
  EXPECT_EQ((*rk)->signature, computeSignature(renamed.kernels[0]));
  auto rec = s->getPattern(*id1);
  ASSERT_TRUE(bool(rec) && *rec);
  EXPECT_EQ((*rec)->sourceKernel, kid);
  EXPECT_EQ((*rec)->tries, 1);
  EXPECT_EQ((*rec)->pattern.opsKey(), p1->opsKey());
  EXPECT_EQ((*rec)->description, p1->description());
}

TEST(Store, PruneKeepsExperiencesBestAndLineage) {
  ScratchDir dir;
  auto s = openStore(dir.file("prune.db"));
  ASSERT_TRUE(s);
  int64_t k = addKernel(*s);
  auto run = s->beginRun(k, json::object());
  ASSERT_TRUE(bool(run));
  auto mk = [&](const char *src, int it, std::optional<int64_t> parent, double latency,
                CandidateStatus st = CandidateStatus::Correct) {
    NewCandidate c = candidate(k, *run, src, it, parent);
    c.status = st;
    c.profiles.push_back({"sim-trn2", latency, json::object()});
    auto r = s->insertCandidate(c);
    EXPECT_TRUE(bool(r));
    return r ? r->id : 0;
  };
  int64_t root = mk("root\n", 0, std::nullopt, 10);
  int64_t a = mk("a\n", 1, root, 9);
  int64_t best = mk("best\n", 2, a, 5);
  int64_t wrongFast = mk("wrong\n", 2, a, 1, CandidateStatus::Incorrect);
  int64_t slow = mk("slow\n", 1, root, 20);
  int64_t expFrom = mk("e1\n", 1, root, 12);
  int64_t expTo = mk("e2\n", 2, expFrom, 6);
  ExperiencePair pair{expFrom, expTo, 12, 6, json::array(), "halved"};
  ASSERT_TRUE(bool(s->addExperiences(k, 2, {pair}, ExperienceConfig{})));
  ASSERT_FALSE(bool(s->setRunStatus(*run, RunStatus::Finished)));
  auto stats = s->prune();
  ASSERT_TRUE(bool(stats)) << llvm::toString(stats.takeError());
  EXPECT_EQ(stats->candidatesRemoved, 2); // wrongFast, slow
  EXPECT_EQ(stats->profilesRemoved, 2);
  for (int64_t id : {root, a, best, expFrom, expTo}) {
    auto c = s->getCandidate(id);
    ASSERT_TRUE(bool(c));
    EXPECT_TRUE(c->has_value()) << id;
  }
  for (int64_t id : {wrongFast, slow}) {
    auto c = s->getCandidate(id);
    ASSERT_TRUE(bool(c));
    EXPECT_FALSE(c->has_value()) << id;
  }
  auto ok = s->integrityCheck();
  ASSERT_TRUE(bool(ok));
  EXPECT_EQ(*ok, "ok");
}

TEST(Store, PruneSparesRunningRuns) {
  auto s = openStore(":memory:");
  ASSERT_TRUE(s);
  int64_t k = addKernel(*s);
  auto run = s->beginRun(k, json::object());
  ASSERT_TRUE(bool(run));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(bool(s->insertCandidate(candidate(k, *run, "v" + std::to_string(i), i))));
  auto stats = s->prune();
  ASSERT_TRUE(bool(stats));
  EXPECT_EQ(stats->candidatesRemoved, 0);
}

TEST(Store, ExportImportRoundTrip) {
  ScratchDir dir;
  auto s = openStore(dir.file("a.db"));
  ASSERT_TRUE(s);
  int64_t k = addKernel(*s);
  auto run = s->beginRun(k, {{"beam", 2}, {"iterations", 3}});
  ASSERT_TRUE(bool(run));
  NewCandidate c0 = candidate(k, *run, "root\n", 0);
  c0.profiles.push_back({"sim-trn1", 2.0, {{"latency", 2.0}, {"hbm_read_bytes", 1024}}});
  auto root = s->insertCandidate(c0);
  ASSERT_TRUE(bool(root));
  NewCandidate c1 = candidate(k, *run, "child\n", 1, root->id);
  c1.profiles.push_back({"sim-trn1", 1.0, {{"latency", 1.0}}});
  auto child = s->insertCandidate(c1);
  ASSERT_TRUE(bool(child));
  ASSERT_FALSE(bool(s->recordBeam(*run, 1, {child->id})));
  ASSERT_TRUE(bool(
      s->addExperiences(k, 1, {{root->id, child->id, 2.0, 1.0, c1.ops, "split halves the DMA"}}, ExperienceConfig{})));
  auto silu = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  auto p = generalisePattern(silu.kernels[0], {json::parse(R"({"op":"unroll","loop":"h","factor":2})")});
  ASSERT_TRUE(bool(p));
  auto pid = s->addPattern(*p, k);
  ASSERT_TRUE(bool(pid));
  ASSERT_FALSE(bool(s->recordPatternTry(*pid, true)));

  std::string file = dir.file("export/mem.json");
  llvm::sys::fs::create_directories(dir.file("export"));
  ASSERT_FALSE(bool(s->exportToFile(file)));
  auto docA = s->exportJson();
  ASSERT_TRUE(bool(docA));
  EXPECT_EQ((*docA)["candidates"].size(), 2u);
  EXPECT_EQ((*docA)["candidates"][1]["ops"][0]["op"], "split");

  auto t = openStore(dir.file("b.db"));
  ASSERT_TRUE(t);
  auto stats = t->importFromFile(file);
  ASSERT_TRUE(bool(stats)) << llvm::toString(stats.takeError());
  EXPECT_EQ(stats->candidates, 2);
  EXPECT_EQ(stats->profiles, 2);
  EXPECT_EQ(stats->patterns, 1);
  auto docB = t->exportJson();
  ASSERT_TRUE(bool(docB));
  EXPECT_EQ(*docA, *docB);
  // Importing again merges everything.
  auto again = t->importFromFile(file);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(again->candidates + again->kernels + again->runs + again->patterns + again->experiences, 0);
  auto docC = t->exportJson();
  ASSERT_TRUE(bool(docC));
  EXPECT_EQ(*docA, *docC);
  // Into a memory with other rows: ids are remapped, lineage follows.
  auto u = openStore(dir.file("c.db"));
  ASSERT_TRUE(u);
  int64_t other = addKernel(*u, "other");
  ASSERT_TRUE(bool(u->insertCandidate(candidate(other, std::nullopt, "o1\n"))));
  ASSERT_TRUE(bool(u->insertCandidate(candidate(other, std::nullopt, "o2\n"))));
  auto st = u->importJson(*docA);
  ASSERT_TRUE(bool(st)) << llvm::toString(st.takeError());
  auto importedChild = u->findCandidateByHash(2, sourceHash("child\n"));
  ASSERT_TRUE(bool(importedChild) && *importedChild);
  ASSERT_TRUE((*importedChild)->parent.has_value());
  auto parent = u->getCandidate(*(*importedChild)->parent);
  ASSERT_TRUE(bool(parent) && *parent);
  EXPECT_EQ((*parent)->sourceHash, sourceHash("root\n"));
  auto ok = u->integrityCheck();
  ASSERT_TRUE(bool(ok));
  EXPECT_EQ(*ok, "ok");
  // Garbage is refused without touching the memory.
  auto bad = u->importJson(json::parse(R"({"format":"something else"})"));
  ASSERT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
  auto newer = u->importJson(json::parse(R"({"format":"accelopt-memory","schema_version":9})"));
  ASSERT_FALSE(bool(newer));
  llvm::Error e = newer.takeError();
  EXPECT_EQ(errorKind(e), MemoryError::NewerSchema);
  llvm::consumeError(std::move(e));
}

TEST(Store, DefaultPath) {
  ::unsetenv("ACCELOPT_MEMORY");
  EXPECT_EQ(Store::defaultPath(), ".accelopt/memory.db");
  ::setenv("ACCELOPT_MEMORY", "/tmp/x.db", 1);
  EXPECT_EQ(Store::defaultPath(), "/tmp/x.db");
  ::unsetenv("ACCELOPT_MEMORY");
}

} // namespace
