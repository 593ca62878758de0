// Throughput of the interpreter's tile matmul on NKIBench-shaped work versus one
// direct cblas_sgemm of the same total problem.
//
// NKIBench's matmul kernel computes each [128 x 512] PSUM tile as an accumulation
// group of 40 nc_matmuls over K = 5120: stationary [128 x 128] tiles of the
// transposed lhs and moving [128 x 512] windows of a wider rhs. The interpreter
// runs that as 40 accumulating calls; the baseline is a single sgemm with
// M = 128, N = 512, K = 5120 over the same (strided) data. The ratio of the two
// GFLOP/s figures is printed at the end; the goal is >= 0.5.
#include "Interp/NDArray.h"
#include "Interp/Random.h"
#include "Interp/TileOps.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdio>
#include <map>
#include <string>

using namespace accelopt::interp;

namespace {

constexpr int64_t kPartitions = 128; // K per tile and M (stationary free size)
constexpr int64_t kMovingFree = 512; // N (moving free size = one PSUM bank)
constexpr int64_t kKTiles = 40;      // K = 5120
constexpr int64_t kRhsWidth = 2048;  // the moving windows are strided views of a wider rhs
constexpr int64_t kK = kPartitions * kKTiles;
constexpr double kFlops = 2.0 * kPartitions * kMovingFree * kK;

struct Operands {
  NDArray lhsT = llvm::cantFail(NDArray::allocate({kK, kPartitions})); // [K, M]
  NDArray rhs = llvm::cantFail(NDArray::allocate({kK, kRhsWidth}));    // [K, 2048]
  NDArray out = llvm::cantFail(NDArray::allocate({kPartitions, kMovingFree}));

  Operands() {
    Random random(0);
    random.fillNormal(lhsT.values(), 0.0f, 1.0f);
    random.fillNormal(rhs.values(), 0.0f, 1.0f);
  }
  // Column block 1 of the rhs, so every moving tile has row stride 2048.
  const float *movingBase() const { return rhs.data() + kMovingFree; }
};

const Operands &operands() {
  static const Operands instance;
  return instance;
}

void setGflops(benchmark::State &state) {
  state.counters["GFLOP/s"] = benchmark::Counter(kFlops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TileMatmulAccumulationGroup(benchmark::State &state) {
  const Operands &in = operands();
  NDArray out = llvm::cantFail(NDArray::allocate({kPartitions, kMovingFree}));
  for (auto _ : state) {
    for (int64_t t = 0; t < kKTiles; ++t) {
      ConstTile stationary{in.lhsT.data() + t * kPartitions * kPartitions, kPartitions, kPartitions, kPartitions};
      ConstTile moving{in.movingBase() + t * kPartitions * kRhsWidth, kPartitions, kMovingFree, kRhsWidth};
      if (llvm::Error err = matmul(out.asTile(), stationary, moving, /*accumulate=*/t > 0)) {
        state.SkipWithError(llvm::toString(std::move(err)).c_str());
        return;
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  setGflops(state);
}

void BM_DirectSgemm(benchmark::State &state) {
  const Operands &in = operands();
  NDArray out = llvm::cantFail(NDArray::allocate({kPartitions, kMovingFree}));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kPartitions, kMovingFree, kK, 1.0f, in.lhsT.data(),
                kPartitions, in.movingBase(), kRhsWidth, 0.0f, out.data(), kMovingFree);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  setGflops(state);
}

BENCHMARK(BM_TileMatmulAccumulationGroup)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DirectSgemm)->Unit(benchmark::kMillisecond);

/// Console output plus a record of each benchmark's GFLOP/s for the final ratio:
/// the mean when repetitions are aggregated, else the (last) single run.
class RatioReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run> &runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run &run : runs) {
      bool usable = run.aggregate_name.empty() || run.aggregate_name == "mean";
      if (auto counter = run.counters.find("GFLOP/s"); usable && counter != run.counters.end())
        gflops[run.run_name.function_name] = counter->second.value;
    }
  }
  std::map<std::string, double> gflops;
};

} // namespace

int main(int argc, char **argv) {
  // One BLAS thread for both sides: the interpreter evaluates candidates in
  // parallel, so per-call threading is not what it gets in practice.
  openblas_set_num_threads(1);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  auto tiles = reporter.gflops.find("BM_TileMatmulAccumulationGroup");
  auto direct = reporter.gflops.find("BM_DirectSgemm");
  if (tiles != reporter.gflops.end() && direct != reporter.gflops.end() && direct->second > 0)
    std::printf("tile matmul / direct sgemm throughput ratio: %.2f (goal >= 0.50)\n", tiles->second / direct->second);
  return 0;
}
