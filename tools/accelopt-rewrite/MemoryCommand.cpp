// accelopt-rewrite memory list|show ID|export FILE|import FILE|prune [--db FILE]:
// inspect and maintain the optimization memory (lib/Memory).
//
// Exit status: 0 success, 1 the memory could not be read or written (corrupted
// file, locked database, newer schema, unknown id, unreadable import), 2 usage.
#include "Command.h"

#include "Memory/Store.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstring>

namespace accelopt::cli {
namespace {

using memory::Store;
using nlohmann::json;

cl::SubCommand MemoryCmd("memory",
                         "Inspect the optimization memory: list | show ID | export FILE | import FILE | prune");
FormatOption Format(MemoryCmd);
cl::opt<std::string> Db("db", cl::desc("Memory database (default: $ACCELOPT_MEMORY or .accelopt/memory.db)"),
                        cl::value_desc("FILE"), cl::sub(MemoryCmd), cl::cat(category()));
cl::opt<int> BusyTimeout("busy-timeout", cl::desc("Milliseconds to wait for another writer's lock (default 5000)"),
                         cl::init(5000), cl::value_desc("MS"), cl::sub(MemoryCmd), cl::cat(category()));
cl::list<std::string> Args(cl::Positional, cl::desc("<list | show ID | export FILE | import FILE | prune>"),
                           cl::sub(MemoryCmd), cl::cat(category()));

int usage(const std::string &msg) {
  llvm::errs() << "accelopt-rewrite memory: error: " << msg
               << "\nusage: accelopt-rewrite memory list|show ID|export FILE|import FILE|prune [--db FILE]\n";
  return 2;
}

int failed(llvm::Error err) {
  reportError(std::move(err));
  return 1;
}

std::string dbPath() { return Db.empty() ? Store::defaultPath() : std::string(Db); }

/// Opens the memory; read-only actions on a missing file see an empty memory
/// (nothing is created).
llvm::Expected<std::unique_ptr<Store>> openStore(bool create) {
  std::string path = dbPath();
  memory::StoreOptions options;
  options.busyTimeoutMs = BusyTimeout;
  if (!create && !llvm::sys::fs::exists(path)) return Store::open(":memory:", options);
  return Store::open(path, options);
}

std::string ms(std::optional<double> v) {
  if (!v) return "-";
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::format("%.4g ms", *v);
  return os.str();
}

json opt(std::optional<int64_t> v) { return v ? json(*v) : json(nullptr); }
json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

int runList() {
  auto store = openStore(false);
  if (!store) return failed(store.takeError());
  Store &s = **store;
  auto counts = s.counts();
  if (!counts) return failed(counts.takeError());
  auto kernels = s.kernelSummaries();
  if (!kernels) return failed(kernels.takeError());
  auto runs = s.runSummaries();
  if (!runs) return failed(runs.takeError());
  auto patterns = s.listPatterns();
  if (!patterns) return failed(patterns.takeError());
  auto version = s.schemaVersion();
  if (!version) return failed(version.takeError());
  const memory::Counts &c = *counts;

  if (Format.format == OutputFormat::Json) {
    json out;
    out["db"] = dbPath();
    out["schema_version"] = *version;
    out["counts"] = {{"kernels", c.kernels},         {"runs", c.runs},
                     {"candidates", c.candidates},   {"profiles", c.profiles},
                     {"experiences", c.experiences}, {"patterns", c.patterns}};
    out["kernels"] = json::array();
    for (auto &k : *kernels)
      out["kernels"].push_back({{"id", k.kernel.id},
                                {"name", k.kernel.name},
                                {"path", k.kernel.path},
                                {"signature", k.kernel.signature},
                                {"runs", k.runs},
                                {"candidates", k.candidates},
                                {"experiences", k.experiences},
                                {"best_latency_ms", opt(k.bestLatencyMs)}});
    out["runs"] = json::array();
    for (auto &r : *runs)
      out["runs"].push_back({{"id", r.run.id},
                             {"kernel", r.run.kernel},
                             {"kernel_name", r.kernelName},
                             {"started", r.run.started},
                             {"status", memory::runStatusName(r.run.status)},
                             {"candidates", r.candidates},
                             {"correct", r.correct},
                             {"last_iteration", r.lastIteration},
                             {"best_latency_ms", opt(r.bestLatencyMs)}});
    out["patterns"] = json::array();
    for (auto &p : *patterns)
      out["patterns"].push_back(
          {{"id", p.id}, {"wins", p.wins}, {"tries", p.tries}, {"ops", p.pattern.ops}, {"description", p.description}});
    llvm::outs() << out.dump(2) << "\n";
    return 0;
  }

  auto &os = llvm::outs();
  os << "memory " << dbPath() << " (schema " << *version << "): " << c.kernels << " kernels, " << c.runs << " runs, "
     << c.candidates << " candidates, " << c.profiles << " profiles, " << c.experiences << " experiences, "
     << c.patterns << " patterns\n";
  if (!kernels->empty()) {
    os << "kernels:\n";
    for (auto &k : *kernels)
      os << "  k" << k.kernel.id << "  " << k.kernel.name << "  " << k.kernel.path << "  runs " << k.runs
         << "  candidates " << k.candidates << "  experiences " << k.experiences << "  best " << ms(k.bestLatencyMs)
         << "\n";
  }
  if (!runs->empty()) {
    os << "runs:\n";
    for (auto &r : *runs)
      os << "  r" << r.run.id << "  k" << r.run.kernel << " " << r.kernelName << "  " << r.run.started << "  "
         << memory::runStatusName(r.run.status) << "  candidates " << r.candidates << " (" << r.correct
         << " correct)  iterations " << (r.lastIteration + 1) << "  best " << ms(r.bestLatencyMs) << "\n";
  }
  if (!patterns->empty()) {
    os << "patterns:\n";
    for (auto &p : *patterns)
      os << "  p" << p.id << "  wins " << p.wins << "/" << p.tries << "  " << p.description << "\n";
  }
  return 0;
}

json candidateJson(const memory::CandidateRecord &c) {
  return {{"id", c.id},
          {"kernel", c.kernel},
          {"run", opt(c.run)},
          {"parent", opt(c.parent)},
          {"ops", c.ops},
          {"ops_hash", c.opsHash},
          {"source_hash", c.sourceHash},
          {"status", memory::candidateStatusName(c.status)},
          {"error", c.error},
          {"iteration", c.iteration},
          {"created", c.created}};
}

int showCandidate(Store &s, int64_t id) {
  auto c = s.getCandidate(id);
  if (!c) return failed(c.takeError());
  if (!*c)
    return failed(memory::makeError(memory::MemoryError::NotFound, "error: no candidate c" + std::to_string(id)));
  auto chain = s.lineage(id);
  if (!chain) return failed(chain.takeError());
  auto profiles = s.profilesOf(id);
  if (!profiles) return failed(profiles.takeError());
  json j = candidateJson(**c);
  j["lineage"] = json::array();
  for (auto &a : *chain) j["lineage"].push_back(a.id);
  j["profiles"] = json::array();
  for (auto &p : *profiles)
    j["profiles"].push_back({{"backend", p.backend}, {"latency_ms", opt(p.latencyMs)}, {"profile", p.profile}});
  if (Format.format == OutputFormat::Json) {
    llvm::outs() << j.dump(2) << "\n";
    return 0;
  }
  auto &os = llvm::outs();
  const auto &r = **c;
  os << "candidate c" << r.id << "  kernel k" << r.kernel;
  if (r.run) os << "  run r" << *r.run;
  os << "  iteration " << r.iteration << "  " << memory::candidateStatusName(r.status) << "\n";
  os << "lineage:";
  for (auto &a : *chain) os << " c" << a.id;
  os << "\nops: " << r.ops.dump() << "\n";
  if (!r.sourceHash.empty()) os << "source hash: " << r.sourceHash << "\n";
  if (!r.error.empty()) os << "error: " << r.error << "\n";
  for (auto &p : *profiles) os << "profile " << p.backend << ": " << ms(p.latencyMs) << "\n";
  return 0;
}

int showPattern(Store &s, int64_t id) {
  auto p = s.getPattern(id);
  if (!p) return failed(p.takeError());
  if (!*p) return failed(memory::makeError(memory::MemoryError::NotFound, "error: no pattern p" + std::to_string(id)));
  const auto &r = **p;
  if (Format.format == OutputFormat::Json) {
    json j = r.pattern.toJson();
    j["id"] = r.id;
    j["wins"] = r.wins;
    j["tries"] = r.tries;
    j["description"] = r.description;
    j["source_kernel"] = opt(r.sourceKernel);
    j["source_experience"] = opt(r.sourceExperience);
    llvm::outs() << j.dump(2) << "\n";
    return 0;
  }
  auto &os = llvm::outs();
  os << "pattern p" << r.id << "  wins " << r.wins << "/" << r.tries << "\n";
  os << "ops: " << json(r.pattern.ops).dump() << "\n";
  os << "signature: " << r.pattern.signature << "\n";
  for (auto &v : r.pattern.vars)
    os << "role " << v.name << " (op " << v.step << "): " << v.role.toJson().dump() << "\n";
  for (auto &rel : r.pattern.relations)
    os << "relation (op " << rel.step << "): " << rel.a << " " << rel.rel << " " << rel.b << "\n";
  return 0;
}

int showExperience(Store &s, int64_t id) {
  auto e = s.getExperience(id);
  if (!e) return failed(e.takeError());
  if (!*e)
    return failed(memory::makeError(memory::MemoryError::NotFound, "error: no experience e" + std::to_string(id)));
  const auto &r = **e;
  if (Format.format == OutputFormat::Json) {
    llvm::outs() << json({{"id", r.id},
                          {"kernel", r.kernel},
                          {"from", opt(r.from)},
                          {"to", opt(r.to)},
                          {"ops", r.ops},
                          {"speedup", r.speedup},
                          {"summary", r.summary},
                          {"iteration", r.iteration},
                          {"created", r.created}})
                        .dump(2)
                 << "\n";
    return 0;
  }
  auto &os = llvm::outs();
  os << "experience e" << r.id << "  kernel k" << r.kernel << "  iteration " << r.iteration << "  "
     << (r.speedup >= 1 ? "slow -> fast" : "fast -> slow") << "  speedup " << llvm::format("%.3f", r.speedup) << "\n";
  os << "from: " << (r.from ? "c" + std::to_string(*r.from) : std::string("-"))
     << "  to: " << (r.to ? "c" + std::to_string(*r.to) : std::string("-")) << "\n";
  os << "ops: " << r.ops.dump() << "\n";
  if (!r.summary.empty()) os << "summary: " << r.summary << "\n";
  return 0;
}

int showKernel(Store &s, int64_t id) {
  auto sums = s.kernelSummaries();
  if (!sums) return failed(sums.takeError());
  for (auto &k : *sums) {
    if (k.kernel.id != id) continue;
    if (Format.format == OutputFormat::Json) {
      llvm::outs() << json({{"id", k.kernel.id},
                            {"name", k.kernel.name},
                            {"path", k.kernel.path},
                            {"source_hash", k.kernel.sourceHash},
                            {"signature", k.kernel.signature},
                            {"runs", k.runs},
                            {"candidates", k.candidates},
                            {"best_latency_ms", opt(k.bestLatencyMs)}})
                          .dump(2)
                   << "\n";
      return 0;
    }
    llvm::outs() << "kernel k" << k.kernel.id << "  " << k.kernel.name << "  " << k.kernel.path << "\n"
                 << "source hash: " << k.kernel.sourceHash << "\nsignature: " << k.kernel.signature << "\n"
                 << "runs " << k.runs << "  candidates " << k.candidates << "  best " << ms(k.bestLatencyMs) << "\n";
    return 0;
  }
  return failed(memory::makeError(memory::MemoryError::NotFound, "error: no kernel k" + std::to_string(id)));
}

int showRun(Store &s, int64_t id) {
  auto state = s.loadRunState(id);
  if (!state) return failed(state.takeError());
  if (Format.format == OutputFormat::Json) {
    json beam = json::array();
    for (auto &c : state->beam) beam.push_back(c.id);
    llvm::outs() << json({{"id", state->run.id},
                          {"kernel", state->run.kernel},
                          {"started", state->run.started},
                          {"status", memory::runStatusName(state->run.status)},
                          {"config", state->run.config},
                          {"last_iteration", state->lastIteration},
                          {"evaluated", state->evaluatedOps.size()},
                          {"beam_iteration", state->beamIteration},
                          {"beam", beam}})
                        .dump(2)
                 << "\n";
    return 0;
  }
  auto &os = llvm::outs();
  os << "run r" << state->run.id << "  kernel k" << state->run.kernel << "  " << state->run.started << "  "
     << memory::runStatusName(state->run.status) << "\nconfig: " << state->run.config.dump() << "\n"
     << "iterations " << (state->lastIteration + 1) << "  evaluated " << state->evaluatedOps.size() << "\n";
  os << "beam";
  if (state->beamIteration >= 0) os << " (iteration " << state->beamIteration << ")";
  os << ":";
  for (auto &c : state->beam) os << " c" << c.id;
  os << "\n";
  return 0;
}

int runShow(const std::string &idText) {
  llvm::StringRef ref(idText);
  char kind = ref.empty() ? 0 : char(std::tolower(ref.front()));
  int64_t id = 0;
  if (!std::strchr("cpekr", kind ? kind : 'x') || ref.drop_front().getAsInteger(10, id) || id <= 0)
    return usage("bad id '" + idText +
                 "' (expected c<N> candidate, p<N> pattern, e<N> experience, k<N> kernel, "
                 "r<N> run)");
  auto store = openStore(false);
  if (!store) return failed(store.takeError());
  switch (kind) {
  case 'c': return showCandidate(**store, id);
  case 'p': return showPattern(**store, id);
  case 'e': return showExperience(**store, id);
  case 'k': return showKernel(**store, id);
  default: return showRun(**store, id);
  }
}

int runExport(const std::string &file) {
  auto store = openStore(false);
  if (!store) return failed(store.takeError());
  if (file == "-") {
    auto doc = (*store)->exportJson();
    if (!doc) return failed(doc.takeError());
    llvm::outs() << doc->dump(2) << "\n";
    return 0;
  }
  // `memory export X --db X` would replace the database (or its journal) by its own export.
  for (const char *suffix : {"", "-wal", "-shm", "-journal"})
    if (llvm::sys::fs::equivalent(file, dbPath() + suffix))
      return usage("export file '" + file + "' is the memory database" + (*suffix ? std::string(" journal") : "") +
                   " itself (" + dbPath() + suffix + "); give another file name");
  if (auto err = (*store)->exportToFile(file)) return failed(std::move(err));
  auto c = (*store)->counts();
  if (!c) return failed(c.takeError());
  llvm::errs() << "exported " << c->kernels << " kernels, " << c->runs << " runs, " << c->candidates << " candidates, "
               << c->experiences << " experiences, " << c->patterns << " patterns to " << file << "\n";
  return 0;
}

int runImport(const std::string &file) {
  auto store = openStore(true);
  if (!store) return failed(store.takeError());
  auto stats = (*store)->importFromFile(file);
  if (!stats) return failed(stats.takeError());
  llvm::outs() << "imported " << stats->kernels << " kernels, " << stats->runs << " runs, " << stats->candidates
               << " candidates, " << stats->profiles << " profiles, " << stats->experiences << " experiences, "
               << stats->patterns << " patterns (" << stats->skipped << " already present) into " << dbPath() << "\n";
  return 0;
}

int runPrune() {
  auto store = openStore(false);
  if (!store) return failed(store.takeError());
  auto stats = (*store)->prune();
  if (!stats) return failed(stats.takeError());
  llvm::outs() << "pruned " << stats->candidatesRemoved << " candidates, " << stats->profilesRemoved << " profiles; "
               << stats->bytesBefore << " -> " << stats->bytesAfter << " bytes\n";
  return 0;
}

int runMemory() {
  if (Args.empty()) return usage("missing action");
  const std::string &action = Args[0];
  auto arity = [&](size_t n) { return Args.size() == n + 1; };
  if (action == "list") return arity(0) ? runList() : usage("'list' takes no argument");
  if (action == "show") return arity(1) ? runShow(Args[1]) : usage("'show' takes one ID");
  if (action == "export") return arity(1) ? runExport(Args[1]) : usage("'export' takes one FILE ('-' = stdout)");
  if (action == "import") return arity(1) ? runImport(Args[1]) : usage("'import' takes one FILE");
  if (action == "prune") return arity(0) ? runPrune() : usage("'prune' takes no argument");
  return usage("unknown action '" + action + "'");
}

RegisterCommand Registration(MemoryCmd, runMemory);

} // namespace
} // namespace accelopt::cli
