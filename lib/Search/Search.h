// The optimization loop: AccelOpt's beam search over candidates made of
// structured rewrite ops. Every candidate is applied (Rewrite), verified
// (Analysis), checked numerically against the original and profiled by a
// backend (Profile); the best B correct candidates form the next beam.
#pragma once

#include "Interp/Compare.h"
#include "Interp/Interpreter.h"
#include "NKI/FrontEnd.h"
#include "Perf/Hardware.h"
#include "Perf/Profile.h"
#include "Profile/Backend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::agent {
class AgentSession;
struct Experience;
} // namespace accelopt::agent

namespace accelopt::search {

class RemoteEvaluator;

struct SearchOptions {
  int iterations = 4; // T
  int beam = 2;       // B
  int plans = 4;      // N plans per beam candidate
  int samples = 2;    // K realisations per plan
  uint64_t seed = 0;
  unsigned jobs = 1; // parallel candidate evaluations
  std::string target = "trn1";
  /// The profile backend of every candidate (e.g. `--backend neuron`); null:
  /// the simulator for `target`.
  std::shared_ptr<const profile::Backend> backend;
  unsigned numericSeeds = 2;     // seeds of the numeric check (AccelOpt's 0, 21, ...)
  interp::Tolerance tolerance;   // atol/rtol of the numeric check
  double candidateTimeout = 120; // seconds per interpreter run
  int maxOpsPerCandidate = 16;   // candidates grow by one plan or closure per iteration
  /// Numerically check every candidate; otherwise only those the profile says
  /// could enter the beam (the others are never selected, so never accepted).
  bool checkAll = false;
  std::string kernelName;
  /// Accept `replace` ops from the planner or the memory (--allow-replace): arbitrary code.
  bool allowReplace = false;
  /// Evaluates candidates instead of the local threads (--dispatch slurm); not owned.
  RemoteEvaluator *remote = nullptr;
  /// Valley crossing: each structural op (structuralOpKinds()) legal on a beam member, and each
  /// macro (closureMacroKinds()), is scored together with up to this many greedy follow-up moves
  /// it enables, on the model only; the best state of that closure becomes one candidate (0: off).
  int closureSteps = 3;
  /// Structural ops per beam member whose closure is scored (menu order), and as many signalled
  /// engine moves (signalledStartKinds()) after them.
  int closureStarts = 48;
  /// Wall-clock budget in seconds (0: none), checked between candidates: once it is spent no
  /// further candidate or closure is started and the search ends after the current iteration.
  double budgetSeconds = 0;
  /// Stop after this many iterations in a row without a better kernel (0: never).
  int stallIterations = 0;
};

struct Candidate;

/// Evaluates candidates elsewhere (a cluster, lib/Dispatch) instead of on
/// `jobs` local threads: sets each candidate's verdict exactly as
/// CandidateEvaluator::evaluate would, given the same beam cutoff. An error
/// (the cluster cannot be reached) ends the search; --resume continues it.
class RemoteEvaluator {
public:
  virtual ~RemoteEvaluator() = default;
  virtual llvm::Error evaluate(const std::vector<Candidate *> &pending, double cutoff) = 0;
};

/// The op kinds that reshape loop nests (fission, interchange, fuse, ...): a closure starts from
/// one of them and continues with them. Declared once; a new nest-restructuring op adds its name.
llvm::ArrayRef<llvm::StringLiteral> structuralOpKinds();
/// Single ops a closure continues with, besides the structural ones, once a move enabled them
/// (widen: a tile the privatised buffers no longer pin to its width).
llvm::ArrayRef<llvm::StringLiteral> closureFollowUpKinds();
/// Op kinds a closure applies as one macro move, to a fixpoint (hoist: the loads an interchange
/// made invariant, then what reads them; shrink_buffer: block buffers privatised so tiles widen).
/// A macro starts a closure, and is a follow-up once the last move enabled one of its instances.
llvm::ArrayRef<llvm::StringLiteral> closureMacroKinds();
/// Op kinds whose every legal instance starts a closure, like a structural op, when a profile
/// signal seen on the original proposes the kind (set_engine, substitute: busy-engine-next-to-idle).
/// The menu offers one move per statement and engine, most of them onto the busy engine or onto
/// an engine the target does not cost, and a plan's few random samples rarely hold the one that
/// relieves the bottleneck (adamw: the reciprocal to ScalarE, one of 22 set_engine instances);
/// scored on the model, each is tried. They are not follow-ups: a closure never adds one.
llvm::ArrayRef<llvm::StringLiteral> signalledStartKinds();

/// A candidate replaces the original (or a better one) only when its estimate is lower by more
/// than this fraction: ties and rounding-level differences (a fission that only reorders the same
/// instructions) keep the simpler, original kernel.
inline constexpr double MinRelativeGain = 1e-3;
/// True when `latency` beats `reference` by more than MinRelativeGain.
inline bool strictlyFaster(double latency, double reference) { return latency < reference * (1 - MinRelativeGain); }

/// One evaluated kernel version.
struct Candidate {
  int id = -1;
  int parent = -1; // -1 for the original
  int iteration = 0;
  std::vector<nlohmann::json> ops; // from the original kernel
  std::string plan;                // what the planner intended
  std::string signal;              // the profile signal that proposed it ("" if none)
  int64_t patternId = 0;           // the memory pattern it instantiates, if any
  std::string text;
  std::string hash; // normalised source hash
  /// Slower: profiled as slower than every beam member, so it could not be
  /// selected and its numeric check was skipped (see SearchOptions::checkAll).
  enum Status { Pending, Refused, Invalid, Incorrect, Correct, Slower } status = Pending;
  std::string error;
  std::optional<perf::Profile> profile;
  /// Where it was evaluated: "" (here) or, from a RemoteEvaluator, e.g. "slurm job 12_3 on node1".
  std::string ranOn;
  double latency() const { return profile ? profile->latency : 1e300; }
};

/// The names of a candidate status, declared once: `wire` is what a cluster
/// worker writes and the submitter reads back (lib/Dispatch), `display` what
/// reports show (report.md, report.json).
struct StatusNames {
  Candidate::Status status;
  llvm::StringLiteral wire, display;
};
inline constexpr StatusNames CandidateStatusNames[] = {
    {Candidate::Pending, "pending", "pending"}, {Candidate::Refused, "refused", "refused"},
    {Candidate::Invalid, "invalid", "invalid"}, {Candidate::Incorrect, "incorrect", "incorrect"},
    {Candidate::Correct, "correct", "correct"}, {Candidate::Slower, "slower", "slower (not checked)"},
};
/// The row of `s` in CandidateStatusNames.
inline const StatusNames &statusNames(Candidate::Status s) {
  for (const StatusNames &n : CandidateStatusNames)
    if (n.status == s) return n;
  return CandidateStatusNames[0];
}

/// A plan is a step the planner wants tried; realise() turns it into op lists.
struct Plan {
  std::string description;
  std::string signal;                                    // the profile signal behind it (see readSignals), "" if none
  int64_t patternId = 0;                                 // set when the plan comes from a memory pattern
  std::vector<std::vector<nlohmann::json>> realisations; // each: ops to append to the parent's
};

/// The planner the loop asks for plans: built-in (heuristics + memory patterns)
/// or the LLM agents.
class Planner {
public:
  virtual ~Planner() = default;
  /// Up to `plans` plans for `parent`, each realised up to `samples` times.
  virtual std::vector<Plan> propose(const Candidate &parent, const nki::KernelFile &file, int plans, int samples,
                                    uint64_t seed) = 0;
  /// Feedback after an iteration (for learning planners); default: nothing.
  virtual void observe(const Candidate &parent, const Candidate &child) {}
  /// Why the planner could not work at all during the search (every call to an
  /// LLM endpoint failed, say), or "" when it did; the CLI exits non-zero on it.
  virtual std::string failure() const { return ""; }
};

/// Events for progress display, reports and the optimization memory.
class SearchObserver {
public:
  virtual ~SearchObserver() = default;
  virtual void candidateEvaluated(const Candidate &c) {}
  virtual void iterationDone(int iteration, const Candidate &best, size_t evaluated, size_t total) {}
  /// The beam chosen at the end of an iteration (candidate ids, best first).
  virtual void beamSelected(int iteration, const std::vector<int> &beam) {}
  /// Candidates whose hash is already known (e.g. from --resume); return true to skip.
  virtual std::optional<Candidate> known(const std::string &hash) { return std::nullopt; }
};

struct IterationRecord {
  int iteration = 0;
  int bestId = -1;
  double bestLatency = 0;
  size_t evaluated = 0; // new candidates evaluated this iteration
  size_t correct = 0;
};

/// One row of the built-in planner's signal table read on a kernel and its profile.
struct SignalReading {
  std::string name;                 // "spills-across-sibling-nests", ...
  bool seen = false;                // the predicate holds
  std::string evidence;             // the figures behind the verdict
  std::vector<std::string> opKinds; // what the row proposes (kinds not in the menu are skipped)
  std::string why;
};

/// Every row of the built-in planner's signal table, read on `kernel` with `profile` (may be null).
std::vector<SignalReading> readSignals(const perf::Profile *profile, const nki::Kernel &kernel);

struct SearchResult {
  std::vector<Candidate> candidates;  // every candidate, candidates[0] is the original
  std::vector<SignalReading> signals; // the planner's signals on the original kernel
  size_t closures = 0;                // closures scored on the model
  bool budgetSpent = false;           // the search stopped at --budget
  int bestId = 0;
  std::vector<IterationRecord> iterations;
  double seconds = 0;
  const Candidate &best() const { return candidates[bestId]; }
  const Candidate &original() const { return candidates[0]; }
};

/// What evaluating a candidate needs, built once from the original kernel: the
/// profile backend and the original's numeric baseline. The search uses it for
/// local evaluation and a cluster worker for remote evaluation, so both give the
/// same verdicts.
class CandidateEvaluator {
public:
  ~CandidateEvaluator();
  /// `text` is the original kernel (read from `path`); fails when it does not
  /// parse, verify, profile or run.
  static llvm::Expected<std::unique_ptr<CandidateEvaluator>>
  create(llvm::StringRef path, llvm::StringRef text, const nki::InputSpecs &inputs, const SearchOptions &options);
  /// The original kernel as the search's first candidate (profiled, Correct).
  const Candidate &original() const;
  /// Parses, verifies and profiles `c`; checks it numerically unless it is
  /// slower than `cutoff` (and not --check-all). Sets status, error and profile.
  /// Safe to call from several threads at once.
  void evaluate(Candidate &c, double cutoff) const;
  /// The backend's latency for `kernel` alone (no numeric check), or none when it does not verify on the
  /// target, cannot be profiled or is a lower bound leaving out more than the original's: closures are scored with it.
  std::optional<double> estimateLatency(const nki::Kernel &kernel) const;

private:
  struct State;
  explicit CandidateEvaluator(std::unique_ptr<State> state);
  /// evaluate() with a device backend: profile and numeric check on the outputs the device returned.
  void evaluateOnDevice(Candidate &c, const nki::Kernel &k, double cutoff) const;
  std::unique_ptr<State> S;
};

/// Normalised source hash: comments, blank lines and trailing spaces do not count.
std::string normalisedHash(llvm::StringRef text);

/// Runs the search on the kernel in `path` with input shapes `inputs`.
llvm::Expected<SearchResult> optimize(llvm::StringRef path, const nki::InputSpecs &inputs, Planner &planner,
                                      const SearchOptions &options, SearchObserver *observer = nullptr);

/// The built-in planner: profile-guided choices over the legal-op menu, with
/// seeded exploration, plus patterns offered by `patterns` (e.g. from memory).
/// Op lists a memory offers for a kernel, each with the pattern it came from.
struct Suggestion {
  int64_t patternId = 0;
  std::string label;
  std::vector<nlohmann::json> ops;
};
using SuggestionSource = std::function<std::vector<Suggestion>(const nki::Kernel &)>;

std::unique_ptr<Planner> makeBuiltinPlanner(const nki::InputSpecs *inputs, SuggestionSource patterns = {});

/// The LLM planner: the planner and executor agents of `session`; the executor's
/// ops are validated by applying them (refusals go back as fixer feedback).
std::unique_ptr<Planner>
makeLlmPlanner(agent::AgentSession &session, const nki::InputSpecs *inputs, llvm::StringRef referencePath,
               std::function<std::vector<agent::Experience>(const nki::Kernel &)> experiences = {},
               size_t maxMenu = 200);

/// What a report knows beyond the search itself.
struct ReportContext {
  std::string kernelPath;
  std::string caseName;                 // suite case, if any
  std::optional<double> rooflinePeakMs; // AccelOpt's peak, when the problem is known
  std::string planner = "builtin";
  nlohmann::json extra; // e.g. LLM token and dollar accounting
};

/// Writes report.md, report.json, best.diff and latency.svg into `dir` (atomically).
llvm::Error writeReport(llvm::StringRef dir, const SearchResult &result, const SearchOptions &options,
                        const ReportContext &context);

} // namespace accelopt::search
