// Subcommand registry and the input options every shape-aware subcommand shares.
#pragma once

#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"

#include "llvm/Support/CommandLine.h"

#include <functional>
#include <string>
#include <vector>

namespace accelopt::cli {

namespace cl = llvm::cl;

/// All accelopt options live here so `--help` hides LLVM's own.
cl::OptionCategory &category();

struct Command {
  cl::SubCommand *sub;
  std::function<int()> run;
};
std::vector<Command> &commands();

struct RegisterCommand {
  RegisterCommand(cl::SubCommand &sub, std::function<int()> run) { commands().push_back({&sub, std::move(run)}); }
};

/// --kernel, --inputs, --reference, --case, --manifest, --nkibench, --grid for one subcommand.
/// Define it in the same translation unit as its SubCommand (static init order).
struct InputOptions {
  cl::opt<std::string> kernel, inputs, reference, caseName, manifest, nkibench, grid;
  explicit InputOptions(cl::SubCommand &sub);

  nki::SuiteLocation suite() const { return {manifest, nkibench}; }
  /// Resolves the kernel file (FILE, or the case's kernel) and its input shapes,
  /// then runs the front end.
  llvm::Expected<nki::KernelFile> load(llvm::StringRef file) const;
  /// The input specs used by the last load() (empty optional if shapes unknown).
  mutable std::optional<nki::InputSpecs> resolvedInputs;
  mutable std::string resolvedReference;
  /// Limit on a numpy reference's Python process in seconds (0: the library's
  /// default); run and verify set it from --timeout.
  double referenceTimeoutSeconds = 0;
};

enum class OutputFormat { Text, Json };
/// "--format text|json".
struct FormatOption {
  cl::opt<OutputFormat> format;
  explicit FormatOption(cl::SubCommand &sub);
};

/// "--NAME[=text|markdown|json]": print a list rendered from its declarations
/// (rewrite ops, verifier rules) instead of running the subcommand.
struct ListOption {
  cl::opt<std::string> format;
  ListOption(cl::SubCommand &sub, const char *name, const char *what);
  bool given() const { return format.getNumOccurrences() > 0; }
  /// Prints `render(format)`; 2 on an unknown format.
  int print(const std::function<std::string(llvm::StringRef)> &render) const;
};

/// Prints an llvm::Error as the tool does (messages already carry "file:line:col: error:").
int reportError(llvm::Error err);

} // namespace accelopt::cli
