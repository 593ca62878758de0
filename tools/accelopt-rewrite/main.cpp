// accelopt-rewrite: git-style subcommands over the accelopt libraries.
#include "Command.h"

#include "llvm/Support/FileSystem.h"
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
  // `accelopt-rewrite kernel.py ...`: optimize is the default subcommand.
  std::vector<const char *> args(argv, argv + argc);
  bool known = false;
  for (auto &c : commands()) known |= c.sub->getName() == llvm::StringRef(args[1]);
  llvm::StringRef first(args[1]);
  bool toolFlag = first == "--help" || first == "-help" || first == "-h" || first == "--version" ||
                  first == "--help-hidden" || first == "--help-list";
  bool looksLikeKernel = first.endswith(".py") || llvm::sys::fs::exists(first);
  if (!known && !toolFlag && (first.startswith("-") || looksLikeKernel)) args.insert(args.begin() + 1, "optimize");
  argc = int(args.size());
  if (!cl::ParseCommandLineOptions(argc, args.data(), "accelopt: structured, verified optimization of NKI kernels\n",
                                   &llvm::errs()))
    return 2;
  for (auto &c : commands())
    if (*c.sub) return c.run();
  llvm::errs() << "accelopt-rewrite: error: no subcommand given (try --help)\n";
  return 2;
}
