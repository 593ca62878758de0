// Cost of the rewrite engine: one legal candidate (apply, re-parse, re-verify) and
// the whole planner menu (`legal`) on our matmul and on NKIBench's bmm_softmax.
#include "Rewrite/Rewrite.h"

#include "NKI/FrontEnd.h"

#include <benchmark/benchmark.h>

#include <string>

using namespace accelopt;

namespace {

struct Fixture {
  std::unique_ptr<syntax::SourceBuffer> source;
  nki::InputSpecs inputs;
  bool ok = false;

  Fixture(const std::string &path, const char *specs) {
    auto buf = syntax::SourceBuffer::fromFile(path);
    auto in = nki::parseInputSpecs(specs);
    if (!buf || !in) {
      if (!buf) llvm::consumeError(buf.takeError());
      if (!in) llvm::consumeError(in.takeError());
      return;
    }
    source = std::move(*buf);
    inputs = std::move(*in);
    ok = true;
  }
};

Fixture &matmul() {
  static Fixture f(std::string(ACCELOPT_SOURCE_DIR) + "/nkibench/kernels/matmul_K512_M256_N1024.py",
                   "lhsT=f32[512,256],rhs=f32[512,1024]");
  return f;
}

Fixture &bmmSoftmax() {
  static Fixture f(std::string(ACCELOPT_NKIBENCH_DIR) + "/kernels/bmm_softmax_B16_K64_M4096_N4096_0.py",
                   "v1=f32[16,4096,64],v2=f32[16,64,4096]");
  return f;
}

/// The largest NKIBench kernel (by source size).
Fixture &gqa() {
  static Fixture f(std::string(ACCELOPT_NKIBENCH_DIR) + "/kernels/gqa_full_B1_N4096_QH16_KH8_D128_0.py",
                   "v1=f32[32,128,16,128],v2=f32[1,8,4,128,8,128],v3=f32[1,32,128,1024]");
  return f;
}

/// Apply + re-parse + re-verify of one legal op on the largest NKIBench kernel (goal <= 2 ms).
void BM_ApplyOneOpLargest(benchmark::State &state) {
  Fixture &f = gqa();
  if (!f.ok) return state.SkipWithError("kernel not found");
  auto legal = rewrite::legalOps(*f.source, {&f.inputs, ""});
  if (!legal || legal->empty()) {
    if (!legal) llvm::consumeError(legal.takeError());
    return state.SkipWithError("no legal op");
  }
  std::vector<nlohmann::json> ops = {legal->front().op};
  for (auto _ : state) {
    auto res = rewrite::applyCandidate(*f.source, ops, {&f.inputs, ""});
    if (res.status != rewrite::Status::Applied) return state.SkipWithError(res.message.c_str());
    benchmark::DoNotOptimize(res.text);
  }
}
BENCHMARK(BM_ApplyOneOpLargest)->Unit(benchmark::kMillisecond);

void BM_ApplySplit(benchmark::State &state) {
  Fixture &f = matmul();
  if (!f.ok) return state.SkipWithError("kernel not found");
  auto ops = rewrite::parseOps(R"([{"op":"split","loop":"L2","factor":2},
                                   {"op":"interchange","outer":"L0","inner":"L1"}])");
  if (!ops) {
    llvm::consumeError(ops.takeError());
    return state.SkipWithError("bad ops");
  }
  for (auto _ : state) {
    auto res = rewrite::applyCandidate(*f.source, *ops, {&f.inputs, ""});
    if (res.status != rewrite::Status::Applied) return state.SkipWithError(res.message.c_str());
    benchmark::DoNotOptimize(res.text);
  }
}
BENCHMARK(BM_ApplySplit)->Unit(benchmark::kMillisecond);

void BM_LegalMenu(benchmark::State &state, Fixture &(*fixture)()) {
  Fixture &f = fixture();
  if (!f.ok) return state.SkipWithError("kernel not found");
  size_t count = 0;
  for (auto _ : state) {
    auto legal = rewrite::legalOps(*f.source, {&f.inputs, ""});
    if (!legal) {
      llvm::consumeError(legal.takeError());
      return state.SkipWithError("legal failed");
    }
    count = legal->size();
  }
  state.counters["legal_ops"] = double(count);
}
BENCHMARK_CAPTURE(BM_LegalMenu, matmul, matmul)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LegalMenu, bmm_softmax, bmmSoftmax)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
