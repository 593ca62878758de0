// accelopt-rewrite: git-style subcommands over the accelopt libraries.
#include "Command.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace accelopt::cli;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category());
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "accelopt-rewrite 0.1.0\n"; });
  if (argc < 2) {
    llvm::errs() << "usage: accelopt-rewrite <subcommand> [options]; subcommands:";
    for (auto &c : commands()) llvm::errs() << " " << c.sub->getName();
    llvm::errs() << "\n(see accelopt-rewrite --help)\n";
    return 2;
  }
  if (!cl::ParseCommandLineOptions(argc, argv, "accelopt: structured, verified optimization of NKI kernels\n",
                                   &llvm::errs()))
    return 2;
  for (auto &c : commands())
    if (*c.sub) return c.run();
  llvm::errs() << "accelopt-rewrite: error: no subcommand given (try --help)\n";
  return 2;
}
