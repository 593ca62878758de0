// Structured rewrite operations on NKI kernels: each op reads its JSON
// parameters, checks legality on the kernel IR (Analysis), and emits minimal
// source edits as clang::tooling::Replacements. The engine applies a candidate
// (a list of ops) atomically: op by op, re-parsing and re-verifying after each.
#pragma once

#include "NKI/FrontEnd.h"
#include "NKI/KernelIR.h"
#include "Syntax/SourceBuffer.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
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
  std::string op;       // "split"
  std::string ids;      // "L3", "L1 L2", "S12 L5"
  std::string reason;   // names the dependence or limit
  uint32_t offset = 0;  // primary location
  std::vector<Note> notes;
};

enum class Status { Applied, Refused, BadInput };

/// The outcome of one op on one kernel.
struct OpResult {
  Status status = Status::BadInput;
  clang::tooling::Replacements edits;  // when Applied
  Refusal refusal;                     // when Refused
  std::string error;                   // when BadInput
  std::string description;             // "split L2 (h, trip 2) by 2"
  uint32_t anchor = 0;                 // where the op acts (for later diagnostics)
};

/// One rewrite operation kind (one source file in lib/Rewrite each).
class Op {
public:
  virtual ~Op() = default;
  virtual llvm::StringRef name() const = 0;
  /// One line for --help and the docs.
  virtual llvm::StringRef summary() const = 0;
  /// Parameter names besides "op", in canonical order.
  virtual std::vector<std::string> fields() const = 0;
  /// Validates `params` against `k`, checks legality, and computes the edits.
  virtual OpResult apply(const nki::Kernel &k, const nlohmann::json &params) const = 0;
  /// Instances worth trying for the planner's menu; legality is decided by apply.
  virtual std::vector<nlohmann::json> instances(const nki::Kernel &k) const = 0;
};

/// Every op, in catalogue order.
const std::vector<const Op *> &allOps();
const Op *findOp(llvm::StringRef name);

/// Parses the text of --op / --ops: one JSON object or an array of objects.
llvm::Expected<std::vector<nlohmann::json>> parseOps(llvm::StringRef text);

struct CandidateOptions {
  const nki::InputSpecs *inputs = nullptr;
  std::string kernelName;  // "" = the only kernel of the file
  /// `replace` inserts arbitrary code. Ops from an LLM, the optimization memory or a pattern file are
  /// applied with this off unless the user passes --allow-replace; the user's own ops keep it on.
  bool allowReplace = true;
};

struct CandidateResult {
  Status status = Status::BadInput;
  std::string text;                     // the rewritten text (== original unless Applied)
  clang::tooling::Replacements edits;   // all ops merged, relative to the original text
  std::vector<std::string> descriptions;
  size_t failedOp = 0;                  // index of the refused / bad op
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
  std::string name;     // "accelopt-<op>"
  std::string message;
  std::string absPath;  // clang-apply-replacements ignores relative paths
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
