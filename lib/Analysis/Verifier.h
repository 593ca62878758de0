// NKI rules checked on the kernel IR, reported like a compiler:
// "file:line:col: error: message [rule-id]".
#pragma once

#include "NKI/KernelIR.h"
#include "NKI/Rules.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace accelopt::analysis {

/// The target's limits. The defaults are trn1's; perf::verifyOptions(target) (Perf/TargetLimits.h) reads them from a
/// target description (lib/Perf/targets/*.json), and a unit test keeps these defaults equal to trn1.json's.
struct VerifyOptions {
  std::string target = "trn1";
  int64_t sbufBytesPerPartition = 192 * 1024; // trn1 NeuronCore-v2 (NKI.md §3.3)
  int64_t psumBankBytes = 2048;
  int maxPartitions = 128;
  bool doubleRow = false; // the FP8 double-row perf_mode exists (NC-v3+); the op table's free limits are per row
};

/// Every rule the verifier checks (declared once in NKI/Rules.def, which the front end reports through too).
using nki::RuleInfo;
llvm::ArrayRef<RuleInfo> verifierRules();

/// The rule list rendered for `check --list-rules`: "text" (one rule a line),
/// "markdown" (README.md's table) or "json".
std::string renderRuleList(llvm::StringRef format);

/// Errors, and findings of rules that refuse rewrite output: a candidate with more of them than the
/// original (per rule) is refused.
bool refusesRewriteOutput(const nki::Diagnostic &d);

/// Runs the verifier; returns the front end's diagnostics plus the rule findings,
/// sorted by position.
std::vector<nki::Diagnostic> verify(const nki::Kernel &kernel, const VerifyOptions &options = {});

bool hasErrors(const std::vector<nki::Diagnostic> &diags);

/// Prints "file:line:col: severity: message [rule]" followed by the source line
/// and a caret, like clang.
void printDiagnostic(llvm::raw_ostream &os, const syntax::SourceBuffer &src, const nki::Diagnostic &d,
                     bool withSnippet = true);

} // namespace accelopt::analysis
