// Language server latency: time from an incremental edit to the published
// diagnostics (front end + verifier + LSP conversion, without the debounce
// delay) on the largest NKIBench kernel; goal <= 50 ms. Also hover after an
// edit and the edit alone.
#include "LSP/Document.h"
#include "LSP/Features.h"
#include "LSP/Server.h"

#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>

using namespace accelopt::lsp;
namespace perf = accelopt::perf;

namespace {

const std::string KernelPath = ACCELOPT_NKIBENCH_DIR "/kernels/gqa_full_B1_N4096_QH16_KH8_D128_0.py";

struct Fixture {
  std::string uri;
  size_t published = 0;
  Server server;
  std::string text;
  bool ok = false;

  explicit Fixture(bool withShapes)
      : uri(pathToUri(KernelPath)),
        server([this](const json &m) { published += m.value("method", "") == "textDocument/publishDiagnostics"; },
               ServerOptions{0, /*backgroundDiagnostics=*/false}) {
    auto buf = llvm::MemoryBuffer::getFile(KernelPath);
    if (!buf) return;
    text = (*buf)->getBuffer().str();
    // With shapes: the suite manifest knows this kernel's inputs (found by path).
    json options = {{"suiteCases", withShapes}};
    server.handle({{"jsonrpc", "2.0"},
                   {"id", 1},
                   {"method", "initialize"},
                   {"params", {{"capabilities", json::object()}, {"initializationOptions", options}}}});
    server.handle(
        {{"jsonrpc", "2.0"},
         {"method", "textDocument/didOpen"},
         {"params", {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}}}});
    server.flushDiagnostics();
    auto a = server.analysis(uri);
    ok = a && a->ok() && (a->fileInputs().has_value() == withShapes);
  }

  /// Inserts or deletes a space at the end of the `def kernel(...)` line.
  void edit(int version) {
    json range = {{"start", {{"line", 9}, {"character", 23}}},
                  {"end", {{"line", 9}, {"character", version % 2 ? 24 : 23}}}};
    json change = {{"range", range}, {"text", version % 2 ? "" : " "}};
    server.handle(
        {{"jsonrpc", "2.0"},
         {"method", "textDocument/didChange"},
         {"params",
          {{"textDocument", {{"uri", uri}, {"version", version}}}, {"contentChanges", json::array({change})}}}});
  }
};

void diagnosticsAfterEdit(benchmark::State &state, bool withShapes) {
  Fixture f(withShapes);
  if (!f.ok) {
    state.SkipWithError("cannot open the kernel (or find its input shapes)");
    return;
  }
  int version = 1;
  for (auto _ : state) {
    f.edit(++version);
    f.server.flushDiagnostics();
  }
  if (f.published != size_t(version)) state.SkipWithError("diagnostics were not published after every edit");
  state.counters["bytes"] = double(f.text.size());
}

void hoverAfterEdit(benchmark::State &state) {
  Fixture f(true);
  if (!f.ok) {
    state.SkipWithError("cannot open the kernel");
    return;
  }
  int version = 1, id = 2;
  json hover = {{"textDocument", {{"uri", f.uri}}}, {"position", {{"line", 17}, {"character", 5}}}};
  for (auto _ : state) {
    f.edit(++version);
    f.server.handle({{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "textDocument/hover"}, {"params", hover}});
  }
}

/// Rewrite code actions at the outermost loop header (each instance's legality is checked).
void codeActionsAtLoop(benchmark::State &state) {
  Fixture f(true);
  if (!f.ok) {
    state.SkipWithError("cannot open the kernel");
    return;
  }
  size_t actions = 0;
  auto a = f.server.analysis(f.uri);
  uint32_t offset = a->index().offset({42, 6}); // "for i0 in nl.affine_range(32):"
  for (auto _ : state) actions = codeActions(*a, offset, {}).size();
  state.counters["actions"] = double(actions);
}

/// The code lens estimate after an edit: trace + simulation of the whole kernel.
void codeLensAfterEdit(benchmark::State &state) {
  Fixture f(true);
  if (!f.ok) {
    state.SkipWithError("cannot open the kernel");
    return;
  }
  int version = 1;
  auto hw = perf::loadTarget("trn1");
  if (!hw) {
    state.SkipWithError("no trn1 target");
    return;
  }
  for (auto _ : state) {
    f.edit(++version);
    auto a = f.server.analysis(f.uri);
    json lens = resolveCodeLens(*a, codeLenses(*a, &*hw)[0], &*hw);
    benchmark::DoNotOptimize(lens);
  }
}

void editOnly(benchmark::State &state) {
  Fixture f(true);
  if (!f.ok) {
    state.SkipWithError("cannot open the kernel");
    return;
  }
  int version = 1;
  for (auto _ : state) f.edit(++version);
}

} // namespace

BENCHMARK_CAPTURE(diagnosticsAfterEdit, gqa_full_with_shapes, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(diagnosticsAfterEdit, gqa_full_without_shapes, false)->Unit(benchmark::kMillisecond);
BENCHMARK(hoverAfterEdit)->Unit(benchmark::kMillisecond);
BENCHMARK(codeActionsAtLoop)->Unit(benchmark::kMillisecond);
BENCHMARK(codeLensAfterEdit)->Unit(benchmark::kMillisecond);
BENCHMARK(editOnly)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
