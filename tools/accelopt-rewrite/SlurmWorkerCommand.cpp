// accelopt-rewrite slurm-worker BATCH.json: one task of a --dispatch slurm job
// array (lib/Dispatch/Slurm.h); not meant to be run by hand.
#include "Command.h"

#include "Dispatch/Slurm.h"
#include "KernelInputs.h"

#include <cstdlib>
#include <string>

namespace accelopt::cli {
namespace {

cl::SubCommand WorkerCmd("slurm-worker", "Evaluate one candidate of a --dispatch slurm job array (run by Slurm)");
cl::opt<std::string> BatchFile(cl::Positional, cl::desc("<batch.json>"), cl::Required, cl::sub(WorkerCmd),
                               cl::cat(category()));
cl::opt<int> TaskIndex("task", cl::desc("Task index (default: $SLURM_ARRAY_TASK_ID)"), cl::init(-1), cl::sub(WorkerCmd),
                       cl::cat(category()));

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

int runWorker() {
  int index = TaskIndex;
  if (index < 0) {
    std::string id = env("SLURM_ARRAY_TASK_ID");
    if (id.empty())
      return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                                 "error: slurm-worker: no --task and no $SLURM_ARRAY_TASK_ID"));
    index = std::atoi(id.c_str());
  }
  std::string where = "local";
  if (!env("SLURM_ARRAY_JOB_ID").empty())
    where =
        "slurm job " + env("SLURM_ARRAY_JOB_ID") + "_" + env("SLURM_ARRAY_TASK_ID") + " on " + env("SLURMD_NODENAME");
  applyMemoryLimit(0);
  if (auto err = dispatch::runWorker(BatchFile, unsigned(index), where)) return reportError(std::move(err));
  return 0;
}

RegisterCommand Registration(WorkerCmd, runWorker);

} // namespace
} // namespace accelopt::cli
