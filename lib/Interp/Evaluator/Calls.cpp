// Calls: builtins, Python helper functions, tensor methods and the arguments of NKI calls.
#include "Interp/Evaluator/KernelEvaluator.h"
#include "NKI/DTypeLimits.h"
#include "NKI/Platform.h"
#include "NKI/PyCore.h"

#include "Interp/DTypeRounding.h"
#include "Interp/Uninit.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>

namespace accelopt::interp::evaluator {

Value KernelEvaluator::call(const Expr *e, View *dest) {
  Value fn = eval(e->base);
  if (fn.kind == Value::Method) return methodCall(fn, e);
  if (fn.kind == Value::PyFunc) return callPython(fn, e);
  if (fn.kind != Value::Path) fail(e->range, "'" + text(e->base) + "' is not callable");
  const std::string &name = fn.s;
  if (name.rfind("builtins.", 0) == 0) return builtin(name.substr(9), e);
  if (std::string_view op = nki::pycore::operatorSymbol(name); !op.empty()) {
    auto args = positional(e);
    if (args.size() != 2 || !e->keywords.empty()) fail(e->range, name + "() takes exactly 2 arguments");
    return binary(std::string(op), args[0], args[1], e->range);
  }
  if (name == nki::pycore::kReduce) { // functools.reduce(operator.X, sequence[, initial])
    auto args = positional(e);
    std::string_view op = args.empty() || args[0].kind != Value::Path ? "" : nki::pycore::operatorSymbol(args[0].s);
    if (op.empty() || args.size() < 2 || args.size() > 3 || !args[1].isSeq() || !e->keywords.empty())
      fail(e->range, "functools.reduce is evaluated with an operator function (operator.mul, ...), a tuple or list "
                     "and an optional initial value");
    std::vector<Value> items = *args[1].elts;
    if (args.size() == 3) items.insert(items.begin(), args[2]);
    if (items.empty()) fail(e->range, "reduce() of empty iterable with no initial value");
    Value acc = items[0];
    for (size_t k = 1; k < items.size(); ++k) acc = binary(std::string(op), acc, items[k], e->range);
    return acc;
  }
  if (const auto *unresolved = File.imports ? File.imports->unresolvedOf(currentModule()) : nullptr) {
    std::string dotted = e->base->dottedName();
    if (auto it = unresolved->find(dotted.substr(0, dotted.find('.'))); it != unresolved->end())
      fail(e->base->range, it->second + "; the call of '" + dotted + "' cannot run");
  }
  if (const nki::pycore::IntrinsicInfo *intrinsic = nki::pycore::lookupIntrinsic(name))
    return callIntrinsic(*intrinsic, e);
  if (isLoopIterator(name)) {
    // nl.affine_range(...) and its kin take range()'s arguments; the loop kind says how iterations relate.
    Value v = builtin("range", e);
    v.loopKind = name == "nl.affine_range"       ? nki::LoopKind::Affine
                 : name == "nl.sequential_range" ? nki::LoopKind::Sequential
                                                 : nki::LoopKind::Static;
    return v;
  }
  if (name == "np.dtype") {
    Value v = eval(e->elts.empty() ? nullptr : e->elts[0]);
    return Value::path("npdtype." + v.s);
  }
  if (name.rfind("npdtype.", 0) == 0 && name.size() > 5 && name.substr(name.size() - 5) == ".type") {
    Value v = eval(e->elts.empty() ? nullptr : e->elts[0]);
    return v;
  }
  if ((name.rfind("np.", 0) == 0 && nki::pycore::dtypeOfPath(name)) || name == "nl.float32") {
    Value v = eval(e->elts.empty() ? nullptr : e->elts[0]);
    if (name.find("int") != std::string::npos && v.isNumber()) return Value::integer(int64_t(v.num()));
    if (v.isNumber()) return Value::number(double(float(v.num())));
    return v;
  }
  if (std::string_view info = nki::dtypeInfoKind(name); !info.empty()) {
    // nl.finfo(dt) / np.iinfo(dt): an object with the dtype's limits (min, max, eps, tiny, bits).
    auto args = positional(e);
    Value arg = argument(e, args, 0, "dtype", name);
    std::string spelled = arg.kind == Value::Path ? arg.s : "";
    if (spelled.rfind("dtype.", 0) == 0) spelled = spelled.substr(6);
    std::optional<nki::DType> dt = nki::parseDType(spelled);
    if (!dt) fail(e->range, name + "() takes a dtype, got " + describe(arg));
    std::vector<nki::DTypeLimit> limits = nki::dtypeLimits(*dt, info == "iinfo");
    if (limits.empty())
      fail(e->range, name + " takes a " + (info == "iinfo" ? "integer" : "floating-point") + " dtype, not " +
                         std::string(nki::dtypeName(*dt)));
    Value obj;
    obj.kind = Value::Object;
    obj.s = std::string(info);
    obj.attrs = std::make_shared<Scope>();
    for (const nki::DTypeLimit &l : limits)
      (*obj.attrs)[std::string(l.name)] = l.isInt ? Value::integer(int64_t(l.value)) : Value::number(l.value);
    (*obj.attrs)["dtype"] = arg;
    return obj;
  }
  if (name == "np.identity" || name == "np.eye") {
    auto args = positional(e);
    int64_t n = intArg(argument(e, args, 0, name == "np.eye" ? "N" : "n", name), e), m = n;
    if (name == "np.eye" && (args.size() > 1 || e->keyword("M"))) m = intArg(argument(e, args, 1, "M", name), e);
    auto arr = NDArray::full({n, m}, nki::DType::Float32, 0.0f);
    if (!arr) fail(e->range, llvm::toString(arr.takeError()));
    for (int64_t k = 0; k < std::min(n, m); ++k) arr->data()[k * m + k] = 1.0f;
    Value v;
    v.kind = Value::HostArray;
    v.host = std::make_shared<NDArray>(std::move(*arr));
    return v;
  }
  if (nki::pycore::isMathFunction(name)) {
    auto args = positional(e);
    std::vector<nki::pycore::PyValue> py;
    for (const Value &a : args) py.push_back(toPy(a, e));
    nki::pycore::BuiltinResult r = nki::pycore::callMath(name, py);
    if (!r.ok()) fail(e->range, r.error);
    return fromPy(r.value, args, e);
  }
  if (nki::pycore::isNumpyScalarFunction(name) && e->keywords.empty()) {
    auto args = positional(e);
    std::vector<nki::pycore::PyValue> py;
    for (const Value &a : args) py.push_back(toPy(a, e));
    nki::pycore::BuiltinResult r = nki::pycore::callNumpyScalar(name, py);
    if (!r.ok()) fail(e->range, r.error);
    return fromPy(r.value, args, e);
  }
  if (std::string_view buffer = nki::allocatorBuffer(name); !buffer.empty()) {
    for (const Expr *a : e->elts) eval(a);
    for (const auto &kw : e->keywords) eval(kw.value);
    return Value::path(std::string(buffer));
  }
  if (KernelDialect == nki::Dialect::Nki)
    if (const nki::DialectApi *api = nki::currentDialectApi(name)) return dialectCall(*api, e);
  const nki::OpInfo *op = nki::lookupOp(name);
  if (const char *why = op ? nullptr : nki::unmodelledApiReason(name)) fail(e->base->range, "'" + name + "' " + why);
  if (!op && name.rfind("np.", 0) == 0) fail(e->range, nki::pycore::hostNumpyMessage(name));
  if (!op) fail(e->base->range, "'" + name + "' is not supported by the interpreter");
  return nkiCall(op, e, dest);
}

Value KernelEvaluator::argument(const Expr *e, const std::vector<Value> &args, size_t position,
                                std::string_view keyword, const std::string &callee) {
  // The one parameter of interest at `position`; the binder sees the earlier ones as optional.
  std::vector<nki::pycore::ParamSpec> params(position + 1, nki::pycore::ParamSpec{"", false});
  params[position] = {keyword, true};
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  nki::pycore::Binding b = nki::pycore::bindArguments(params, args.size(), keywords);
  int at = b.argOf[position];
  if (at == nki::pycore::Binding::Unbound)
    fail(e->range, callee + " is missing its argument '" + std::string(keyword) + "'");
  return size_t(at) < args.size() ? args[size_t(at)] : eval(e->keywords[size_t(at) - args.size()].value);
}

std::vector<Value> KernelEvaluator::positional(const Expr *e) {
  std::vector<Value> out;
  for (auto *a : e->elts) out.push_back(eval(a));
  return out;
}

int64_t KernelEvaluator::intArg(const Value &v, const Expr *at) {
  if (v.isIntLike()) return v.i;
  if (v.kind == Value::Float && v.f == std::floor(v.f)) return int64_t(v.f);
  fail(at->range, "expected an integer, got " + describe(v));
}

nki::pycore::PyValue KernelEvaluator::toPy(const Value &v, const Expr *at) {
  using P = nki::pycore::PyValue;
  switch (v.kind) {
  case Value::None: return P::none();
  case Value::Bool: return P::boolean(v.i != 0);
  case Value::Int: return P::integer(v.i);
  case Value::Float: return P::floating(v.f);
  case Value::Str: return P::str(v.s);
  case Value::Tuple:
  case Value::List: {
    std::vector<P> elts;
    for (const Value &x : *v.elts) elts.push_back(toPy(x, at));
    return P::seq(std::move(elts), v.kind == Value::List);
  }
  case Value::RangeV: return P::range((*v.elts)[0].i, (*v.elts)[1].i, (*v.elts)[2].i);
  default: {
    P p;
    p.kind = P::Kind::Opaque;
    p.s = describe(v);
    if (v.isTile()) p.length = viewOf(v, at).extent[0];
    if (v.kind != Value::Index && v.kind != Value::MaskV) p.truth = truthy(v, at);
    return p;
  }
  }
}

Value KernelEvaluator::fromPy(const nki::pycore::PyValue &p, const std::vector<Value> &args, const Expr *at) {
  using K = nki::pycore::PyValue::Kind;
  switch (p.kind) {
  case K::None: return Value::none();
  case K::Bool: return Value::boolean(p.i != 0);
  case K::Int: return Value::integer(p.i);
  case K::Float: return Value::number(p.f);
  case K::Str: return Value::str(p.s);
  case K::Seq: {
    ValueList out;
    for (const auto &x : p.elts) out.push_back(fromPy(x, args, at));
    return Value::seq(std::move(out), p.isList ? Value::List : Value::Tuple);
  }
  case K::Range: {
    Value v = Value::seq({Value::integer(p.i), Value::integer(p.stop), Value::integer(p.step)});
    v.kind = Value::RangeV;
    return v;
  }
  case K::Ref: {
    const Value &a = args[size_t(p.arg)];
    return p.elt < 0 ? a : (*a.elts)[size_t(p.elt)];
  }
  case K::Unknown:
  case K::Opaque: break;
  }
  fail(at->range, "this value is not known at trace time");
}

Value KernelEvaluator::builtin(const std::string &fn, const Expr *e) {
  auto args = positional(e);
  std::vector<nki::pycore::PyValue> py;
  for (const Value &a : args) py.push_back(toPy(a, e));
  auto charge = [&](uint64_t items) { chargeValue(items, sizeof(Value), "a list or tuple", e->range); };
  nki::pycore::BuiltinResult r = nki::pycore::callBuiltin(fn, py, charge);
  if (!r.ok()) fail(e->range, r.error);
  if (r.value.kind == nki::pycore::PyValue::Kind::Unknown)
    fail(e->range,
         fn + "() of " + (args.empty() ? std::string("nothing") : describe(args[0])) + " is not supported here");
  return fromPy(r.value, args, e);
}

Value KernelEvaluator::callIntrinsic(const nki::pycore::IntrinsicInfo &intrinsic, const Expr *e) {
  using nki::pycore::Intrinsic;
  nki::pycore::IntrinsicArguments bound = nki::pycore::intrinsicArguments(intrinsic, *e);
  if (!bound.error.empty()) fail(e->range, bound.error);
  std::vector<Value> args;
  for (auto *a : bound.args) args.push_back(eval(a));
  std::vector<nki::pycore::PyValue> py;
  for (const Value &a : args) py.push_back(toPy(a, e));
  switch (intrinsic.id) {
  case Intrinsic::Arange: {
    nki::pycore::ArangeBounds r = nki::pycore::arangeBounds(py);
    if (!r.error.empty()) fail(e->range, r.error);
    IndexArr x;
    x.c = *r.start;
    x.coeff = {1};
    x.extent = {*r.extent};
    Value v;
    v.kind = Value::Index;
    v.idx = x;
    return v;
  }
  case Intrinsic::ParDim: {
    Value v = args.empty() ? Value::none() : args[0];
    v.kind = Value::ParDim;
    return v;
  }
  case Intrinsic::ProgramId:
  case Intrinsic::NumPrograms: {
    if (!ReportedSpmd && K.grid.empty()) {
      ReportedSpmd = true;
      Warnings.push_back(File.source().location(e->range.begin) +
                         ": warning: " + std::string(nki::pycore::kOneInstanceNote));
    }
    bool id = intrinsic.id == Intrinsic::ProgramId;
    nki::pycore::AxisArg axis = nki::pycore::launchAxis(intrinsic.name, py, /*optional=*/!id);
    if (!axis.error.empty()) fail(e->range, axis.error);
    if (std::string bad = Grid.axisError(intrinsic.name, *axis.axis); !bad.empty()) fail(e->range, bad);
    return Value::integer(id ? Grid.programId(*axis.axis) : Grid.numPrograms(*axis.axis));
  }
  case Intrinsic::ProgramNdim:
    if (!args.empty()) fail(e->range, std::string(intrinsic.usage));
    return Value::integer(Grid.ndim());
  case Intrinsic::NcVersion:
    if (!args.empty()) fail(e->range, std::string(intrinsic.usage));
    return Value::path(nki::ncVersionOf(K));
  case Intrinsic::Ds: {
    // nl.ds(start, size) is the slice start:start+size.
    nki::pycore::ArangeBounds r = nki::pycore::dsBounds(py);
    if (!r.error.empty()) fail(e->range, r.error);
    if (!r.start || !r.extent) fail(e->range, std::string(intrinsic.usage));
    Value v = Value::seq({Value::integer(*r.start), Value::integer(*r.start + *r.extent), Value::none()});
    v.kind = Value::SliceV;
    return v;
  }
  case Intrinsic::Mgrid: break;
  }
  fail(e->range, std::string(intrinsic.usage));
}

Value KernelEvaluator::construct(const Stmt &cls, const Expr *e) {
  nki::pycore::ClassLayout layout = nki::pycore::classLayout(cls);
  if (!layout.error.empty()) fail(e->range, layout.error);
  auto args = positional(e);
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  std::string name(nki::pycore::classNameOf(cls));
  nki::pycore::Binding b = nki::pycore::bindArguments(layout.fields, args.size(), keywords);
  if (!b.extraPositional.empty())
    fail(e->range, llvm::formatv("{0}() takes {1} positional arguments but {2} were given", name, layout.fields.size(),
                                 args.size())
                       .str());
  if (!b.unknownKeywords.empty())
    fail(e->range, name + "() got an unexpected keyword argument '" + e->keywords[b.unknownKeywords[0]].name + "'");
  if (!b.repeated.empty())
    fail(e->range,
         name + "() got multiple values for argument '" + std::string(layout.fields[b.repeated[0]].name) + "'");
  if (!b.missing.empty())
    fail(e->range, name + "() missing required argument '" + std::string(layout.fields[b.missing[0]].name) + "'");
  Value obj;
  obj.kind = Value::Object;
  obj.s = name;
  obj.attrs = std::make_shared<Scope>();
  Scope *saved = Env;
  Env = Globals ? Globals : Env; // class bodies see the module's names
  try {
    for (const Stmt *s : layout.attributes) {
      Value v = eval(s->value);
      for (const Expr *t : s->targets)
        if (t->kind == ExprKind::Name) (*obj.attrs)[t->name] = v;
    }
    for (size_t f = 0; f < layout.fields.size(); ++f)
      if (b.argOf[f] == nki::pycore::Binding::Unbound)
        (*obj.attrs)[std::string(layout.fields[f].name)] = eval(layout.defaults[f]);
  } catch (...) {
    Env = saved;
    throw;
  }
  Env = saved;
  for (size_t f = 0; f < layout.fields.size(); ++f) {
    int at = b.argOf[f];
    if (at == nki::pycore::Binding::Unbound) continue;
    (*obj.attrs)[std::string(layout.fields[f].name)] =
        size_t(at) < args.size() ? args[size_t(at)] : eval(e->keywords[size_t(at) - args.size()].value);
  }
  return obj;
}

std::optional<Value> KernelEvaluator::classAttribute(const Stmt &cls, const std::string &name) {
  for (const Stmt *s : nki::pycore::classLayout(cls).attributes)
    for (const Expr *t : s->targets)
      if (t->kind == ExprKind::Name && t->name == name) {
        Scope *saved = Env;
        Env = Globals ? Globals : Env;
        try {
          Value v = eval(s->value);
          Env = saved;
          return v;
        } catch (...) {
          Env = saved;
          throw;
        }
      }
  return std::nullopt;
}

Value KernelEvaluator::callPython(const Value &callee, const Expr *e) {
  const Stmt *fn = callee.fn;
  if (!nki::pycore::classNameOf(*fn).empty()) return construct(*fn, e);
  if (++CallDepth > 200) fail(e->range, "recursion too deep");
  // Loop headers are not the only place time goes: f(n) = f(n-1) + f(n-1) has none (D7).
  checkTime(e->range);
  auto framePtr = std::make_shared<Scope>();
  Scope &frame = *framePtr;
  auto args = positional(e);
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  nki::pycore::Binding b = nki::pycore::bindArguments(nki::pycore::paramsOf(*fn), args.size(), keywords);
  if (!b.repeated.empty())
    fail(e->range, fn->name + "() got multiple values for argument '" + fn->params[b.repeated[0]].name + "'");
  if (!b.missing.empty())
    fail(e->range, "missing argument '" + fn->params[b.missing[0]].name + "' in call to " + fn->name);
  for (size_t p = 0; p < fn->params.size(); ++p) {
    const auto &param = fn->params[p];
    int at = b.argOf[p];
    if (param.isVarArgs) continue;
    if (at == nki::pycore::Binding::Unbound)
      frame[param.name] = eval(param.defaultValue);
    else if (size_t(at) < args.size())
      frame[param.name] = args[size_t(at)];
    else
      frame[param.name] = eval(e->keywords[size_t(at) - args.size()].value);
  }
  Scope *saved = Env;
  std::shared_ptr<Scope> savedFrame = Frame;
  auto savedEnclosing = Enclosing;
  auto restore = [&] {
    Env = saved;
    Frame = savedFrame;
    Enclosing = savedEnclosing;
    --CallDepth;
  };
  Env = &frame;
  Frame = framePtr;
  Enclosing = callee.closure; // a function defined inside another reads that one's names
  // A function of a followed module: its text is another file's; errors are said at this call.
  const nki::SiblingModule *sib = File.imports ? File.imports->moduleOf(fn) : nullptr;
  const syntax::Module *savedModule = CurModule;
  if (sib) CurModule = sib->module.get();
  Value result = Value::none();
  try {
    execBlock(fn->body);
  } catch (ReturnSignal &r) { result = std::move(r.value); } catch (RuntimeError &err) {
    restore();
    CurModule = savedModule;
    if (sib && !err.inSibling) {
      err.message = nki::inSiblingFunction(*sib, *fn, err.offset, err.message);
      err.offset = e->range.begin;
      err.inSibling = savedModule == nullptr; // said in the kernel's file once the outermost call is reached
    }
    throw;
  } catch (...) {
    restore();
    CurModule = savedModule;
    throw;
  }
  restore();
  CurModule = savedModule;
  return result;
}

Value KernelEvaluator::methodCall(const Value &m, const Expr *e) {
  if (m.s == "ap") return accessPattern(m, e);
  if (m.s == "append" && m.elts) {
    auto args = positional(e);
    if (args.size() != 1 || !e->keywords.empty()) fail(e->range, "list.append takes exactly one argument");
    chargeValue(1, sizeof(Value), "a list", e->range);
    m.elts->push_back(std::move(args[0]));
    return Value::none();
  }
  auto args = positional(e);
  // t.view(dtype): the same bytes read as another dtype, the last axis scaled by the size ratio.
  if (const Expr *kw = args.empty() && m.s == "view" ? e->keyword("dtype") : nullptr) args.push_back(eval(kw));
  if (std::optional<nki::DType> to = m.s == "view" && args.size() == 1 ? dtypeOf(args[0]) : std::nullopt) {
    if (m.view) fail(e->range, "a dtype view of a slice is not supported; view the whole tensor");
    auto alias = std::make_shared<Tensor>();
    alias->buffer = m.tensor->buffer;
    alias->name = m.tensor->name;
    alias->parDim = m.tensor->parDim;
    alias->reinterprets = m.tensor;
    auto arr = NDArray::reinterpret(m.tensor->data, *to);
    if (!arr) fail(e->range, text(e) + ": " + llvm::toString(arr.takeError()));
    alias->data = std::move(*arr);
    syncReinterpreted(*alias, false, e->range);
    return Value::ofTensor(alias);
  }
  // reshape(shape=...) / broadcast_to(shape=...): the keyword form of the one shape argument.
  if (const Expr *kw = args.empty() ? e->keyword("shape") : nullptr) args.push_back(eval(kw));
  Value shapeArg = args.size() == 1 && args[0].isSeq() ? args[0] : Value::seq(args);
  std::vector<int64_t> shape;
  for (auto &x : *shapeArg.elts) shape.push_back(intArg(x, e));
  Value self = m;
  self.kind = m.view ? Value::ViewV : Value::TensorV;
  if (m.s == "reshape" || m.s == "view") {
    if (self.kind != Value::TensorV) fail(e->range, "reshape of a tile view is not supported");
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (n != m.tensor->data.numel())
      fail(e->range, "cannot reshape " + formatShape(m.tensor->data.shape()) + " to " + formatShape(shape));
    // NKI's reshape is a free view: stores through it reach the tensor (out.reshape(...)).
    auto alias = std::make_shared<Tensor>();
    alias->buffer = m.tensor->buffer;
    alias->name = m.tensor->name;
    alias->parDim = m.tensor->parDim;
    auto arr = NDArray::viewOf(m.tensor->data, shape);
    if (!arr) fail(e->range, llvm::toString(arr.takeError()));
    alias->data = std::move(*arr);
    alias->viewed = m.tensor;
    return Value::ofTensor(alias);
  }
  if (m.s == "broadcast_to") {
    ++Stats.instructions;
    NDArray src = tileOf(self, e->base, nullptr);
    auto out = newTile(shape, src.dtype(), nki::Buffer::SBUF, "broadcast", e->range);
    if (auto err = applyBinary(AluOp::Add, out->data.asTile(), src.asTile(), 0.0f))
      fail(e->range, llvm::toString(std::move(err)));
    return Value::ofTensor(out);
  }
  fail(e->range, "method '" + m.s + "' is not supported");
}

KernelEvaluator::Bound KernelEvaluator::bindArgs(const nki::OpInfo *op, const Expr *e) {
  Bound b;
  size_t n = op->params.size();
  b.exprs.assign(n, nullptr);
  b.values.assign(n, Value::none());
  b.given.assign(n, false);
  std::vector<nki::pycore::ParamSpec> params;
  for (const auto &p : op->params) params.push_back({p.name, p.required});
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  nki::pycore::Binding binding = nki::pycore::bindArguments(params, e->elts.size(), keywords);
  if (!binding.repeated.empty() && !PendingBinding)
    fail(e->range, std::string(op->name) + "() got multiple values for argument '" +
                       std::string(op->params[binding.repeated[0]].name) + "'");
  // A current-dialect call arrives bound to the row's parameters by the dialect table.
  if (const nki::DialectBinding *dialect = std::exchange(PendingBinding, nullptr)) binding.argOf = dialect->argOf;
  for (size_t i = 0; i < n; ++i) {
    int at = binding.argOf[i];
    if (at != nki::pycore::Binding::Unbound)
      b.exprs[i] = size_t(at) < e->elts.size() ? e->elts[size_t(at)] : e->keywords[size_t(at) - e->elts.size()].value;
  }
  for (size_t i = 0; i < n; ++i)
    if (b.exprs[i]) {
      b.values[i] = eval(b.exprs[i]);
      b.given[i] = true;
    } else if (op->params[i].required) {
      fail(e->range,
           std::string(op->name) + " is missing its required argument '" + std::string(op->params[i].name) + "'");
    }
  return b;
}

const Value *KernelEvaluator::param(const nki::OpInfo *op, const Bound &b, std::string_view name) {
  int i = op->paramIndex(name);
  return i >= 0 && b.given[i] ? &b.values[i] : nullptr;
}

const Expr *KernelEvaluator::paramExpr(const nki::OpInfo *op, const Bound &b, std::string_view name) {
  int i = op->paramIndex(name);
  return i >= 0 ? b.exprs[i] : nullptr;
}

bool KernelEvaluator::flag(const nki::OpInfo *op, const Bound &b, std::string_view name) {
  const Value *v = param(op, b, name);
  if (v && v->kind == Value::Str) return nki::flagStringSet(v->s);
  return v && v->isNumber() && v->num() != 0;
}

AluOp KernelEvaluator::aluFrom(const Value *v, const Expr *at) {
  if (!v || v->kind != Value::Path) fail(at->range, "expected an operator such as nl.add or np.multiply");
  auto op = aluOpFromName(v->s);
  if (!op) fail(at->range, "'" + v->s + "' is not an ALU operator");
  return *op;
}

PerPartition KernelEvaluator::perPartition(const Value *v, const Expr *at, std::vector<NDArray> &keep, float dflt) {
  if (!v || v->kind == Value::None) return PerPartition(dflt);
  if (v->isNumber()) return PerPartition(float(v->num()));
  if (v->isTile()) {
    keep.push_back(gather(viewOf(*v, at), nullptr, at->range, true));
    NDArray &a = keep.back();
    return PerPartition(ConstTile{a.data(), a.dim(0), a.numel() / std::max<int64_t>(1, a.dim(0)),
                                  a.numel() / std::max<int64_t>(1, a.dim(0))});
  }
  fail(at->range, "expected a number or a (P, 1) tile, got " + describe(*v));
}

} // namespace accelopt::interp::evaluator
