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

struct SearchOptions {
  int iterations = 4;        // T
  int beam = 2;              // B
  int plans = 4;             // N plans per beam candidate
  int samples = 2;           // K realisations per plan
  uint64_t seed = 0;
  unsigned jobs = 1;         // parallel candidate evaluations
  std::string target = "trn1";
  /// The profile backend of every candidate (e.g. `--backend neuron`); null:
  /// the simulator for `target`.
  std::shared_ptr<const profile::Backend> backend;
  unsigned numericSeeds = 2; // seeds of the numeric check (AccelOpt's 0, 21, ...)
  interp::Tolerance tolerance;  // atol/rtol of the numeric check
  double candidateTimeout = 120;  // seconds per interpreter run
  int maxOpsPerCandidate = 8;     // candidates grow by one plan per iteration
  /// Numerically check every candidate; otherwise only those the profile says
  /// could enter the beam (the others are never selected, so never accepted).
  bool checkAll = false;
  std::string kernelName;
  /// Accept `replace` ops from the planner or the memory (--allow-replace): arbitrary code.
  bool allowReplace = false;
};

/// One evaluated kernel version.
struct Candidate {
  int id = -1;
  int parent = -1;           // -1 for the original
  int iteration = 0;
  std::vector<nlohmann::json> ops;  // from the original kernel
  std::string plan;          // what the planner intended
  int64_t patternId = 0;     // the memory pattern it instantiates, if any
  std::string text;
  std::string hash;          // normalised source hash
  /// Slower: profiled as slower than every beam member, so it could not be
  /// selected and its numeric check was skipped (see SearchOptions::checkAll).
  enum Status { Pending, Refused, Invalid, Incorrect, Correct, Slower } status = Pending;
  std::string error;
  std::optional<perf::Profile> profile;
  double latency() const { return profile ? profile->latency : 1e300; }
};

/// A plan is a step the planner wants tried; realise() turns it into op lists.
struct Plan {
  std::string description;
  int64_t patternId = 0;     // set when the plan comes from a memory pattern
  std::vector<std::vector<nlohmann::json>> realisations;  // each: ops to append to the parent's
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
  size_t evaluated = 0;      // new candidates evaluated this iteration
  size_t correct = 0;
};

struct SearchResult {
  std::vector<Candidate> candidates;  // every candidate, candidates[0] is the original
  int bestId = 0;
  std::vector<IterationRecord> iterations;
  double seconds = 0;
  const Candidate &best() const { return candidates[bestId]; }
  const Candidate &original() const { return candidates[0]; }
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
std::unique_ptr<Planner> makeLlmPlanner(
    agent::AgentSession &session, const nki::InputSpecs *inputs, llvm::StringRef referencePath,
    std::function<std::vector<agent::Experience>(const nki::Kernel &)> experiences = {}, size_t maxMenu = 200);

/// What a report knows beyond the search itself.
struct ReportContext {
  std::string kernelPath;
  std::string caseName;                 // suite case, if any
  std::optional<double> rooflinePeakMs; // AccelOpt's peak, when the problem is known
  std::string planner = "builtin";
  nlohmann::json extra;                 // e.g. LLM token and dollar accounting
};

/// Writes report.md, report.json, best.diff and latency.svg into `dir` (atomically).
llvm::Error writeReport(llvm::StringRef dir, const SearchResult &result, const SearchOptions &options,
                        const ReportContext &context);

} // namespace accelopt::search
