#include "FileBatchOptions.h"

#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"
#include "NKI/PyCore.h"

namespace accelopt::cli {

FileBatchOptions::FileBatchOptions(cl::SubCommand &sub, llvm::StringRef what, double timeoutSeconds,
                                   llvm::StringRef noNumericCheckHelp)
    : exportFixesHelp("Write all " + what.str() + " as one clang-apply-replacements YAML"),
      timeoutHelp("Seconds per interpreter run (default " + std::to_string(int(timeoutSeconds)) + ")"),
      paths(cl::Positional, cl::desc("<dir or kernel.py>..."), cl::sub(sub), cl::cat(category())),
      exportFixes("export-fixes", cl::desc(exportFixesHelp), cl::value_desc("FIXES.yaml"), cl::sub(sub),
                  cl::cat(category())),
      inPlace("in-place", cl::desc("Rewrite the kernel files in place (atomically)"), cl::sub(sub),
              cl::cat(category())),
      diff("diff", cl::desc("Print unified diffs (diagnostics go to stderr)"), cl::sub(sub), cl::cat(category())),
      jobs("j", cl::desc("Files processed in parallel (default: hardware concurrency)"), cl::init(0),
           cl::value_desc("N"), cl::sub(sub), cl::cat(category())),
      inputsSpec("inputs",
                 cl::desc("Input shapes for kernels with exactly these parameters, "
                          "e.g. 'x=f32[256,512]' (others use the suite manifest)"),
                 cl::value_desc("SPEC"), cl::sub(sub), cl::cat(category())),
      manifest("manifest", cl::desc("Suite manifest (default: nkibench/manifest.json)"), cl::value_desc("FILE"),
               cl::sub(sub), cl::cat(category()), cl::Hidden),
      grid("grid",
           cl::desc("Launch grid every kernel runs in, as kernel[G0, G1](...) (default: its inputs' `grid`, else "
                    "the file's own launch, else one instance)"),
           cl::value_desc("G0[,G1...]"), cl::sub(sub), cl::cat(category())),
      seeds("seeds", cl::desc("Seeds of the numeric check (default 2)"), cl::init(2), cl::sub(sub),
            cl::cat(category())),
      rtol("rtol", cl::desc("Relative tolerance (default 1e-2)"), cl::init(1e-2), cl::sub(sub), cl::cat(category())),
      atol("atol", cl::desc("Absolute tolerance (default 1e-4)"), cl::init(1e-4), cl::sub(sub), cl::cat(category())),
      timeout("timeout", cl::desc(timeoutHelp), cl::init(timeoutSeconds), cl::sub(sub), cl::cat(category())),
      noNumericCheck("no-numeric-check", cl::desc(noNumericCheckHelp), cl::sub(sub), cl::cat(category())) {}

llvm::Error FileBatchOptions::fill(search::BatchOptions &options) const {
  auto usage = [](const std::string &msg) { return llvm::createStringError(llvm::inconvertibleErrorCode(), msg); };
  if (paths.empty()) return usage("give at least one directory or kernel file");
  if (int(inPlace) + int(diff) + int(!exportFixes.empty()) > 1)
    return usage("--in-place, --diff and --export-fixes exclude each other");
  options.numericCheck = !noNumericCheck;
  // Zero seeds would report every kernel as "verified numerically" without running it once.
  if (options.numericCheck && seeds == 0)
    return usage("--seeds 0 checks nothing; give at least 1 seed, or --no-numeric-check to skip the check");
  options.jobs = jobs;
  options.seeds = seeds;
  options.tolerance.rtol = rtol;
  options.tolerance.atol = atol;
  options.timeoutSeconds = timeout;
  if (!inputsSpec.empty()) {
    auto specs = nki::parseInputSpecs(inputsSpec);
    if (!specs) return usage("--inputs: " + llvm::toString(specs.takeError()));
    options.inputs = std::move(*specs);
  }
  if (!grid.empty()) {
    nki::pycore::ParsedGrid g = nki::pycore::parseGrid(grid);
    if (!g.error.empty()) return usage("--grid: " + g.error);
    options.grid = g.dims;
  }
  if (auto suite = nki::loadSuite({manifest, ""})) {
    options.suite = std::move(*suite);
  } else if (!manifest.empty()) {
    return usage(llvm::toString(suite.takeError()));
  } else {
    llvm::consumeError(suite.takeError()); // no default manifest: kernels stay without inputs
  }
  return llvm::Error::success();
}

} // namespace accelopt::cli
