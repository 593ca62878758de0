#include "NKI/Rules.h"

namespace accelopt::nki {

namespace {

constexpr RuleInfo Rules[] = {
#define ACCELOPT_RULE(Handle, Id, Severity, RefusesRewriteOutput, Doc)                                                 \
  {Rule::Handle, Id, Diagnostic::Severity, RefusesRewriteOutput, Doc},
#include "NKI/Rules.def"
};

} // namespace

llvm::ArrayRef<RuleInfo> allRules() { return Rules; }

const RuleInfo &ruleInfo(Rule rule) { return Rules[static_cast<size_t>(rule)]; }

const RuleInfo *findRule(llvm::StringRef id) {
  for (const RuleInfo &r : Rules)
    if (id == r.id) return &r;
  return nullptr;
}

} // namespace accelopt::nki
