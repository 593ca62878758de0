// Time to profile whole NKIBench kernels with the performance model: trace
// mode from the kernel IR (buildTrace) plus the timing model, per iteration.
// The budget is 200 ms for the largest kernel (gqa_full, ~86k instructions;
// lora and matmul follow). Needs the NKIBench checkout beside the repository;
// cases whose kernel is missing are skipped with an error message.
#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"
#include "Perf/Hardware.h"
#include "Perf/Profile.h"
#include "Perf/TimingModel.h"
#include "Perf/TraceBuilder.h"

#include <benchmark/benchmark.h>

using namespace accelopt;

namespace {

struct Loaded {
  nki::KernelFile file;
  std::string error;
};

Loaded load(const std::string &caseName) {
  Loaded out;
  nki::SuiteLocation where{ACCELOPT_SOURCE_DIR "/nkibench/manifest.json", ACCELOPT_NKIBENCH_DIR};
  auto c = nki::findCase(where, caseName);
  if (!c) {
    out.error = llvm::toString(c.takeError());
    return out;
  }
  nki::FrontEndOptions opts;
  opts.inputs = &c->inputs;
  auto file = nki::loadKernelFile(c->kernelPath, opts);
  if (!file) {
    out.error = llvm::toString(file.takeError());
    return out;
  }
  out.file = std::move(*file);
  return out;
}

void profileCase(benchmark::State &state, const std::string &caseName, const char *target) {
  Loaded loaded = load(caseName);
  if (!loaded.error.empty()) {
    state.SkipWithError(loaded.error.c_str());
    return;
  }
  auto hw = perf::loadTarget(target);
  if (!hw) {
    state.SkipWithError(llvm::toString(hw.takeError()).c_str());
    return;
  }
  perf::TimingModel model(std::move(*hw));
  const nki::Kernel &kernel = loaded.file.kernels.front();
  size_t instructions = 0;
  double latency = 0;
  for (auto _ : state) {
    auto trace = perf::buildTrace(kernel);
    if (!trace) {
      state.SkipWithError(llvm::toString(trace.takeError()).c_str());
      return;
    }
    auto result = model.simulate(*trace);
    if (!result) {
      state.SkipWithError(llvm::toString(result.takeError()).c_str());
      return;
    }
    instructions = trace->instructions().size();
    latency = perf::summarize(*result, model.hardware()).latency;
    benchmark::DoNotOptimize(latency);
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["estimated_ms"] = latency;
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * instructions));
}

void traceOnly(benchmark::State &state, const std::string &caseName) {
  Loaded loaded = load(caseName);
  if (!loaded.error.empty()) {
    state.SkipWithError(loaded.error.c_str());
    return;
  }
  const nki::Kernel &kernel = loaded.file.kernels.front();
  for (auto _ : state) {
    auto trace = perf::buildTrace(kernel);
    if (!trace) {
      state.SkipWithError(llvm::toString(trace.takeError()).c_str());
      return;
    }
    benchmark::DoNotOptimize(trace->instructions().data());
  }
}

} // namespace

BENCHMARK_CAPTURE(profileCase, gqa_full_trn1, "gqa_full_B1_D128_KH8_N4096_QH16", "trn1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(profileCase, lora_trn1, "lora_K5120_M4096_N12288_R128", "trn1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(profileCase, matmul_trn1, "matmul_K5120_M4096_N12288", "trn1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(profileCase, gqa_full_trn2, "gqa_full_B1_D128_KH8_N4096_QH16", "trn2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(profileCase, silu_trn1, "silu_M4096_N7168", "trn1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(traceOnly, gqa_full, "gqa_full_B1_D128_KH8_N4096_QH16")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
