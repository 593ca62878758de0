// Optimization memory: candidate insertion (one transaction each, WAL),
// structural signatures and pattern instantiation.
#include "Memory/Hash.h"
#include "Memory/Pattern.h"
#include "Memory/Signature.h"
#include "Memory/Store.h"
#include "NKI/FrontEnd.h"

#include "llvm/Support/FileSystem.h"

#include <benchmark/benchmark.h>

using namespace accelopt;
using namespace accelopt::memory;

namespace {

nki::KernelFile loadSilu() {
  auto file = nki::loadKernelFile(ACCELOPT_SOURCE_DIR "/nkibench/kernels/silu_M256_N2048.py", {});
  if (!file) {
    llvm::consumeError(file.takeError());
    std::abort();
  }
  return std::move(*file);
}

void BM_InsertCandidate(benchmark::State &state) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("accelopt-memory-bench", dir)) std::abort();
  auto store = Store::open((dir + "/bench.db").str());
  if (!store) std::abort();
  auto kernel = (*store)->upsertKernel({"k", "k.py", "h", ""});
  if (!kernel) std::abort();
  auto run = (*store)->beginRun(*kernel, nlohmann::json::object());
  if (!run) std::abort();
  int64_t i = 0;
  for (auto _ : state) {
    NewCandidate c;
    c.kernel = *kernel;
    c.run = *run;
    c.ops = nlohmann::json::array({{{"op", "unroll"}, {"loop", "L2"}, {"factor", 2}}});
    c.sourceHash = sha256Hex(std::to_string(i++));
    c.status = CandidateStatus::Correct;
    c.profiles.push_back({"sim-trn2", 1.0, {{"latency", 1.0}}});
    auto r = (*store)->insertCandidate(c);
    if (!r) std::abort();
  }
  store->reset();
  llvm::sys::fs::remove_directories(dir);
}
BENCHMARK(BM_InsertCandidate);

void BM_Signature(benchmark::State &state) {
  auto file = loadSilu();
  for (auto _ : state) benchmark::DoNotOptimize(computeSignature(file.kernels[0]));
}
BENCHMARK(BM_Signature);

void BM_InstantiatePattern(benchmark::State &state) {
  auto file = loadSilu();
  std::vector<nlohmann::json> ops = {nlohmann::json::parse(R"({"op":"interchange","outer":"L1","inner":"L2"})"),
                                     nlohmann::json::parse(R"({"op":"fission","loop":"L2","at":"S11"})")};
  auto p = generalisePattern(file.kernels[0], ops);
  if (!p) std::abort();
  for (auto _ : state) {
    auto inst = instantiatePattern(*p, file.kernels[0]);
    if (!inst) std::abort();
    benchmark::DoNotOptimize(inst->size());
  }
}
BENCHMARK(BM_InstantiatePattern);

} // namespace

BENCHMARK_MAIN();
