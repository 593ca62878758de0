// The rewrite engine: op registry, candidate application (atomic: apply, re-parse,
// re-verify after each op), and the legal-op menu.
#include "Rewrite/OpSupport.h"
#include "Syntax/JsonNesting.h"

#include "Analysis/Verifier.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

namespace accelopt::rewrite {

using namespace nki;

const std::vector<const Op *> &allOps() {
  static const std::vector<const Op *> ops = {
#define ACCELOPT_REWRITE_OP(accessor) &accessor(),
#include "Rewrite/RewriteOps.def"
  };
  return ops;
}

const Op *findOp(llvm::StringRef name) {
  for (const Op *op : allOps())
    if (op->name() == name) return op;
  return nullptr;
}

static llvm::Error inputError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<std::vector<nlohmann::json>> parseOps(llvm::StringRef text) {
  if (llvm::Error err = syntax::checkJsonNesting(text, "")) return err;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception &e) {
    // Not only parse_error: a number past double's range (`1E999999`) throws out_of_range.
    return inputError(llvm::Twine("error: invalid JSON in op list: ") + e.what());
  }
  std::vector<nlohmann::json> ops;
  if (j.is_object())
    ops.push_back(j);
  else if (j.is_array())
    ops.assign(j.begin(), j.end());
  else
    return inputError("error: an op is a JSON object and a candidate a JSON array of objects");
  for (size_t i = 0; i < ops.size(); ++i)
    if (!ops[i].is_object() || !ops[i].contains("op") || !ops[i]["op"].is_string())
      return inputError(llvm::formatv("error: op {0}: expected an object with a string field \"op\"", i + 1));
  return ops;
}

std::string formatOp(const nlohmann::json &op) {
  const Op *impl = op.contains("op") && op["op"].is_string() ? findOp(op["op"].get<std::string>()) : nullptr;
  if (!impl || !op.is_object()) return op.dump();
  std::string out = "{\"op\":" + op["op"].dump();
  const OpSpec &declared = impl->spec();
  for (const FieldSpec &f : declared.fields)
    if (op.contains(f.name)) out += ",\"" + std::string(f.name) + "\":" + op[f.name].dump();
  for (auto it = op.begin(); it != op.end(); ++it)
    if (it.key() != "op" && !declared.field(it.key())) out += ",\"" + it.key() + "\":" + it.value().dump();
  return out + "}";
}

namespace {

std::string knownOps() {
  std::string out;
  for (const Op *op : allOps()) out += (out.empty() ? "" : ", ") + op->name().str();
  return out;
}

FrontEndOptions frontEndOptions(const CandidateOptions &o) {
  FrontEndOptions fo;
  fo.inputs = o.inputs;
  fo.kernelName = o.kernelName;
  return fo;
}

llvm::Expected<KernelFile> build(llvm::StringRef path, const std::string &text, const CandidateOptions &o) {
  auto buf = syntax::SourceBuffer::fromText(path.str(), text);
  if (!buf) return buf.takeError();
  return buildKernelFile(std::move(*buf), frontEndOptions(o));
}

/// The edits as tree-sitter input edits (Replacements are sorted, offsets into the old text).
std::vector<syntax::TextEdit> textEdits(const clang::tooling::Replacements &edits) {
  std::vector<syntax::TextEdit> out;
  out.reserve(edits.size());
  for (const clang::tooling::Replacement &r : edits)
    out.push_back({r.getOffset(), r.getLength(), r.getReplacementText().str()});
  return out;
}

/// The IR of `text`, which is `previous`'s text after `edits`; re-parses incrementally.
llvm::Expected<KernelFile> rebuild(const KernelFile &previous, const std::string &text,
                                   const clang::tooling::Replacements &edits, const CandidateOptions &o) {
  auto buf = syntax::SourceBuffer::fromText(previous.source().path().str(), text);
  if (!buf) return buf.takeError();
  return buildKernelFile(syntax::Module::reparse(*previous.module, std::move(*buf), textEdits(edits)),
                         frontEndOptions(o));
}

llvm::Expected<const Kernel *> pickKernel(const KernelFile &f) {
  if (f.kernels.size() != 1)
    return inputError(llvm::formatv("{0}: error: the file has {1} kernels; choose one with --kernel", f.source().path(),
                                    f.kernels.size()));
  return &f.kernels.front();
}

std::map<std::string, int> errorCounts(const std::vector<Diagnostic> &diags) {
  std::map<std::string, int> out;
  for (const Diagnostic &d : diags)
    if (analysis::refusesRewriteOutput(d)) out[d.rule]++;
  return out;
}

/// The function defined inside the kernel that one of `edits` touches, or null. The IR traces such a
/// function's body at each call, so an edit planned on one call's statements would change them all.
static const syntax::Stmt *nestedFunctionEdited(const Kernel &k, const clang::tooling::Replacements &edits) {
  if (!k.def) return nullptr;
  // A statement of a module-level function the kernel calls (inlined into its IR) lies outside the kernel:
  // editing it would change every caller.
  for (const clang::tooling::Replacement &r : edits)
    if (r.getOffset() < k.def->range.begin || r.getOffset() + r.getLength() > k.def->range.end) return k.def;
  const syntax::Stmt *found = nullptr;
  syntax::forEachStmt(k.def->body, [&](const syntax::Stmt *s) {
    if (found || s->kind != syntax::StmtKind::FunctionDef) return;
    for (const clang::tooling::Replacement &r : edits) {
      uint32_t begin = r.getOffset(), end = begin + r.getLength();
      bool touches = r.getLength() == 0 ? begin > s->range.begin && begin < s->range.end
                                        : begin < s->range.end && end > s->range.begin;
      if (touches) {
        found = s;
        return;
      }
    }
  });
  return found;
}

/// Why a rewrite may not touch what a call of another file's function made: "S7 is traced from 'load_tile'
/// of utils.py:3:1 (called here); rewrites edit the kernel's file only".
std::string foreignReason(const std::string &what, const ForeignCall &f) {
  return what + " is traced from function '" + f.function + "' of " + f.origin +
         " (called here); rewrites edit the kernel's file only, never another file of the project";
}

/// The first loop, statement, node or tensor field of `j` that names what a call of another file's function
/// made, as a refusal of `op`; nullopt when every field names the kernel's own code.
std::optional<Refusal> foreignTarget(const Kernel &k, const Op &op, const nlohmann::json &j) {
  if (k.foreignCalls.empty()) return std::nullopt;
  for (const FieldSpec &field : op.spec().fields) {
    if (field.kind != FieldKind::Loop && field.kind != FieldKind::Stmt && field.kind != FieldKind::Node &&
        field.kind != FieldKind::Tensor)
      continue;
    auto it = j.find(field.name);
    if (it == j.end() || !it->is_string()) continue;
    std::string ref = it->get<std::string>();
    std::optional<NodeRef> node;
    if (field.kind == FieldKind::Tensor) {
      std::string error;
      int t = resolveTensor(k, ref, error);
      if (t >= 0 && k.tensors[size_t(t)].definedBy >= 0) node = NodeRef{false, k.tensors[size_t(t)].definedBy};
    } else {
      node = k.resolve(ref);
    }
    const ForeignCall *f = node ? k.foreignOf(*node) : nullptr;
    if (!f) continue;
    Refusal ref2;
    ref2.op = op.name().str();
    ref2.ids = ref;
    ref2.offset = f->callee.begin;
    ref2.reason = foreignReason(ref, *f);
    return ref2;
  }
  return std::nullopt;
}

/// The call of another file's function whose code one of `edits` would change: an edit that overlaps the
/// called name without taking the whole statement holding the call along (edits inside the call's
/// arguments are the kernel's own).
const ForeignCall *foreignCodeEdited(const Kernel &k, const clang::tooling::Replacements &edits) {
  for (const ForeignCall &f : k.foreignCalls)
    for (const clang::tooling::Replacement &r : edits) {
      uint32_t begin = r.getOffset(), end = begin + r.getLength();
      bool touches = r.getLength() == 0 ? begin > f.callee.begin && begin < f.callee.end
                                        : begin < f.callee.end && end > f.callee.begin;
      bool wholeStatement = begin <= f.statement.begin && end >= f.statement.end;
      if (touches && !wholeStatement) return &f;
    }
  return nullptr;
}

std::string formatRefusal(const Kernel &k, const Refusal &r) {
  std::string out =
      llvm::formatv("{0}: error: {1} {2} refused: {3} [accelopt-{1}]\n", where(k, r.offset), r.op, r.ids, r.reason)
          .str();
  for (const Note &n : r.notes) out += where(k, n.offset) + ": note: " + n.message + "\n";
  return out;
}

} // namespace

namespace {

/// Applies `ops` to the prepared kernel.
/// Ops write new lines with '\n'; in a file whose lines end in "\r\n" an inserted line must too, or the
/// file ends up with mixed line endings (reliability report D21). Each edit follows the line it is on.
clang::tooling::Replacements withLineEndingsOf(llvm::StringRef text, const clang::tooling::Replacements &edits) {
  if (!text.contains("\r\n")) return edits;
  clang::tooling::Replacements out;
  for (const clang::tooling::Replacement &e : edits) {
    size_t lineEnd = text.find('\n', e.getOffset());
    bool crlf = lineEnd != llvm::StringRef::npos ? lineEnd > 0 && text[lineEnd - 1] == '\r'
                                                 : text.rfind('\n') != llvm::StringRef::npos && text.rfind('\n') > 0 &&
                                                       text[text.rfind('\n') - 1] == '\r';
    std::string replacement = e.getReplacementText().str();
    if (crlf) {
      std::string converted;
      for (size_t i = 0; i < replacement.size(); ++i) {
        if (replacement[i] == '\n' && (i == 0 || replacement[i - 1] != '\r')) converted += '\r';
        converted += replacement[i];
      }
      replacement = std::move(converted);
    }
    llvm::consumeError(
        out.add(clang::tooling::Replacement(e.getFilePath(), e.getOffset(), e.getLength(), replacement)));
  }
  return out;
}

CandidateResult run(const PreparedKernel &prepared, const std::vector<nlohmann::json> &ops) {
  const syntax::SourceBuffer &source = prepared.file().source();
  const std::map<std::string, int> &baseline = prepared.baselineErrors();
  CandidateResult res;
  res.text = source.text().str();
  std::string path = source.path().str();
  auto bad = [&](size_t i, std::string msg) {
    res.status = Status::BadInput;
    res.failedOp = i;
    res.message = msg + "\n";
    res.text = source.text().str();
    return res;
  };
  if (ops.empty()) return bad(0, path + ": error: no ops given");
  const Kernel *k = &prepared.kernel();
  const KernelFile *current = &prepared.file();
  std::optional<KernelFile> file; // the IR of the latest intermediate text

  std::string text = res.text;
  clang::tooling::Replacements total;
  std::vector<std::string> descriptions;
  for (size_t i = 0; i < ops.size(); ++i) {
    const nlohmann::json &j = ops[i];
    std::string prefix = llvm::formatv("{0}: error: op {1}", path, i + 1).str();
    if (!j.is_object() || !j.contains("op") || !j["op"].is_string())
      return bad(i, prefix + ": expected an object with a string field \"op\"");
    std::string name = j["op"].get<std::string>();
    const Op *op = findOp(name);
    if (!op) return bad(i, prefix + ": unknown op '" + name + "' (known ops: " + knownOps() + ")");
    if (name == "replace" && !prepared.options().allowReplace)
      return bad(i, prefix + ": 'replace' inserts arbitrary code and this op comes from an LLM, the optimization "
                             "memory or a pattern file; pass --allow-replace to accept such ops");

    OpResult r = op->apply(*k, j);
    if (r.status == Status::BadInput) return bad(i, prefix + ": " + r.error);
    if (std::optional<Refusal> foreign = foreignTarget(*k, *op, j)) {
      r.status = Status::Refused;
      r.refusal = *foreign;
    }
    // Locations in a refusal refer to the text the refused op (or step of a composite op) saw.
    auto refused = [&](const Refusal &ref, size_t stepsDone = 0) {
      res.status = Status::Refused;
      res.failedOp = i;
      res.refusal = ref;
      res.message = formatRefusal(*k, ref);
      if (stepsDone > 0)
        res.message +=
            llvm::formatv("{0}: note: locations refer to the text after step {1} of op {2}\n", path, stepsDone, i + 1)
                .str();
      else if (i > 0)
        res.message += llvm::formatv("{0}: note: op {1} of the candidate; locations refer to the text after "
                                     "the first {2} op(s)\n",
                                     path, i + 1, i)
                           .str();
      res.text = source.text().str();
      return res;
    };
    if (r.status == Status::Refused) return refused(r.refusal);

    // Applies one op's edits to the current text; on success the IR moves on to the result.
    auto advance = [&](OpResult &step) -> std::optional<Refusal> {
      if (const syntax::Stmt *fn = nestedFunctionEdited(*k, step.edits)) {
        Refusal ref = step.refusal;
        ref.offset = step.anchor;
        ref.reason = fn == k->def ? "it edits code outside the kernel (a module-level function the kernel calls, "
                                    "traced in place); rewrites edit the kernel's own body only"
                                  : llvm::formatv("it edits function '{0}' defined in the kernel ({1}); the kernel's "
                                                  "IR holds that body once per call, so rewrites do not edit "
                                                  "functions nested in the kernel",
                                                  fn->name, k->source->location(fn->range.begin))
                                        .str();
        return ref;
      }
      if (const ForeignCall *f = foreignCodeEdited(*k, step.edits)) {
        Refusal ref = step.refusal;
        ref.offset = f->callee.begin;
        ref.reason = foreignReason("it edits code that", *f);
        return ref;
      }
      step.edits = withLineEndingsOf(text, step.edits);
      auto newText = clang::tooling::applyAllReplacements(text, step.edits);
      if (!newText) {
        Refusal ref = step.refusal;
        ref.offset = step.anchor;
        ref.reason = "internal error applying edits: " + llvm::toString(newText.takeError());
        return ref;
      }
      auto next = rebuild(*current, *newText, step.edits, prepared.options());
      if (!next) {
        Refusal ref = step.refusal;
        ref.offset = step.anchor;
        ref.reason = "the rewritten kernel does not parse: " + llvm::toString(next.takeError());
        while (!ref.reason.empty() && ref.reason.back() == '\n') ref.reason.pop_back();
        return ref;
      }
      auto nextKernel = pickKernel(*next);
      if (!nextKernel) {
        Refusal ref = step.refusal;
        ref.offset = step.anchor;
        ref.reason = "the rewritten file no longer has one kernel: " + llvm::toString(nextKernel.takeError());
        return ref;
      }
      auto diags = analysis::verify(**nextKernel);
      auto counts = errorCounts(diags);
      for (const Diagnostic &d : diags) {
        auto before = baseline.find(d.rule);
        if (!analysis::refusesRewriteOutput(d) || counts[d.rule] <= (before == baseline.end() ? 0 : before->second))
          continue;
        Refusal ref = step.refusal;
        ref.offset = step.anchor;
        ref.reason = llvm::formatv("the rewritten kernel fails verification: {0}: {1} [{2}]",
                                   (*nextKernel)->source->location(d.offset), d.message, d.rule)
                         .str();
        ref.notes.clear();
        return ref;
      }
      // Replacements of a later step are relative to the text after the earlier ones.
      total = total.merge(step.edits);
      text = std::move(*newText);
      file = std::move(*next);
      current = &*file;
      k = &file->kernels.front();
      return std::nullopt;
    };

    const auto *composite = dynamic_cast<const CompositeOp *>(op);
    if (!composite) {
      if (auto ref = advance(r)) return refused(*ref);
      descriptions.push_back(r.description);
      continue;
    }
    // A composite op: its steps are ordinary ops, each checked on the kernel the previous produced; a
    // refused step refuses the composite op, naming the step.
    std::string stepDescriptions;
    std::vector<nlohmann::json> steps = composite->steps(*k, j);
    for (size_t n = 0; n < steps.size(); ++n) {
      const nlohmann::json &stepOp = steps[n];
      const Op *stepImpl =
          stepOp.contains("op") && stepOp["op"].is_string() ? findOp(stepOp["op"].get<std::string>()) : nullptr;
      if (!stepImpl) return bad(i, prefix + ": internal error: unknown step " + stepOp.dump());
      OpResult step = stepImpl->apply(*k, stepOp);
      std::optional<Refusal> stepRefusal;
      if (dynamic_cast<const CompositeOp *>(stepImpl)) {
        return bad(i, prefix + ": internal error: a step may not be composite: " + stepOp.dump());
      } else if (step.status == Status::BadInput) {
        stepRefusal = r.refusal;
        stepRefusal->offset = r.anchor;
        stepRefusal->reason = step.error;
      } else if (step.status == Status::Refused) {
        stepRefusal = step.refusal;
      } else {
        stepRefusal = advance(step);
      }
      if (stepRefusal) {
        Refusal ref = *stepRefusal;
        ref.reason =
            llvm::formatv("step {0} of {1}, {2}: {3}", n + 1, steps.size(), formatOp(stepOp), stepRefusal->reason)
                .str();
        ref.op = name;
        ref.ids = r.refusal.ids;
        return refused(ref, n);
      }
      stepDescriptions += (n ? "; " : "") + step.description;
    }
    descriptions.push_back(r.description + " (" + stepDescriptions + ")");
  }
  res.status = Status::Applied;
  res.text = std::move(text);
  res.edits = std::move(total);
  res.descriptions = std::move(descriptions);
  return res;
}

} // namespace

llvm::Expected<PreparedKernel> PreparedKernel::prepare(const syntax::SourceBuffer &source,
                                                       const CandidateOptions &options) {
  auto file = build(source.path(), source.text().str(), options);
  if (!file) return file.takeError();
  auto kernel = pickKernel(*file);
  if (!kernel) return kernel.takeError();
  PreparedKernel prepared;
  prepared.Baseline = errorCounts(analysis::verify(**kernel));
  prepared.File = std::make_unique<KernelFile>(std::move(*file));
  prepared.Options = options;
  return prepared;
}

CandidateResult applyCandidate(const PreparedKernel &prepared, const std::vector<nlohmann::json> &ops) {
  return run(prepared, ops);
}

CandidateResult applyCandidate(const syntax::SourceBuffer &source, const std::vector<nlohmann::json> &ops,
                               const CandidateOptions &options) {
  auto prepared = PreparedKernel::prepare(source, options);
  if (!prepared) {
    CandidateResult res;
    res.status = Status::BadInput;
    res.text = source.text().str();
    res.message = llvm::toString(prepared.takeError()) + "\n";
    return res;
  }
  return run(*prepared, ops);
}

std::vector<LegalOp> legalOps(const PreparedKernel &prepared) {
  return legalOps(prepared, [](llvm::StringRef) { return true; });
}

namespace {
/// Each instance of a wanted op whose own check passes, with that result and the engine's on the whole
/// kernel (re-parsed and verified): what legalOps keeps and rejectedOps reports.
void forEachCheckedInstance(
    const PreparedKernel &prepared, llvm::function_ref<bool(llvm::StringRef)> wanted,
    llvm::function_ref<void(const nlohmann::json &, const OpResult &, const CandidateResult &)> f) {
  for (const Op *op : allOps()) {
    if (!wanted(op->name())) continue;
    for (const nlohmann::json &j : op->instances(prepared.kernel())) {
      OpResult r = op->apply(prepared.kernel(), j);
      if (r.status != Status::Applied) continue;
      f(j, r, run(prepared, {j}));
    }
  }
}
} // namespace

std::vector<LegalOp> legalOps(const PreparedKernel &prepared, llvm::function_ref<bool(llvm::StringRef)> wanted) {
  std::vector<LegalOp> out;
  forEachCheckedInstance(prepared, wanted,
                         [&](const nlohmann::json &j, const OpResult &r, const CandidateResult &full) {
                           if (full.status == Status::Applied) out.push_back({j, r.description});
                         });
  return out;
}

std::vector<RejectedOp> rejectedOps(const PreparedKernel &prepared, llvm::function_ref<bool(llvm::StringRef)> wanted) {
  std::vector<RejectedOp> out;
  forEachCheckedInstance(prepared, wanted, [&](const nlohmann::json &j, const OpResult &, const CandidateResult &full) {
    if (full.status == Status::Refused) out.push_back({j, full.refusal.reason});
  });
  return out;
}

std::optional<LegalOp> firstLegalOp(const PreparedKernel &prepared, llvm::StringRef kind) {
  for (const Op *op : allOps()) {
    if (op->name() != kind) continue;
    for (const nlohmann::json &j : op->instances(prepared.kernel())) {
      OpResult r = op->apply(prepared.kernel(), j);
      if (r.status == Status::Applied && run(prepared, {j}).status == Status::Applied) return LegalOp{j, r.description};
    }
  }
  return std::nullopt;
}

llvm::Expected<std::vector<LegalOp>> legalOps(const syntax::SourceBuffer &source, const CandidateOptions &options) {
  auto prepared = PreparedKernel::prepare(source, options);
  if (!prepared) return prepared.takeError();
  return legalOps(*prepared);
}

} // namespace accelopt::rewrite
