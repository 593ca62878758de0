#include "Rewrite/ElementwiseChain.h"

#include "NKI/PyCore.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

namespace accelopt::rewrite {

using namespace nki;
using syntax::Expr;
using syntax::ExprKind;

std::optional<CallView> CallView::of(const Statement &s) {
  if (!s.op || s.op->kind == OpKind::Alloc || !s.syntax || !s.syntax->value) return std::nullopt;
  if (s.syntax->value->kind != ExprKind::Call) return std::nullopt;
  if (s.syntax->kind == syntax::StmtKind::Expr) {
    // The current dialect's `nisa.op(dst=t[...], ...)`: its arguments bind by that dialect's signature.
    const DialectApi *api = currentDialectApi(s.callee);
    if (s.kind == StmtKind::Python || !api || api->op() != s.op) return std::nullopt;
    CallView view{&s, s.syntax->value, s.op, api};
    if (!view.dst()) return std::nullopt;
    return view;
  }
  // `t[...] = op(...)` is an Op statement; `t = op(...)` (a new tile) stays an Assign.
  bool call = s.kind == StmtKind::Op || (s.kind == StmtKind::Assign && s.definesTensor >= 0);
  if (!call) return std::nullopt;
  if (s.syntax->kind != syntax::StmtKind::Assign || s.syntax->targets.size() != 1) return std::nullopt;
  return CallView{&s, s.syntax->value, s.op};
}

const Expr *CallView::dst() const {
  if (!api) return nullptr;
  if (const Expr *kw = call->keyword("dst")) return kw;
  int index = api->paramIndex("dst");
  return index >= 0 && size_t(index) < call->elts.size() ? call->elts[size_t(index)] : nullptr;
}

const Expr *CallView::arg(std::string_view param) const {
  if (const Expr *kw = call->keyword(param)) return kw;
  int index = api ? api->paramIndex(param) : op->paramIndex(param);
  if (index >= 0 && size_t(index) < call->elts.size()) return call->elts[index];
  return nullptr;
}

const Expr *CallView::slot(Slot s) const {
  const ParamInfo *p = op->slot(s);
  return p ? arg(p->name) : nullptr;
}

bool CallView::absent(std::string_view param) const {
  const Expr *e = arg(param);
  return !e || e->kind == ExprKind::None;
}

std::vector<std::string> CallView::givenParams() const {
  std::vector<std::string> out;
  size_t count = api ? api->params.size() : op->params.size();
  for (size_t i = 0; i < call->elts.size() && i < count; ++i) {
    std::string_view name = api ? api->params[i].name : std::string_view(op->params[i].name);
    if (call->elts[i]->kind != ExprKind::None && !(api && name == "dst")) out.emplace_back(name);
  }
  for (const syntax::Keyword &kw : call->keywords)
    if (kw.value && kw.value->kind != ExprKind::None && !(api && kw.name == "dst")) out.push_back(kw.name);
  return out;
}

std::optional<double> constantNumber(const Expr *e) {
  if (!e) return std::nullopt;
  switch (e->kind) {
  case ExprKind::Int: return double(e->intValue);
  case ExprKind::Float: return e->floatValue;
  case ExprKind::UnaryOp:
    if (auto v = constantNumber(e->base)) {
      if (e->name == "-") return -*v;
      if (e->name == "+") return *v;
    }
    return std::nullopt;
  case ExprKind::Call: {
    // A dtype constructor around a literal: np.float32(1), np.dtype(np.uint16).type(0).
    if (e->elts.size() != 1 || !e->keywords.empty() || !e->base) return std::nullopt;
    bool dtypeCtor = e->base->kind == ExprKind::Attribute &&
                     (e->base->name == "type" || llvm::StringRef(e->base->dottedName()).startswith("np."));
    if (!dtypeCtor && !(e->base->kind == ExprKind::Name && e->base->name == "float")) return std::nullopt;
    return constantNumber(e->elts[0]);
  }
  default: return std::nullopt;
  }
}

std::string numberText(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos && s.find("inf") == std::string::npos &&
      s.find("nan") == std::string::npos)
    s += ".0";
  return s;
}

ModuleSpelling::ModuleSpelling(const Kernel &k) {
  // Each op call the front end resolved pairs the file's module prefix with the canonical one.
  for (const Statement &s : k.stmts) {
    if (!s.op || !s.syntax || !s.syntax->value || s.syntax->value->kind != ExprKind::Call) continue;
    const Expr *callee = s.syntax->value->base;
    if (!callee || callee->kind != ExprKind::Attribute) continue;
    std::string dotted = callee->dottedName();
    size_t localDot = dotted.rfind('.'), canonicalDot = s.callee.rfind('.');
    if (localDot == std::string::npos || canonicalDot == std::string::npos) continue;
    std::string local = dotted.substr(0, localDot), module = s.callee.substr(0, canonicalDot);
    LocalToCanonical.emplace(local, module);
    CanonicalToLocal.emplace(module, local);
  }
}

std::string ModuleSpelling::canonical(const Expr *dotted) const {
  if (!dotted) return {};
  std::string name = dotted->dottedName();
  size_t dot = name.rfind('.');
  if (dot != std::string::npos) {
    auto it = LocalToCanonical.find(name.substr(0, dot));
    if (it != LocalToCanonical.end()) return it->second + name.substr(dot);
  }
  return pycore::canonicalPath(name);
}

std::string ModuleSpelling::spell(std::string_view canonicalName) const {
  std::string name(canonicalName);
  for (size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0; dot = name.rfind('.', dot - 1)) {
    auto it = CanonicalToLocal.find(name.substr(0, dot));
    if (it != CanonicalToLocal.end()) return it->second + name.substr(dot);
  }
  return name;
}

std::optional<std::string_view> functionRowName(ActFunc f) {
  for (const OpInfo &row : nki::allOps())
    if (row.numerics.act == f && row.numerics.scale == 1.0f &&
        llvm::StringRef(row.name.data(), row.name.size()).startswith("nl.") && isFunctionValue(row.name))
      return row.name;
  return std::nullopt;
}

std::optional<AluOp> aluOf(const Expr *fn, const ModuleSpelling &names) {
  if (!fn) return std::nullopt;
  const OpInfo *row = lookupOp(names.canonical(fn));
  if (!row || row->kind != OpKind::TensorTensor) return std::nullopt;
  return row->numerics.alu;
}

std::optional<UnaryFunction> unaryFunction(const Kernel &, const CallView &call, const ModuleSpelling &names) {
  UnaryFunction u{};
  if (call.op->numerics.act) {
    u.func = *call.op->numerics.act;
    u.scale = call.op->numerics.scale;
    u.data = call.slot(Slot::Data);
    return u.data ? std::optional(u) : std::nullopt;
  }
  if (call.op->kind != OpKind::Activation || !call.op->slot(Slot::Func)) return std::nullopt;
  const OpInfo *fn = lookupOp(names.canonical(call.slot(Slot::Func)));
  if (!fn || !fn->numerics.act) return std::nullopt;
  // Only the plain function: a reduction alongside it is not elementwise.
  for (const std::string &p : call.givenParams())
    if (p != "op" && p != "data" && p != "scale" && p != "bias" && p != "mask" && p != "dtype") return std::nullopt;
  u.func = *fn->numerics.act;
  u.data = call.slot(Slot::Data);
  u.bias = call.absent("bias") ? nullptr : call.arg("bias");
  if (call.absent("scale"))
    u.scale = fn->numerics.scale;
  else if (auto s = constantNumber(call.arg("scale")))
    u.scale = *s * fn->numerics.scale;
  else
    u.scaleExpr = call.arg("scale");
  return u.data ? std::optional(u) : std::nullopt;
}

std::string exprText(const Kernel &k, const Expr *e) {
  return k.source->text().slice(e->range.begin, e->range.end).str();
}

/// Why the kernel's dialect has no call of `row` in place of `replaced`'s, or "".
static std::string emitRefusal(const Kernel &k, std::string_view row, const CallView &replaced) {
  const DialectApi *api = currentDialectApi(row);
  std::string ids = "S" + std::to_string(replaced.stmt->id);
  if (replaced.api && !api)
    return llvm::formatv("{0} passes its destination, and {1} has no destination-passing form in the nki dialect", ids,
                         std::string(row))
        .str();
  if (!replaced.api && api && k.dialect == Dialect::Nki)
    return llvm::formatv("{0} in the nki dialect writes a destination tile, and {1} returns its result", row,
                         replaced.stmt->callee)
        .str();
  return "";
}

bool canEmitCall(const Kernel &k, std::string_view row, const CallView &replaced) {
  return lookupOp(row) && emitRefusal(k, row, replaced).empty();
}

llvm::Expected<std::string> emitCall(const Kernel &k, const ModuleSpelling &names, std::string_view row,
                                     const CallArgs &args, const CallView &replaced) {
  auto refuse = [](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  };
  const OpInfo *info = lookupOp(row);
  if (!info) return refuse("the op table has no " + std::string(row));
  if (std::string why = emitRefusal(k, row, replaced); !why.empty()) return refuse(why);
  std::string out = names.spell(row) + "(";
  bool first = true;
  auto add = [&](std::string_view name, const std::string &text) {
    out += (first ? "" : ", ") + std::string(name) + "=" + text;
    first = false;
  };
  if (const DialectApi *api = replaced.api ? currentDialectApi(row) : nullptr) {
    for (const auto &[name, text] : args)
      if (api->paramIndex(name) < 0 && name != "dtype" && name != "mask")
        return refuse(llvm::formatv("the nki dialect's {0} takes no {1}=", std::string(row), name).str());
    add("dst", exprText(k, replaced.dst()));
    for (const DialectParam &p : api->params)
      for (const auto &[name, text] : args)
        if (name == p.name) add(name, text);
    return out + ")";
  }
  for (const ParamInfo &p : info->params)
    for (const auto &[name, text] : args)
      if (name == p.name) add(name, text);
  return out + ")";
}

std::string engineConstant(const Kernel &k, const ModuleSpelling &names, Engine e) {
  std::string engine(engineName(e));
  return names.spell(k.dialect == Dialect::Nki ? "nisa.engine." + engine : "nisa." + engine + "_engine");
}

static const Access *accessAt(const std::vector<Access> &list, const Expr *e) {
  for (const Access &a : list)
    if (a.range.begin == e->range.begin && a.range.end == e->range.end) return &a;
  return nullptr;
}

/// The access (or bare name use) covers every element of its tensor.
static bool wholeTensor(const Kernel &k, const Access &a, const Expr *use) {
  if (use && use->kind == ExprKind::Name) return true;
  if (!a.exact) return false;
  const Tensor &t = k.tensors[a.tensor];
  if (a.dims.size() != t.shape.size()) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    const IndexDim &x = a.dims[d];
    if (x.full) continue;
    if (!x.base.isConstant() || x.base.constant != 0 || x.aranges.size() != 1 || x.aranges[0].coeff != 1 ||
        !t.shape[d].isKnown() || x.aranges[0].extent != *t.shape[d].value)
      return false;
  }
  return true;
}

/// Both accesses resolve exactly to the same elements of the same tensor.
static bool sameElements(const Access &a, const Access &b) {
  if (!a.exact || !b.exact || a.tensor != b.tensor || a.dims.size() != b.dims.size()) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    const IndexDim &x = a.dims[d], &y = b.dims[d];
    if (x.full != y.full || x.base.known != y.base.known || !x.base.known || x.base.constant != y.base.constant ||
        x.base.terms != y.base.terms || x.aranges.size() != y.aranges.size())
      return false;
    for (size_t i = 0; i < x.aranges.size(); ++i)
      if (x.aranges[i].axis != y.aranges[i].axis || x.aranges[i].extent != y.aranges[i].extent ||
          x.aranges[i].coeff != y.aranges[i].coeff)
        return false;
  }
  return true;
}

bool readsWrittenTile(const Kernel &k, const Access &write, const Access &read, const Expr *operand) {
  std::string readText = exprText(k, operand);
  std::string writeText = k.source->text().slice(write.range.begin, write.range.end).str();
  return readText == writeText || sameElements(write, read) ||
         (wholeTensor(k, write, nullptr) && wholeTensor(k, read, operand));
}

const Access *readAt(const Statement &s, const Expr *operand) { return operand ? accessAt(s.reads, operand) : nullptr; }

int singleUseProducer(const Kernel &k, const Statement &consumer, const Expr *operand, std::string &why) {
  const Access *read = operand ? accessAt(consumer.reads, operand) : nullptr;
  if (!read) {
    why = "an operand of S" + std::to_string(consumer.id) + " is not a tile read";
    return -1;
  }
  int t = storageOf(k, read->tensor);
  const Tensor &T = k.tensors[t];
  std::string name = "'" + tensorName(k, t) + "'";
  if (T.isArgument || T.isOutput) {
    why = name + " is a kernel argument or result, not an intermediate value";
    return -1;
  }
  for (const Tensor &o : k.tensors)
    if (o.aliasOf == t) {
      why = name + " is viewed by '" + o.name + "'";
      return -1;
    }
  int producer = -1;
  for (const Statement &s : k.stmts) {
    for (const Access &w : s.writes)
      if (storageOf(k, w.tensor) == t) {
        if (producer >= 0 && producer != s.id) {
          why = llvm::formatv("{0} is written by S{1} and S{2}, not once", name, producer, s.id).str();
          return -1;
        }
        producer = s.id;
      }
    if (s.id != consumer.id)
      for (const Access &r : s.reads)
        if (storageOf(k, r.tensor) == t) {
          why = llvm::formatv("{0} is also read by S{1} at {2}", name, s.id, where(k, s.range.begin)).str();
          return -1;
        }
  }
  if (producer < 0 && T.definedBy >= 0 && CallView::of(k.stmts[T.definedBy])) producer = T.definedBy;
  if (producer < 0) {
    why = name + " is not written by an op statement";
    return -1;
  }
  const Statement &P = k.stmts[producer];
  if (!CallView::of(P) || P.writes.size() > 1) {
    why = llvm::formatv("S{0}, which writes {1}, is not a single op call", producer, name).str();
    return -1;
  }
  if (P.parent != consumer.parent || P.range.begin >= consumer.range.begin) {
    why = llvm::formatv("S{0}, which writes {1}, is not before S{2} in the same block", producer, name, consumer.id)
              .str();
    return -1;
  }
  // The read must see exactly the tile this iteration wrote: the same index set (or subscript text).
  const Access *w = P.writes.empty() ? nullptr : &P.writes.front();
  std::string readText = exprText(k, operand);
  std::string writeText = w ? k.source->text().slice(w->range.begin, w->range.end).str() : T.name;
  bool same = readText == writeText ||
              (w && (sameElements(*w, *read) || (wholeTensor(k, *w, nullptr) && wholeTensor(k, *read, operand))));
  if (!same) {
    why =
        llvm::formatv("S{0} reads {1} as `{2}` but S{3} writes `{4}`", consumer.id, name, readText, producer, writeText)
            .str();
    return -1;
  }
  int reads = 0;
  for (const TensorUse &u : tensorUses(k, t)) {
    if (u.stmt != producer && u.stmt != consumer.id && !(u.stmt == T.definedBy && T.definedBy != producer)) {
      why = name + " is used " + (u.stmt < 0 ? std::string("by a loop header") : "by S" + std::to_string(u.stmt));
      return -1;
    }
    reads += u.stmt == consumer.id;
  }
  if (reads > 1) {
    why = llvm::formatv("S{0} reads {1} more than once", consumer.id, name).str();
    return -1;
  }
  return producer;
}

bool readsZeroFill(const Kernel &k, const Statement &s, const Expr *operand, const ModuleSpelling &) {
  const Access *read = operand ? accessAt(s.reads, operand) : nullptr;
  if (!read) return false;
  int t = storageOf(k, read->tensor);
  if (k.tensors[t].isArgument) return false;
  int writers = 0;
  bool zero = false;
  for (const Statement &w : k.stmts) {
    bool writes = w.id == k.tensors[t].definedBy && w.op && w.op->numerics.fill;
    for (const Access &a : w.writes) writes |= storageOf(k, a.tensor) == t;
    if (!writes) continue;
    ++writers;
    if (w.op && w.op->numerics.fill)
      zero = *w.op->numerics.fill == 0.0f;
    else if (auto call = w.op && w.op->slot(Slot::Fill) ? CallView::of(w) : std::nullopt)
      zero = constantNumber(call->slot(Slot::Fill)) == 0.0;
  }
  return writers == 1 && zero;
}

std::optional<std::string> chainMoveRefusal(const Kernel &k, const std::vector<int> &chain) {
  const Statement &first = k.stmts[chain.front()], &last = k.stmts[chain.back()];
  std::set<int> readStorage;
  std::set<std::string> usedNames;
  std::set<int> inChain(chain.begin(), chain.end());
  // What the removed statements read is now read at the last statement's place (which reads its own
  // operands, and names its destination, where it always did).
  std::set<int> intermediates; // the tiles the removed statements write
  for (int c : chain) {
    if (c == chain.back()) continue;
    for (const Access &r : k.stmts[c].reads) readStorage.insert(storageOf(k, r.tensor));
    for (const Access &w : k.stmts[c].writes) intermediates.insert(storageOf(k, w.tensor));
    for (const std::string &u : k.stmts[c].uses) usedNames.insert(u);
  }
  for (const Statement &s : k.stmts) {
    if (s.range.begin <= first.range.begin || s.range.begin >= last.range.begin || inChain.count(s.id)) continue;
    // An intermediate's own allocation (the nki dialect's `d = nl.ndarray(...)` before the call writing
    // d) binds only that tile, which the folded call no longer reads.
    if (s.kind == StmtKind::Alloc && s.definesTensor >= 0 && intermediates.count(storageOf(k, s.definesTensor)))
      continue;
    for (const Access &w : s.writes)
      if (readStorage.count(storageOf(k, w.tensor)))
        return llvm::formatv("S{0} at {1} writes '{2}', which the chain reads", s.id, where(k, s.range.begin),
                             tensorName(k, storageOf(k, w.tensor)))
            .str();
    for (const std::string &d : s.defines)
      if (usedNames.count(d))
        return llvm::formatv("S{0} at {1} rebinds '{2}', which the chain uses", s.id, where(k, s.range.begin), d).str();
  }
  for (const Loop &l : k.loops)
    if (l.range.begin > first.range.begin && l.range.begin < last.range.begin && usedNames.count(l.iv))
      return llvm::formatv("{0} rebinds '{1}', which the chain uses", loopLabel(k, l.id), l.iv).str();
  return std::nullopt;
}

std::optional<std::string> removeChainStatement(EditList &edits, const Kernel &k, int s) {
  llvm::StringRef text = k.source->text();
  const Statement &st = k.stmts[s];
  if (!startsLine(text, st.range.begin) || !endsLine(text, st.range.end))
    return "S" + std::to_string(s) + " shares its lines with other code";
  edits.remove(lineBegin(text, st.range.begin), nextLineBegin(text, st.range.end));
  return std::nullopt;
}

void removeDeadAllocation(EditList &edits, const Kernel &k, int tensor, const std::vector<int> &removedStmts) {
  const Tensor &T = k.tensors[tensor];
  if (T.definedBy < 0 || k.stmts[T.definedBy].kind != StmtKind::Alloc) return;
  if (std::find(removedStmts.begin(), removedStmts.end(), T.definedBy) != removedStmts.end()) return;
  for (const TensorUse &u : tensorUses(k, tensor))
    if (std::find(removedStmts.begin(), removedStmts.end(), u.stmt) == removedStmts.end()) return;
  llvm::StringRef text = k.source->text();
  const Statement &alloc = k.stmts[T.definedBy];
  if (!startsLine(text, alloc.range.begin) || !endsLine(text, alloc.range.end)) return;
  edits.remove(lineBegin(text, alloc.range.begin), nextLineBegin(text, alloc.range.end));
}

} // namespace accelopt::rewrite
