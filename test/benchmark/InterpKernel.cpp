// Interpreter nc_matmul throughput on a whole tiled-matmul kernel (loads, PSUM
// accumulation, copies, stores included) against one cblas_sgemm of the same
// problem, single-threaded. Goal: ratio >= 0.5. Also a full-size elementwise
// kernel (softmax over 128 MiB), the non-matmul cost of the big NKIBench kernels.
#include "Interp/Interpreter.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

using namespace accelopt;

namespace {

constexpr int64_t K = 1024, M = 512, N = 2048;

/// Runs an NKIBench kernel on fresh random inputs of `specs` once per iteration (input set-up untimed);
/// false after reporting an error.
bool runKernelEachIteration(benchmark::State &state, const char *kernelFile, const char *specs) {
  auto file = nki::loadKernelFile(std::string(ACCELOPT_SOURCE_DIR "/nkibench/kernels/") + kernelFile, {});
  if (!file) {
    state.SkipWithError(llvm::toString(file.takeError()).c_str());
    return false;
  }
  auto inputs = *nki::parseInputSpecs(specs);
  for (auto _ : state) {
    state.PauseTiming();
    auto args = interp::makeRandomInputs(inputs, 0);
    state.ResumeTiming();
    auto result = interp::runKernel(*file, file->kernels.front(), std::move(*args));
    if (!result) {
      state.SkipWithError(llvm::toString(result.takeError()).c_str());
      return false;
    }
    benchmark::DoNotOptimize(result->outputs.front().data());
  }
  return true;
}

void interpreterMatmul(benchmark::State &state) {
  if (!runKernelEachIteration(state, "matmul_K512_M256_N1024.py", "lhsT=f32[1024,512],rhs=f32[1024,2048]")) return;
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * K * M * N, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// A full-size elementwise kernel: the local softmax over [8192, 4096] fp32 (128 MiB in, 128 MiB out).
// Measures what the big NKIBench kernels spend outside matmul: allocating and filling GiB-sized tensors
// (page faults), gathering operands and scattering results with the affine race check.
void interpreterSoftmaxLarge(benchmark::State &state) {
  constexpr int64_t Rows = 8192, Cols = 4096;
  if (!runKernelEachIteration(state, "softmax_M256_N512.py", "x=f32[8192,4096]")) return;
  state.counters["Melem/s"] = benchmark::Counter(double(Rows * Cols), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void directSgemm(benchmark::State &state) {
  openblas_set_num_threads(1);
  std::vector<float> a(K * M, 0.5f), b(K * N, 0.25f), c(M * N);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), M, b.data(), N, 0.0f, c.data(), N);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * K * M * N, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

} // namespace

BENCHMARK(interpreterMatmul)->Unit(benchmark::kMillisecond);
BENCHMARK(interpreterSoftmaxLarge)->Unit(benchmark::kMillisecond);
BENCHMARK(directSgemm)->Unit(benchmark::kMillisecond);

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
