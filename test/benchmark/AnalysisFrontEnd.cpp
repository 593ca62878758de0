// Front end + verifier time per NKIBench kernel (goal: <= 5 ms each).
#include "Analysis/Verifier.h"
#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"

#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>

using namespace accelopt;

static void frontEndAndVerify(benchmark::State &state, nki::SuiteCase c) {
  auto buf = llvm::MemoryBuffer::getFile(c.kernelPath);
  if (!buf) {
    state.SkipWithError("kernel file missing");
    return;
  }
  std::string text = (*buf)->getBuffer().str();
  nki::FrontEndOptions opts;
  opts.inputs = &c.inputs;
  for (auto _ : state) {
    auto file = nki::buildKernelFile(std::move(*syntax::SourceBuffer::fromText(c.kernelPath, text)), opts);
    if (!file) {
      state.SkipWithError("front end failed");
      llvm::consumeError(file.takeError());
      return;
    }
    auto diags = analysis::verify(file->kernels.front());
    benchmark::DoNotOptimize(diags.data());
  }
}

int main(int argc, char **argv) {
  auto suite = nki::loadSuite({ACCELOPT_SOURCE_DIR "/nkibench/manifest.json", ACCELOPT_NKIBENCH_DIR});
  if (!suite) {
    llvm::errs() << llvm::toString(suite.takeError()) << "\n";
    return 1;
  }
  for (auto &c : *suite)
    if (c.kernelPath.find("/nkibench/upstream/") != std::string::npos)
      benchmark::RegisterBenchmark(("FrontEndVerify/" + c.name).c_str(), frontEndAndVerify, c)
          ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
