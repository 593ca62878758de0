// Expressions of the kernel evaluator: names and imports, Python operators, comparisons (mask
// predicates over index arrays), attributes and subscripts of Python values.
#include "Interp/Evaluator/KernelEvaluator.h"
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

void KernelEvaluator::importInto(const Stmt *s, Scope &scope) {
  for (auto &[local, path] : nki::pycore::importBindings(*s)) scope[local] = Value::path(path);
}

Value KernelEvaluator::lookup(const Expr *e) {
  auto it = Env->find(e->name);
  if (it != Env->end()) return it->second;
  if (Enclosing)
    for (const std::shared_ptr<Scope> &scope : *Enclosing) {
      auto found = scope->find(e->name);
      if (found != scope->end()) return found->second;
    }
  if (Globals && Env != Globals) {
    auto g = Globals->find(e->name);
    if (g != Globals->end()) return g->second;
  }
  if (const nki::pycore::BuiltinInfo *b = nki::pycore::lookupBuiltin(e->name); b && b->evaluated)
    return Value::path("builtins." + e->name);
  // Bound at module level from a value the evaluator does not compute (`M = np.fromfunction(...)`).
  auto isClass = [&](std::string_view name) {
    if (CurModule || !Globals) return false;
    auto g = Globals->find(std::string(name));
    return g != Globals->end() && g->second.kind == Value::PyFunc && !nki::pycore::classNameOf(*g->second.fn).empty();
  };
  if (std::string why = nki::pycore::unevaluatedModuleNameMessage(currentModule(), e->name, isClass); !why.empty())
    fail(e->range, why);
  fail(e->range, "name '" + e->name + "' is not defined");
}

std::string KernelEvaluator::describe(const Value &v) {
  switch (v.kind) {
  case Value::None: return "None";
  case Value::Bool:
  case Value::Int: return "an int";
  case Value::Float: return "a float";
  case Value::Str: return "a string";
  case Value::Tuple: return "a tuple";
  case Value::List: return "a list";
  case Value::TensorV:
  case Value::ViewV: return "a tensor";
  case Value::Index: return "an index expression";
  case Value::Path: return "'" + v.s + "'";
  default: return "a value";
  }
}

std::string KernelEvaluator::toText(const Value &v) { return nki::pycore::toText(toPy(v, nullptr)); }

bool KernelEvaluator::truthy(const Value &v, const Expr *at) {
  switch (v.kind) {
  case Value::None: return false;
  case Value::Bool:
  case Value::Int: return v.i != 0;
  case Value::Float: return v.f != 0;
  case Value::Str: return !v.s.empty();
  case Value::Tuple:
  case Value::List: return !v.elts->empty();
  case Value::Index:
  case Value::MaskV: fail(at->range, "control flow depends on an nl.arange expression; use mask= instead");
  default: return true;
  }
}

Value KernelEvaluator::eval(const Expr *e) {
  if (!e) return Value::none();
  switch (e->kind) {
  case ExprKind::Int: return Value::integer(e->intValue);
  case ExprKind::Float: return Value::number(e->floatValue);
  case ExprKind::Bool: return Value::boolean(e->boolValue);
  case ExprKind::None: return Value::none();
  case ExprKind::Ellipsis: {
    Value v;
    v.kind = Value::EllipsisV;
    return v;
  }
  case ExprKind::Str: {
    if (!e->isFString) return Value::str(e->str);
    std::string out;
    for (size_t i = 0; i < e->parts.size(); ++i) {
      out += e->parts[i];
      if (i < e->elts.size()) out += toText(eval(e->elts[i]));
    }
    return Value::str(out);
  }
  case ExprKind::Name: return lookup(e);
  case ExprKind::Tuple:
  case ExprKind::List: {
    ValueList out;
    for (auto *x : e->elts) {
      if (x->kind == ExprKind::Starred) {
        Value v = eval(x->base);
        if (!v.isSeq()) fail(x->range, "cannot unpack " + describe(v));
        out.insert(out.end(), v.elts->begin(), v.elts->end());
      } else {
        out.push_back(eval(x));
      }
    }
    return Value::seq(std::move(out), e->kind == ExprKind::List ? Value::List : Value::Tuple);
  }
  case ExprKind::Dict: {
    ValueList out;
    for (auto *x : e->elts) out.push_back(eval(x));
    return Value::seq(std::move(out), Value::Dict);
  }
  case ExprKind::Attribute: return attribute(e);
  case ExprKind::Subscript: return subscript(e);
  case ExprKind::Call: return call(e, nullptr);
  case ExprKind::BinOp: return binary(e->name, eval(e->elts[0]), eval(e->elts[1]), e->range);
  case ExprKind::UnaryOp: {
    Value v = eval(e->base);
    if (e->name == "not") return Value::boolean(!truthy(v, e->base));
    if (e->name == "-") return binary("*", Value::integer(-1), v, e->range);
    if (e->name == "~" && v.isIntLike()) return Value::integer(~v.i);
    return v;
  }
  case ExprKind::BoolOp: {
    Value l = eval(e->elts[0]);
    bool lt = truthy(l, e->elts[0]);
    if (e->name == "and" ? !lt : lt) return l;
    return eval(e->elts[1]);
  }
  case ExprKind::Compare: return compare(e);
  case ExprKind::ListComp: return comprehension(e);
  case ExprKind::IfExp: return truthy(eval(e->elts[0]), e->elts[0]) ? eval(e->elts[1]) : eval(e->elts[2]);
  case ExprKind::Slice: {
    ValueList parts;
    for (auto *x : e->elts) parts.push_back(x ? eval(x) : Value::none());
    Value v = Value::seq(std::move(parts));
    v.kind = Value::SliceV;
    return v;
  }
  default: fail(e->range, "this expression is not supported by the interpreter");
  }
}

Value KernelEvaluator::compare(const Expr *e) {
  Value left = eval(e->elts[0]);
  Value result = Value::boolean(true);
  for (size_t i = 0; i < e->ops.size(); ++i) {
    Value right = eval(e->elts[i + 1]);
    const std::string &op = e->ops[i];
    if (left.kind == Value::Index || right.kind == Value::Index) {
      // A mask predicate: affine comparisons of aranges and loop variables.
      IndexArr l = asIndexArr(left, e->elts[i]), r = asIndexArr(right, e->elts[i + 1]);
      auto diff = [&](const IndexArr &a, const IndexArr &b, int64_t shift) {
        int rank = std::max(a.rank(), b.rank());
        IndexArr x = a.widened(rank), y = b.widened(rank);
        for (int k = 0; k < rank; ++k) {
          x.coeff[k] -= y.coeff[k];
          x.extent[k] = std::max(x.extent[k], y.extent[k]);
        }
        x.c = x.c - y.c + shift;
        return x;
      };
      auto m = std::make_shared<Mask>();
      if (op == ">=")
        m->geZero.push_back(diff(l, r, 0));
      else if (op == ">")
        m->geZero.push_back(diff(l, r, -1));
      else if (op == "<=")
        m->geZero.push_back(diff(r, l, 0));
      else if (op == "<")
        m->geZero.push_back(diff(r, l, -1));
      else if (op == "==") {
        m->geZero.push_back(diff(l, r, 0));
        m->geZero.push_back(diff(r, l, 0));
      } else
        fail(e->range, "mask comparison '" + op + "' is not supported");
      Value v;
      v.kind = Value::MaskV;
      v.mask = m;
      return v;
    }
    bool r;
    if (op == "==" || op == "is")
      r = equal(left, right);
    else if (op == "!=" || op == "is not")
      r = !equal(left, right);
    else if (op == "in" || op == "not in") {
      bool found = false;
      if (right.isSeq())
        for (auto &x : *right.elts) found |= equal(left, x);
      r = op == "in" ? found : !found;
    } else {
      if (!left.isNumber() || !right.isNumber())
        fail(e->range, "cannot compare " + describe(left) + " and " + describe(right));
      double a = left.num(), b = right.num();
      r = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b;
    }
    if (!r) return Value::boolean(false);
    left = right;
  }
  return result;
}

bool KernelEvaluator::equal(const Value &a, const Value &b) {
  if (a.isNumber() && b.isNumber()) return a.num() == b.num();
  if (a.isSeq() && b.isSeq()) {
    if (a.elts->size() != b.elts->size()) return false;
    for (size_t i = 0; i < a.elts->size(); ++i)
      if (!equal((*a.elts)[i], (*b.elts)[i])) return false;
    return true;
  }
  if (a.kind == Value::None || b.kind == Value::None) return a.kind == b.kind;
  if (a.kind == Value::Str && b.kind == Value::Str) return a.s == b.s;
  if (a.kind == Value::Path && b.kind == Value::Path) return nki::pycore::samePath(a.s, b.s);
  return false;
}

IndexArr KernelEvaluator::asIndexArr(const Value &v, const Expr *at) {
  if (v.kind == Value::Index) return v.idx;
  if (v.isIntLike()) {
    IndexArr a;
    a.c = v.i;
    return a;
  }
  if (v.kind == Value::Float && v.f == std::floor(v.f)) {
    IndexArr a;
    a.c = int64_t(v.f);
    return a;
  }
  fail(at->range, "expected an integer index, got " + describe(v));
}

Value KernelEvaluator::binary(const std::string &op, const Value &l, const Value &r, const syntax::ByteRange &range) {
  if (l.isTile() || r.isTile()) return tileArithmetic(op, l, r, range);
  if (op == "&" && (l.kind == Value::MaskV || r.kind == Value::MaskV)) {
    if (l.kind != Value::MaskV || r.kind != Value::MaskV) fail(range, "'&' combines two mask predicates");
    auto m = std::make_shared<Mask>(*l.mask);
    m->geZero.insert(m->geZero.end(), r.mask->geZero.begin(), r.mask->geZero.end());
    Value v;
    v.kind = Value::MaskV;
    v.mask = m;
    return v;
  }
  if (l.kind == Value::Index || r.kind == Value::Index) {
    IndexArr a = l.kind == Value::Index ? l.idx : IndexArr{}, b = r.kind == Value::Index ? r.idx : IndexArr{};
    if (l.kind != Value::Index) {
      if (!l.isIntLike()) fail(range, "index arithmetic needs integers");
      a.c = l.i;
    }
    if (r.kind != Value::Index) {
      if (!r.isIntLike()) fail(range, "index arithmetic needs integers");
      b.c = r.i;
    }
    if (op == "+" || op == "-") {
      int rank = std::max(a.rank(), b.rank());
      IndexArr x = a.widened(rank), y = b.widened(rank);
      int64_t s = op == "+" ? 1 : -1;
      for (int k = 0; k < rank; ++k) {
        x.coeff[k] += s * y.coeff[k];
        x.extent[k] = std::max(x.extent[k], y.extent[k]);
      }
      x.c += s * y.c;
      x.grid = !a.grid.empty() ? a.grid : b.grid;
      return Value::ofIndex(x);
    }
    if (op == "*" && (l.kind != Value::Index || r.kind != Value::Index)) {
      IndexArr x = l.kind == Value::Index ? a : b;
      int64_t k = l.kind == Value::Index ? b.c : a.c;
      x.c *= k;
      for (auto &c : x.coeff) c *= k;
      return Value::ofIndex(x);
    }
    fail(range, "index expressions support only + and - with each other, and * by an integer");
  }
  if (op == "+" && l.isSeq() && r.isSeq()) {
    chargeValue(l.elts->size() + r.elts->size(), sizeof(Value), "a list or tuple", range);
    ValueList out(*l.elts);
    out.insert(out.end(), r.elts->begin(), r.elts->end());
    return Value::seq(std::move(out), l.kind);
  }
  if (op == "*" && l.isSeq() && r.isIntLike()) {
    chargeValue(llvm::SaturatingMultiply(uint64_t(l.elts->size()), uint64_t(std::max<int64_t>(r.i, 0))), sizeof(Value),
                "a list or tuple", range);
    ValueList out;
    for (int64_t k = 0; k < r.i; ++k) out.insert(out.end(), l.elts->begin(), l.elts->end());
    return Value::seq(std::move(out), l.kind);
  }
  if (op == "+" && l.kind == Value::Str && r.kind == Value::Str) {
    chargeValue(l.s.size() + r.s.size(), 1, "a string", range);
    return Value::str(l.s + r.s);
  }
  if (op == "%" && l.kind == Value::Str) return Value::str(l.s);
  if (!l.isNumber() || !r.isNumber())
    fail(range, "unsupported operand types for " + op + ": " + describe(l) + " and " + describe(r));
  if (l.isIntLike() && r.isIntLike()) {
    int64_t a = l.i, b = r.i;
    if (auto res = nki::pyint::apply(op, a, b)) {
      if (res->problem != nki::pyint::Problem::None) fail(range, nki::pyint::describe(res->problem, op));
      return Value::integer(res->value);
    }
    if (op == "/") {
      if (b == 0) fail(range, "division by zero");
      return Value::number(double(a) / double(b));
    }
  }
  double a = l.num(), b = r.num();
  if (op == "+") return Value::number(a + b);
  if (op == "-") return Value::number(a - b);
  if (op == "*") return Value::number(a * b);
  if (op == "/") {
    if (b == 0) fail(range, "division by zero");
    return Value::number(a / b);
  }
  if (op == "//") {
    if (b == 0) fail(range, "division by zero");
    return Value::number(std::floor(a / b));
  }
  if (op == "%") {
    if (b == 0) fail(range, "division by zero");
    return Value::number(a - std::floor(a / b) * b);
  }
  if (op == "**") return Value::number(std::pow(a, b));
  fail(range, "unsupported operator " + op);
}

Value KernelEvaluator::attribute(const Expr *e) {
  Value base = eval(e->base);
  if (base.kind == Value::Object) {
    auto it = base.attrs->find(e->name);
    if (it == base.attrs->end()) fail(e->range, "'" + base.s + "' object has no attribute '" + e->name + "'");
    return it->second;
  }
  if (base.kind == Value::PyFunc && !nki::pycore::classNameOf(*base.fn).empty()) {
    if (auto v = classAttribute(*base.fn, e->name)) return *v;
    fail(e->range, "type object '" + base.s + "' has no attribute '" + e->name + "'");
  }
  if (base.kind == Value::Path) {
    std::string p = nki::pycore::canonicalPath(base.s + "." + e->name);
    if (const nki::NamedConstant *c = nki::lookupConstant(p); c && c->kind == nki::NamedConstant::Int)
      return Value::integer(c->value);
    return Value::path(p);
  }
  if (base.kind == Value::TensorV || base.kind == Value::ViewV) {
    if (e->name == "shape") {
      ValueList dims;
      std::vector<int64_t> shape = base.kind == Value::TensorV ? base.tensor->data.shape() : base.view->shape();
      for (int64_t d : shape) dims.push_back(Value::integer(d));
      return Value::seq(std::move(dims));
    }
    if (e->name == "ndim" || e->name == "size") {
      std::vector<int64_t> shape = base.kind == Value::TensorV ? base.tensor->data.shape() : base.view->shape();
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      return Value::integer(e->name == "ndim" ? int64_t(shape.size()) : n);
    }
    if (e->name == "itemsize")
      return Value::integer(
          nki::dtypeBytes((base.kind == Value::TensorV ? base.tensor : base.view->tensor)->data.dtype()));
    if (e->name == "dtype") {
      nki::DType dt = (base.kind == Value::TensorV ? base.tensor : base.view->tensor)->data.dtype();
      return Value::path("dtype." + std::string(nki::dtypeName(dt)));
    }
    if (!nki::pycore::isKnownTileMember(e->name)) fail(e->range, nki::pycore::unknownTileMemberMessage(e->name));
    Value m = base;
    m.kind = Value::Method;
    m.s = e->name;
    if (base.kind == Value::ViewV) m.tensor = nullptr;
    return m;
  }
  if (base.kind == Value::List && e->name == "append") {
    // Lists of tiles replace block dimensions in the nki dialect: `tiles.append(t)` grows the list in place.
    Value m = base;
    m.kind = Value::Method;
    m.s = e->name;
    return m;
  }
  if (base.kind == Value::Tuple && isIndexGrid(base)) {
    // The fields of nl.mgrid[...]: .p the partition grid, .x, .y, .z the free axes.
    std::optional<int> axis = nki::pycore::mgridFieldAxis(e->name);
    if (axis && size_t(*axis) < base.elts->size()) return (*base.elts)[size_t(*axis)];
    fail(e->range,
         llvm::formatv("an nl.mgrid index grid of rank {0} has no field '{1}'", base.elts->size(), e->name).str());
  }
  fail(e->range, "attribute '" + e->name + "' of " + describe(base) + " is not supported");
}

bool KernelEvaluator::isIndexGrid(const Value &v) {
  if (v.kind != Value::Tuple || v.elts->empty()) return false;
  for (const Value &x : *v.elts)
    if (x.kind != Value::Index) return false;
  return true;
}

std::optional<nki::DType> KernelEvaluator::dtypeOf(const Value &v) {
  if (v.kind != Value::Path) return std::nullopt;
  std::string s = v.s;
  if (s.rfind("dtype.", 0) == 0) s = s.substr(6);
  return nki::parseDType(s);
}

Value KernelEvaluator::subscript(const Expr *e) {
  Value base = eval(e->base);
  if (base.kind == Value::TensorV || base.kind == Value::ViewV) return Value::ofView(makeView(base, e, nullptr));
  if (base.kind == Value::Index) {
    // nl.arange(n)[:, None] puts the 1-D arange on one axis of a rank-k grid.
    if (base.idx.rank() != 1) fail(e->range, "only a 1-D nl.arange can be lifted with [:, None]");
    IndexArr x;
    x.c = base.idx.c;
    for (size_t a = 0; a < e->elts.size(); ++a) {
      bool sl = e->elts[a] && e->elts[a]->kind == ExprKind::Slice;
      x.coeff.push_back(sl ? base.idx.coeff[0] : 0);
      x.extent.push_back(sl ? base.idx.extent[0] : 1);
    }
    return Value::ofIndex(x);
  }
  if (base.kind == Value::Path && base.s == "nl.mgrid") {
    // Open grids for indexing (each field spans its own axis and broadcasts right-aligned, as the NKI
    // tutorials index with them); the whole grid's extents ride along for values made of fields.
    ValueList grids;
    int rank = int(e->elts.size());
    std::vector<int64_t> extents;
    for (int a = 0; a < rank; ++a) {
      Value sl = eval(e->elts[a]);
      if (sl.kind != Value::SliceV) fail(e->range, std::string(nki::pycore::lookupIntrinsic("nl.mgrid")->usage));
      nki::pycore::ArangeBounds axis = nki::pycore::mgridAxis(toPy((*sl.elts)[0], e), toPy((*sl.elts)[1], e));
      if (!axis.error.empty()) fail(e->elts[a]->range, axis.error);
      if (!axis.extent) fail(e->elts[a]->range, "nl.mgrid needs the upper bound of every axis");
      extents.push_back(*axis.extent);
      IndexArr x;
      x.c = *axis.start;
      x.coeff.assign(rank, 0);
      x.extent.assign(rank, 1);
      x.coeff[a] = 1;
      x.extent[a] = *axis.extent;
      grids.push_back(Value::ofIndex(x));
    }
    for (Value &g : grids) g.idx.grid.assign(extents.begin(), extents.end());
    return Value::seq(std::move(grids));
  }
  if (base.isSeq() || base.kind == Value::Str) {
    Value idx = eval(e->elts.empty() ? nullptr : e->elts[0]);
    int64_t n = base.kind == Value::Str ? int64_t(base.s.size()) : int64_t(base.elts->size());
    if (idx.kind == Value::SliceV) {
      auto get = [&](int k, int64_t dflt) {
        const Value &x = (*idx.elts)[k];
        if (x.kind == Value::None) return dflt;
        int64_t v = x.i;
        if (v < 0) v += n;
        return std::clamp<int64_t>(v, 0, n);
      };
      int64_t lo = get(0, 0), hi = get(1, n);
      if (base.kind == Value::Str) return Value::str(base.s.substr(lo, std::max<int64_t>(0, hi - lo)));
      return Value::seq(ValueList(base.elts->begin() + lo, base.elts->begin() + std::max(lo, hi)), base.kind);
    }
    if (!idx.isIntLike()) fail(e->range, "sequence index must be an integer");
    int64_t k = idx.i < 0 ? idx.i + n : idx.i;
    if (k < 0 || k >= n) fail(e->range, llvm::formatv("index {0} out of range for length {1}", idx.i, n).str());
    if (base.kind == Value::Str) return Value::str(base.s.substr(k, 1));
    return (*base.elts)[k];
  }
  if (base.kind == Value::Dict) {
    Value key = eval(e->elts[0]);
    for (size_t k = 0; k + 1 < base.elts->size(); k += 2)
      if (equal((*base.elts)[k], key)) return (*base.elts)[k + 1];
    fail(e->range, "key not found");
  }
  fail(e->range, "cannot subscript " + describe(base));
}

Value KernelEvaluator::comprehension(const Expr *e) {
  const Expr *target = e->elts[0];
  Value it = eval(e->elts[1]);
  std::optional<Value> saved;
  bool named = target && target->kind == ExprKind::Name;
  if (named)
    if (auto found = Env->find(target->name); found != Env->end()) saved = found->second;
  ValueList out;
  auto element = [&](const Value &v) {
    checkTime(e->range);
    bind(target, v);
    out.push_back(eval(e->base));
  };
  if (it.kind == Value::RangeV) {
    int64_t start = (*it.elts)[0].i, stop = (*it.elts)[1].i, step = (*it.elts)[2].i;
    if (step == 0) fail(e->elts[1]->range, "range step must not be zero");
    bool past = false; // the next value would pass int64's end
    for (int64_t v = start; !past && (step > 0 ? v < stop : v > stop); past = __builtin_add_overflow(v, step, &v))
      element(Value::integer(v));
  } else if (it.isSeq()) {
    ValueList items = *it.elts;
    for (const Value &v : items) element(v);
  } else {
    fail(e->elts[1]->range, "cannot iterate over " + describe(it));
  }
  if (named) {
    if (saved)
      (*Env)[target->name] = *saved;
    else
      Env->erase(target->name);
  }
  return Value::seq(std::move(out), Value::List);
}

} // namespace accelopt::interp::evaluator
