// The language features computed from one analysed document: hover, inlay
// hints, code lenses, code actions (rewrite ops, quick fixes, remembered
// patterns) and the profile command. Each takes the request's parameters and
// returns the LSP result object.
#pragma once

#include "LSP/Document.h"

#include "Perf/Hardware.h"

namespace accelopt::memory {
class Store;
}

namespace accelopt::lsp {

/// The command a code lens runs: arguments [uri, kernel name].
inline constexpr const char *ProfileCommand = "accelopt.profile";
/// Code action kinds: "refactor.rewrite.accelopt.<op>".
inline constexpr const char *RewriteKindPrefix = "refactor.rewrite.accelopt";
/// The kind of the action that applies a pattern of the optimization memory.
inline constexpr const char *MemoryKind = "refactor.rewrite.accelopt.memory";
inline constexpr const char *QuickFixKind = "quickfix";

/// Rules whose findings get a quick fix (when the fixing op is legal there).
const std::vector<std::string> &fixableRules();

/// True if `kind` is wanted by a codeAction request's `only` filter (empty: all).
bool kindWanted(const std::string &kind, const std::vector<std::string> &only);

/// textDocument/hover at `offset`: a Hover or null.
json hover(const Analysis &a, uint32_t offset, const perf::HardwareDesc *hw);

/// textDocument/inlayHint for the byte range [begin, end].
json inlayHints(const Analysis &a, uint32_t begin, uint32_t end);

/// textDocument/codeLens: one lens per kernel. Lenses whose estimate is not yet
/// computed are left for codeLens/resolve (their `data` names the kernel).
json codeLenses(const Analysis &a, const perf::HardwareDesc *hw);
/// Fills in the command of a lens from codeLenses.
json resolveCodeLens(const Analysis &a, json lens, const perf::HardwareDesc *hw);

/// textDocument/codeAction: one action per rewrite op instance that concerns the
/// loop or statement at `offset`; refused ones carry disabled.reason. `only`
/// filters by kind prefix (empty: all).
json codeActions(const Analysis &a, uint32_t offset, const std::vector<std::string> &only);
/// codeAction/resolve: computes the WorkspaceEdit of an action from codeActions
/// on the current text (disabled with the refusal when it no longer applies).
json resolveCodeAction(const Analysis &a, json action);

/// On an import of `neuronxcc.nki` (NKI 0.1): the quick fix "Migrate to the nki dialect (0.3)", whose
/// edit resolveCodeAction computes from the document's text (search::migrateText: checked under the
/// nki rules and, with the file's inputs known, numerically); null elsewhere.
json migrationAction(const Analysis &a, uint32_t offset);

/// Quick fixes for the accelopt diagnostics of a codeAction request's
/// context.diagnostics that are still reported on `a`: one `quickfix` action per
/// fixing op (with its edit, and the diagnostics it resolves attached). A fix is
/// offered only when the rewrite engine accepts the op there and the verifier
/// no longer reports the finding on the rewritten kernel.
json quickFixes(const Analysis &a, const json &contextDiagnostics);

/// The best pattern of the optimization memory that applies at the loop or
/// statement at `offset` (its ops name that loop or statement and the rewrite
/// engine accepts them), as a preferred action with its edit; null when none.
llvm::Expected<json> memoryAction(const Analysis &a, uint32_t offset, memory::Store &store);

/// workspace/executeCommand accelopt.profile: the estimate as JSON; fails with
/// a message when the kernel cannot be profiled.
llvm::Expected<json> profileKernel(const Analysis &a, const std::string &kernelName, const perf::HardwareDesc &hw);

} // namespace accelopt::lsp
