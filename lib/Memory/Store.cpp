#include "Memory/Store.h"

#include "Memory/Hash.h"
#include "Memory/Signature.h"

#include "Syntax/SourceBuffer.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cstdlib>

namespace accelopt::memory {

using nlohmann::json;
using Lock = std::lock_guard<std::recursive_mutex>;

std::string_view candidateStatusName(CandidateStatus s) {
  switch (s) {
  case CandidateStatus::Applied: return "applied";
  case CandidateStatus::Refused: return "refused";
  case CandidateStatus::Incorrect: return "incorrect";
  case CandidateStatus::Correct: return "correct";
  }
  return "applied";
}

std::optional<CandidateStatus> parseCandidateStatus(llvm::StringRef s) {
  for (auto st :
       {CandidateStatus::Applied, CandidateStatus::Refused, CandidateStatus::Incorrect, CandidateStatus::Correct})
    if (std::string_view(s.data(), s.size()) == candidateStatusName(st)) return st;
  return std::nullopt;
}

std::string_view runStatusName(RunStatus s) {
  switch (s) {
  case RunStatus::Running: return "running";
  case RunStatus::Finished: return "finished";
  case RunStatus::Failed: return "failed";
  case RunStatus::Interrupted: return "interrupted";
  }
  return "running";
}

std::optional<RunStatus> parseRunStatus(llvm::StringRef s) {
  for (auto st : {RunStatus::Running, RunStatus::Finished, RunStatus::Failed, RunStatus::Interrupted})
    if (std::string_view(s.data(), s.size()) == runStatusName(st)) return st;
  return std::nullopt;
}

KernelInfo kernelInfoOf(const nki::Kernel &k) {
  KernelInfo info;
  info.name = k.name;
  if (k.source) {
    info.path = k.source->path().str();
    info.sourceHash = sourceHash(k.source->text());
  }
  info.signature = computeSignature(k);
  return info;
}

namespace {

json parseJsonColumn(const std::string &text, json fallback) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

CandidateRecord readCandidate(const Statement &st) {
  // Columns: id, kernel, run, parent, ops, ops_hash, source_hash, status, error, iteration, created
  CandidateRecord c;
  c.id = st.getInt(0);
  c.kernel = st.getInt(1);
  c.run = st.getOptInt(2);
  c.parent = st.getOptInt(3);
  c.ops = parseJsonColumn(st.getText(4), json::array());
  c.opsHash = st.getText(5);
  c.sourceHash = st.getText(6);
  c.status = parseCandidateStatus(st.getText(7)).value_or(CandidateStatus::Applied);
  c.error = st.getText(8);
  c.iteration = int(st.getInt(9));
  c.created = st.getText(10);
  return c;
}

constexpr const char *CandidateColumns =
    "SELECT id, kernel, run, parent, ops, ops_hash, source_hash, status, error, iteration, created FROM candidates ";

RunRecord readRun(const Statement &st) {
  RunRecord r;
  r.id = st.getInt(0);
  r.kernel = st.getInt(1);
  r.started = st.getText(2);
  r.config = parseJsonColumn(st.getText(3), json::object());
  r.status = parseRunStatus(st.getText(4)).value_or(RunStatus::Running);
  return r;
}

constexpr const char *RunColumns = "SELECT id, kernel, started, config, status FROM runs ";

ExperienceRecord readExperience(const Statement &st) {
  ExperienceRecord e;
  e.id = st.getInt(0);
  e.kernel = st.getInt(1);
  e.from = st.getOptInt(2);
  e.to = st.getOptInt(3);
  e.ops = parseJsonColumn(st.getText(4), json::array());
  e.speedup = st.getDouble(5);
  e.summary = st.getText(6);
  e.iteration = int(st.getInt(7));
  e.created = st.getText(8);
  return e;
}

constexpr const char *ExperienceColumns =
    "SELECT id, kernel, from_candidate, to_candidate, ops, speedup, summary, iteration, created FROM experiences ";

constexpr const char *PatternColumns = "SELECT id, signature, ops, roles, description, source_kernel, "
                                       "source_experience, wins, tries, created, updated FROM patterns ";

llvm::Expected<PatternRecord> readPattern(const Statement &st) {
  PatternRecord p;
  p.id = st.getInt(0);
  p.pattern.signature = st.getText(1);
  json ops = parseJsonColumn(st.getText(2), json::array());
  for (const json &op : ops) p.pattern.ops.push_back(op);
  if (auto err = p.pattern.setRoles(parseJsonColumn(st.getText(3), json::object()))) return err;
  p.description = st.getText(4);
  p.sourceKernel = st.getOptInt(5);
  p.sourceExperience = st.getOptInt(6);
  p.wins = st.getInt(7);
  p.tries = st.getInt(8);
  p.created = st.getText(9);
  p.updated = st.getText(10);
  return p;
}

} // namespace

// ------------------------------------------------------------------- open

llvm::Expected<std::unique_ptr<Store>> Store::open(llvm::StringRef path, const StoreOptions &options) {
  if (!options.create && path != ":memory:" && !llvm::sys::fs::exists(path))
    return makeError(MemoryError::CannotOpen, path.str() + ": error: no memory database here");
  OpenOptions o;
  o.busyTimeoutMs = options.busyTimeoutMs;
  o.create = options.create;
  auto db = Database::open(path, o);
  if (!db) return db.takeError();
  if (auto err = migrate(**db)) return err;
  return std::unique_ptr<Store>(new Store(std::move(*db)));
}

std::string Store::defaultPath() {
  if (const char *env = std::getenv("ACCELOPT_MEMORY"); env && *env) return env;
  return ".accelopt/memory.db";
}

llvm::Expected<int> Store::schemaVersion() {
  Lock lock(Mutex);
  return memory::schemaVersion(*Db);
}

// ---------------------------------------------------------------- kernels

llvm::Expected<int64_t> Store::upsertKernel(const KernelInfo &info) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto find = Db->prepare("SELECT id, signature FROM kernels WHERE name = ? AND path = ? AND source_hash = ?");
  if (!find) return find.takeError();
  find->bindAll(info.name, info.path, info.sourceHash);
  auto row = find->step();
  if (!row) return row.takeError();
  int64_t id = 0;
  if (*row) {
    id = find->getInt(0);
    if (find->getText(1).empty() && !info.signature.empty()) {
      auto up = Db->prepare("UPDATE kernels SET signature = ? WHERE id = ?");
      if (!up) return up.takeError();
      up->bindAll(info.signature, id);
      if (auto err = up->run()) return err;
    }
  } else {
    auto ins = Db->prepare("INSERT INTO kernels(name, path, source_hash, signature) VALUES (?, ?, ?, ?)");
    if (!ins) return ins.takeError();
    ins->bindAll(info.name, info.path, info.sourceHash, info.signature);
    if (auto err = ins->run()) return err;
    id = Db->lastInsertId();
  }
  if (auto err = tx->commit()) return err;
  return id;
}

static KernelRecord readKernel(const Statement &st) {
  KernelRecord k;
  k.id = st.getInt(0);
  k.name = st.getText(1);
  k.path = st.getText(2);
  k.sourceHash = st.getText(3);
  k.signature = st.getText(4);
  k.created = st.getText(5);
  return k;
}

llvm::Expected<std::optional<KernelRecord>> Store::getKernel(int64_t id) {
  Lock lock(Mutex);
  auto st = Db->query("SELECT id, name, path, source_hash, signature, created FROM kernels WHERE id = ?", id);
  if (!st) return st.takeError();
  return st->readFirst(readKernel);
}

llvm::Expected<std::vector<KernelRecord>> Store::listKernels() {
  Lock lock(Mutex);
  auto st = Db->query("SELECT id, name, path, source_hash, signature, created FROM kernels ORDER BY id");
  if (!st) return st.takeError();
  return st->readAll(readKernel);
}

// ------------------------------------------------------------------- runs

llvm::Expected<int64_t> Store::beginRun(int64_t kernel, const json &config) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto st = Db->prepare("INSERT INTO runs(kernel, config) VALUES (?, ?)");
  if (!st) return st.takeError();
  st->bindAll(kernel, config.dump());
  if (auto err = st->run()) return err;
  int64_t id = Db->lastInsertId();
  if (auto err = tx->commit()) return err;
  return id;
}

llvm::Error Store::setRunStatus(int64_t run, RunStatus status) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto st = Db->prepare("UPDATE runs SET status = ? WHERE id = ?");
  if (!st) return st.takeError();
  st->bind(1, llvm::StringRef(runStatusName(status).data(), runStatusName(status).size())).bind(2, run);
  if (auto err = st->run()) return err;
  if (Db->changes() == 0) return makeError(MemoryError::NotFound, "error: no run r" + std::to_string(run));
  return tx->commit();
}

llvm::Expected<std::optional<RunRecord>> Store::getRun(int64_t id) {
  Lock lock(Mutex);
  auto st = Db->query(std::string(RunColumns) + "WHERE id = ?", id);
  if (!st) return st.takeError();
  return st->readFirst(readRun);
}

llvm::Expected<std::optional<RunRecord>> Store::latestRun(int64_t kernel, bool unfinishedOnly) {
  Lock lock(Mutex);
  std::string sql = std::string(RunColumns) + "WHERE kernel = ?" + (unfinishedOnly ? " AND status <> 'finished'" : "") +
                    " ORDER BY id DESC LIMIT 1";
  auto st = Db->query(sql, kernel);
  if (!st) return st.takeError();
  return st->readFirst(readRun);
}

llvm::Expected<std::vector<RunRecord>> Store::listRuns() {
  Lock lock(Mutex);
  auto st = Db->query(std::string(RunColumns) + "ORDER BY id");
  if (!st) return st.takeError();
  return st->readAll(readRun);
}

llvm::Error Store::recordBeam(int64_t run, int iteration, llvm::ArrayRef<int64_t> candidates) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto del = Db->prepare("DELETE FROM beams WHERE run = ? AND iteration = ?");
  if (!del) return del.takeError();
  del->bindAll(run, int64_t(iteration));
  if (auto err = del->run()) return err;
  auto ins = Db->prepare("INSERT INTO beams(run, iteration, rank, candidate) VALUES (?, ?, ?, ?)");
  if (!ins) return ins.takeError();
  for (size_t i = 0; i < candidates.size(); ++i) {
    ins->reset();
    ins->bindAll(run, int64_t(iteration), int64_t(i), candidates[i]);
    if (auto err = ins->run()) return err;
  }
  return tx->commit();
}

llvm::Expected<RunState> Store::loadRunState(int64_t runId) {
  Lock lock(Mutex);
  auto run = getRun(runId);
  if (!run) return run.takeError();
  if (!*run) return makeError(MemoryError::NotFound, "error: no run r" + std::to_string(runId));
  RunState state;
  state.run = **run;
  // Every source hash evaluated for this kernel (any run) can be skipped.
  {
    auto st =
        Db->query("SELECT source_hash FROM candidates WHERE kernel = ? AND source_hash IS NOT NULL", state.run.kernel);
    if (!st) return st.takeError();
    if (auto err = st->forEachRow([&] { state.evaluatedHashes.insert(st->getText(0)); })) return err;
  }
  {
    auto st = Db->query("SELECT ops_hash, iteration FROM candidates WHERE run = ?", runId);
    if (!st) return st.takeError();
    auto onRow = [&] {
      state.evaluatedOps.insert(st->getText(0));
      state.lastIteration = std::max(state.lastIteration, int(st->getInt(1)));
    };
    if (auto err = st->forEachRow(onRow)) return err;
  }
  auto it = Db->queryInt("SELECT coalesce(max(iteration), -1) FROM beams WHERE run = " + std::to_string(runId));
  if (!it) return it.takeError();
  state.beamIteration = int(*it);
  state.lastIteration = std::max(state.lastIteration, state.beamIteration);
  if (state.beamIteration >= 0) {
    auto st = Db->prepare("SELECT c.id, c.kernel, c.run, c.parent, c.ops, c.ops_hash, c.source_hash, c.status, "
                          "c.error, c.iteration, c.created FROM beams b JOIN candidates c ON c.id = b.candidate "
                          "WHERE b.run = ? AND b.iteration = ? ORDER BY b.rank");
    if (!st) return st.takeError();
    st->bindAll(runId, int64_t(state.beamIteration));
    auto beam = st->readAll(readCandidate);
    if (!beam) return beam.takeError();
    state.beam = std::move(*beam);
  }
  return state;
}

// ------------------------------------------------------------- candidates

llvm::Expected<InsertResult> Store::insertCandidate(const NewCandidate &c) {
  Lock lock(Mutex);
  if (!c.ops.is_array()) return makeError(MemoryError::BadInput, "error: candidate ops must be a JSON array");
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  InsertResult result;
  if (!c.sourceHash.empty()) {
    auto find = Db->prepare("SELECT id FROM candidates WHERE kernel = ? AND source_hash = ?");
    if (!find) return find.takeError();
    find->bindAll(c.kernel, c.sourceHash);
    auto row = find->step();
    if (!row) return row.takeError();
    if (*row) {
      result.id = find->getInt(0);
      return result; // nothing written; the transaction rolls back
    }
  }
  auto ins = Db->prepare("INSERT INTO candidates(run, kernel, parent, ops, ops_hash, source_hash, status, error, "
                         "iteration) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!ins) return ins.takeError();
  ins->bind(1, c.run).bind(2, c.kernel).bind(3, c.parent).bind(4, c.ops.dump()).bind(5, opsHash(c.ops));
  if (c.sourceHash.empty())
    ins->bindNull(6);
  else
    ins->bind(6, c.sourceHash);
  auto status = candidateStatusName(c.status);
  ins->bind(7, llvm::StringRef(status.data(), status.size())).bind(8, c.error).bind(9, int64_t(c.iteration));
  if (auto err = ins->run()) return err;
  result.id = Db->lastInsertId();
  result.inserted = true;
  for (const ProfileInput &p : c.profiles)
    if (auto id = addProfile(result.id, p); !id) return id.takeError();
  if (auto err = tx->commit()) return err;
  return result;
}

llvm::Error Store::updateCandidateStatus(int64_t id, CandidateStatus status, llvm::StringRef error) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto st = Db->prepare("UPDATE candidates SET status = ?, error = ? WHERE id = ?");
  if (!st) return st.takeError();
  auto name = candidateStatusName(status);
  st->bind(1, llvm::StringRef(name.data(), name.size())).bind(2, error).bind(3, id);
  if (auto err = st->run()) return err;
  if (Db->changes() == 0) return makeError(MemoryError::NotFound, "error: no candidate c" + std::to_string(id));
  return tx->commit();
}

llvm::Expected<int64_t> Store::addProfile(int64_t candidate, const ProfileInput &profile) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto st = Db->prepare("INSERT INTO profiles(candidate, backend, latency_ms, profile) VALUES (?, ?, ?, ?)");
  if (!st) return st.takeError();
  st->bind(1, candidate).bind(2, profile.backend).bind(3, profile.latencyMs).bind(4, profile.profile.dump());
  if (auto err = st->run()) return err;
  int64_t id = Db->lastInsertId();
  if (auto err = tx->commit()) return err;
  return id;
}

llvm::Expected<std::vector<CandidateRecord>> Store::queryCandidates(llvm::StringRef where, int64_t arg) {
  auto st = Db->query(std::string(CandidateColumns) + where.str(), arg);
  if (!st) return st.takeError();
  return st->readAll(readCandidate);
}

llvm::Expected<std::optional<CandidateRecord>> Store::getCandidate(int64_t id) {
  Lock lock(Mutex);
  auto rows = queryCandidates("WHERE id = ?", id);
  if (!rows) return rows.takeError();
  if (rows->empty()) return std::optional<CandidateRecord>();
  return std::optional<CandidateRecord>(rows->front());
}

llvm::Expected<std::optional<CandidateRecord>> Store::findCandidateByHash(int64_t kernel, llvm::StringRef hash) {
  Lock lock(Mutex);
  auto st = Db->query(std::string(CandidateColumns) + "WHERE kernel = ? AND source_hash = ?", kernel, hash);
  if (!st) return st.takeError();
  return st->readFirst(readCandidate);
}

llvm::Expected<std::vector<CandidateRecord>> Store::lineage(int64_t id) {
  Lock lock(Mutex);
  std::vector<CandidateRecord> chain;
  std::set<int64_t> seen;
  std::optional<int64_t> next = id;
  while (next && seen.insert(*next).second) {
    auto c = getCandidate(*next);
    if (!c) return c.takeError();
    if (!*c) {
      if (chain.empty()) return makeError(MemoryError::NotFound, "error: no candidate c" + std::to_string(id));
      break;
    }
    next = (*c)->parent;
    chain.push_back(std::move(**c));
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

llvm::Expected<std::vector<CandidateRecord>> Store::candidatesOfRun(int64_t run) {
  Lock lock(Mutex);
  return queryCandidates("WHERE run = ? ORDER BY id", run);
}

llvm::Expected<std::vector<ProfileRecord>> Store::profilesOf(int64_t candidate) {
  Lock lock(Mutex);
  auto st = Db->query("SELECT id, candidate, backend, latency_ms, profile FROM profiles WHERE candidate = ? "
                      "ORDER BY id",
                      candidate);
  if (!st) return st.takeError();
  return st->readAll([](const Statement &row) {
    ProfileRecord p;
    p.id = row.getInt(0);
    p.candidate = row.getInt(1);
    p.backend = row.getText(2);
    p.latencyMs = row.getOptDouble(3);
    p.profile = parseJsonColumn(row.getText(4), json::object());
    return p;
  });
}

llvm::Expected<std::optional<double>> Store::bestLatency(int64_t candidate, llvm::StringRef backend) {
  Lock lock(Mutex);
  auto st = Db->prepare("SELECT min(latency_ms) FROM profiles WHERE candidate = ? AND latency_ms IS NOT NULL "
                        "AND (? = '' OR backend = ?)");
  if (!st) return st.takeError();
  st->bind(1, candidate).bind(2, backend).bind(3, backend);
  auto row = st->step();
  if (!row) return row.takeError();
  if (!*row) return std::optional<double>();
  return st->getOptDouble(0);
}

// ------------------------------------------------------------ experiences

llvm::Expected<std::vector<int64_t>> Store::addExperiences(int64_t kernel, int iteration,
                                                           llvm::ArrayRef<ExperiencePair> pairs,
                                                           const ExperienceConfig &config) {
  Lock lock(Mutex);
  SelectedExperiences sel = selectExperiences(pairs, config);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto ins = Db->prepare("INSERT INTO experiences(kernel, from_candidate, to_candidate, ops, speedup, summary, "
                         "iteration) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!ins) return ins.takeError();
  // A resumed run summarises again the iteration it was killed in: an experience already stored for
  // the same step is kept once (reliability report D18).
  auto stored = Db->prepare("SELECT id FROM experiences WHERE kernel = ? AND from_candidate IS ? AND "
                            "to_candidate IS ? AND iteration = ? AND ops = ? AND speedup = ? AND summary = ?");
  if (!stored) return stored.takeError();
  std::vector<int64_t> ids;
  for (auto *list : {&sel.positive, &sel.negative})
    for (const ExperiencePair &p : *list) {
      ins->reset();
      std::optional<int64_t> from, to;
      if (p.from > 0) from = p.from;
      if (p.to > 0) to = p.to;
      stored->reset();
      stored->bind(1, kernel).bind(2, from).bind(3, to).bind(4, int64_t(iteration)).bind(5, p.ops.dump());
      stored->bind(6, p.speedup()).bind(7, p.summary);
      auto already = stored->step();
      if (!already) return already.takeError();
      if (*already) {
        ids.push_back(stored->getInt(0));
        continue;
      }
      ins->bind(1, kernel).bind(2, from).bind(3, to).bind(4, p.ops.dump()).bind(5, p.speedup()).bind(6, p.summary);
      ins->bind(7, int64_t(iteration));
      if (auto err = ins->run()) return err;
      ids.push_back(Db->lastInsertId());
    }
  // The bounded queue: keep the newest queueSize experiences.
  std::string scope = config.perKernelQueue ? "WHERE kernel = ?1" : "";
  auto trim =
      Db->prepare("DELETE FROM experiences " + std::string(config.perKernelQueue ? "WHERE kernel = ?1 AND" : "WHERE") +
                  " id NOT IN (SELECT id FROM experiences " + scope + " ORDER BY id DESC LIMIT ?2)");
  if (!trim) return trim.takeError();
  if (config.perKernelQueue) trim->bind(1, kernel);
  trim->bind(2, int64_t(config.queueSize));
  if (auto err = trim->run()) return err;
  if (auto err = tx->commit()) return err;
  // Ids trimmed right away (queueSize smaller than the selection) are not reported.
  std::vector<int64_t> kept;
  for (int64_t id : ids) {
    auto e = getExperience(id);
    if (!e) return e.takeError();
    if (*e) kept.push_back(id);
  }
  return kept;
}

llvm::Expected<std::vector<ExperienceRecord>> Store::experiences(int64_t kernel, size_t limit) {
  Lock lock(Mutex);
  std::string sql = std::string(ExperienceColumns) + (kernel ? "WHERE kernel = ?1 " : "WHERE ?1 = ?1 ") +
                    "ORDER BY id DESC" + (limit ? " LIMIT " + std::to_string(limit) : "");
  auto st = Db->query(sql, kernel);
  if (!st) return st.takeError();
  return st->readAll(readExperience);
}

llvm::Expected<std::optional<ExperienceRecord>> Store::getExperience(int64_t id) {
  Lock lock(Mutex);
  auto st = Db->query(std::string(ExperienceColumns) + "WHERE id = ?", id);
  if (!st) return st.takeError();
  return st->readFirst(readExperience);
}

// --------------------------------------------------------------- patterns

llvm::Expected<int64_t> Store::addPattern(const Pattern &pattern, std::optional<int64_t> sourceKernel,
                                          std::optional<int64_t> sourceExperience) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto ins = Db->prepare("INSERT INTO patterns(signature, ops, roles, description, source_kernel, "
                         "source_experience) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(signature, ops) DO NOTHING");
  if (!ins) return ins.takeError();
  ins->bind(1, pattern.signature).bind(2, pattern.opsKey()).bind(3, pattern.rolesJson().dump());
  ins->bind(4, pattern.description()).bind(5, sourceKernel).bind(6, sourceExperience);
  if (auto err = ins->run()) return err;
  int64_t id = 0;
  if (Db->changes() > 0) {
    id = Db->lastInsertId();
  } else {
    auto find = Db->prepare("SELECT id FROM patterns WHERE signature = ? AND ops = ?");
    if (!find) return find.takeError();
    find->bind(1, pattern.signature).bind(2, pattern.opsKey());
    auto row = find->step();
    if (!row) return row.takeError();
    id = *row ? find->getInt(0) : 0;
  }
  if (auto err = tx->commit()) return err;
  return id;
}

llvm::Error Store::recordPatternTry(int64_t pattern, bool win) {
  Lock lock(Mutex);
  auto tx = Transaction::begin(*Db);
  if (!tx) return tx.takeError();
  auto st = Db->prepare("UPDATE patterns SET tries = tries + 1, wins = wins + ?, "
                        "updated = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?");
  if (!st) return st.takeError();
  st->bind(1, int64_t(win ? 1 : 0)).bind(2, pattern);
  if (auto err = st->run()) return err;
  if (Db->changes() == 0) return makeError(MemoryError::NotFound, "error: no pattern p" + std::to_string(pattern));
  return tx->commit();
}

llvm::Expected<std::vector<PatternRecord>> Store::queryPatterns(llvm::StringRef where, llvm::StringRef arg) {
  auto st = Db->prepare(std::string(PatternColumns) + where.str());
  if (!st) return st.takeError();
  if (!arg.empty()) st->bind(1, arg);
  std::vector<PatternRecord> out;
  auto onRow = [&]() -> llvm::Error {
    auto p = readPattern(*st);
    if (!p) return p.takeError();
    out.push_back(std::move(*p));
    return llvm::Error::success();
  };
  if (auto err = st->forEachRow(onRow)) return err;
  return out;
}

llvm::Expected<std::optional<PatternRecord>> Store::getPattern(int64_t id) {
  Lock lock(Mutex);
  auto rows = queryPatterns("WHERE id = " + std::to_string(id), "");
  if (!rows) return rows.takeError();
  if (rows->empty()) return std::optional<PatternRecord>();
  return std::optional<PatternRecord>(std::move(rows->front()));
}

llvm::Expected<std::vector<PatternRecord>> Store::listPatterns() {
  Lock lock(Mutex);
  return queryPatterns("ORDER BY id", "");
}

llvm::Expected<std::vector<PatternMatch>> Store::findPatterns(llvm::StringRef signature, const PatternQuery &query) {
  Lock lock(Mutex);
  auto all = queryPatterns("ORDER BY id", "");
  if (!all) return all.takeError();
  std::vector<PatternMatch> exact, similar;
  for (PatternRecord &p : *all) {
    if (p.pattern.signature == signature) {
      exact.push_back({std::move(p), 1.0, true});
      continue;
    }
    double s = signatureSimilarity(p.pattern.signature, signature);
    if (s >= query.minSimilarity) similar.push_back({std::move(p), s, false});
  }
  auto byWinRate = [](const PatternMatch &a, const PatternMatch &b) {
    if (a.record.winRate() != b.record.winRate()) return a.record.winRate() > b.record.winRate();
    if (a.similarity != b.similarity) return a.similarity > b.similarity;
    return a.record.tries > b.record.tries;
  };
  std::stable_sort(exact.begin(), exact.end(), byWinRate);
  std::stable_sort(similar.begin(), similar.end(), byWinRate);
  for (PatternMatch &m : similar) exact.push_back(std::move(m));
  if (exact.size() > query.limit) exact.resize(query.limit);
  return exact;
}

llvm::Expected<std::vector<PatternSuggestion>> Store::suggest(const nki::Kernel &k, const PatternQuery &query,
                                                              size_t perPattern) {
  auto matches = findPatterns(computeSignature(k), query);
  if (!matches) return matches.takeError();
  std::vector<PatternSuggestion> out;
  for (const PatternMatch &m : *matches) {
    InstantiateOptions opts;
    opts.maxResults = perPattern;
    auto inst = instantiatePattern(m.record.pattern, k, opts);
    if (!inst) return inst.takeError();
    for (Instantiation &i : *inst)
      out.push_back({m.record.id, m.similarity, m.record.winRate(), std::move(i.ops), i.score});
  }
  return out;
}

// ------------------------------------------------------------ maintenance

llvm::Expected<Counts> Store::counts() {
  Lock lock(Mutex);
  Counts c;
  struct {
    const char *table;
    int64_t *field;
  } items[] = {{"kernels", &c.kernels},         {"runs", &c.runs},
               {"candidates", &c.candidates},   {"profiles", &c.profiles},
               {"experiences", &c.experiences}, {"patterns", &c.patterns}};
  for (auto &item : items) {
    auto n = Db->queryInt(std::string("SELECT count(*) FROM ") + item.table);
    if (!n) return n.takeError();
    *item.field = *n;
  }
  return c;
}

namespace {
// Runs the one-row summary query `sql` for each record (bound by `bind`) and reads its row with `read`.
template <typename Record, typename Bind, typename Read>
auto summarize(Database &db, llvm::StringRef sql, std::vector<Record> &records, Bind bind, Read read)
    -> llvm::Expected<std::vector<std::invoke_result_t<Read, const Statement &, Record &>>> {
  auto st = db.prepare(sql);
  if (!st) return st.takeError();
  std::vector<std::invoke_result_t<Read, const Statement &, Record &>> out;
  for (Record &record : records) {
    st->reset();
    bind(*st, record);
    auto row = st->readFirst([&](const Statement &r) { return read(r, record); });
    if (!row) return row.takeError();
    if (*row) out.push_back(std::move(**row));
  }
  return out;
}
} // namespace

llvm::Expected<std::vector<KernelSummary>> Store::kernelSummaries() {
  Lock lock(Mutex);
  auto kernels = listKernels();
  if (!kernels) return kernels.takeError();
  return summarize(
      *Db,
      "SELECT (SELECT count(*) FROM runs WHERE kernel = ?1), (SELECT count(*) FROM candidates WHERE kernel = ?1), "
      "(SELECT count(*) FROM experiences WHERE kernel = ?1), "
      "(SELECT min(p.latency_ms) FROM profiles p JOIN candidates c ON c.id = p.candidate "
      " WHERE c.kernel = ?1 AND c.status = 'correct')",
      *kernels, [](Statement &st, const KernelRecord &k) { st.bind(1, k.id); },
      [](const Statement &st, KernelRecord &k) {
        KernelSummary sum;
        sum.runs = st.getInt(0);
        sum.candidates = st.getInt(1);
        sum.experiences = st.getInt(2);
        sum.bestLatencyMs = st.getOptDouble(3);
        sum.kernel = std::move(k);
        return sum;
      });
}

llvm::Expected<std::vector<RunSummary>> Store::runSummaries() {
  Lock lock(Mutex);
  auto runs = listRuns();
  if (!runs) return runs.takeError();
  return summarize(
      *Db,
      "SELECT (SELECT name FROM kernels WHERE id = ?2), (SELECT count(*) FROM candidates WHERE run = ?1), "
      "(SELECT count(*) FROM candidates WHERE run = ?1 AND status = 'correct'), "
      "max((SELECT coalesce(max(iteration), -1) FROM candidates WHERE run = ?1), "
      "    (SELECT coalesce(max(iteration), -1) FROM beams WHERE run = ?1)), "
      "(SELECT min(p.latency_ms) FROM profiles p JOIN candidates c ON c.id = p.candidate "
      " WHERE c.run = ?1 AND c.status = 'correct')",
      *runs, [](Statement &st, const RunRecord &r) { st.bind(1, r.id).bind(2, r.kernel); },
      [](const Statement &st, RunRecord &r) {
        RunSummary sum;
        sum.kernelName = st.getText(0);
        sum.candidates = st.getInt(1);
        sum.correct = st.getInt(2);
        sum.lastIteration = int(st.getInt(3));
        sum.bestLatencyMs = st.getOptDouble(4);
        sum.run = std::move(r);
        return sum;
      });
}

llvm::Expected<std::string> Store::integrityCheck() {
  Lock lock(Mutex);
  auto st = Db->prepare("PRAGMA integrity_check");
  if (!st) return st.takeError();
  std::string out;
  auto onRow = [&] { out += (out.empty() ? "" : "\n") + st->getText(0); };
  if (auto err = st->forEachRow(onRow)) return err;
  auto fk = Db->queryInt("SELECT count(*) FROM pragma_foreign_key_check");
  if (!fk) return fk.takeError();
  if (*fk) out += "\n" + std::to_string(*fk) + " foreign key violation(s)";
  return out;
}

static int64_t fileBytes(llvm::StringRef path) {
  uint64_t size = 0;
  if (path == ":memory:" || llvm::sys::fs::file_size(path, size)) return 0;
  uint64_t wal = 0;
  if (!llvm::sys::fs::file_size(path.str() + "-wal", wal)) size += wal;
  return int64_t(size);
}

llvm::Expected<PruneStats> Store::prune() {
  Lock lock(Mutex);
  PruneStats stats;
  stats.bytesBefore = fileBytes(path());
  {
    auto tx = Transaction::begin(*Db);
    if (!tx) return tx.takeError();
    auto before = Db->queryInt("SELECT count(*) FROM profiles");
    if (!before) return before.takeError();
    // keep(id): in an experience, the best correct candidate of its run, or of
    // an unfinished run; then every ancestor of a kept candidate (lineage).
    const char *sql = R"sql(
CREATE TEMP TABLE IF NOT EXISTS prune_keep(id INTEGER PRIMARY KEY);
DELETE FROM prune_keep;
INSERT OR IGNORE INTO prune_keep SELECT from_candidate FROM experiences WHERE from_candidate IS NOT NULL;
INSERT OR IGNORE INTO prune_keep SELECT to_candidate FROM experiences WHERE to_candidate IS NOT NULL;
INSERT OR IGNORE INTO prune_keep SELECT c.id FROM candidates c JOIN runs r ON r.id = c.run WHERE r.status = 'running';
INSERT OR IGNORE INTO prune_keep SELECT candidate FROM beams b JOIN runs r ON r.id = b.run WHERE r.status = 'running';
INSERT OR IGNORE INTO prune_keep
  SELECT id FROM (
    SELECT c.id AS id, c.run AS run,
           row_number() OVER (PARTITION BY c.run ORDER BY min(p.latency_ms), c.id) AS rk
    FROM candidates c JOIN profiles p ON p.candidate = c.id
    WHERE c.status = 'correct' AND c.run IS NOT NULL AND p.latency_ms IS NOT NULL
    GROUP BY c.id)
  WHERE rk = 1;
WITH RECURSIVE anc(id) AS (
  SELECT id FROM prune_keep
  UNION SELECT c.parent FROM candidates c JOIN anc ON c.id = anc.id WHERE c.parent IS NOT NULL)
INSERT OR IGNORE INTO prune_keep SELECT id FROM anc;
DELETE FROM candidates WHERE id NOT IN (SELECT id FROM prune_keep);
)sql";
    if (auto err = Db->exec(sql)) return err;
    stats.candidatesRemoved = Db->changes();
    auto after = Db->queryInt("SELECT count(*) FROM profiles");
    if (!after) return after.takeError();
    stats.profilesRemoved = *before - *after;
    if (auto err = Db->exec("DROP TABLE prune_keep")) return err;
    if (auto err = tx->commit()) return err;
  }
  if (auto err = Db->exec("VACUUM")) return err;
  if (auto err = Db->exec("PRAGMA wal_checkpoint(TRUNCATE)")) return err;
  stats.bytesAfter = fileBytes(path());
  return stats;
}

} // namespace accelopt::memory
