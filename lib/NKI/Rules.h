// The verifier's rules (Rules.def) as handles: report sites name a rule by its
// handle (`Rule::Scope`), and a diagnostic carries the rule's printed id.
#pragma once

#include "NKI/KernelIR.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace accelopt::nki {

enum class Rule : uint8_t {
#define ACCELOPT_RULE(Handle, Id, Severity, RefusesRewriteOutput, Doc) Handle,
#include "NKI/Rules.def"
};

struct RuleInfo {
  Rule rule;
  const char *id; // "partition-dim", printed as "[partition-dim]"
  Diagnostic::Severity severity;
  /// A finding a rewrite must never introduce, even where it is only a warning in a user's own kernel.
  bool refusesRewriteOutput;
  const char *doc; // one line
};

/// Every rule, in declaration order.
llvm::ArrayRef<RuleInfo> allRules();
const RuleInfo &ruleInfo(Rule rule);
inline const char *ruleId(Rule rule) { return ruleInfo(rule).id; }
/// The rule printed as `id`, or null.
const RuleInfo *findRule(llvm::StringRef id);

/// A diagnostic's rule id compared with a handle: `d.rule == Rule::Imports`.
inline bool operator==(llvm::StringRef id, Rule rule) { return id == ruleId(rule); }

} // namespace accelopt::nki
