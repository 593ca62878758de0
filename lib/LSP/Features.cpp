#include "LSP/Features.h"

#include "Analysis/Verifier.h"
#include "Memory/Store.h"
#include "NKI/Dialect.h"
#include "NKI/Listing.h"
#include "NKI/OpTable.h"
#include "Rewrite/Rewrite.h"
#include "Search/Batch.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

namespace accelopt::lsp {

using nki::Kernel;
using nki::Loop;
using nki::Statement;
using nki::Tensor;

namespace {

bool isIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// The identifier and the dotted name ("nl.load") around `offset`.
struct Word {
  uint32_t begin = 0, end = 0; // the identifier
  uint32_t dottedBegin = 0, dottedEnd = 0;
  std::string word, dotted;
};

std::optional<Word> wordAt(const std::string &text, uint32_t offset) {
  if (offset > text.size()) return std::nullopt;
  uint32_t b = offset, e = offset;
  while (b > 0 && isIdent(text[b - 1])) --b;
  while (e < text.size() && isIdent(text[e])) ++e;
  if (b == e || std::isdigit(static_cast<unsigned char>(text[b]))) return std::nullopt;
  Word w;
  w.begin = b;
  w.end = e;
  w.word = text.substr(b, e - b);
  uint32_t db = b, de = e;
  while (db > 1 && text[db - 1] == '.' && isIdent(text[db - 2])) {
    db -= 1;
    while (db > 0 && isIdent(text[db - 1])) --db;
  }
  while (de + 1 < text.size() && text[de] == '.' && isIdent(text[de + 1])) {
    de += 1;
    while (de < text.size() && isIdent(text[de])) ++de;
  }
  w.dottedBegin = db;
  w.dottedEnd = de;
  w.dotted = text.substr(db, de - db);
  return w;
}

std::string fmtMs(double ms) {
  if (ms >= 100) return llvm::formatv("{0:f1} ms", ms).str();
  if (ms >= 1) return llvm::formatv("{0:f3} ms", ms).str();
  return llvm::formatv("{0:f4} ms", ms).str();
}

std::string fmtBytes(int64_t b) {
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b) + " B (" + std::to_string(b / 1024) + " KiB)";
  return std::to_string(b) + " B";
}

json markdownHover(const Analysis &a, const std::string &md, uint32_t begin, uint32_t end) {
  return {{"contents", {{"kind", "markdown"}, {"value", md}}}, {"range", rangeJson(a.index(), begin, end)}};
}

/// True if loop `loop` is `outer` or nested inside it.
bool loopWithin(const Kernel &k, int loop, int outer) {
  for (int l = loop; l >= 0; l = k.loops[l].parent)
    if (l == outer) return true;
  return false;
}

const Loop *innermostLoop(const Kernel &k, uint32_t offset, bool headerOnly) {
  const Loop *best = nullptr;
  for (const Loop &l : k.loops) {
    const nki::ByteRange &r = headerOnly ? l.headerRange : l.range;
    if (r.begin <= offset && offset < r.end && (!best || l.depth > best->depth)) best = &l;
  }
  return best;
}

const Statement *innermostStmt(const Kernel &k, uint32_t offset) {
  const Statement *best = nullptr;
  for (const Statement &s : k.stmts)
    if (s.range.begin <= offset && offset < s.range.end &&
        (!best || s.range.end - s.range.begin < best->range.end - best->range.begin))
      best = &s;
  return best;
}

/// The tensor a name refers to at `offset`: the latest definition before it.
const Tensor *tensorNamed(const Kernel &k, const std::string &name, uint32_t offset) {
  const Tensor *best = nullptr, *first = nullptr;
  for (const Tensor &t : k.tensors) {
    if (t.name != name) continue;
    if (!first || t.range.begin < first->range.begin) first = &t;
    if (t.range.begin <= offset && (!best || t.range.begin > best->range.begin)) best = &t;
  }
  return best ? best : first;
}

const nki::OpInfo *opForCall(const Kernel &k, const std::string &dotted, uint32_t offset) {
  llvm::StringRef d(dotted);
  auto [prefix, attr] = d.rsplit('.');
  if (attr.empty()) return nullptr;
  // The statement's own call knows its canonical name.
  if (const Statement *s = innermostStmt(k, offset);
      s && s->op && llvm::StringRef(s->callee).endswith("." + attr.str()))
    return s->op;
  if (const nki::OpInfo *op = nki::lookupOp(dotted)) return op;
  llvm::StringRef module = prefix.rsplit('.').second.empty() ? prefix : prefix.rsplit('.').second;
  std::string canon = module == "language" ? "nl" : module == "isa" ? "nisa" : module.str();
  if (const nki::OpInfo *op = nki::lookupOp(canon + "." + attr.str())) return op;
  const nki::OpInfo *unique = nullptr;
  for (const nki::OpInfo &op : nki::allOps())
    if (llvm::StringRef(op.name).endswith("." + attr.str())) {
      if (unique) return nullptr;
      unique = &op;
    }
  return unique;
}

std::string loopHoverText(const Analysis &a, const Analysis::KernelInfo &ki, const Loop &l,
                          const perf::HardwareDesc *hw) {
  const Kernel &k = *ki.kernel;
  std::string md = llvm::formatv("**{0}** loop `L{1}` over `{2}`\n\n", nki::loopKindName(l.kind), l.id, l.iv).str();
  md += "- trip count: " +
        (l.tripCount.isKnown() ? std::to_string(*l.tripCount.value)
                               : "`" + l.tripCount.str() + "` (give input shapes for a number)") +
        "\n";
  md += "- range: start " + l.start.str() + ", stop " + l.stop.str() + ", step " + l.step.str() + "\n";
  std::vector<int> nest = k.loopNest(l.id);
  if (nest.size() > 1) {
    std::optional<int64_t> iters = 1;
    std::string ids;
    for (int id : nest) {
      ids += (ids.empty() ? "" : " × ") + ("L" + std::to_string(id));
      const Loop &n = k.loops[id];
      if (iters && n.tripCount.isKnown())
        *iters *= *n.tripCount.value;
      else
        iters.reset();
    }
    md += "- nest: " + ids + (iters ? " = " + std::to_string(*iters) + " iterations of the body" : "") + "\n";
  }
  if (hw && l.tripCount.isKnown()) {
    const Analysis::Estimate &e = a.estimate(ki, *hw);
    if (e.value) {
      double loopNs = 0, allNs = 0;
      uint64_t inst = 0;
      for (const perf::StatementCost &c : e.value->simulation.statements) {
        double ns = c.engineNs + c.dmaNs;
        allNs += ns;
        if (c.stmt >= 0 && c.stmt < int(k.stmts.size()) && loopWithin(k, k.stmts[c.stmt].parent, l.id)) {
          loopNs += ns;
          inst += c.instructions;
        }
      }
      md += llvm::formatv("- estimated time ({0}): {1} of engine + DMA busy time in this loop nest "
                          "({2:f1}% of the kernel's), {3} instructions; kernel latency {4}\n",
                          e.value->profile.backend, fmtMs(loopNs * 1e-6), allNs > 0 ? 100 * loopNs / allNs : 0.0, inst,
                          fmtMs(e.value->profile.latency))
                .str();
    }
  }
  return md;
}

std::string tensorHoverText(const Tensor &t, const Kernel &k, const perf::HardwareDesc *hw) {
  std::string md = "**" + (t.name.empty() ? std::string("<tile>") : t.name) +
                   "**: " + std::string(nki::bufferName(t.buffer)) + " tensor";
  if (t.isArgument)
    md += " (kernel argument)";
  else if (t.definedBy >= 0)
    md += " (defined by `S" + std::to_string(t.definedBy) + "`)";
  if (t.isOutput) md += ", returned";
  md += "\n\n";
  if (!t.shapeKnown) {
    md += "- shape: unknown (give input shapes: accelopt `inputs` setting)\n";
  } else {
    md += "- shape: `" + t.shapeString() + "`";
    if (nki::isOnChip(t.buffer) || t.buffer == nki::Buffer::Unknown) {
      if (t.blockDims() > 0)
        md += llvm::formatv(" — {0} block dim{1}, partition dim {2}", t.blockDims(), t.blockDims() > 1 ? "s" : "",
                            t.parDim)
                  .str();
      else if (!t.shape.empty())
        md += " — partition dim 0";
    }
    md += "\n";
  }
  md += "- dtype: " + (t.dtypeKnown ? std::string(nki::dtypeName(t.dtype)) : std::string("unknown")) + "\n";
  if (auto b = t.bytesPerPartition()) {
    md += "- bytes per partition: " + fmtBytes(*b) + (t.blockDims() > 0 ? " per block" : "") + "\n";
    if (auto total = t.totalBytesPerPartition()) {
      if (t.blockDims() > 0) md += "- all blocks: " + fmtBytes(*total) + " per partition\n";
      if (t.buffer == nki::Buffer::SBUF) {
        double cap = hw ? double(hw->memory.sbufBytesPerPartition) : 192.0 * 1024;
        md += llvm::formatv("- SBUF use: {0:f1}% of {1} per partition{2}\n", 100.0 * double(*total) / cap,
                            fmtBytes(int64_t(cap)), hw ? " (" + hw->name + ")" : std::string())
                  .str();
      } else if (t.buffer == nki::Buffer::PSUM) {
        double bank = hw ? double(hw->memory.psumBankBytes) : 2048.0;
        double banks = hw ? double(hw->memory.psumBanks) : 8.0;
        md += llvm::formatv("- PSUM use: {0:f1}% of {1} banks × {2} B per partition\n",
                            100.0 * double(*total) / (bank * banks), int64_t(banks), int64_t(bank))
                  .str();
      }
    }
  }
  (void)k;
  return md;
}

std::string opHoverText(const nki::OpInfo &op) {
  std::string md = "**`" + std::string(op.name) + "`**";
  if (op.engine != nki::Engine::Unknown) md += " — " + std::string(nki::engineName(op.engine)) + " engine";
  md += "\n\n" + std::string(op.summary) + "\n";
  if (!op.params.empty()) {
    md += "\nparameters: ";
    bool first = true;
    for (const nki::ParamInfo &p : op.params) {
      md += (first ? "" : ", ") + std::string("`") + std::string(p.name) + (p.required ? "`" : "=…`");
      first = false;
    }
    md += "\n";
  }
  return md;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i] > 0 ? std::to_string(shape[i]) : std::string("?"));
  return s + "]";
}

json positionJson(const Analysis &a, uint32_t offset) { return toJson(a.index().position(offset)); }

/// Does the op instance mention `id` ("L3", "S12") in one of its fields?
bool mentions(const json &op, const std::string &id) {
  for (auto it = op.begin(); it != op.end(); ++it)
    if (it.key() != "op" && it->is_string() && it->get<std::string>() == id) return true;
  return false;
}

/// The id ("L3", "S12") of what the cursor is on: a loop header, else the
/// innermost statement, else the innermost loop body; "" outside a kernel body.
std::string idAt(const Kernel &k, uint32_t offset) {
  if (const Loop *l = innermostLoop(k, offset, true)) return "L" + std::to_string(l->id);
  if (const Statement *s = innermostStmt(k, offset)) return "S" + std::to_string(s->id);
  if (const Loop *l = innermostLoop(k, offset, false)) return "L" + std::to_string(l->id);
  return "";
}

/// Runs the rewrite engine on the document's current text, parsing and verifying
/// it once however many ops are tried (a quick fix or memory action tries several).
class DocumentRewriter {
public:
  DocumentRewriter(const Analysis &a, const Analysis::KernelInfo &ki) : A(a), KI(ki) {}

  rewrite::CandidateResult apply(const std::vector<json> &ops) {
    if (!Prepared && Error.empty()) prepare();
    if (!Prepared) {
      rewrite::CandidateResult failed;
      failed.message = Error;
      return failed;
    }
    return rewrite::applyCandidate(*Prepared, ops);
  }

private:
  void prepare() {
    auto source = syntax::SourceBuffer::fromText(A.path(), A.text());
    if (!source) {
      Error = llvm::toString(source.takeError());
      return;
    }
    rewrite::CandidateOptions opts;
    opts.inputs = KI.inputs;
    opts.kernelName = KI.kernel->name;
    auto prepared = rewrite::PreparedKernel::prepare(**source, opts);
    if (!prepared) {
      Error = llvm::toString(prepared.takeError()) + "\n";
      return;
    }
    Prepared = std::move(*prepared);
  }

  const Analysis &A;
  const Analysis::KernelInfo &KI;
  std::optional<rewrite::PreparedKernel> Prepared;
  std::string Error; // why the document cannot be prepared
};

json workspaceEdit(const Analysis &a, const clang::tooling::Replacements &replacements) {
  json edits = json::array();
  for (const clang::tooling::Replacement &rep : replacements)
    edits.push_back({{"range", rangeJson(a.index(), rep.getOffset(), rep.getOffset() + rep.getLength())},
                     {"newText", rep.getReplacementText().str()}});
  return {{"changes", {{a.uri(), edits}}}};
}

std::string refusalText(const rewrite::CandidateResult &r) {
  std::string reason = r.status == rewrite::Status::Refused ? r.refusal.reason : r.message;
  return reason.empty() ? r.message : reason;
}

std::string lensTitle(const Analysis::KernelInfo &ki, const Analysis::Estimate &e, const perf::HardwareDesc &hw) {
  if (!e.value) {
    llvm::StringRef first = llvm::StringRef(e.error).split('\n').first;
    if (first.contains("input shapes")) return hw.backend + ": needs input shapes (accelopt `inputs` setting)";
    return hw.backend + ": no estimate (" + first.str() + ")";
  }
  const perf::Profile &p = e.value->profile;
  std::string title = p.backend + ": " + fmtMs(p.latency);
  if (ki.peak && p.latency > 0)
    title += llvm::formatv(" · {0:f1}% of peak", 100 * ki.peak->fractionOfPeak(p.latency)).str();
  return title;
}

} // namespace

// --- hover ------------------------------------------------------------------------

json hover(const Analysis &a, uint32_t offset, const perf::HardwareDesc *hw) {
  const Analysis::KernelInfo *ki = a.kernelAt(offset);
  if (!ki) return nullptr;
  const Kernel &k = *ki->kernel;
  auto w = wordAt(a.text(), offset);
  // The loop header (but a tensor name inside it still shows the tensor).
  if (const Loop *l = innermostLoop(k, offset, /*headerOnly=*/true)) {
    if (!w || !tensorNamed(k, w->word, offset))
      return markdownHover(a, loopHoverText(a, *ki, *l, hw), l->headerRange.begin, l->headerRange.end);
  }
  if (!w) return nullptr;
  if (w->dotted.find('.') != std::string::npos)
    if (const nki::OpInfo *op = opForCall(k, w->dotted, offset))
      return markdownHover(a, opHoverText(*op), w->dottedBegin, w->dottedEnd);
  if (const Tensor *t = tensorNamed(k, w->word, offset))
    return markdownHover(a, tensorHoverText(*t, k, hw), w->begin, w->end);
  // An induction variable: the loop it counts.
  for (const Loop *l = innermostLoop(k, offset, false); l; l = k.loopById(l->parent))
    if (l->iv == w->word) return markdownHover(a, loopHoverText(a, *ki, *l, hw), w->begin, w->end);
  return nullptr;
}

// --- inlay hints --------------------------------------------------------------------

json inlayHints(const Analysis &a, uint32_t begin, uint32_t end) {
  json hints = json::array();
  std::vector<std::pair<uint32_t, json>> ordered;
  for (const Analysis::KernelInfo &ki : a.kernels()) {
    const Kernel &k = *ki.kernel;
    for (const Loop &l : k.loops) {
      uint32_t at = l.headerRange.end;
      if (at < begin || at > end || l.headerRange.empty()) continue;
      ordered.push_back({at,
                         {{"position", positionJson(a, at)},
                          {"label", "trip " + l.tripCount.str()},
                          {"paddingLeft", true},
                          {"tooltip", std::string(nki::loopKindName(l.kind)) + " loop L" + std::to_string(l.id)}}});
    }
    for (const Statement &s : k.stmts) {
      // `x = op(...)` (a new tile) and `t[...] = op(...)` (written into t).
      if (!s.op || (s.kind != nki::StmtKind::Op && s.kind != nki::StmtKind::Assign) || !s.syntax ||
          s.syntax->kind != syntax::StmtKind::Assign || s.syntax->targets.size() != 1)
        continue;
      const syntax::Expr *target = s.syntax->targets.front();
      uint32_t at = target->range.end;
      if (at < begin || at > end) continue;
      std::string label;
      if (target->kind == syntax::ExprKind::Name && s.definesTensor >= 0) {
        const Tensor &t = k.tensors[s.definesTensor];
        if (!t.shapeKnown) continue;
        label = ": " + t.shapeString() + (t.dtypeKnown ? " " + std::string(nki::dtypeName(t.dtype)) : "");
      } else if (target->kind == syntax::ExprKind::Subscript && !s.writes.empty() &&
                 !s.writes.front().tileShape.empty()) {
        label = ": tile " + shapeText(s.writes.front().tileShape);
      } else {
        continue;
      }
      ordered.push_back({at, {{"position", positionJson(a, at)}, {"label", label}, {"kind", 1}}});
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](auto &x, auto &y) { return x.first < y.first; });
  for (auto &[at, h] : ordered) hints.push_back(std::move(h));
  return hints;
}

// --- code lenses ----------------------------------------------------------------------

json codeLenses(const Analysis &a, const perf::HardwareDesc *hw) {
  json lenses = json::array();
  for (const Analysis::KernelInfo &ki : a.kernels()) {
    const Kernel &k = *ki.kernel;
    if (!k.def) continue;
    uint32_t b = k.def->range.begin;
    // The range is the "def" line (decorators are part of the statement range).
    uint32_t e = b;
    while (e < a.text().size() && a.text()[e] != '\n') ++e;
    if (k.def->headerRange.end > k.def->headerRange.begin) {
      b = k.def->headerRange.begin;
      e = b;
      while (e < a.text().size() && a.text()[e] != '\n' && e < k.def->headerRange.end) ++e;
    }
    json lens = {{"range", rangeJson(a.index(), b, e)},
                 {"data", {{"uri", a.uri()}, {"version", a.version()}, {"kernel", k.name}}}};
    lenses.push_back(std::move(lens));
  }
  (void)hw;
  return lenses;
}

json resolveCodeLens(const Analysis &a, json lens, const perf::HardwareDesc *hw) {
  std::string name = lens.contains("data") && lens["data"].is_object() ? lens["data"].value("kernel", "") : "";
  const Analysis::KernelInfo *ki = a.kernelNamed(name);
  if (!hw) {
    lens["command"] = {{"title", "accelopt: unknown target"}, {"command", ""}};
    return lens;
  }
  if (!ki) {
    lens["command"] = {{"title", hw->backend + ": kernel '" + name + "' not found"}, {"command", ""}};
    return lens;
  }
  const Analysis::Estimate &e = a.estimate(*ki, *hw);
  lens["command"] = {
      {"title", lensTitle(*ki, e, *hw)}, {"command", ProfileCommand}, {"arguments", json::array({a.uri(), name})}};
  return lens;
}

// --- code actions ------------------------------------------------------------------------

bool kindWanted(const std::string &kind, const std::vector<std::string> &only) {
  if (only.empty()) return true;
  for (const std::string &f : only)
    if (kind == f || llvm::StringRef(kind).startswith(f + ".")) return true;
  return false;
}

json codeActions(const Analysis &a, uint32_t offset, const std::vector<std::string> &only) {
  json actions = json::array();
  const Analysis::KernelInfo *ki = a.kernelAt(offset);
  if (!ki) return actions;
  const Kernel &k = *ki->kernel;
  std::string id = idAt(k, offset);
  if (id.empty()) return actions;
  for (const rewrite::Op *op : rewrite::allOps()) {
    std::string kind = std::string(RewriteKindPrefix) + "." + op->name().str();
    if (!kindWanted(kind, only)) continue;
    for (const json &inst : op->instances(k)) {
      if (!mentions(inst, id)) continue;
      rewrite::OpResult r = op->apply(k, inst);
      if (r.status == rewrite::Status::BadInput) continue;
      json action = {{"kind", kind},
                     {"data", {{"uri", a.uri()}, {"version", a.version()}, {"kernel", k.name}, {"op", inst}}}};
      if (r.status == rewrite::Status::Applied) {
        action["title"] = r.description.empty() ? rewrite::formatOp(inst) : r.description;
      } else {
        action["title"] = rewrite::formatOp(inst);
        action["disabled"] = {{"reason", r.refusal.reason}};
      }
      actions.push_back(std::move(action));
    }
  }
  return actions;
}

json migrationAction(const Analysis &a, uint32_t offset) {
  if (!legacyImportLine(a.text(), offset)) return nullptr;
  return {{"title", "Migrate to the nki dialect (0.3)"},
          {"kind", QuickFixKind},
          {"data", {{"uri", a.uri()}, {"version", a.version()}, {"migrate", std::string(search::kMigrationPattern)}}}};
}

namespace {

/// The migration of the document's text as a WorkspaceEdit, or disabled with the first reason.
json resolveMigration(const Analysis &a, json action) {
  search::BatchOptions options;
  options.migrate = true;
  options.jobs = 1;
  options.inputs = a.fileInputs();
  options.numericCheck = a.fileInputs().has_value(); // verified when the file's shapes are known
  search::FileResult r = search::migrateText(a.path(), a.text(), options);
  if (!r.changed() || r.fixes.empty()) {
    std::string why = r.alreadyCurrent     ? "the file is in the nki dialect already"
                      : r.messages.empty() ? "nothing to migrate"
                                           : r.messages.front();
    action["disabled"] = {{"reason", why}};
    return action;
  }
  action["edit"] = workspaceEdit(a, r.fixes.front().edits);
  return action;
}

} // namespace

json resolveCodeAction(const Analysis &a, json action) {
  const json &data = action.contains("data") ? action["data"] : json();
  if (data.is_object() && data.contains("migrate")) return resolveMigration(a, std::move(action));
  // "op": one rewrite op (rewrite actions); "ops": an op list (remembered patterns).
  if (!data.is_object() || !(data.contains("op") || (data.contains("ops") && data["ops"].is_array()))) {
    action["disabled"] = {{"reason", "not an accelopt rewrite action"}};
    return action;
  }
  std::string name = data.value("kernel", "");
  const Analysis::KernelInfo *ki = a.kernelNamed(name);
  if (!ki) {
    action["disabled"] = {{"reason", a.ok() ? "kernel '" + name + "' is gone" : "the file does not parse"}};
    return action;
  }
  std::vector<json> ops;
  if (data.contains("op"))
    ops.push_back(data["op"]);
  else
    ops.assign(data["ops"].begin(), data["ops"].end());
  rewrite::CandidateResult r = DocumentRewriter(a, *ki).apply(ops);
  if (r.status != rewrite::Status::Applied) {
    action["disabled"] = {{"reason", refusalText(r)}};
    return action;
  }
  action["edit"] = workspaceEdit(a, r.edits);
  return action;
}

// --- quick fixes --------------------------------------------------------------------------

const std::vector<std::string> &fixableRules() {
  static const std::vector<std::string> rules = {nki::ruleId(nki::Rule::AffineOutputDep),
                                                 nki::ruleId(nki::Rule::SbufCapacity)};
  return rules;
}

namespace {

/// Findings of `rule` on kernel `ki` of `text` (nullopt when it no longer builds).
std::optional<size_t> findingsIn(const Analysis &a, const Analysis::KernelInfo &ki, const std::string &text,
                                 const std::string &rule) {
  auto source = syntax::SourceBuffer::fromText(a.path(), text);
  if (!source) {
    llvm::consumeError(source.takeError());
    return std::nullopt;
  }
  nki::FrontEndOptions opts;
  opts.inputs = ki.inputs;
  opts.kernelName = ki.kernel->name;
  auto file = nki::buildKernelFile(std::move(*source), opts);
  if (!file) {
    llvm::consumeError(file.takeError());
    return std::nullopt;
  }
  if (file->kernels.empty()) return std::nullopt;
  size_t n = 0;
  for (const nki::Diagnostic &d : analysis::verify(file->kernels.front(), a.verifyOptions())) n += d.rule == rule;
  return n;
}

size_t findingsOf(const Analysis &a, const Analysis::KernelInfo &ki, const std::string &rule) {
  size_t n = 0;
  for (const nki::Diagnostic &d : analysis::verify(*ki.kernel, a.verifyOptions())) n += d.rule == rule;
  return n;
}

/// affine-output-dep at a write: the iterations of an enclosing affine_range
/// write the same elements; running that loop in order (sequential_range) keeps
/// the last write and is what the rule asks for. The loop the finding names is
/// tried first, then the other enclosing affine loops, innermost first.
std::vector<json> affineOutputDepFixes(const Kernel &k, uint32_t offset, const std::string &message) {
  const Statement *writer = nullptr;
  for (const Statement &s : k.stmts)
    for (const nki::Access &w : s.writes)
      if (w.range.begin <= offset && offset < std::max(w.range.end, w.range.begin + 1)) writer = &s;
  if (!writer) return {};
  std::vector<int> loops;
  for (int l : k.loopNest(writer->parent))
    if (k.loops[l].runsAs == nki::LoopKind::Affine) loops.insert(loops.begin(), l);
  // The message names the loop: "... affine_range loop L<n> ...".
  size_t at = message.find("affine_range loop L");
  if (at != std::string::npos) {
    int named = std::atoi(message.c_str() + at + std::strlen("affine_range loop L"));
    auto it = std::find(loops.begin(), loops.end(), named);
    if (it != loops.end()) std::rotate(loops.begin(), it, it + 1);
  }
  std::vector<json> ops;
  for (int l : loops)
    ops.push_back({{"op", "set_loop_kind"}, {"loop", "L" + std::to_string(l)}, {"kind", "sequential_range"}});
  return ops;
}

/// sbuf-capacity: dropping a block dimension of an SBUF buffer (each iteration
/// then allocates one block) shrinks the footprint. Only drops that can bring
/// the footprint (counted as the verifier counts it) under the capacity are
/// tried, the largest saving first.
std::vector<json> sbufCapacityFixes(const Kernel &k, int64_t capacity) {
  const rewrite::Op *shrink = rewrite::findOp("shrink_buffer");
  if (!shrink) return {};
  int64_t total = 0;
  for (const Tensor &t : k.tensors)
    if (t.buffer == nki::Buffer::SBUF && t.name != "<discarded>") total += t.totalBytesPerPartition().value_or(0);
  auto saving = [&](const json &inst) -> int64_t {
    std::string ref = inst.value("tensor", "");
    int dim = inst.value("dim", -1);
    for (const Tensor &t : k.tensors) {
      if (t.buffer != nki::Buffer::SBUF || (t.name != ref && "S" + std::to_string(t.definedBy) != ref)) continue;
      auto bytes = t.totalBytesPerPartition();
      if (!bytes || dim < 0 || dim >= t.blockDims() || !t.shape[dim].isKnown() || *t.shape[dim].value <= 0) return 0;
      return *bytes - *bytes / *t.shape[dim].value;
    }
    return 0; // not an SBUF buffer (PSUM): it does not count against SBUF
  };
  std::vector<std::pair<int64_t, json>> ranked;
  for (json &inst : shrink->instances(k))
    if (int64_t saved = saving(inst); saved > 0 && total - saved <= capacity)
      ranked.push_back({saved, std::move(inst)});
  std::stable_sort(ranked.begin(), ranked.end(), [](auto &x, auto &y) { return x.first > y.first; });
  std::vector<json> ops;
  for (auto &[saved, inst] : ranked) ops.push_back(std::move(inst));
  return ops;
}

/// The accelopt diagnostic of `a` equal to a client's one (code and range), or null.
const json *currentDiagnostic(const Analysis &a, const json &d) {
  if (!d.is_object() || !d.contains("code") || !d["code"].is_string() || !d.contains("range")) return nullptr;
  if (d.contains("source") && d["source"] != "accelopt") return nullptr;
  for (const json &own : a.diagnostics())
    if (own.value("code", "") == d["code"] && own["range"] == d["range"]) return &own;
  return nullptr;
}

} // namespace

json quickFixes(const Analysis &a, const json &contextDiagnostics) {
  json actions = json::array();
  if (!contextDiagnostics.is_array()) return actions;
  // Bounds the rewrites tried per finding: each re-parses and re-verifies the result.
  constexpr size_t MaxTries = 6;
  std::map<std::string, size_t> actionOfOp; // op JSON -> index in actions (one action per fix)
  for (const json &clientDiag : contextDiagnostics) {
    const json *diag = currentDiagnostic(a, clientDiag);
    if (!diag) continue;
    std::string rule = (*diag)["code"].get<std::string>();
    if (std::find(fixableRules().begin(), fixableRules().end(), rule) == fixableRules().end()) continue;
    uint32_t offset;
    try {
      offset = a.index().offset(positionFromJson((*diag)["range"]["start"]));
    } catch (const json::exception &) { continue; }
    const Analysis::KernelInfo *ki = a.kernelAt(offset);
    if (!ki) continue;
    const Kernel &k = *ki->kernel;
    DocumentRewriter rewriter(a, *ki);
    std::vector<json> candidates = rule == nki::Rule::AffineOutputDep
                                       ? affineOutputDepFixes(k, offset, (*diag).value("message", ""))
                                       : sbufCapacityFixes(k, a.verifyOptions().sbufBytesPerPartition);
    size_t before = 0;
    bool counted = false;
    size_t tries = 0;
    for (const json &op : candidates) {
      std::string key = op.dump();
      if (auto it = actionOfOp.find(key); it != actionOfOp.end()) {
        actions[it->second]["diagnostics"].push_back(clientDiag);
        break;
      }
      // Cheap legality check before the engine's full apply.
      const rewrite::Op *impl = rewrite::findOp(op.value("op", ""));
      if (!impl || impl->apply(k, op).status != rewrite::Status::Applied) continue;
      if (++tries > MaxTries) break;
      rewrite::CandidateResult r = rewriter.apply({op});
      if (r.status != rewrite::Status::Applied) continue;
      if (!counted) {
        before = findingsOf(a, *ki, rule);
        counted = true;
      }
      std::optional<size_t> after = findingsIn(a, *ki, r.text, rule);
      if (!after || *after >= before) continue;
      std::string what = r.descriptions.empty() ? rewrite::formatOp(op) : r.descriptions.front();
      json action = {{"title", "Fix " + rule + ": " + what},
                     {"kind", QuickFixKind},
                     {"diagnostics", json::array({clientDiag})},
                     {"isPreferred", true},
                     {"edit", workspaceEdit(a, r.edits)},
                     {"data", {{"uri", a.uri()}, {"version", a.version()}, {"kernel", k.name}, {"op", op}}}};
      actionOfOp[key] = actions.size();
      actions.push_back(std::move(action));
      break;
    }
  }
  return actions;
}

// --- the optimization memory ---------------------------------------------------------------

llvm::Expected<json> memoryAction(const Analysis &a, uint32_t offset, memory::Store &store) {
  const Analysis::KernelInfo *ki = a.kernelAt(offset);
  if (!ki) return nullptr;
  const Kernel &k = *ki->kernel;
  std::string id = idAt(k, offset);
  if (id.empty()) return nullptr;
  // Many patterns and several sites each: the pattern for the cursor's loop
  // need not rank high for the kernel as a whole. Computed once per version.
  memory::PatternQuery query;
  query.limit = 50;
  std::shared_ptr<const Analysis::Suggestions> suggestions = a.suggestions(*ki, store, query, /*perPattern=*/8);
  if (!suggestions->error.empty()) return llvm::createStringError(llvm::inconvertibleErrorCode(), suggestions->error);
  // Each try re-parses and re-verifies the result: a few refused sites at most.
  constexpr int MaxTries = 6;
  int tries = 0;
  DocumentRewriter rewriter(a, *ki);
  for (const memory::PatternSuggestion &s : suggestions->list) {
    if (s.ops.empty() || std::none_of(s.ops.begin(), s.ops.end(), [&](const json &op) { return mentions(op, id); }))
      continue;
    if (++tries > MaxTries) break;
    rewrite::CandidateResult r = rewriter.apply(s.ops);
    if (r.status != rewrite::Status::Applied) continue;
    std::string what;
    for (const std::string &d : r.descriptions) what += (what.empty() ? "" : "; ") + d;
    json action = {
        {"title",
         llvm::formatv("Remembered pattern p{0} (win rate {1:f0}%): {2}", s.pattern, 100 * s.winRate, what).str()},
        {"kind", MemoryKind},
        {"isPreferred", true},
        {"edit", workspaceEdit(a, r.edits)},
        {"data",
         {{"uri", a.uri()}, {"version", a.version()}, {"kernel", k.name}, {"ops", s.ops}, {"pattern", s.pattern}}}};
    return action;
  }
  return nullptr;
}

// --- the profile command -------------------------------------------------------------------

llvm::Expected<json> profileKernel(const Analysis &a, const std::string &kernelName, const perf::HardwareDesc &hw) {
  const Analysis::KernelInfo *ki =
      kernelName.empty() && !a.kernels().empty() ? &a.kernels().front() : a.kernelNamed(kernelName);
  if (!ki)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   a.ok() ? "no kernel named '" + kernelName + "' in " + a.uri()
                                          : a.uri() + " does not parse");
  const Analysis::Estimate &e = a.estimate(*ki, hw);
  if (!e.value) return llvm::createStringError(llvm::inconvertibleErrorCode(), e.error);
  const Kernel &k = *ki->kernel;
  json out = json(e.value->profile.toJSON());
  out["kernel"] = k.name;
  out["target"] = hw.name;
  out["instructions"] = e.value->instructions;
  if (!ki->caseName.empty()) out["case"] = ki->caseName;
  if (ki->peak) {
    out["roofline"] = {{"peak_ms", ki->peak->peakMs},
                       {"bound", std::string(perf::rooflineBoundName(ki->peak->bound))},
                       {"percent_of_peak", 100 * ki->peak->fractionOfPeak(e.value->profile.latency)}};
  }
  json top = json::array();
  for (size_t i = 0; i < e.value->simulation.statements.size() && i < 5; ++i) {
    const perf::StatementCost &s = e.value->simulation.statements[i];
    top.push_back({{"stmt", "S" + std::to_string(s.stmt)},
                   {"line", s.line},
                   {"op", s.stmt >= 0 && s.stmt < int(k.stmts.size()) ? k.stmts[s.stmt].callee : ""},
                   {"engine_ms", s.engineNs * 1e-6},
                   {"dma_ms", s.dmaNs * 1e-6}});
  }
  out["top_statements"] = top;
  return out;
}

} // namespace accelopt::lsp
