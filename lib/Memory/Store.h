// The optimization memory: kernels, search runs, candidates (with lineage and
// dedup by normalised source hash), profiles, experiences and reusable
// patterns in one SQLite file (WAL, busy timeout, one transaction per write so
// a killed process loses nothing it committed).
//
// A Store owns one connection guarded by a mutex; for parallel writers open
// one Store per thread on the same file (SQLite serialises the writes).
#pragma once

#include "Memory/Database.h"
#include "Memory/Experience.h"
#include "Memory/Pattern.h"
#include "Memory/Schema.h"

#include "NKI/KernelIR.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace accelopt::memory {

enum class CandidateStatus { Applied, Refused, Incorrect, Correct };
std::string_view candidateStatusName(CandidateStatus s); // "applied", ...
std::optional<CandidateStatus> parseCandidateStatus(llvm::StringRef s);

enum class RunStatus { Running, Finished, Failed, Interrupted };
std::string_view runStatusName(RunStatus s); // "running", ...
std::optional<RunStatus> parseRunStatus(llvm::StringRef s);

struct KernelInfo {
  std::string name;       // the @nki.jit function name
  std::string path;       // the kernel file as given
  std::string sourceHash; // sourceHash(text)
  std::string signature;  // computeSignature(kernel)
};
/// KernelInfo of a parsed kernel: name, its file path, hash of the file text, signature.
KernelInfo kernelInfoOf(const nki::Kernel &k);

struct KernelRecord : KernelInfo {
  int64_t id = 0;
  std::string created;
};

struct RunRecord {
  int64_t id = 0;
  int64_t kernel = 0;
  std::string started;
  nlohmann::json config = nlohmann::json::object();
  RunStatus status = RunStatus::Running;
};

struct ProfileInput {
  std::string backend; // "sim-trn1", "sim-trn2", "neuron"
  std::optional<double> latencyMs;
  nlohmann::json profile = nlohmann::json::object(); // the full profile JSON
};

struct ProfileRecord : ProfileInput {
  int64_t id = 0;
  int64_t candidate = 0;
};

struct NewCandidate {
  int64_t kernel = 0;
  std::optional<int64_t> run;
  std::optional<int64_t> parent;                // lineage: the candidate these ops extend
  nlohmann::json ops = nlohmann::json::array(); // the full op list from the original kernel
  std::string sourceHash;                       // sourceHash(rewritten text); "" = none (refused: no dedup)
  CandidateStatus status = CandidateStatus::Applied;
  std::string error; // refusal / mismatch text
  int iteration = 0;
  std::vector<ProfileInput> profiles; // stored in the same transaction
};

struct CandidateRecord {
  int64_t id = 0;
  int64_t kernel = 0;
  std::optional<int64_t> run, parent;
  nlohmann::json ops = nlohmann::json::array();
  std::string opsHash, sourceHash;
  CandidateStatus status = CandidateStatus::Applied;
  std::string error;
  int iteration = 0;
  std::string created;
};

struct InsertResult {
  int64_t id = 0;
  bool inserted = false; // false: a candidate with the same source hash existed (its id)
};

struct ExperienceRecord {
  int64_t id = 0;
  int64_t kernel = 0;
  std::optional<int64_t> from, to;
  nlohmann::json ops = nlohmann::json::array();
  double speedup = 0;
  std::string summary;
  int iteration = 0;
  std::string created;
};

struct PatternRecord {
  int64_t id = 0;
  Pattern pattern;
  std::string description;
  std::optional<int64_t> sourceKernel, sourceExperience;
  int64_t wins = 0, tries = 0;
  std::string created, updated;
  /// (wins + 1) / (tries + 2): untried patterns rank at 0.5.
  double winRate() const { return double(wins + 1) / double(tries + 2); }
};

struct PatternQuery {
  size_t limit = 10;
  double minSimilarity = 0.5; // for non-exact signature matches
};

struct PatternMatch {
  PatternRecord record;
  double similarity = 0; // 1 for an exact signature match
  bool exact = false;
};

/// Everything --resume needs to continue a run.
struct RunState {
  RunRecord run;
  int lastIteration = -1;                // highest iteration with candidates or a beam (-1: none)
  std::set<std::string> evaluatedHashes; // source hashes of the run's kernel already evaluated
  std::set<std::string> evaluatedOps;    // ops hashes of the run's candidates (incl. refused)
  std::vector<CandidateRecord> beam;     // the last recorded beam, in rank order
  int beamIteration = -1;
};

struct Counts {
  int64_t kernels = 0, runs = 0, candidates = 0, profiles = 0, experiences = 0, patterns = 0;
};

struct KernelSummary {
  KernelRecord kernel;
  int64_t runs = 0, candidates = 0, experiences = 0;
  std::optional<double> bestLatencyMs; // over correct candidates
};

struct RunSummary {
  RunRecord run;
  std::string kernelName;
  int64_t candidates = 0, correct = 0;
  int lastIteration = -1;
  std::optional<double> bestLatencyMs; // over correct candidates
};

struct PruneStats {
  int64_t candidatesRemoved = 0;
  int64_t profilesRemoved = 0;
  int64_t bytesBefore = 0, bytesAfter = 0;
};

struct ImportStats {
  int64_t kernels = 0, runs = 0, candidates = 0, profiles = 0, experiences = 0, patterns = 0;
  int64_t skipped = 0; // rows already present (merged)
};

struct StoreOptions {
  int busyTimeoutMs = 5000;
  bool create = true;
};

/// One concrete op list suggested by a remembered pattern for a new kernel.
struct PatternSuggestion {
  int64_t pattern = 0;
  double similarity = 0;           // of the pattern's signature to the kernel's
  double winRate = 0;              // PatternRecord::winRate()
  std::vector<nlohmann::json> ops; // concrete L#/S# ids of the kernel
  int score = 0;                   // Instantiation::score
};

class Store {
public:
  /// Opens (creating if allowed) and migrates the database at `path`.
  /// Errors: MemoryError NotADatabase / Corrupt / Locked / NewerSchema / CannotOpen.
  static llvm::Expected<std::unique_ptr<Store>> open(llvm::StringRef path, const StoreOptions &options = {});
  /// $ACCELOPT_MEMORY, else ".accelopt/memory.db" (relative to the current directory).
  static std::string defaultPath();

  const std::string &path() const { return Db->path(); }
  Database &database() { return *Db; }
  llvm::Expected<int> schemaVersion();

  // Kernels.
  /// Finds the kernel with the same (name, path, source hash) or inserts it;
  /// updates the signature if it was empty.
  llvm::Expected<int64_t> upsertKernel(const KernelInfo &info);
  llvm::Expected<std::optional<KernelRecord>> getKernel(int64_t id);
  llvm::Expected<std::vector<KernelRecord>> listKernels();

  // Runs.
  llvm::Expected<int64_t> beginRun(int64_t kernel, const nlohmann::json &config);
  llvm::Error setRunStatus(int64_t run, RunStatus status);
  llvm::Expected<std::optional<RunRecord>> getRun(int64_t id);
  /// The newest run of `kernel` (only unfinished ones: running/interrupted/failed if asked).
  llvm::Expected<std::optional<RunRecord>> latestRun(int64_t kernel, bool unfinishedOnly = false);
  llvm::Expected<std::vector<RunRecord>> listRuns();
  /// Records the beam after `iteration` (replacing an earlier record of that iteration).
  llvm::Error recordBeam(int64_t run, int iteration, llvm::ArrayRef<int64_t> candidates);
  llvm::Expected<RunState> loadRunState(int64_t run);

  // Candidates.
  /// Inserts the candidate and its profiles in one transaction; a candidate of
  /// the same kernel with the same non-empty source hash is not inserted again.
  llvm::Expected<InsertResult> insertCandidate(const NewCandidate &c);
  llvm::Error updateCandidateStatus(int64_t id, CandidateStatus status, llvm::StringRef error = "");
  llvm::Expected<int64_t> addProfile(int64_t candidate, const ProfileInput &profile);
  llvm::Expected<std::optional<CandidateRecord>> getCandidate(int64_t id);
  llvm::Expected<std::optional<CandidateRecord>> findCandidateByHash(int64_t kernel, llvm::StringRef sourceHash);
  /// The candidate and its ancestors, root first.
  llvm::Expected<std::vector<CandidateRecord>> lineage(int64_t id);
  llvm::Expected<std::vector<CandidateRecord>> candidatesOfRun(int64_t run);
  llvm::Expected<std::vector<ProfileRecord>> profilesOf(int64_t candidate);
  /// The best (lowest) latency of a candidate, optionally for one backend.
  llvm::Expected<std::optional<double>> bestLatency(int64_t candidate, llvm::StringRef backend = "");

  // Experiences.
  /// Selects from `pairs` (selectExperiences), stores the selection in one
  /// transaction and trims the queue to config.queueSize (oldest first).
  /// Returns the ids of the stored experiences.
  llvm::Expected<std::vector<int64_t>>
  addExperiences(int64_t kernel, int iteration, llvm::ArrayRef<ExperiencePair> pairs, const ExperienceConfig &config);
  /// Newest first; kernel 0 = all kernels.
  llvm::Expected<std::vector<ExperienceRecord>> experiences(int64_t kernel = 0, size_t limit = 0);
  llvm::Expected<std::optional<ExperienceRecord>> getExperience(int64_t id);

  // Patterns.
  /// Stores a pattern (dedup on signature + ops: returns the existing id).
  llvm::Expected<int64_t> addPattern(const Pattern &pattern, std::optional<int64_t> sourceKernel = std::nullopt,
                                     std::optional<int64_t> sourceExperience = std::nullopt);
  /// Counts one try of a pattern (a win when its candidate beat its parent).
  llvm::Error recordPatternTry(int64_t pattern, bool win);
  llvm::Expected<std::optional<PatternRecord>> getPattern(int64_t id);
  llvm::Expected<std::vector<PatternRecord>> listPatterns();
  /// Patterns for a kernel with `signature`: exact signature matches first
  /// (by win rate), then patterns whose signature similarity reaches
  /// query.minSimilarity (by win rate, then similarity).
  llvm::Expected<std::vector<PatternMatch>> findPatterns(llvm::StringRef signature, const PatternQuery &query = {});

  /// Retrieval + instantiation in one call: findPatterns(signature of `k`),
  /// then up to `perPattern` instantiations of each on `k` (patterns without a
  /// matching site are skipped), in retrieval order.
  llvm::Expected<std::vector<PatternSuggestion>> suggest(const nki::Kernel &k, const PatternQuery &query = {},
                                                         size_t perPattern = 1);

  /// upsertKernel(kernelInfoOf(k)).
  llvm::Expected<int64_t> recordKernel(const nki::Kernel &k) { return upsertKernel(kernelInfoOf(k)); }

  // Maintenance.
  llvm::Expected<Counts> counts();
  /// Per-kernel and per-run counts for listings.
  llvm::Expected<std::vector<KernelSummary>> kernelSummaries();
  llvm::Expected<std::vector<RunSummary>> runSummaries();
  /// "ok", or SQLite's integrity_check report.
  llvm::Expected<std::string> integrityCheck();
  /// Deletes candidates that are neither in an experience nor the best correct
  /// candidate of their run (keeping those candidates' ancestors, and every
  /// candidate of a run that is still "running"), then VACUUMs.
  llvm::Expected<PruneStats> prune();

  /// The whole memory as one JSON document ({"format": "accelopt-memory", ...}).
  llvm::Expected<nlohmann::json> exportJson();
  /// Writes exportJson() to `path` atomically (temporary file + rename).
  llvm::Error exportToFile(llvm::StringRef path);
  /// Merges an export into this memory in one transaction (ids are remapped;
  /// an id is kept when it is free). Rows already present are skipped/merged.
  llvm::Expected<ImportStats> importJson(const nlohmann::json &doc);
  llvm::Expected<ImportStats> importFromFile(llvm::StringRef path);

private:
  explicit Store(std::unique_ptr<Database> db) : Db(std::move(db)) {}
  llvm::Expected<std::vector<CandidateRecord>> queryCandidates(llvm::StringRef where, int64_t arg);
  llvm::Expected<std::vector<PatternRecord>> queryPatterns(llvm::StringRef where, llvm::StringRef arg);

  std::unique_ptr<Database> Db;
  std::recursive_mutex Mutex;
};

} // namespace accelopt::memory
