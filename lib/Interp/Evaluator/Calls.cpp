// Calls: builtins, Python helper functions, tensor methods and the arguments of NKI calls.
#include "Interp/Evaluator/KernelEvaluator.h"

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
  if (fn.kind == Value::PyFunc) return callPython(fn.fn, e);
  if (fn.kind != Value::Path) fail(e->range, "'" + text(e->base) + "' is not callable");
  const std::string &name = fn.s;
  if (name.rfind("builtins.", 0) == 0) return builtin(name.substr(9), e);
  if (name == "nl.arange") {
    auto args = positional(e);
    IndexArr x;
    int64_t lo = 0, hi;
    if (args.size() == 1) hi = intArg(args[0], e);
    else if (args.size() >= 2) { lo = intArg(args[0], e); hi = intArg(args[1], e); }
    else fail(e->range, "nl.arange takes (stop) or (start, stop)");
    x.c = lo;
    x.coeff = {1};
    x.extent = {hi - lo};
    Value v;
    v.kind = Value::Index;
    v.idx = x;
    return v;
  }
  if (isLoopIterator(name) || name == "builtins.range") {
    auto args = positional(e);
    ValueList r;
    if (args.size() == 1) r = {Value::integer(0), Value::integer(intArg(args[0], e)), Value::integer(1)};
    else if (args.size() >= 2)
      r = {Value::integer(intArg(args[0], e)), Value::integer(intArg(args[1], e)),
           Value::integer(args.size() > 2 ? intArg(args[2], e) : 1)};
    else fail(e->range, "range needs arguments");
    Value v = Value::seq(std::move(r));
    v.kind = Value::RangeV;
    v.loopKind = name == "nl.affine_range" ? nki::LoopKind::Affine
                 : name == "nl.sequential_range" ? nki::LoopKind::Sequential : nki::LoopKind::Static;
    return v;
  }
  if (name == "nl.par_dim") {
    Value v = eval(e->elts.empty() ? nullptr : e->elts[0]);
    v.kind = Value::ParDim;
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
  if (name == "np.float32" || name == "np.float16" || name == "np.int32" || name == "np.uint16" ||
      name == "np.uint8" || name == "np.int8" || name == "np.float64" || name == "nl.float32") {
    Value v = eval(e->elts.empty() ? nullptr : e->elts[0]);
    if (name.find("int") != std::string::npos && v.isNumber()) return Value::integer(int64_t(v.num()));
    if (v.isNumber()) return Value::number(double(float(v.num())));
    return v;
  }
  if (name == "np.identity" || name == "np.eye") {
    auto args = positional(e);
    int64_t n = intArg(argument(e, args, 0, name == "np.eye" ? "N" : "n", name), e);
    auto arr = NDArray::full({n, n}, nki::DType::Float32, 0.0f);
    if (!arr) fail(e->range, llvm::toString(arr.takeError()));
    for (int64_t k = 0; k < n; ++k) arr->data()[k * n + k] = 1.0f;
    Value v;
    v.kind = Value::HostArray;
    v.host = std::make_shared<NDArray>(std::move(*arr));
    return v;
  }
  if (name.rfind("math.", 0) == 0) {
    auto args = positional(e);
    double x = args.empty() ? 0 : scalarOf(args[0], e);
    if (name == "math.ceil") return Value::integer(int64_t(std::ceil(x)));
    if (name == "math.floor") return Value::integer(int64_t(std::floor(x)));
    if (name == "math.sqrt") return Value::number(std::sqrt(x));
    if (name == "math.exp") return Value::number(std::exp(x));
    if (name == "math.log") return Value::number(std::log(x));
  }
  const nki::OpInfo *op = nki::lookupOp(name);
  if (!op) fail(e->base->range, "'" + name + "' is not supported by the interpreter");
  return nkiCall(op, e, dest);
}

Value KernelEvaluator::argument(const Expr *e, const std::vector<Value> &args, size_t position, std::string_view keyword,
               const std::string &callee) {
  if (position < args.size()) return args[position];
  if (const Expr *kw = e->keyword(keyword)) return eval(kw);
  fail(e->range, callee + " is missing its argument '" + std::string(keyword) + "'");
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

Value KernelEvaluator::builtin(const std::string &fn, const Expr *e) {
  auto args = positional(e);
  if (fn == "range") {
    ValueList r;
    if (args.size() == 1) r = {Value::integer(0), Value::integer(intArg(args[0], e)), Value::integer(1)};
    else if (args.size() >= 2 && args.size() <= 3)
      r = {Value::integer(intArg(args[0], e)), Value::integer(intArg(args[1], e)),
           Value::integer(args.size() > 2 ? intArg(args[2], e) : 1)};
    else fail(e->range, "range expects 1 to 3 arguments, got " + std::to_string(args.size()));
    Value v = Value::seq(std::move(r));
    v.kind = Value::RangeV;
    return v;
  }
  if (fn == "len") {
    if (args.size() == 1 && args[0].isSeq()) return Value::integer(int64_t(args[0].elts->size()));
    if (args.size() == 1 && args[0].kind == Value::Str) return Value::integer(int64_t(args[0].s.size()));
    if (args.size() == 1 && args[0].isTile()) return Value::integer(viewOf(args[0], e).extent[0]);
  }
  if (fn == "min" || fn == "max") {
    std::vector<Value> items = args.size() == 1 && args[0].isSeq() ? *args[0].elts : args;
    if (items.empty()) fail(e->range, fn + "() of an empty sequence");
    Value best = items[0];
    for (auto &v : items) {
      if (!v.isNumber()) fail(e->range, fn + "() needs numbers");
      if (fn == "min" ? v.num() < best.num() : v.num() > best.num()) best = v;
    }
    return best;
  }
  if (fn == "int" && args.size() == 1 && args[0].isNumber()) return Value::integer(int64_t(args[0].num()));
  if (fn == "float" && args.size() == 1 && args[0].isNumber()) return Value::number(args[0].num());
  if (fn == "bool" && args.size() == 1) return Value::boolean(truthy(args[0], e));
  if (fn == "abs" && args.size() == 1 && args[0].isNumber())
    return args[0].isIntLike() ? Value::integer(std::abs(args[0].i)) : Value::number(std::fabs(args[0].f));
  if (fn == "round" && args.size() >= 1 && args[0].isNumber()) return Value::integer(int64_t(std::llround(args[0].num())));
  if ((fn == "tuple" || fn == "list") && args.size() == 1) {
    if (args[0].isSeq()) return Value::seq(*args[0].elts, fn == "list" ? Value::List : Value::Tuple);
    if (args[0].kind == Value::RangeV) {
      int64_t lo = (*args[0].elts)[0].i, hi = (*args[0].elts)[1].i, step = (*args[0].elts)[2].i;
      if (step > 0 && hi > lo)
        chargeValue(uint64_t(hi - lo) / uint64_t(step) + 1, sizeof(Value), "a list or tuple", e->range);
      ValueList out;
      for (int64_t v = (*args[0].elts)[0].i; v < (*args[0].elts)[1].i; v += (*args[0].elts)[2].i) out.push_back(Value::integer(v));
      return Value::seq(std::move(out), fn == "list" ? Value::List : Value::Tuple);
    }
  }
  if (fn == "str" && args.size() == 1) return Value::str(toText(args[0]));
  if (fn == "print") return Value::none();
  if (fn == "isinstance") return Value::boolean(true);
  if (fn == "sum" && args.size() == 1 && args[0].isSeq()) {
    Value acc = Value::integer(0);
    for (auto &v : *args[0].elts) acc = binary("+", acc, v, e->range);
    return acc;
  }
  if (fn == "enumerate" && args.size() == 1 && args[0].isSeq()) {
    ValueList out;
    for (size_t k = 0; k < args[0].elts->size(); ++k) out.push_back(Value::seq({Value::integer(int64_t(k)), (*args[0].elts)[k]}));
    return Value::seq(std::move(out), Value::List);
  }
  if (fn == "zip" && args.size() >= 1) {
    size_t n = SIZE_MAX;
    for (auto &a : args) { if (!a.isSeq()) fail(e->range, "zip() takes sequences"); n = std::min(n, a.elts->size()); }
    ValueList out;
    for (size_t k = 0; k < n; ++k) {
      ValueList row;
      for (auto &a : args) row.push_back((*a.elts)[k]);
      out.push_back(Value::seq(std::move(row)));
    }
    return Value::seq(std::move(out), Value::List);
  }
  fail(e->range, "builtin '" + fn + "' is not supported here");
}

Value KernelEvaluator::callPython(const Stmt *fn, const Expr *e) {
  if (++CallDepth > 200) fail(e->range, "recursion too deep");
  // Loop headers are not the only place time goes: f(n) = f(n-1) + f(n-1) has none (D7).
  checkTime(e->range);
  Scope frame;
  auto args = positional(e);
  size_t p = 0;
  for (; p < fn->params.size(); ++p) {
    const auto &param = fn->params[p];
    if (param.isVarArgs) break;
    if (p < args.size()) frame[param.name] = args[p];
    else if (const Expr *kw = e->keyword(param.name)) frame[param.name] = eval(kw);
    else if (param.defaultValue) frame[param.name] = eval(param.defaultValue);
    else fail(e->range, "missing argument '" + param.name + "' in call to " + fn->name);
  }
  Scope *saved = Env;
  Env = &frame;
  Value result = Value::none();
  try {
    execBlock(fn->body);
  } catch (ReturnSignal &r) {
    result = std::move(r.value);
  } catch (...) {
    Env = saved;
    --CallDepth;
    throw;
  }
  Env = saved;
  --CallDepth;
  return result;
}

Value KernelEvaluator::methodCall(const Value &m, const Expr *e) {
  auto args = positional(e);
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
    if (auto err = applyBinary(AluOp::Add, out->data.asTile(), src.asTile(), 0.0f)) fail(e->range, llvm::toString(std::move(err)));
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
  for (size_t i = 0; i < e->elts.size() && i < n; ++i) b.exprs[i] = e->elts[i];
  for (auto &kw : e->keywords) {
    int idx = op->paramIndex(kw.name);
    if (idx >= 0) b.exprs[idx] = kw.value;
  }
  for (size_t i = 0; i < n; ++i)
    if (b.exprs[i]) {
      b.values[i] = eval(b.exprs[i]);
      b.given[i] = true;
    } else if (op->params[i].required) {
      fail(e->range, std::string(op->name) + " is missing its required argument '" + std::string(op->params[i].name) + "'");
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
