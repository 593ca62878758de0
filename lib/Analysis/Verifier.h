// NKI rules checked on the kernel IR, reported like a compiler:
// "file:line:col: error: message [rule-id]".
#pragma once

#include "NKI/KernelIR.h"
#include "NKI/Rules.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace accelopt::analysis {

struct VerifyOptions {
  int64_t sbufBytesPerPartition = 192 * 1024; // trn1 NeuronCore-v2 (NKI.md §3.3)
  int64_t psumBankBytes = 2048;
  int maxPartitions = 128;
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
