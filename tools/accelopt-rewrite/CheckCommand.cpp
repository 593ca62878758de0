// accelopt-rewrite check: the verifier. Exit 0 when clean, 1 on errors.
#include "BackendOptions.h"
#include "Command.h"

#include "Analysis/Verifier.h"
#include "Perf/TargetLimits.h"

#include <nlohmann/json.hpp>

#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand CheckCmd("check", "Verify kernels against the NKI rules (exit 1 on errors)");
InputOptions Inputs(CheckCmd);
FormatOption Format(CheckCmd);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(CheckCmd), cl::cat(category()));
cl::opt<bool> NoSnippet("no-source", cl::desc("Do not print the source line under each diagnostic"), cl::sub(CheckCmd),
                        cl::cat(category()));
cl::opt<std::string> Target("target",
                            cl::desc("Hardware whose limits apply: trn1, trn2, or a target JSON file (default: the "
                                     "kernel's platform_target, else trn1)"),
                            cl::value_desc("NAME"), cl::init("trn1"), cl::sub(CheckCmd), cl::cat(category()));
ListOption ListRules(CheckCmd, "list-rules", "Print every verifier rule with its severity and doc (no kernel needed)");

int runCheck() {
  if (ListRules.given()) return ListRules.print(analysis::renderRuleList);
  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  auto limits = perf::verifyOptions(kernelTarget(Target, file->kernels));
  if (!limits) return reportError(limits.takeError());
  bool errors = false;
  nlohmann::json out = nlohmann::json::array();
  size_t errorCount = 0, warningCount = 0;
  for (auto &k : file->kernels) {
    auto diags = analysis::verify(k, *limits);
    errors |= analysis::hasErrors(diags);
    for (auto &d : diags) {
      (d.severity == nki::Diagnostic::Error ? errorCount : warningCount)++;
      if (Format.format == OutputFormat::Json) {
        auto lc = file->source().lineCol(d.offset);
        auto end = file->source().lineCol(d.endOffset);
        out.push_back({{"file", file->source().path().str()},
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
  if (Format.format == OutputFormat::Json) {
    llvm::outs() << out.dump(2) << "\n";
  } else {
    llvm::outs() << file->source().path() << ": " << file->kernels.size()
                 << (file->kernels.size() == 1 ? " kernel, " : " kernels, ") << errorCount
                 << (errorCount == 1 ? " error, " : " errors, ") << warningCount
                 << (warningCount == 1 ? " warning" : " warnings") << "\n";
  }
  return errors ? 1 : 0;
}

RegisterCommand Registration(CheckCmd, runCheck);

} // namespace
} // namespace accelopt::cli
