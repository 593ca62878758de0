// The options `batch` and `migrate` share: how the results are written (--in-place, --diff,
// --export-fixes), how many files run at once (-j), where the inputs come from (--inputs,
// --manifest), the launch grid (--grid) and the numeric check (--seeds, --rtol, --atol, --timeout, --no-numeric-check).
#pragma once

#include "Command.h"

#include "Search/Batch.h"

namespace accelopt::cli {

/// Define it in the same translation unit as its SubCommand.
struct FileBatchOptions {
  // cl::desc keeps a StringRef: the help texts built here live as long as the options.
  std::string exportFixesHelp, timeoutHelp;
  cl::list<std::string> paths;
  cl::opt<std::string> exportFixes;
  cl::opt<bool> inPlace, diff;
  cl::opt<unsigned> jobs;
  cl::opt<std::string> inputsSpec, manifest, grid;
  cl::opt<unsigned> seeds;
  cl::opt<double> rtol, atol, timeout;
  cl::opt<bool> noNumericCheck;

  /// `what` names the edits in --export-fixes' help ("fixes", "migrations"); `timeoutSeconds` is
  /// the subcommand's --timeout default; `noNumericCheckHelp` says what --no-numeric-check does.
  FileBatchOptions(cl::SubCommand &sub, llvm::StringRef what, double timeoutSeconds,
                   llvm::StringRef noNumericCheckHelp);

  /// Files and directories given, at most one of --in-place, --diff and --export-fixes, seeds when
  /// checking; then `options` gets the numeric check, -j, --inputs and the suite manifest (the
  /// default one when it exists). The error is the usage message.
  llvm::Error fill(search::BatchOptions &options) const;
};

} // namespace accelopt::cli
