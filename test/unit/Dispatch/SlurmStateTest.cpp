// The submitter's reading of Slurm's task states: squeue and sacct output as
// the clients print it, and what becomes of a task that ended without a result
// (retried once, then failed with the Slurm reason).
#include "Dispatch/Slurm.h"

#include <gtest/gtest.h>

using namespace accelopt::dispatch;

namespace {

// `squeue -h -r -t all -o '%i|%T|%N|%r'` as recorded on the one-node test
// cluster (scripts/slurm-cluster.sh): tasks pending on a drained node, running,
// completed, past their --time limit, and on a node whose slurmd was killed
// (sbatch --no-requeue).
const char *SqueueOutput = "2_0|PENDING||ReqNodeNotAvail, UnavailableNodes:localhost\n"
                           "1_1|RUNNING|localhost|None\n"
                           "2_1|COMPLETED|localhost|None\n"
                           "1_0|TIMEOUT|localhost|TimeLimit\n"
                           "6_0|NODE_FAIL|localhost|NodeDown\n";

TEST(SlurmState, ParsesSqueue) {
  auto states = parseSqueue(SqueueOutput);
  ASSERT_EQ(states.size(), 5u);
  EXPECT_EQ(states["1_1"].state, "RUNNING");
  EXPECT_EQ(states["1_1"].node, "localhost");
  EXPECT_EQ(states["2_0"].state, "PENDING");
  EXPECT_EQ(states["2_0"].node, "");
  EXPECT_EQ(states["2_0"].reason, "ReqNodeNotAvail, UnavailableNodes:localhost");
  EXPECT_EQ(states["1_0"].state, "TIMEOUT");
  EXPECT_EQ(states["6_0"].state, "NODE_FAIL");
  EXPECT_EQ(judgeTask(&states["6_0"], 1, 1, 0, 0).reason, "NODE_FAIL on localhost");
  EXPECT_EQ(judgeTask(&states["2_1"], 1, 1, 0, 0).action, TaskOutcome::Wait); // its result may still be in flight
}

TEST(SlurmState, ParsesSacct) {
  // `sacct -n -P -X -j JOB --format=JobID,State,NodeList` in the format sacct
  // prints (the test cluster keeps no accounting, so these lines are written
  // here, not recorded): OUT_OF_MEMORY needs a cgroup-enforced memory limit.
  auto oom = parseSacct("12_3|OUT_OF_MEMORY|trn1-dy-1\n", "12_3");
  ASSERT_TRUE(oom);
  EXPECT_EQ(oom->state, "OUT_OF_MEMORY");
  EXPECT_EQ(oom->node, "trn1-dy-1");
  auto cancelled = parseSacct("12_4|CANCELLED by 1000|trn1-dy-2\n", "12_4");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->state, "CANCELLED");
  EXPECT_FALSE(parseSacct("12_5|NODE_FAIL|trn1-dy-1\n", "12_6")); // another task
  EXPECT_FALSE(parseSacct("", "12_6"));
}

TEST(SlurmState, FailedStatesAreRetriedOnceThenFail) {
  for (const char *state : {"TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "CANCELLED", "FAILED"}) {
    TaskState s{state, "trn1-dy-1", ""};
    TaskOutcome first = judgeTask(&s, /*attempt=*/1, /*retries=*/1, 0, 0);
    EXPECT_EQ(first.action, TaskOutcome::Retry) << state;
    EXPECT_EQ(first.reason, std::string(state) + " on trn1-dy-1");
    TaskOutcome second = judgeTask(&s, 2, 1, 0, 0);
    EXPECT_EQ(second.action, TaskOutcome::Fail) << state;
    EXPECT_EQ(failedTaskError("12_3", second, 2),
              "slurm job 12_3 ended " + std::string(state) + " on trn1-dy-1 (after 2 attempts)");
  }
}

TEST(SlurmState, RunningPendingAndFreshTasksWait) {
  TaskState running{"RUNNING", "localhost", "None"}, pending{"PENDING", "", "Resources"};
  EXPECT_EQ(judgeTask(&running, 2, 1, 0, 0).action, TaskOutcome::Wait);
  EXPECT_EQ(judgeTask(&pending, 2, 1, 0, 0).action, TaskOutcome::Wait);
  EXPECT_EQ(judgeTask(nullptr, 1, 1, 5, 0).action, TaskOutcome::Wait);
  TaskOutcome vanished = judgeTask(nullptr, 1, 1, 30, 0);
  EXPECT_EQ(vanished.action, TaskOutcome::Retry);
  EXPECT_EQ(vanished.reason, "vanished from the queue");
  TaskState completed{"COMPLETED", "localhost", ""};
  EXPECT_EQ(judgeTask(&completed, 1, 1, 0, 2).action, TaskOutcome::Wait);
  EXPECT_EQ(judgeTask(&completed, 2, 1, 0, 10).action, TaskOutcome::Fail);
}

} // namespace
