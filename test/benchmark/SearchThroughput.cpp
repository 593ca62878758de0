// Candidates evaluated per minute by the optimization loop (built-in planner,
// -j 2) on mid-size NKIBench kernels. Goal: >= 300 per minute on 2 cores.
#include "NKI/InputSources.h"
#include "Search/Search.h"

#include <benchmark/benchmark.h>

using namespace accelopt;

static void searchThroughput(benchmark::State &state, nki::SuiteCase c) {
  search::SearchOptions opts;
  opts.iterations = 3;
  opts.beam = 2;
  opts.plans = 6;
  opts.samples = 2;
  opts.jobs = 2;
  opts.numericSeeds = 1;
  double candidates = 0;
  for (auto _ : state) {
    auto planner = search::makeBuiltinPlanner(&c.inputs);
    auto result = search::optimize(c.kernelPath, c.inputs, *planner, opts);
    if (!result) {
      state.SkipWithError(llvm::toString(result.takeError()).c_str());
      return;
    }
    candidates += double(result->candidates.size() - 1);
  }
  state.counters["candidates"] = benchmark::Counter(candidates, benchmark::Counter::kAvgIterations);
  state.counters["per_minute"] = benchmark::Counter(candidates * 60, benchmark::Counter::kIsRate);
}

int main(int argc, char **argv) {
  auto suite = nki::loadSuite({ACCELOPT_SOURCE_DIR "/nkibench/manifest.json", ACCELOPT_NKIBENCH_DIR});
  if (!suite) {
    llvm::errs() << llvm::toString(suite.takeError()) << "\n";
    return 1;
  }
  for (auto &c : *suite)
    if (c.name == "add_rmsnorm_matmul_K1024_M4096_N2048" || c.name == "rmsnorm_matmul_K1024_M4096_N2048" ||
        c.name == "mamba_C256_M7168_S16" || c.name == "silu_M4096_N7168")
      benchmark::RegisterBenchmark(("Search/" + c.name).c_str(), searchThroughput, c)
          ->Unit(benchmark::kSecond)
          ->Iterations(1)
          ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
