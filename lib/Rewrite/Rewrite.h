// Structured rewrite operations on NKI kernels: each op reads its JSON
// parameters, checks legality on the kernel IR (Analysis), and emits minimal
// source edits as clang::tooling::Replacements. The engine applies a candidate
// (a list of ops) atomically: op by op, re-parsing and re-verifying after each.
#pragma once

#include "NKI/FrontEnd.h"
#include "NKI/KernelIR.h"
#include "Syntax/SourceBuffer.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::rewrite {

/// A secondary location explaining a refusal (the conflicting accesses).
struct Note {
  uint32_t offset = 0;
  uint32_t endOffset = 0;
  std::string message;
};

/// Why an op was refused; offsets point into the text the op was checked on.
struct Refusal {
  std::string op;      // "split"
  std::string ids;     // "L3", "L1 L2", "S12 L5"
  std::string reason;  // names the dependence or limit
  uint32_t offset = 0; // primary location
  std::vector<Note> notes;
};

enum class Status { Applied, Refused, BadInput };

/// The outcome of one op on one kernel.
struct OpResult {
  Status status = Status::BadInput;
  clang::tooling::Replacements edits; // when Applied
  Refusal refusal;                    // when Refused
  std::string error;                  // when BadInput
  std::string description;            // "split L2 (h, trip 2) by 2"
  uint32_t anchor = 0;                // where the op acts (for later diagnostics)
};

/// What a field of an op holds: how the engine reads it and how the catalogue shows it.
enum class FieldKind {
  Loop,    // a loop id ("L3") or a unique induction variable name
  Stmt,    // a statement id ("S12")
  Node,    // a statement or loop id
  Tensor,  // a tensor as `show` lists it, or the id of the statement allocating it
  Integer, // a JSON integer
  Choice,  // one of the field's `choices`
  Code,    // NKI source text
};

/// One field of an op besides "op".
struct FieldSpec {
  const char *name;
  FieldKind kind;
  const char *doc;                        // one line
  std::vector<const char *> choices = {}; // FieldKind::Choice only
  /// Given instead of the field before it: exactly one of the two appears.
  bool alternative = false;
};

/// The declaration of an op: its name, one-line summary and typed fields. The
/// engine reads fields through it; `legal --list-ops`, the executor prompt and
/// rewrites/README.md's table are rendered from it.
struct OpSpec {
  const char *name;
  const char *summary;
  std::vector<FieldSpec> fields; // in canonical order
  const FieldSpec *field(llvm::StringRef name) const;
};

/// One rewrite operation kind (one source file in lib/Rewrite each, listed once in RewriteOps.def).
class Op {
public:
  explicit Op(OpSpec spec) : Spec(std::move(spec)) {}
  virtual ~Op() = default;
  const OpSpec &spec() const { return Spec; }
  llvm::StringRef name() const { return Spec.name; }
  /// One line for --help and the docs.
  llvm::StringRef summary() const { return Spec.summary; }
  /// Validates `params` against `k`, checks legality, and computes the edits.
  virtual OpResult apply(const nki::Kernel &k, const nlohmann::json &params) const = 0;
  /// Instances worth trying for the planner's menu; legality is decided by apply.
  virtual std::vector<nlohmann::json> instances(const nki::Kernel &k) const = 0;

private:
  OpSpec Spec;
};

/// Every op, in catalogue order (RewriteOps.def).
const std::vector<const Op *> &allOps();
const Op *findOp(llvm::StringRef name);

/// The JSON shape of an op with a placeholder per field:
/// {"op":"split","loop":"L<n>","factor":<int>}. An alternative field is left
/// out (see alternativesNote).
std::string opTemplate(const OpSpec &spec);
/// `(or "loop":"L<n>" instead of "stmt")` for an op with alternative fields, else "".
std::string alternativesNote(const OpSpec &spec);
/// The placeholder of one field's value: "L<n>" (quoted), <int>, "affine_range|...".
std::string fieldPlaceholder(const FieldSpec &field);
/// What a field kind holds, for docs and errors: "a loop id".
llvm::StringRef fieldKindNoun(FieldKind kind);

/// The op catalogue rendered from the declarations: "text" (one op per
/// paragraph), "markdown" (rewrites/README.md's table) or "json".
std::string renderOpCatalogue(llvm::StringRef format);

/// Parses the text of --op / --ops: one JSON object or an array of objects.
llvm::Expected<std::vector<nlohmann::json>> parseOps(llvm::StringRef text);

struct CandidateOptions {
  const nki::InputSpecs *inputs = nullptr;
  std::string kernelName; // "" = the only kernel of the file
  /// `replace` inserts arbitrary code. Ops from an LLM, the optimization memory or a pattern file are
  /// applied with this off unless the user passes --allow-replace; the user's own ops keep it on.
  bool allowReplace = true;
};

struct CandidateResult {
  Status status = Status::BadInput;
  std::string text;                   // the rewritten text (== original unless Applied)
  clang::tooling::Replacements edits; // all ops merged, relative to the original text
  std::vector<std::string> descriptions;
  size_t failedOp = 0; // index of the refused / bad op
  /// Human-readable report of a refusal or bad input: "FILE:line:col: error: ..."
  /// plus notes (refusals point into the text the failing op was checked on).
  std::string message;
  Refusal refusal;
};

/// A kernel parsed and verified once, to apply many candidates to (a search
/// parent, the planner's menu, an editor buffer): applying then costs only the
/// op, an incremental re-parse and the re-verification.
class PreparedKernel {
public:
  /// Fails like the front end (syntax errors, no kernel, several kernels without a name).
  static llvm::Expected<PreparedKernel> prepare(const syntax::SourceBuffer &source, const CandidateOptions &options);

  const nki::KernelFile &file() const { return *File; }
  const nki::Kernel &kernel() const { return File->kernels.front(); }
  const CandidateOptions &options() const { return Options; }
  /// Verifier errors per rule before any op: a candidate may not add to them.
  const std::map<std::string, int> &baselineErrors() const { return Baseline; }

private:
  std::unique_ptr<nki::KernelFile> File;
  CandidateOptions Options;
  std::map<std::string, int> Baseline;
};

/// Applies `ops` in order to the kernel in `source`; nothing changes unless every
/// op is legal and each intermediate text re-parses and verifies without new errors.
CandidateResult applyCandidate(const syntax::SourceBuffer &source, const std::vector<nlohmann::json> &ops,
                               const CandidateOptions &options);
/// As above on a prepared kernel (`options.inputs` must outlive it).
CandidateResult applyCandidate(const PreparedKernel &prepared, const std::vector<nlohmann::json> &ops);

struct LegalOp {
  nlohmann::json op;
  std::string description;
};
/// Every single op instance that applyCandidate would accept (the planner's menu).
llvm::Expected<std::vector<LegalOp>> legalOps(const syntax::SourceBuffer &source, const CandidateOptions &options);
std::vector<LegalOp> legalOps(const PreparedKernel &prepared);
/// The menu restricted to the op kinds `wanted` accepts (the others' instances are not tried).
std::vector<LegalOp> legalOps(const PreparedKernel &prepared, llvm::function_ref<bool(llvm::StringRef)> wanted);
/// An instance an op's own legality check accepts whose result the engine refuses (it does not parse,
/// or it verifies with an error the original lacks, such as a construct of the other NKI dialect): a
/// defect of that op's emitter, listed by `legal --rejected` so audits can see what `legal` hides.
struct RejectedOp {
  nlohmann::json op;
  std::string reason; // the engine's refusal
};
std::vector<RejectedOp> rejectedOps(const PreparedKernel &prepared, llvm::function_ref<bool(llvm::StringRef)> wanted);
/// The first instance of op kind `kind`, in menu order, that applyCandidate would accept.
std::optional<LegalOp> firstLegalOp(const PreparedKernel &prepared, llvm::StringRef kind);

/// "op {json}" compact one-line JSON with keys in the canonical order of the op.
std::string formatOp(const nlohmann::json &op);

/// A unified diff (3 lines of context) between two texts, "" when equal.
std::string unifiedDiff(llvm::StringRef oldText, llvm::StringRef newText, llvm::StringRef oldName,
                        llvm::StringRef newName);

/// Writes clang-apply-replacements YAML for `edits` on `absPath`.
/// `diagnosticName` is "accelopt-<op>" (or "accelopt-candidate" for several ops).
llvm::Error exportFixes(llvm::StringRef yamlPath, llvm::StringRef absPath, llvm::StringRef diagnosticName,
                        llvm::StringRef message, uint32_t offset, const clang::tooling::Replacements &edits);

/// One clang-apply-replacements diagnostic: `edits` (any path) applied to `absPath`.
struct FixDiagnostic {
  std::string name; // "accelopt-<op>"
  std::string message;
  std::string absPath; // clang-apply-replacements ignores relative paths
  uint32_t offset = 0;
  clang::tooling::Replacements edits;
};
/// Writes one YAML document (atomically) with every diagnostic, which may
/// concern several files; `mainSourceFile` may be "".
llvm::Error exportFixes(llvm::StringRef yamlPath, llvm::StringRef mainSourceFile,
                        llvm::ArrayRef<FixDiagnostic> diagnostics);

/// The replacements of clang-apply-replacements YAML files for one source file.
struct FixFileEdits {
  struct Edit {
    clang::tooling::Replacement replacement;
    std::string yamlFile;
    std::string diagnostic;
  };
  std::string path;
  std::vector<Edit> edits;
};
/// Reads clang-apply-replacements YAML (TranslationUnitDiagnostics, as --export-fixes writes it and
/// clang-tidy does), grouped by source file.
llvm::Expected<std::vector<FixFileEdits>> readFixes(llvm::ArrayRef<std::string> yamlFiles);

} // namespace accelopt::rewrite
