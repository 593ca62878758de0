// Expressions: constants, names, Python operators (integers with PyInt semantics, affine index
// arithmetic, tile operators as nl.* ops), comparisons, attributes and subscripts.
#include "NKI/FrontEnd/KernelBuilder.h"
#include "NKI/PyCore.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace accelopt::nki::frontend {

Value KernelBuilder::eval(const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest) {
  if (!e) return Value::none();
  switch (e->kind) {
  case ExprKind::Int: return Value::integer(e->intValue);
  case ExprKind::Float: return Value::floating(e->floatValue);
  case ExprKind::Bool: return Value::boolean(e->boolValue);
  case ExprKind::None: return Value::none();
  case ExprKind::Ellipsis: {
    Value v;
    v.kind = Value::Ellipsis;
    return v;
  }
  case ExprKind::Str: {
    if (!e->isFString) return Value::str(e->str);
    std::string out;
    for (size_t i = 0; i < e->parts.size(); ++i) {
      out += e->parts[i];
      if (i < e->elts.size()) {
        Value v = eval(e->elts[i]);
        out += v.kind == Value::Str ? v.s : v.text();
      }
    }
    return Value::str(out);
  }
  case ExprKind::Name: {
    auto it = Env.find(e->name);
    if (it != Env.end()) return it->second;
    auto al = Aliases.find(e->name);
    if (al != Aliases.end()) return Value::path(al->second);
    if (const pycore::BuiltinInfo *b = pycore::lookupBuiltin(e->name); b && b->evaluated)
      return Value::path("builtins." + e->name);
    // The usual module aliases, used but never imported (AccelOpt stores kernels that way and its
    // harness prepends the imports): CPython stops with a NameError, so nothing here is modelled.
    if (std::string_view module = pycore::conventionalModule(e->name); !module.empty()) {
      if (ReportedMissingImports.insert(e->name).second)
        diag(Diagnostic::Error, e->range,
             "name '" + e->name + "' is not defined: the file does not import it (add `import " + std::string(module) +
                 " as " + e->name + "`)",
             Rule::Imports);
    } else if (!EvaluatingLiteral && !syntax::isPythonBuiltinName(e->name)) {
      // Bound nowhere in the file: CPython raises NameError whichever scope reads it.
      if (!Bindings) Bindings = syntax::namesBoundInFile(M.source().text());
      const syntax::FileBindings *bound = &*Bindings;
      if (CurModule) {
        auto it = SiblingBindings.find(CurModule);
        if (it == SiblingBindings.end())
          it = SiblingBindings.emplace(CurModule, syntax::namesBoundInFile(CurModule->source().text())).first;
        bound = &it->second;
      }
      if (!bound->starImport && !bound->names.count(e->name) &&
          ReportedUndefinedNames.insert({e->name, e->range.begin}).second)
        diag(Diagnostic::Error, e->range, "name '" + e->name + "' is not defined", Rule::UndefinedName);
      // Bound at module level from a value neither evaluator computes (`M = np.fromfunction(...)`).
      auto isClass = [&](std::string_view name) { return !CurModule && Classes.count(std::string(name)) != 0; };
      if (std::string why = pycore::unevaluatedModuleNameMessage(CurModule ? *CurModule : M, e->name, isClass);
          !why.empty() && ReportedUndefinedNames.insert({e->name, e->range.begin}).second)
        diag(Diagnostic::Error, e->range, why, Rule::Unsupported);
    }
    return Value::unknown(e->name);
  }
  case ExprKind::Tuple:
  case ExprKind::List: {
    std::vector<Value> elts;
    for (auto *x : e->elts) elts.push_back(eval(x));
    return Value::seq(std::move(elts), e->kind == ExprKind::List);
  }
  case ExprKind::Attribute: return attribute(e);
  case ExprKind::Subscript: return subscript(e);
  case ExprKind::Call: return call(e, resultBuffer, dest);
  case ExprKind::BinOp: {
    Value l = eval(e->elts[0]), r = eval(e->elts[1]);
    return binary(e->name, l, r, e->range);
  }
  case ExprKind::UnaryOp: {
    Value v = eval(e->base);
    if (e->name == "not") {
      if (auto n = v.number()) return Value::boolean(*n == 0);
      return Value::unknown(text(e));
    }
    if (e->name == "-") return binary("*", Value::integer(-1), v, e->range, text(e));
    return v;
  }
  case ExprKind::BoolOp: {
    Value l = eval(e->elts[0]);
    auto ln = l.number();
    if (ln && e->name == "and" && *ln == 0) return l;
    if (ln && e->name == "or" && *ln != 0) return l;
    Value r = eval(e->elts[1]);
    if (ln) return r;
    // `if a < n and b < m:` on loop variables: both masks' bounds, as `&` joins them.
    auto isMask = [](const Value &v) { return v.kind == Value::Path && v.s == "mask"; };
    if (e->name == "and" && e->elts.size() == 2 && isMask(l) && isMask(r)) return binary("&", l, r, e->range, text(e));
    if (auto rn = r.number(); rn && e->name == "and" && isMask(l)) return *rn != 0 ? l : Value::boolean(false);
    return Value::unknown(text(e));
  }
  case ExprKind::Compare: return compare(e);
  case ExprKind::ListComp: return comprehension(e);
  case ExprKind::IfExp: {
    Value c = eval(e->elts[0]);
    if (auto n = c.number()) return eval(*n != 0 ? e->elts[1] : e->elts[2]);
    eval(e->elts[1]);
    eval(e->elts[2]);
    return Value::unknown(text(e));
  }
  default: return Value::unknown(text(e));
  }
}

Value KernelBuilder::compare(const Expr *e) {
  std::vector<Value> vals;
  for (auto *x : e->elts) vals.push_back(eval(x));
  bool result = true;
  for (size_t i = 0; i + 1 < vals.size() && i < e->ops.size(); ++i) {
    auto eq = equalValues(vals[i], vals[i + 1]);
    const std::string &op = e->ops[i];
    std::optional<bool> r;
    if (op == "==" || op == "is")
      r = eq;
    else if (op == "!=" || op == "is not") {
      if (eq) r = !*eq;
    } else if (op == "in" || op == "not in") {
      // `t.dtype in (nl.bfloat16, nl.float16)`: known when every comparison is.
      if (vals[i + 1].kind == Value::Seq) {
        std::optional<bool> found = false;
        for (const Value &x : vals[i + 1].elts) {
          auto same = equalValues(vals[i], x);
          if (!same)
            found = std::nullopt;
          else if (*same) {
            found = true;
            break;
          }
        }
        if (found) r = op == "in" ? *found : !*found;
      }
    } else {
      auto a = vals[i].number(), b = vals[i + 1].number();
      if (a && b) {
        if (op == "<")
          r = *a < *b;
        else if (op == "<=")
          r = *a <= *b;
        else if (op == ">")
          r = *a > *b;
        else if (op == ">=")
          r = *a >= *b;
      } else if (vals[i].kind == Value::Index || vals[i + 1].kind == Value::Index) {
        // A mask predicate over aranges/loop variables: a compile-time mask value.
        Value m = Value::path("mask");
        if (e->ops.size() == 1)
          if (std::optional<MaskBound> bound = maskBound(vals[0], op, vals[1]))
            m.maskBounds = std::make_shared<std::vector<MaskBound>>(1, *bound);
        return m;
      }
    }
    if (!r) return Value::unknown(text(e));
    result = result && *r;
  }
  return Value::boolean(result);
}

std::optional<bool> KernelBuilder::equalValues(const Value &a, const Value &b) {
  if (a.kind == Value::Seq && b.kind == Value::Seq) {
    if (a.elts.size() != b.elts.size()) return false;
    bool all = true;
    for (size_t i = 0; i < a.elts.size(); ++i) {
      auto e = equalValues(a.elts[i], b.elts[i]);
      if (!e) return std::nullopt;
      all = all && *e;
    }
    return all;
  }
  if (a.kind == Value::None || b.kind == Value::None) return a.kind == b.kind;
  auto x = a.number(), y = b.number();
  if (x && y) return *x == *y;
  if (a.kind == Value::Str && b.kind == Value::Str) return a.s == b.s;
  if (a.kind == Value::Path && b.kind == Value::Path) return pycore::samePath(a.s, b.s);
  return std::nullopt;
}

std::optional<MaskBound> KernelBuilder::maskBound(const Value &l, const std::string &op, const Value &r) {
  // d = l - r compared with 0, normalised to `coeff * t + base < 0`: `i * 128 + ip < n`,
  // `-1024 * i - ip + 10943 >= 0` (NKIBench's form), `n > i * 128 + ip`, `ip <= n - 1`.
  std::optional<IndexVal> li = l.asIndex(), ri = r.asIndex();
  if (!li || !ri || l.kind == Value::Float || r.kind == Value::Float) return std::nullopt;
  if (!li->base.known || !ri->base.known) return std::nullopt;
  MaskBound m;
  m.base = li->base;
  m.base.add(ri->base, -1);
  int64_t coeff = 0;
  auto addTerms = [&](const IndexVal &x, int64_t sign) {
    for (const ArangeTerm &a : x.aranges) {
      if (a.extent <= 1) continue;
      if (m.axis != -1 && m.axis != a.axis) return false; // one axis per conjunct
      m.axis = a.axis;
      m.extent = a.extent;
      coeff += sign * a.coeff;
    }
    return true;
  };
  if (!addTerms(*li, 1) || !addTerms(*ri, -1)) return std::nullopt;
  if (m.axis != -1 && coeff != 1 && coeff != -1) return std::nullopt;
  // d > 0 <=> -d < 0; d >= 0 <=> -d - 1 < 0; d <= 0 <=> d - 1 < 0 (integers).
  bool negate = op == ">" || op == ">=";
  if (op != "<" && op != "<=" && !negate) return std::nullopt;
  if (negate) {
    m.base.scale(-1);
    coeff = -coeff;
  }
  if (op == "<=" || op == ">=") m.base.constant -= 1;
  m.coeff = m.axis == -1 ? 1 : coeff;
  return m;
}

std::optional<std::pair<int64_t, int64_t>> KernelBuilder::affineRange(const Affine &a) const {
  if (!a.known) return std::nullopt;
  int64_t lo = a.constant, hi = a.constant;
  for (const auto &[loop, coeff] : a.terms) {
    if (loop < 0 || size_t(loop) >= K.loops.size()) return std::nullopt;
    const SymInt &trip = K.loops[size_t(loop)].tripCount;
    if (!trip.isKnown() || *trip.value < 1 || *trip.value > (int64_t(1) << 31) || std::abs(coeff) > (int64_t(1) << 31))
      return std::nullopt;
    int64_t span = coeff * (*trip.value - 1); // the counter n runs over [0, trip)
    (span < 0 ? lo : hi) += span;
  }
  return std::make_pair(lo, hi);
}

std::optional<int64_t> KernelBuilder::uniformValue(const IndexVal &x) const {
  if (!x.aranges.empty()) return std::nullopt;
  if (!x.minOf) {
    auto r = affineRange(x.base);
    return r && r->first == r->second ? std::optional<int64_t>(r->first) : std::nullopt;
  }
  std::optional<int64_t> least;
  for (const Affine &t : *x.minOf) {
    auto r = affineRange(t);
    if (!r || r->first != r->second) return std::nullopt;
    least = least ? std::min(*least, r->first) : r->first;
  }
  return least;
}

Value KernelBuilder::minValue(std::shared_ptr<std::vector<Affine>> terms) const {
  // A term that some other term never exceeds, on any iteration of the loops, is never the minimum:
  // min(128, n - 128 * t) over t in [0, n // 128) is 128 (every tile full), min(c + 512, 256) with c = 0 is 256.
  std::vector<Affine> kept;
  for (size_t i = 0; i < terms->size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < terms->size() && !dominated; ++j) {
      if (i == j) continue;
      Affine diff = (*terms)[j];
      diff.add((*terms)[i], -1);
      auto r = affineRange(diff);
      // term j <= term i everywhere; of two equal terms the later one goes.
      dominated = r && r->second <= 0 && (r->second < 0 || r->first < 0 || j < i);
    }
    if (!dominated) kept.push_back((*terms)[i]);
  }
  if (kept.empty()) kept = *terms;
  IndexVal out;
  if (kept.size() == 1) {
    out.base = kept[0];
  } else {
    out.base = Affine::unknown();
    out.minOf = std::make_shared<std::vector<Affine>>(std::move(kept));
  }
  if (std::optional<int64_t> v = uniformValue(out)) return Value::integer(*v);
  return Value::index(out);
}

std::optional<Value> KernelBuilder::minOfAffines(const std::vector<Value> &args) const {
  if (args.size() < 2) return std::nullopt;
  auto terms = std::make_shared<std::vector<Affine>>();
  bool varies = false;
  for (const Value &a : args) {
    std::optional<IndexVal> x = a.asIndex();
    if (!x || !x->aranges.empty() || a.kind == Value::Float) return std::nullopt;
    if (x->minOf) {
      terms->insert(terms->end(), x->minOf->begin(), x->minOf->end());
      varies = true;
      continue;
    }
    if (!x->base.known) return std::nullopt;
    varies |= !x->base.isConstant();
    terms->push_back(x->base);
  }
  if (!varies) return std::nullopt; // numbers: Python's min
  return minValue(std::move(terms));
}

SymInt KernelBuilder::extentOf(const Value &x) const {
  if (x.kind == Value::Int || x.kind == Value::Bool) return x.i;
  if (x.kind == Value::Index)
    if (std::optional<int64_t> v = uniformValue(x.idx)) return SymInt::known(*v);
  return SymInt::symbolic(x.text());
}

std::optional<Value> KernelBuilder::minArithmetic(const std::string &op, const Value &l, const Value &r) const {
  std::optional<IndexVal> li = l.asIndex(), ri = r.asIndex();
  bool left = li->minOf != nullptr;
  const IndexVal &m = left ? *li : *ri, &o = left ? *ri : *li;
  if (o.minOf || !o.aranges.empty() || !o.base.known) return std::nullopt;
  auto terms = std::make_shared<std::vector<Affine>>(*m.minOf);
  if (op == "+" || (op == "-" && left)) {
    for (Affine &t : *terms) t.add(o.base, op == "-" ? -1 : 1);
  } else if (op == "*" && o.base.isConstant() && o.base.constant > 0) {
    for (Affine &t : *terms) t.scale(o.base.constant);
  } else {
    return std::nullopt;
  }
  return minValue(std::move(terms));
}

void KernelBuilder::addSliceBound(const MaskBound &m) {
  if (!Cur || (Cur->hasMask && Cur->maskBounds.empty() && Cur->unlessAll.empty()))
    return; // a mask the model cannot size
  Cur->hasMask = true;
  if (llvm::none_of(Cur->maskBounds, [&](const MaskBound &x) {
        return x.axis == m.axis && x.extent == m.extent && x.coeff == m.coeff && x.base.constant == m.base.constant &&
               x.base.terms == m.base.terms;
      }))
    Cur->maskBounds.push_back(m);
}

Value KernelBuilder::binary(const std::string &op, const Value &l, const Value &r, ByteRange range,
                            std::string textual) {
  if (textual.empty()) textual = "(" + l.text() + " " + op + " " + r.text() + ")";
  if (op == "&" && l.kind == Value::Path && l.s == "mask" && r.kind == Value::Path && r.s == "mask") {
    Value m = Value::path("mask");
    if (l.maskBounds && r.maskBounds) {
      m.maskBounds = std::make_shared<std::vector<MaskBound>>(*l.maskBounds);
      m.maskBounds->insert(m.maskBounds->end(), r.maskBounds->begin(), r.maskBounds->end());
    }
    return m;
  }
  // Tile arithmetic lowers to nl.* ops (operator overloads).
  if (l.kind == Value::Tensor || r.kind == Value::Tensor) {
    static const std::map<std::string, std::string> ops = {
        {"+", "nl.add"}, {"-", "nl.subtract"}, {"*", "nl.multiply"}, {"/", "nl.divide"}, {"**", "nl.power"}};
    auto it = ops.find(op);
    const OpInfo *info = it != ops.end() ? lookupOp(it->second) : nullptr;
    if (l.kind == Value::Tensor) readOperand(l, nullptr);
    if (r.kind == Value::Tensor) readOperand(r, nullptr);
    if (!info) return Value::unknown(textual);
    if (Cur && !Cur->op) {
      Cur->op = info;
      Cur->callee = std::string(info->name);
    }
    const Value &shaped = l.kind == Value::Tensor ? l : r;
    std::vector<int64_t> shape = tileShapeOf(shaped);
    // Tiles of one rank broadcast their extent-1 dimensions: `mean * t` of a [P, 1] and a [P, F] tile
    // is [P, F]. (Ranks differ only with index grids of other ranks; the left shape stays.)
    if (l.kind == Value::Tensor && r.kind == Value::Tensor) {
      std::vector<int64_t> other = tileShapeOf(r);
      if (other.size() == shape.size())
        for (size_t i = 0; i < other.size(); ++i)
          if (shape[i] == 1 && other[i] > 1) shape[i] = other[i];
    }
    return newTile(info, shape, Buffer::SBUF, dtypeOf(shaped), range);
  }
  if (op == "+" && l.kind == Value::Seq && r.kind == Value::Seq) {
    std::vector<Value> e = l.elts;
    e.insert(e.end(), r.elts.begin(), r.elts.end());
    return Value::seq(e, l.isList);
  }
  if (op == "*" && ((l.kind == Value::Seq && r.isKnownInt()) || (r.kind == Value::Seq && l.isKnownInt()))) {
    // `[None] * n`: the list repeated (a list of tiles filled by index later).
    const Value &seq = l.kind == Value::Seq ? l : r;
    int64_t n = std::max<int64_t>(0, *(l.kind == Value::Seq ? r : l).i.value);
    if (seq.elts.empty() || n <= 4096 / int64_t(seq.elts.size())) {
      std::vector<Value> e;
      for (int64_t k = 0; k < n; ++k) e.insert(e.end(), seq.elts.begin(), seq.elts.end());
      return Value::seq(e, seq.isList);
    }
  }
  if (op == "+" && l.kind == Value::Str && r.kind == Value::Str) return Value::str(l.s + r.s);
  // Integer/affine arithmetic.
  auto li = l.asIndex(), ri = r.asIndex();
  if ((li && li->minOf) || (ri && ri->minOf)) {
    std::optional<Value> m = minArithmetic(op, l, r);
    if (!m) return Value::integer(SymInt::symbolic(textual));
    m->s = textual;
    return *m;
  }
  bool lInt = l.kind == Value::Int || l.kind == Value::Bool || l.kind == Value::Index;
  bool rInt = r.kind == Value::Int || r.kind == Value::Bool || r.kind == Value::Index;
  if (lInt && rInt && li && ri) {
    bool lConst = l.kind != Value::Index && l.isKnownInt();
    bool rConst = r.kind != Value::Index && r.isKnownInt();
    if (lConst && rConst) {
      int64_t a = *l.i.value, b = *r.i.value;
      if (auto res = pyint::apply(op, a, b)) {
        if (res->problem == pyint::Problem::None) return Value::integer(res->value);
        // Division by zero is left to `run` (the branch may not be taken); a wrapped value never is.
        if (res->problem != pyint::Problem::DivisionByZero)
          diag(Diagnostic::Error, range, pyint::describe(res->problem, op), Rule::TraceInt);
        return Value::integer(SymInt::symbolic(textual));
      }
      if (op == "/" && b != 0) return Value::floating(double(a) / double(b));
    }
    // `(n - 32768 * t) // 256` and `% 256` (a flattened offset's rows and remainder): affine when the
    // divisor divides every loop coefficient, as floor((c + k * d * t) / d) is c // d + k * t.
    if (l.kind == Value::Index && rConst && (op == "//" || op == "%") && li->aranges.empty() && li->base.known &&
        !li->minOf && *r.i.value > 0) {
      int64_t d = *r.i.value;
      if (llvm::all_of(li->base.terms, [&](const auto &t) { return t.second % d == 0; })) {
        IndexVal out = *li;
        auto q = pyint::apply("//", li->base.constant, d), m = pyint::apply("%", li->base.constant, d);
        if (q && m && q->problem == pyint::Problem::None && m->problem == pyint::Problem::None) {
          out.base.constant = op == "//" ? q->value : m->value;
          if (op == "%") out.base.terms.clear();
          for (auto &t : out.base.terms) t.second /= d;
          if (out.base.terms.empty()) return Value::integer(out.base.constant);
          Value v = Value::index(out);
          v.s = textual;
          return v;
        }
      }
    }
    if (l.kind == Value::Index || r.kind == Value::Index) {
      IndexVal out;
      if (op == "+" || op == "-") {
        out = *li;
        int64_t s = op == "+" ? 1 : -1;
        out.base.add(ri->base, s);
        int rank = std::max(li->rank, ri->rank);
        for (auto &t : out.aranges) t.axis += rank - li->rank;
        for (auto t : ri->aranges) {
          t.axis += rank - ri->rank;
          t.coeff *= s;
          out.aranges.push_back(t);
        }
        out.rank = rank;
        if (out.grid.empty()) out.grid = ri->grid;
        Value v = Value::index(out);
        v.s = textual;
        return v;
      }
      if (op == "*" && (lConst || rConst)) {
        out = lConst ? *ri : *li;
        int64_t k = lConst ? *l.i.value : *r.i.value;
        out.base.scale(k);
        for (auto &t : out.aranges) t.coeff *= k;
        Value v = Value::index(out);
        v.s = textual;
        return v;
      }
      IndexVal unk;
      unk.base = Affine::unknown();
      unk.aranges = li->aranges;
      unk.rank = li->rank;
      Value v = Value::index(unk);
      v.s = textual;
      return v;
    }
    return Value::integer(SymInt::symbolic(textual));
  }
  auto a = l.number(), b = r.number();
  if (a && b) {
    if (op == "+") return Value::floating(*a + *b);
    if (op == "-") return Value::floating(*a - *b);
    if (op == "*") return Value::floating(*a * *b);
    if (op == "/" && *b != 0) return Value::floating(*a / *b);
    if (op == "**") return Value::floating(std::pow(*a, *b));
  }
  if ((l.kind == Value::Int || l.kind == Value::Unknown) && (r.kind == Value::Int || r.kind == Value::Unknown) &&
      (op == "//" || op == "+" || op == "-" || op == "*" || op == "%"))
    return Value::integer(SymInt::symbolic(textual));
  return Value::unknown(textual);
}

Value KernelBuilder::attribute(const Expr *e) {
  std::string canon = canonical(e);
  if (!canon.empty()) {
    if (const NamedConstant *c = lookupConstant(canon)) {
      if (c->kind == NamedConstant::Int) return Value::integer(c->value);
    }
    return Value::path(canon);
  }
  Value base = eval(e->base);
  if (base.kind == Value::Object) {
    if (auto it = base.attrs->find(e->name); it != base.attrs->end()) return it->second;
    diag(Diagnostic::Warning, e->range,
         "'" + base.s + "' object has no attribute '" + e->name + "' (CPython raises an AttributeError when tracing)",
         Rule::TraceTime);
    return Value::unknown(text(e));
  }
  if (base.kind == Value::Path && base.s.rfind("class.", 0) == 0)
    if (auto cls = Classes.find(base.s.substr(6)); cls != Classes.end())
      for (const Stmt *s : pycore::classLayout(*cls->second).attributes)
        for (const Expr *t : s->targets)
          if (t->kind == ExprKind::Name && t->name == e->name) {
            std::map<std::string, Value> callerEnv = Env;
            Env = ModuleEnv.empty() ? Env : ModuleEnv;
            Value v = eval(s->value);
            Env = std::move(callerEnv);
            return v;
          }
  if (base.kind == Value::Tensor) {
    const Tensor &t = K.tensors[base.tensor];
    if (e->name == "shape") {
      if (base.view) {
        std::vector<Value> dims;
        for (int64_t d : base.view->tileShape) dims.push_back(Value::integer(d));
        return Value::seq(dims);
      }
      if (UnknownShape.count(base.tensor)) {
        Value v = Value::unknown(t.name + ".shape");
        return v;
      }
      std::vector<Value> dims;
      for (auto &d : t.shape) dims.push_back(Value::integer(d));
      return Value::seq(dims);
    }
    if (e->name == "ndim" || e->name == "size") {
      // Numbers derived from the shape (documented nki.tensor attributes).
      if (!base.view && UnknownShape.count(base.tensor)) return Value::unknown(t.name + "." + e->name);
      std::vector<Value> dims;
      if (base.view)
        for (int64_t d : base.view->tileShape) dims.push_back(Value::integer(d));
      else
        for (auto &d : t.shape) dims.push_back(Value::integer(d));
      if (e->name == "ndim") return Value::integer(int64_t(dims.size()));
      int64_t n = 1;
      for (const Value &d : dims) {
        if (d.kind != Value::Int || !d.i.isKnown()) return Value::unknown(t.name + ".size");
        n *= *d.i.value;
      }
      return Value::integer(n);
    }
    if (e->name == "itemsize") {
      if (!t.dtypeKnown) return Value::unknown(t.name + ".itemsize");
      return Value::integer(dtypeBytes(t.dtype));
    }
    if (e->name == "dtype") {
      if (!t.dtypeKnown) return Value::unknown(t.name + ".dtype");
      return Value::path("dtype." + std::string(dtypeName(t.dtype)));
    }
    if (e->name == "reshape" || e->name == "broadcast_to" || e->name == "view" || e->name == "ap") {
      Value m = base;
      m.kind = Value::Method;
      m.s = e->name;
      return m;
    }
    if (!pycore::isKnownTileMember(e->name))
      diag(Diagnostic::Warning, e->range, pycore::unknownTileMemberMessage(e->name), Rule::UnknownApi);
  }
  if (base.kind == Value::Seq && !base.isList && !base.elts.empty() &&
      std::all_of(base.elts.begin(), base.elts.end(), [](const Value &x) { return x.kind == Value::Index; })) {
    // The fields of nl.mgrid[...]: .p the partition grid, .x, .y, .z the free axes.
    std::optional<int> axis = pycore::mgridFieldAxis(e->name);
    if (axis && size_t(*axis) < base.elts.size()) return base.elts[size_t(*axis)];
    diag(Diagnostic::Error, e->range,
         llvm::formatv("an nl.mgrid index grid of rank {0} has no field '{1}'", base.elts.size(), e->name).str(),
         Rule::CallArgs);
    return Value::unknown(text(e));
  }
  if (base.kind == Value::Seq && e->name == "count") return Value::unknown(text(e));
  return Value::unknown(text(e));
}

/// The tile a value names through any depth of lists of that one tile.
static std::optional<int> uniformTile(const Value &v) {
  if (v.kind == Value::Tensor) return v.view ? std::nullopt : std::optional<int>(v.tensor);
  if (v.kind != Value::Seq || !v.isList || v.elts.empty()) return std::nullopt;
  std::optional<int> first = uniformTile(v.elts.front());
  if (!first) return std::nullopt;
  for (const Value &x : v.elts)
    if (uniformTile(x) != first) return std::nullopt;
  return first;
}

std::optional<Value> KernelBuilder::uniformElement(const Value &list) {
  if (list.kind != Value::Seq || !uniformTile(list)) return std::nullopt;
  return list.elts.front();
}

Value KernelBuilder::subscript(const Expr *e) {
  Value base = eval(e->base);
  if (base.kind == Value::Tensor) {
    Access a = access(base, e);
    Value v = base;
    v.view = std::make_shared<Access>(a);
    return v;
  }
  if (base.kind == Value::Index && !base.idx.aranges.empty()) {
    // nl.arange(n)[:, None] lifts a 1-D arange to one axis of a rank-k grid.
    IndexVal x = base.idx;
    int rank = int(e->elts.size());
    int axis = 0;
    for (int i = 0; i < rank; ++i)
      if (e->elts[i] && e->elts[i]->kind == ExprKind::Slice) axis = i;
    for (auto &t : x.aranges) t.axis = axis;
    x.rank = rank;
    Value v = Value::index(x);
    v.s = text(e);
    return v;
  }
  if (base.kind == Value::Path && base.s == "nl.mgrid") {
    // nl.mgrid[0:P, 0:F] -> one index grid per axis.
    std::vector<Value> grids;
    int rank = int(e->elts.size());
    for (int i = 0; i < rank; ++i) {
      const Expr *sl = e->elts[i];
      IndexVal x;
      x.rank = rank;
      if (sl && sl->kind == ExprKind::Slice) {
        Value lo = sl->elts[0] ? eval(sl->elts[0]) : Value::integer(0);
        Value hi = eval(sl->elts[1]);
        pycore::ArangeBounds axis = pycore::mgridAxis(toPy(lo), toPy(hi));
        if (!axis.error.empty()) diag(Diagnostic::Error, sl->range, axis.error, Rule::CallArgs);
        if (axis.start && axis.extent) {
          x.base = Affine::constantOf(*axis.start);
          x.aranges.push_back({i, *axis.extent, 1});
        } else {
          x.base = Affine::unknown();
        }
      } else if (sl) {
        eval(sl);
        diag(Diagnostic::Error, sl->range, std::string(pycore::lookupIntrinsic("nl.mgrid")->usage), Rule::CallArgs);
      }
      grids.push_back(Value::index(x));
    }
    llvm::SmallVector<int64_t, 4> extents;
    for (const Value &g : grids) extents.push_back(g.idx.aranges.empty() ? 0 : g.idx.aranges[0].extent);
    if (llvm::all_of(extents, [](int64_t n) { return n > 0; }))
      for (Value &g : grids) g.idx.grid = extents;
    return Value::seq(grids);
  }
  if (base.kind == Value::Seq) {
    const Expr *ix = e->elts.empty() ? nullptr : e->elts[0];
    if (ix && ix->kind == ExprKind::Slice) {
      Value lo = ix->elts[0] ? eval(ix->elts[0]) : Value::integer(0);
      Value hi = ix->elts[1] ? eval(ix->elts[1]) : Value::integer(int64_t(base.elts.size()));
      if (lo.isKnownInt() && hi.isKnownInt()) {
        int64_t n = base.elts.size();
        int64_t a = *lo.i.value, b = *hi.i.value;
        if (a < 0) a += n;
        if (b < 0) b += n;
        a = std::clamp<int64_t>(a, 0, n), b = std::clamp<int64_t>(b, 0, n);
        std::vector<Value> out(base.elts.begin() + a, base.elts.begin() + std::max(a, b));
        return Value::seq(out, base.isList);
      }
    }
    Value i = eval(ix);
    if (auto block = blockElement(base, i)) return *block;
    if (i.isKnownInt()) {
      int64_t k = *i.i.value;
      if (k < 0) k += base.elts.size();
      if (k >= 0 && k < int64_t(base.elts.size())) return base.elts[k];
    }
    // A list whose elements are all one tile (filled by `append` in a loop: `tiles[k]`) gives that
    // tile at any index; nested lists of such lists likewise.
    if (auto same = uniformElement(base)) return *same;
  }
  if (base.kind == Value::Unknown && !base.s.empty() && e->elts.size() == 1) {
    Value i = eval(e->elts[0]);
    if (i.isKnownInt()) return symbolicInt(base.s + "[" + i.i.text + "]");
  }
  for (auto *x : e->elts) eval(x);
  return Value::unknown(text(e));
}

std::vector<int64_t> IndexVal::shape() const {
  std::vector<int64_t> out(size_t(std::max(rank, 1)), 1);
  for (size_t d = 0; d < grid.size() && d < out.size(); ++d) out[d] = grid[d];
  for (const ArangeTerm &t : aranges)
    if (t.axis >= 0 && size_t(t.axis) < out.size()) out[size_t(t.axis)] = std::max(out[size_t(t.axis)], t.extent);
  return out;
}

} // namespace accelopt::nki::frontend
