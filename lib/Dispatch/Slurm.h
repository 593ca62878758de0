// Slurm dispatch of candidate evaluation (--dispatch slurm): the search stays
// where the user is; each batch of candidates becomes one Slurm job array whose
// tasks run `accelopt-rewrite slurm-worker` on a candidate file in a shared
// directory and write their verdict there atomically. Failed, timed-out or
// cancelled tasks are retried once, then marked failed with their reason; a
// result already in the shared directory is never evaluated again (--resume
// after the submitting process was killed).
//
// Shared directory layout, per run key (hash of the original and of every
// option that changes a verdict):
//   <dir>/<run>/context.json   what a worker needs to rebuild the evaluator
//   <dir>/<run>/original.py    the original kernel
//   <dir>/<run>/cand/<key>.py  candidate texts
//   <dir>/<run>/batch-N.json   one job array: [{key, cutoff, attempt}], by task index
//   <dir>/<run>/job/<key>.json the job a candidate was last submitted as
//   <dir>/<run>/result/<key>.json  verdicts (temp + rename)
//   <dir>/<run>/log/           task stdout/stderr
// and <dir>/bench/ for `bench` cases (batch, job, result, log alike).
#pragma once

#include "NKI/FrontEnd.h"
#include "Search/Search.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace accelopt::dispatch {

struct SlurmOptions {
  std::string partition;     // --partition
  std::string extraOptions;  // --slurm-opts, split on blanks, passed to sbatch
  std::string sharedDir;     // --slurm-dir: visible at the same path on every node
  std::string workerProgram; // the accelopt-rewrite the tasks run
  double pollSeconds = 0.5;
  unsigned retries = 1;               // resubmissions of a failed task before it is marked failed
  llvm::raw_ostream *notes = nullptr; // submissions, retries, pending reasons
};

/// Counts for the report and the tests.
struct SlurmStats {
  size_t submitted = 0; // tasks submitted (retries included)
  size_t retried = 0;
  size_t failed = 0;  // marked failed after the retries
  size_t reused = 0;  // results found in the shared directory, not evaluated again
  size_t adopted = 0; // tasks of an earlier (killed) submitter still queued or running
};

class SlurmEvaluator : public search::RemoteEvaluator {
public:
  /// Checks that Slurm answers (squeue), writes the run's context and original.
  static llvm::Expected<std::unique_ptr<SlurmEvaluator>> create(const SlurmOptions &options, llvm::StringRef kernelPath,
                                                                const nki::InputSpecs &inputs,
                                                                const search::SearchOptions &search);
  ~SlurmEvaluator() override;
  llvm::Error evaluate(const std::vector<search::Candidate *> &pending, double cutoff) override;
  const SlurmStats &stats() const;
  /// The run's directory inside the shared directory.
  llvm::StringRef runDir() const;

private:
  struct Impl;
  explicit SlurmEvaluator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> I;
};

/// What Slurm says of one task of a job array ("12_3").
struct TaskState {
  std::string state;  // RUNNING, PENDING, COMPLETED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, ...
  std::string node;   // where it ran, when known
  std::string reason; // why it is pending (squeue %r)
};

/// Reads `squeue -h -r -t all -o '%i|%T|%N|%r'`: task id → state.
std::map<std::string, TaskState> parseSqueue(llvm::StringRef text);
/// Reads `sacct -n -P -X -j JOB --format=JobID,State,NodeList` for task `job`
/// ("CANCELLED by 0" is CANCELLED); nullopt when it does not report it.
std::optional<TaskState> parseSacct(llvm::StringRef text, llvm::StringRef job);

/// What the submitter does about a task that has not written its result.
struct TaskOutcome {
  enum Action { Wait, Retry, Fail } action = Wait;
  std::string reason; // Retry, Fail: how it ended, e.g. "TIMEOUT on node1"
};
/// The outcome of task `job` on its `attempt` (from 1) given `state` (null:
/// unknown to squeue and sacct), after `unseenSeconds` unknown or
/// `completedSeconds` COMPLETED without a result; it is retried while
/// `attempt <= retries`, then fails.
TaskOutcome judgeTask(const TaskState *state, unsigned attempt, unsigned retries, double unseenSeconds,
                      double completedSeconds);
/// A failed task's error, as the candidate or case carries it.
std::string failedTaskError(llvm::StringRef job, const TaskOutcome &outcome, unsigned attempt);

/// One `bench` case profiled by a backend, as bench reports it.
struct CaseProfile {
  std::string kernelPath;
  nki::InputSpecs inputs;
  std::string target; // "trn1", "trn2" or a target JSON file
  // Filled by profileCase / profileOnSlurm:
  double estimatedMs = 0;
  size_t unmodelled = 0; // left out by the model: the estimate is a lower bound
  std::string lowerBoundNote;
  std::string error; // set when the case could not be profiled
  std::string ranOn; // "local" or "slurm job 12_3 on node1"
};

/// Profiles `c` here with the backend of c.target.
void profileCase(CaseProfile &c);

/// Profiles every case as one Slurm job array (bench --dispatch slurm); a case
/// whose task fails twice gets the Slurm reason as its error.
llvm::Error profileOnSlurm(const SlurmOptions &options, std::vector<CaseProfile> &cases);

/// The task side: evaluates the candidate (or profiles the case) of task
/// `index` of `batchFile` and writes its result file atomically. `where` says
/// where it ran.
llvm::Error runWorker(llvm::StringRef batchFile, unsigned index, llvm::StringRef where);

} // namespace accelopt::dispatch
