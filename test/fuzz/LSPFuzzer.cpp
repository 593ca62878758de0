// libFuzzer target over the language server's input stream: the bytes go
// through the Content-Length framing and JSON-RPC dispatch of a server that was
// initialized and has a small kernel open, so requests reach the features
// (hover, code lenses, code actions, edits, settings). Nothing may crash.
// Seed corpus: scripts/fuzz.sh writes framed sessions (test/fuzz/lsp-seeds.py).
#include "LSP/Server.h"
#include "LSP/Transport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

using namespace accelopt;
using lsp::json;

namespace {
const char *Kernel = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(2):
    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
    nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
  return out
)";
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The "reference" setting runs Python on a file the input names: never here.
  setenv("ACCELOPT_PYTHON", "/nonexistent/accelopt-fuzz-python", 1);
  // Relative "memory" paths resolve in a directory of our own.
  static llvm::SmallString<128> dir;
  if (!llvm::sys::fs::createUniqueDirectory("accelopt-fuzz-lsp", dir)) {
    (void)!chdir(dir.c_str());
    // Leave nothing behind in the temporary directory when the run ends.
    std::atexit([] { (void)llvm::sys::fs::remove_directories(dir); });
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  // Serialised as runStdio does (invalid UTF-8 from the input is replaced, not thrown).
  lsp::Server server([](const json &m) { (void)m.dump(-1, ' ', false, json::error_handler_t::replace); },
                     lsp::ServerOptions{0, /*backgroundDiagnostics=*/false});
  server.handle(
      {{"jsonrpc", "2.0"},
       {"id", 0},
       {"method", "initialize"},
       {"params",
        {{"capabilities", json::object()}, {"initializationOptions", {{"inputs", {{"k.py", "x=f32[256,512]"}}}}}}}});
  server.handle({{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object()}});
  server.handle({{"jsonrpc", "2.0"},
                 {"method", "textDocument/didOpen"},
                 {"params",
                  {{"textDocument",
                    {{"uri", "file:///fuzz/k.py"}, {"languageId", "python"}, {"version", 1}, {"text", Kernel}}}}}});
  std::FILE *in = fmemopen(const_cast<uint8_t *>(data), size, "rb");
  if (!in) return 0;
  lsp::MessageReader reader(in);
  int messages = 0;
  while (auto body = reader.read()) {
    (void)reader.takeError();
    server.handleText(*body);
    if (server.exited() || ++messages > 64) break;
  }
  std::fclose(in);
  server.flushDiagnostics();
  return 0;
}
