// accelopt-lsp: the accelopt language server (LSP 3.17, JSON-RPC over stdio).
// All logic lives in lib/LSP; this only reads the command line.
#include "LSP/Server.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace cl = llvm::cl;

static cl::OptionCategory Category("accelopt-lsp options");
static cl::opt<bool> Stdio("stdio", cl::desc("Talk LSP on stdin/stdout (the default and only transport)"),
                           cl::cat(Category));
static cl::opt<unsigned> DebounceMs("debounce-ms",
                                    cl::desc("Delay after an edit before diagnostics are computed (default 150)"),
                                    cl::init(150), cl::cat(Category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "accelopt-lsp 0.1.0\n"; });
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "accelopt-lsp: language server for NKI kernels (diagnostics, hover, inlay "
                                   "hints, code lenses, rewrite code actions)\n",
                                   &llvm::errs()))
    return 2;
  accelopt::lsp::ServerOptions options;
  options.debounceMs = static_cast<int>(DebounceMs);
  return accelopt::lsp::runStdio(stdin, stdout, stderr, options);
}
