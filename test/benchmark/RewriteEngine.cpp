// Cost of the rewrite engine: one legal candidate (apply, re-parse, re-verify) and
// the whole planner menu (`legal`) on our matmul and on NKIBench's bmm_softmax.
#include "Rewrite/Rewrite.h"

#include "NKI/FrontEnd.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <optional>
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

/// The largest kernel, prepared once, with its legal menu.
struct GqaMenu {
  std::optional<rewrite::PreparedKernel> prepared;
  std::vector<rewrite::LegalOp> legal;
  std::string error; // why the benchmarks cannot run
};

GqaMenu &gqaMenu() {
  static GqaMenu m = [] {
    GqaMenu out;
    Fixture &f = gqa();
    if (!f.ok) {
      out.error = "kernel not found";
      return out;
    }
    auto prepared = rewrite::PreparedKernel::prepare(*f.source, {&f.inputs, ""});
    if (!prepared) {
      out.error = llvm::toString(prepared.takeError());
      return out;
    }
    out.prepared = std::move(*prepared);
    out.legal = rewrite::legalOps(*out.prepared);
    if (out.legal.empty()) out.error = "no legal op";
    return out;
  }();
  return m;
}

/// Apply + re-parse + re-verify of one legal op on the largest NKIBench kernel
/// (goal <= 2 ms). The kernel is prepared once, as the search does for a parent
/// it expands into many candidates; range(0) picks the op from the legal menu
/// (first, middle, last).
void BM_ApplyOneOpLargest(benchmark::State &state) {
  GqaMenu &m = gqaMenu();
  if (!m.error.empty()) return state.SkipWithError(m.error.c_str());
  const rewrite::PreparedKernel &prepared = *m.prepared;
  const std::vector<rewrite::LegalOp> &legal = m.legal;
  size_t pick = std::min<size_t>(legal.size() - 1, size_t(state.range(0)) * (legal.size() - 1) / 2);
  std::vector<nlohmann::json> ops = {legal[pick].op};
  state.SetLabel(rewrite::formatOp(ops.front()));
  for (auto _ : state) {
    auto res = rewrite::applyCandidate(prepared, ops);
    if (res.status != rewrite::Status::Applied) return state.SkipWithError(res.message.c_str());
    benchmark::DoNotOptimize(res.text);
  }
}
BENCHMARK(BM_ApplyOneOpLargest)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

/// Every op of the legal menu once per iteration; reports the mean per op.
void BM_ApplyEachLegalOpLargest(benchmark::State &state) {
  GqaMenu &m = gqaMenu();
  if (!m.error.empty()) return state.SkipWithError(m.error.c_str());
  const rewrite::PreparedKernel &prepared = *m.prepared;
  const std::vector<rewrite::LegalOp> &legal = m.legal;
  for (auto _ : state)
    for (const rewrite::LegalOp &op : legal) {
      auto res = rewrite::applyCandidate(prepared, {op.op});
      if (res.status != rewrite::Status::Applied) return state.SkipWithError(res.message.c_str());
      benchmark::DoNotOptimize(res.text);
    }
  // The spread matters more than the mean: ops that generate much code
  // (unroll) re-parse more. Thread CPU time of one application each.
  std::vector<double> perOp;
  std::map<std::string, std::vector<double>> perKind;
  for (const rewrite::LegalOp &op : legal) {
    timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    benchmark::DoNotOptimize(rewrite::applyCandidate(prepared, {op.op}).text);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    perOp.push_back((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    perKind[op.op["op"].get<std::string>()].push_back(perOp.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  state.counters["median_op_ms"] = median(perOp);
  std::sort(perOp.begin(), perOp.end());
  state.counters["p90_op_ms"] = perOp[perOp.size() * 9 / 10];
  for (const auto &[kind, times] : perKind) state.counters["median_ms_" + kind] = median(times);
  state.counters["legal_ops"] = double(legal.size());
  state.counters["seconds_per_op"] = benchmark::Counter(
      double(legal.size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ApplyEachLegalOpLargest)->Unit(benchmark::kMillisecond);

/// The same from source text: parse and verify the original too (the CLI's `apply`).
void BM_ApplyOneOpLargestFromSource(benchmark::State &state) {
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
BENCHMARK(BM_ApplyOneOpLargestFromSource)->Unit(benchmark::kMillisecond);

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
