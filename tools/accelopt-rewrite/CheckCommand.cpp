// accelopt-rewrite check: the verifier, over one or more kernel files (each with the same inputs).
// Exit 0 when all are clean, 1 when any has errors, 2 when one cannot be read.
#include "BackendOptions.h"
#include "Command.h"

#include "Analysis/Verifier.h"
#include "Perf/TargetLimits.h"

#include <nlohmann/json.hpp>

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace accelopt::cli {
namespace {

cl::SubCommand CheckCmd("check", "Verify kernels against the NKI rules (exit 1 on errors)");
InputOptions Inputs(CheckCmd);
FormatOption Format(CheckCmd);
cl::list<std::string> Files(cl::Positional, cl::desc("<kernel.py>..."), cl::sub(CheckCmd), cl::cat(category()));
cl::opt<bool> NoSnippet("no-source", cl::desc("Do not print the source line under each diagnostic"), cl::sub(CheckCmd),
                        cl::cat(category()));
cl::opt<std::string> Target("target",
                            cl::desc("Hardware whose limits apply: trn1, trn2, or a target JSON file (default: the "
                                     "kernel's platform_target, else trn1)"),
                            cl::value_desc("NAME"), cl::init("trn1"), cl::sub(CheckCmd), cl::cat(category()));
ListOption ListRules(CheckCmd, "list-rules", "Print every verifier rule with its severity and doc (no kernel needed)");

struct Counts {
  size_t errors = 0, warnings = 0;
};

/// Verifies every kernel of one file: diagnostics printed (text) or appended to `json`.
llvm::Expected<Counts> checkFile(llvm::StringRef path, nlohmann::json &json) {
  auto file = Inputs.load(path);
  if (!file) return file.takeError();
  auto limits = perf::verifyOptions(kernelTarget(Target, file->kernels));
  if (!limits) return limits.takeError();
  Counts counts;
  for (auto &k : file->kernels) {
    for (auto &d : analysis::verify(k, *limits)) {
      (d.severity == nki::Diagnostic::Error ? counts.errors : counts.warnings)++;
      if (Format.format == OutputFormat::Json) {
        auto lc = file->source().lineCol(d.offset);
        auto end = file->source().lineCol(d.endOffset);
        json.push_back({{"file", file->source().path().str()},
                        {"kernel", k.name},
                        {"line", lc.line},
                        {"column", lc.col},
                        {"end_line", end.line},
                        {"end_column", end.col},
                        {"severity", d.severity == nki::Diagnostic::Error     ? "error"
                                     : d.severity == nki::Diagnostic::Warning ? "warning"
                                                                              : "note"},
                        {"rule", d.rule},
                        {"message", d.message}});
      } else {
        analysis::printDiagnostic(llvm::outs(), file->source(), d, !NoSnippet);
      }
    }
  }
  if (Format.format != OutputFormat::Json)
    llvm::outs() << file->source().path() << ": " << file->kernels.size()
                 << (file->kernels.size() == 1 ? " kernel, " : " kernels, ") << counts.errors
                 << (counts.errors == 1 ? " error, " : " errors, ") << counts.warnings
                 << (counts.warnings == 1 ? " warning" : " warnings") << "\n";
  return counts;
}

int runCheck() {
  if (ListRules.given()) return ListRules.print(analysis::renderRuleList);
  // No file: the kernel of --case (load() says what is missing otherwise).
  std::vector<std::string> paths(Files.begin(), Files.end());
  if (paths.empty()) paths.push_back("");
  nlohmann::json json = nlohmann::json::array();
  int exitCode = 0;
  // Like clang-tidy over several files: a file that cannot be read is reported and the others are still checked.
  for (auto &path : paths) {
    auto counts = checkFile(path, json);
    if (!counts)
      exitCode = std::max(exitCode, reportError(counts.takeError()));
    else if (counts->errors)
      exitCode = std::max(exitCode, 1);
  }
  if (Format.format == OutputFormat::Json) llvm::outs() << json.dump(2) << "\n";
  return exitCode;
}

RegisterCommand Registration(CheckCmd, runCheck);

} // namespace
} // namespace accelopt::cli
