// Calls: builtins, NKI intrinsics, host code, NKI op calls bound to the op table with their
// reads, writes, result tiles and allocations, and tensor methods.
#include "NKI/FrontEnd/KernelBuilder.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>
#include <limits>

namespace accelopt::nki::frontend {

std::optional<std::string> KernelBuilder::hostCodeCall(const Value &fn, const Expr *e) const {
  static const std::set<std::string, std::less<>> pureBuiltins = {
      "abs",  "all",       "any",        "bool", "callable", "chr",   "complex", "dict",     "divmod", "enumerate",
      "filter", "float",   "format",     "frozenset", "hash", "hex",  "int",     "isinstance", "issubclass",
      "iter", "len",       "list",       "map",  "max",      "min",   "next",    "oct",      "ord",    "pow",
      "range", "repr",     "reversed",   "round", "set",     "slice", "sorted",  "str",      "sum",    "tuple",
      "type", "zip"};
  static const std::set<std::string, std::less<>> traceRoots = {"nl", "nisa", "nki", "nt", "np", "math",
                                                                "builtins", "dtype", "helper", "neuronxcc"};
  // numpy functions that read or write host files.
  static const std::set<std::string, std::less<>> numpyHostIo = {
      "np.load", "np.save", "np.savez", "np.savez_compressed", "np.savetxt", "np.loadtxt", "np.genfromtxt",
      "np.fromfile", "np.memmap", "np.fromregex", "np.DataSource"};
  auto ranOnHost = [](llvm::StringRef what) {
    what.consume_front("builtins.");
    return "call to '" + what.str() + "' runs host code when the kernel is traced; accelopt neither runs nor analyses it";
  };
  if (fn.kind == Value::Path) {
    std::string_view root = std::string_view(fn.s).substr(0, fn.s.find('.'));
    if (!traceRoots.count(root) || numpyHostIo.count(fn.s) || fn.s.rfind("np.lib.", 0) == 0 ||
        fn.s.rfind("np.ctypeslib", 0) == 0 || fn.s == "builtins.print")
      return ranOnHost(fn.s);
    return std::nullopt;
  }
  if (fn.kind == Value::Unknown && e->base->kind == ExprKind::Name && !Env.count(e->base->name) &&
      !Aliases.count(e->base->name) && !pureBuiltins.count(e->base->name))
    return ranOnHost(e->base->name);
  return std::nullopt;
}

Value KernelBuilder::call(const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest) {
  Value fn = eval(e->base);
  if (fn.kind == Value::Method) return methodCall(fn, e);
  if (auto why = hostCodeCall(fn, e)) diag(Diagnostic::Warning, e->base->range, std::move(*why), "host-code");
  std::string name = fn.kind == Value::Path ? fn.s : "";
  if (name.rfind("builtins.", 0) == 0) return builtinCall(name.substr(9), e);
  if (name == "nl.arange") {
    std::vector<Value> args;
    for (auto *a : e->elts) args.push_back(eval(a));
    IndexVal x;
    x.rank = 1;
    if (args.size() == 1 && args[0].isKnownInt()) {
      x.aranges.push_back({0, *args[0].i.value, 1});
    } else if (args.size() >= 2 && args[0].isKnownInt() && args[1].isKnownInt()) {
      x.base = Affine::constantOf(*args[0].i.value);
      x.aranges.push_back({0, *args[1].i.value - *args[0].i.value, 1});
    } else {
      x.base = Affine::unknown();
      x.aranges.push_back({0, 0, 1});
    }
    Value v = Value::index(x);
    v.s = text(e);
    return v;
  }
  if (name == "nl.par_dim") {
    Value v = e->elts.empty() ? Value::unknown() : eval(e->elts[0]);
    v.s = "par_dim";
    if (v.kind == Value::Int) v.i.text = v.i.text;  // keep the value; flagged below
    Value marked = Value::seq({v});
    marked.s = "par_dim";
    return marked;
  }
  if (name == "nl.program_id") {
    IndexVal x;
    x.base = Affine::unknown();
    return Value::index(x);
  }
  if (name == "np.dtype" || name.rfind("dtype.", 0) == 0) {
    Value arg = e->elts.empty() ? Value::unknown() : eval(e->elts[0]);
    Value v = Value::path("np.dtype");
    v.s = "dtype." + (arg.kind == Value::Path ? arg.s : std::string("?"));
    return v;
  }
  if (fn.kind == Value::Path && fn.s.rfind("dtype.", 0) == 0 && fn.s.find(".type") != std::string::npos)
    return e->elts.empty() ? Value::unknown() : eval(e->elts[0]);
  if (name.size() > 5 && name.substr(name.size() - 5) == ".type")
    return e->elts.empty() ? Value::unknown() : eval(e->elts[0]);  // np.dtype(np.float32).type(1e-5)
  if (name == "np.float32" || name == "np.int32" || name == "np.uint16" || name == "np.float16")
    return e->elts.empty() ? Value::unknown() : eval(e->elts[0]);
  if (name.rfind("np.", 0) == 0) {
    for (auto *a : e->elts) eval(a);
    return Value::unknown(text(e));
  }
  if (name.rfind("helper.", 0) == 0) {
    for (auto *a : e->elts) {
      Value v = eval(a);
      if (v.kind == Value::Tensor) readOperand(v, a);
    }
    for (auto &kw : e->keywords) eval(kw.value);
    return Value::unknown(text(e));
  }
  const OpInfo *op = lookupOp(name);
  if (!op) {
    bool nkiName = name.rfind("nl.", 0) == 0 || name.rfind("nisa.", 0) == 0 || name.rfind("nki.", 0) == 0;
    if (nkiName && !isLoopIterator(name))
      diag(Diagnostic::Warning, e->base->range,
           "unknown NKI API '" + name + "'; its effects are not analysed", "unknown-api");
    for (auto *a : e->elts) eval(a);
    for (auto &kw : e->keywords) eval(kw.value);
    return Value::unknown(text(e));
  }
  return opCall(op, e, resultBuffer, dest);
}

Value KernelBuilder::builtinCall(const std::string &fn, const Expr *e) {
  std::vector<Value> args;
  for (auto *a : e->elts) args.push_back(eval(a));
  if (fn == "len" && args.size() == 1 && args[0].kind == Value::Seq)
    return Value::integer(int64_t(args[0].elts.size()));
  if ((fn == "min" || fn == "max") && !args.empty()) {
    std::vector<Value> items = args.size() == 1 && args[0].kind == Value::Seq ? args[0].elts : args;
    std::optional<int64_t> best;
    for (auto &v : items) {
      if (!v.isKnownInt()) return Value::integer(SymInt::symbolic(text(e)));
      int64_t x = *v.i.value;
      best = !best ? x : fn == "min" ? std::min(*best, x) : std::max(*best, x);
    }
    if (best) return Value::integer(*best);
  }
  if (fn == "int" && args.size() == 1) {
    if (auto n = args[0].number()) return Value::integer(int64_t(*n));
    return Value::integer(SymInt::symbolic(text(e)));
  }
  if (fn == "float" && args.size() == 1) {
    if (auto n = args[0].number()) return Value::floating(*n);
  }
  if (fn == "tuple" || fn == "list") {
    if (args.size() == 1 && args[0].kind == Value::Seq) return Value::seq(args[0].elts, fn == "list");
    if (args.size() == 1) return Value::unknown(text(e));
  }
  if (fn == "abs" && args.size() == 1) {
    if (args[0].isKnownInt()) return Value::integer(std::abs(*args[0].i.value));
  }
  return Value::unknown(text(e));
}

std::vector<const Expr *> KernelBuilder::bindArgs(const OpInfo *op, const Expr *e) {
  std::vector<const Expr *> bound(op->params.size(), nullptr);
  for (size_t i = 0; i < e->elts.size(); ++i) {
    if (i < bound.size()) bound[i] = e->elts[i];
    else diag(Diagnostic::Warning, e->elts[i]->range,
              llvm::formatv("too many arguments to {0}", op->name).str(), "call-args");
  }
  for (const auto &kw : e->keywords) {
    int idx = op->paramIndex(kw.name);
    if (idx < 0) {
      if (kw.name != "name" && kw.name != "lazy_initialization")
        diag(Diagnostic::Warning, kw.range,
             "unknown keyword '" + kw.name + "' for " + std::string(op->name), "call-args");
      continue;
    }
    bound[idx] = kw.value;
  }
  return bound;
}

Value KernelBuilder::newTile(const OpInfo *op, std::vector<int64_t> shape, Buffer buffer, DType dtype, ByteRange range) {
  Tensor t;
  t.id = int(K.tensors.size());
  t.buffer = buffer;
  t.dtype = dtype;
  t.isTile = true;
  t.parDim = isHBM(buffer) ? -1 : 0;
  t.definedBy = Cur ? Cur->id : -1;
  t.scope = CurLoop;
  t.range = range;
  for (int64_t d : shape) t.shape.push_back(d > 0 ? SymInt::known(d) : SymInt::symbolic("?"));
  K.tensors.push_back(t);
  if (Cur && Cur->definesTensor < 0) Cur->definesTensor = t.id;
  (void)op;
  return Value::tensorRef(t.id);
}

std::optional<DType> KernelBuilder::dtypeValue(const Value &v) const {
  if (v.kind != Value::Path) return std::nullopt;
  std::string s = v.s;
  if (s.rfind("dtype.", 0) == 0) s = s.substr(6);
  return parseDType(s);
}

Value KernelBuilder::opCall(const OpInfo *op, const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest) {
  if (Cur && !Cur->op) {
    Cur->op = op;
    Cur->callee = std::string(op->name);
  }
  auto bound = bindArgs(op, e);
  std::vector<Value> vals(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    if (!bound[i]) continue;
    const ParamInfo &p = op->params[i];
    vals[i] = eval(bound[i]);
    if (p.role == Role::Flag && Cur) {
      auto n = vals[i].number();
      if (n && *n != 0) Cur->setFlags.push_back(std::string(p.name));
    }
    if (p.role == Role::Tile || p.role == Role::Operand) readOperand(vals[i], bound[i], p.name);
    if (p.role == Role::Mask && Cur && vals[i].kind != Value::None) Cur->hasMask = true;
    if (p.role == Role::Dest && Cur && vals[i].kind == Value::Tensor) {
      Access a = wholeAccess(vals[i], bound[i]);
      a.isWrite = true;
      a.param = std::string(p.name);
      Cur->writes.push_back(a);
    }
  }
  for (size_t i = 0; i < bound.size(); ++i)
    if (op->params[i].required && !bound[i])
      diag(Diagnostic::Error, e->range,
           std::string(op->name) + " is missing its required argument '" +
               std::string(op->params[i].name) + "'",
           "call-args");
  auto paramVal = [&](std::string_view n) -> const Value * {
    int i = op->paramIndex(n);
    return i >= 0 && bound[i] ? &vals[i] : nullptr;
  };
  auto firstTile = [&]() -> const Value * {
    for (size_t i = 0; i < bound.size(); ++i)
      if (bound[i] && op->params[i].role == Role::Tile) return &vals[i];
    return nullptr;
  };
  DType dtype = DType::Float32;
  if (const Value *t = firstTile()) dtype = dtypeOf(*t);
  if (const Value *d = paramVal("dtype"))
    if (auto dt = dtypeValue(*d)) dtype = *dt;
  Buffer buffer = resultBuffer.value_or(op->result);
  if (const Value *b = paramVal("buffer"))
    if (b->kind == Value::Path)
      if (const NamedConstant *c = lookupConstant(b->s); c && c->kind == NamedConstant::BufferKind)
        buffer = Buffer(c->value);

  switch (op->kind) {
  case OpKind::Alloc: {
    bool dtypeKnown = paramVal("dtype") && dtypeValue(*paramVal("dtype"));
    return allocation(op, e, paramVal("shape") ? *paramVal("shape") : Value(), dtype, buffer, dtypeKnown,
                      bound);
  }
  case OpKind::Store: case OpKind::DmaCopy: return Value::none();
  default: break;
  }
  std::vector<int64_t> shape;
  switch (op->shape) {
  case ShapeRule::SameAsInput:
    if (const Value *t = firstTile()) shape = tileShapeOf(*t);
    break;
  case ShapeRule::MatmulResult: {
    const Value *a = bound[0] ? &vals[0] : nullptr;
    const Value *b = bound.size() > 1 && bound[1] ? &vals[1] : nullptr;
    auto sa = a ? tileShapeOf(*a) : std::vector<int64_t>{};
    auto sb = b ? tileShapeOf(*b) : std::vector<int64_t>{};
    if (op->name == "nl.matmul") {
      const Value *tx = paramVal("transpose_x");
      bool transposes = matmulTransposesStationary(*op, tx && tx->number() && *tx->number() != 0);
      // x @ y is [rows of x, columns of y]; x given K x M (transpose_x) has its rows along the free axis.
      shape = {sa.size() >= 2 ? (transposes ? sa[0] : sa[1]) : 0, sb.size() >= 2 ? sb.back() : 0};
    } else {
      shape = {sa.size() >= 2 ? sa.back() : (sa.empty() ? 0 : 1), sb.size() >= 2 ? sb.back() : 0};
    }
    dtype = DType::Float32;
    break;
  }
  case ShapeRule::TransposePF:
    if (const Value *t = firstTile()) {
      auto s = tileShapeOf(*t);
      if (s.size() >= 2) shape = {s.back(), s[0]};
    }
    break;
  case ShapeRule::ReduceFree:
    if (const Value *t = firstTile()) {
      auto s = tileShapeOf(*t);
      if (!s.empty()) shape = {s[0], 1};
    }
    break;
  case ShapeRule::FromShapeArg:
    if (const Value *s = paramVal("shape")) shape = intList(*s);
    break;
  default: break;
  }
  (void)dest;
  return newTile(op, shape, buffer, dtype, e->range);
}

std::vector<int64_t> KernelBuilder::intList(const Value &v) const {
  std::vector<int64_t> out;
  if (v.kind != Value::Seq) return out;
  for (auto &x : v.elts) {
    if (x.kind == Value::Seq && x.s == "par_dim" && !x.elts.empty()) out.push_back(x.elts[0].i.value.value_or(0));
    else out.push_back(x.isKnownInt() ? *x.i.value : 0);
  }
  return out;
}

Value KernelBuilder::allocation(const OpInfo *op, const Expr *e, const Value &shapeVal, DType dtype, Buffer buffer,
                 bool dtypeGiven, const std::vector<const Expr *> &bound) {
  Tensor t;
  t.id = int(K.tensors.size());
  t.buffer = buffer;
  t.dtype = dtype;
  t.definedBy = Cur ? Cur->id : -1;
  t.scope = CurLoop;
  t.range = e->range;
  t.parDim = isHBM(buffer) ? -1 : 0;
  if (op->name == "nl.shared_constant") {
    // np.identity(n) and similar constants: shape from the numpy call when simple.
    const Expr *c = bound.empty() ? nullptr : bound[0];
    int64_t n = 0;
    if (c && c->kind == ExprKind::Call && c->base->dottedName().find("identity") != std::string::npos &&
        !c->elts.empty()) {
      Value nv = eval(c->elts[0]);
      if (nv.isKnownInt()) n = *nv.i.value;
    }
    if (n > 0) t.shape = {SymInt::known(n), SymInt::known(n)};
    else t.shape = {SymInt::symbolic("?")};
    t.parDim = -1;
    t.buffer = Buffer::SharedHBM;
  } else if (shapeVal.kind == Value::Seq) {
    int parDim = -1;
    for (size_t d = 0; d < shapeVal.elts.size(); ++d) {
      const Value &x = shapeVal.elts[d];
      if (x.kind == Value::Seq && x.s == "par_dim") {
        parDim = int(d);
        const Value &inner = x.elts.empty() ? Value() : x.elts[0];
        t.shape.push_back(inner.kind == Value::Int ? inner.i : SymInt::symbolic(inner.text()));
      } else {
        t.shape.push_back(x.kind == Value::Int || x.kind == Value::Bool ? x.i : SymInt::symbolic(x.text()));
      }
    }
    if (!isHBM(buffer)) t.parDim = parDim >= 0 ? parDim : 0;
  } else {
    t.shape = {SymInt::symbolic(shapeVal.text())};
    diag(Diagnostic::Warning, e->range, "shape of this tensor is not known at trace time", "trace-time");
  }
  if (!dtypeGiven) t.dtypeKnown = false;
  K.tensors.push_back(t);
  if (Cur) {
    Cur->kind = StmtKind::Alloc;
    Cur->definesTensor = t.id;
  }
  return Value::tensorRef(t.id);
}

Value KernelBuilder::methodCall(const Value &m, const Expr *e) {
  std::vector<Value> args;
  for (auto *a : e->elts) args.push_back(eval(a));
  // reshape(shape=...) / broadcast_to(shape=...): the keyword form of the one shape argument.
  if (const Expr *kw = args.empty() ? e->keyword("shape") : nullptr) args.push_back(eval(kw));
  const Tensor &src = K.tensors[m.tensor];
  Value shapeArg = args.size() == 1 && args[0].kind == Value::Seq ? args[0] : Value::seq(args);
  if (m.s == "reshape" || m.s == "view") {
    // A free view of an HBM tensor with another shape.
    Tensor t = src;
    t.id = int(K.tensors.size());
    t.aliasOf = src.aliasOf >= 0 ? src.aliasOf : src.id;
    t.isArgument = false;
    t.shape.clear();
    for (auto &x : shapeArg.elts) t.shape.push_back(x.kind == Value::Int ? x.i : SymInt::symbolic(x.text()));
    t.range = e->range;
    t.name = src.name + ".reshape";
    K.tensors.push_back(t);
    unknownShape.erase(t.id);
    return Value::tensorRef(t.id);
  }
  if (m.s == "broadcast_to") {
    const OpInfo *op = lookupOp("tile.broadcast_to");
    Value srcVal = m;
    srcVal.kind = Value::Tensor;
    readOperand(srcVal, e->base);
    if (Cur && !Cur->op) { Cur->op = op; Cur->callee = std::string(op->name); }
    return newTile(op, intList(shapeArg), Buffer::SBUF, src.dtype, e->range);
  }
  return Value::unknown(text(e));
}

} // namespace accelopt::nki::frontend
