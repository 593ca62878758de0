// Connects the search loop to the optimization memory: every candidate, beam
// and experience is stored as it happens (so a killed run loses nothing and
// --resume replays from the store), and remembered patterns are offered to
// the planner for new kernels.
#pragma once

#include "Memory/Experience.h"
#include "Memory/Store.h"
#include "Search/Search.h"

#include <map>
#include <memory>

namespace accelopt::search {

class MemoryBridge : public SearchObserver {
public:
  /// Records `kernel` and starts a run; with `resume`, continues the kernel's
  /// latest unfinished run (its candidates are served from the store).
  static llvm::Expected<std::unique_ptr<MemoryBridge>> open(memory::Store &store, const nki::Kernel &kernel,
                                                            const nlohmann::json &config, bool resume,
                                                            memory::ExperienceConfig experiences = {});

  void candidateEvaluated(const Candidate &c) override;
  void beamSelected(int iteration, const std::vector<int> &beam) override;
  void iterationDone(int iteration, const Candidate &best, size_t evaluated, size_t total) override;
  std::optional<Candidate> known(const std::string &hash) override;

  /// Patterns remembered from structurally similar kernels, instantiated here.
  SuggestionSource suggestions(size_t limit = 4);
  /// Lessons for the LLM planner's prompt: summary, ops, speedup.
  std::vector<std::tuple<std::string, nlohmann::json, double>> lessons(size_t limit = 8);

  /// Marks the run finished (or failed) and reports the first storage error, if any.
  llvm::Error finish(bool ok);

  int64_t runId() const { return Run; }
  bool resumed() const { return Resumed; }
  size_t reusedCandidates() const { return Reused; }

private:
  MemoryBridge(memory::Store &store) : S(store) {}
  void note(llvm::Error err);

  memory::Store &S;
  memory::ExperienceConfig Experiences;
  int64_t Kernel = 0, Run = 0;
  bool Resumed = false;
  size_t Reused = 0;
  std::string Input;             // the kernel file path, to re-parse candidates
  std::map<int, int64_t> DbId;   // search id -> candidate row
  std::map<int, Candidate> Seen; // search id -> candidate (for experiences)
  std::vector<int> ThisIteration;
  llvm::Error FirstError = llvm::Error::success();
};

} // namespace accelopt::search
