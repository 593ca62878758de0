#include "NKI/PyCore.h"
#include "NKI/PyInt.h"
#include "Syntax/AstWalks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iterator>

namespace accelopt::nki::pycore {

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

struct ModuleSpelling {
  std::string_view full;
  std::string_view canonical;
  bool conventional; // `full` is what the conventional alias `canonical` stands for
};

// Longest first, so that a prefix match finds the most specific module.
constexpr ModuleSpelling kModules[] = {
    {"neuronxcc.nki.language", "nl", true},
    {"neuronxcc.nki.typing", "nt", false},
    {"neuronxcc.nki.isa", "nisa", true},
    {"neuronxcc.nki", "nki", true},
    {"nki.language", "nl", false},
    {"nki.typing", "nt", false},
    {"nki.isa", "nisa", false},
    {"numpy", "np", true},
    {"math", "math", false},
    {"nki", "nki", false},
};

std::string canonicalPath(std::string_view dotted) {
  for (const auto &spelling : kModules) {
    std::string_view full = spelling.full;
    if (dotted.starts_with(full) && (dotted.size() == full.size() || dotted[full.size()] == '.'))
      return std::string(spelling.canonical) + std::string(dotted.substr(full.size()));
  }
  return std::string(dotted);
}

std::string_view conventionalModule(std::string_view alias) {
  for (const auto &spelling : kModules)
    if (spelling.conventional && spelling.canonical == alias) return spelling.full;
  return "";
}

std::optional<DType> dtypeOfPath(std::string_view path) {
  for (std::string_view prefix : {"dtype.", "npdtype."})
    if (path.starts_with(prefix)) {
      path.remove_prefix(prefix.size());
      break;
    }
  return parseDType(path);
}

bool samePath(std::string_view a, std::string_view b) {
  if (a == b) return true;
  auto x = dtypeOfPath(a), y = dtypeOfPath(b);
  return x && y && *x == *y;
}

bool isModuleConstant(const syntax::Expr *e, const std::function<bool(std::string_view)> &isClass) {
  if (!e) return true;
  if (e->kind == syntax::ExprKind::Lambda) return false;
  if (e->kind == syntax::ExprKind::Call) {
    // A configuration object: a class of the module called with constant arguments.
    if (!isClass || !e->base || e->base->kind != syntax::ExprKind::Name || !isClass(e->base->name)) return false;
    for (const auto &kw : e->keywords)
      if (!isModuleConstant(kw.value, isClass)) return false;
  } else if (e->base && !isModuleConstant(e->base, isClass)) {
    return false;
  }
  return std::all_of(e->elts.begin(), e->elts.end(),
                     [&](const syntax::Expr *x) { return isModuleConstant(x, isClass); });
}

std::string unevaluatedModuleNameMessage(const syntax::Module &m, std::string_view name,
                                         const std::function<bool(std::string_view)> &isClass) {
  const syntax::Stmt *def = nullptr;
  for (const syntax::Stmt *s : m.body()) {
    if (s->kind != syntax::StmtKind::Assign || isModuleConstant(s->value, isClass)) continue;
    for (const syntax::Expr *t : s->targets)
      if (t->kind == syntax::ExprKind::Name && t->name == name) def = s;
  }
  if (!def) return "";
  // The first call in the value names what would have to run at import time.
  const syntax::Expr *call = nullptr;
  syntax::forEachExpr(def->value, [&](const syntax::Expr *x) {
    if (!call && x->kind == syntax::ExprKind::Call) call = x;
  });
  std::string_view text = m.source().text();
  auto spelled = [&](const syntax::Expr *x) {
    return std::string(text.substr(x->range.begin, x->range.end - x->range.begin));
  };
  std::string callee = call && call->base ? spelled(call->base) : def->value ? spelled(def->value) : "";
  std::string line = std::to_string(m.source().lineCol(def->range.begin).line);
  std::string head = "module-level '" + std::string(name) + "' (line " + line + ") ";
  std::string what = canonicalPath(callee).starts_with("np.")
                         ? "is a host numpy array built by '" + callee + "' when the module is imported"
                         : "is computed by calling '" + callee + "' when the module is imported";
  return head + what +
         "; accelopt evaluates module-level values only from literals, arithmetic on them and configuration "
         "objects, so it cannot check, run or model what the kernel does with it";
}

std::vector<std::pair<std::string, std::string>> importBindings(const syntax::Stmt &s) {
  std::vector<std::pair<std::string, std::string>> out;
  if (s.kind == syntax::StmtKind::Import) {
    for (const auto &[name, alias] : s.imports) {
      if (!alias.empty()) {
        out.push_back({alias, canonicalPath(name)});
      } else {
        // `import neuronxcc.nki.language` binds only its root, `neuronxcc`.
        std::string head = name.substr(0, name.find('.'));
        out.push_back({head, canonicalPath(head)});
      }
    }
    return out;
  }
  if (s.kind != syntax::StmtKind::ImportFrom) return out;
  for (const auto &[name, alias] : s.imports) {
    if (name == "*") continue;
    // `from neuronxcc.nki import language as nl`, `from neuronxcc.nki.language import par_dim`.
    out.push_back({alias.empty() ? name : alias, canonicalPath(s.name + "." + name)});
  }
  return out;
}

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

std::string toText(const PyValue &v) {
  using K = PyValue::Kind;
  switch (v.kind) {
  case K::Str:
  case K::Opaque: return v.s;
  case K::Int: return std::to_string(v.i);
  case K::Bool: return v.i ? "True" : "False";
  case K::Float: return llvm::formatv("{0}", v.f).str();
  case K::None: return "None";
  case K::Seq: {
    std::string out = v.isList ? "[" : "(";
    for (size_t i = 0; i < v.elts.size(); ++i) out += (i ? ", " : "") + toText(v.elts[i]);
    if (!v.isList && v.elts.size() == 1) out += ",";
    return out + (v.isList ? "]" : ")");
  }
  case K::Range:
    return "range(" + std::to_string(v.i) + ", " + std::to_string(v.stop) +
           (v.step != 1 ? ", " + std::to_string(v.step) : std::string()) + ")";
  case K::Unknown:
  case K::Ref: break;
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Builtins
// ---------------------------------------------------------------------------

namespace {

constexpr BuiltinInfo kBuiltins[] = {
    // Evaluated by both `check` and `run`.
    {"range", true, false, false},
    {"len", true, false, false},
    {"min", true, false, true},
    {"max", true, false, true},
    {"int", true, false, true},
    {"float", true, false, false},
    {"abs", true, false, false},
    {"tuple", true, false, false},
    {"list", true, false, false},
    {"print", true, true, false},
    {"isinstance", true, false, false},
    {"bool", true, false, false},
    {"str", true, false, false},
    {"enumerate", true, false, false},
    {"zip", true, false, false},
    {"sum", true, false, false},
    {"round", true, false, false},
    // Free of side effects, not evaluated: a call is opaque, never host code.
    {"all", false, false, false},
    {"any", false, false, false},
    {"callable", false, false, false},
    {"chr", false, false, false},
    {"complex", false, false, false},
    {"dict", false, false, false},
    {"divmod", false, false, false},
    {"filter", false, false, false},
    {"format", false, false, false},
    {"frozenset", false, false, false},
    {"hash", false, false, false},
    {"hex", false, false, false},
    {"issubclass", false, false, false},
    {"iter", false, false, false},
    {"map", false, false, false},
    {"next", false, false, false},
    {"oct", false, false, false},
    {"ord", false, false, false},
    {"pow", false, false, false},
    {"repr", false, false, false},
    {"reversed", false, false, false},
    {"set", false, false, false},
    {"slice", false, false, false},
    {"sorted", false, false, false},
    {"type", false, false, false},
};

using K = PyValue::Kind;

BuiltinResult value(PyValue v) { return {std::move(v), ""}; }
BuiltinResult unknownResult() { return {PyValue::unknown(), ""}; }
BuiltinResult raise(std::string message) { return {PyValue::unknown(), std::move(message)}; }

bool anyUnknown(std::span<const PyValue> args) {
  return std::any_of(args.begin(), args.end(), [](const PyValue &v) { return v.kind == K::Unknown; });
}

/// An integer argument: an int, or a float with an integral value (as the interpreter always took).
std::optional<int64_t> intValue(const PyValue &v) {
  if (v.isIntLike()) return v.i;
  if (v.kind == K::Float && v.f == std::floor(v.f) && std::fabs(v.f) < 9.2e18) return int64_t(v.f);
  return std::nullopt;
}

std::string typeName(const PyValue &v) {
  switch (v.kind) {
  case K::None: return "None";
  case K::Bool:
  case K::Int: return "an int";
  case K::Float: return "a float";
  case K::Str: return "a string";
  case K::Seq: return v.isList ? "a list" : "a tuple";
  case K::Range: return "a range";
  default: return "a value";
  }
}

/// The items a builtin iterates over: a sequence's elements (as Refs into argument `arg`) or a
/// range's integers. std::nullopt when `v` is not iterable here.
std::optional<std::vector<PyValue>> items(const PyValue &v, int arg, const std::function<void(uint64_t)> &chargeItems) {
  std::vector<PyValue> out;
  if (v.kind == K::Seq) {
    for (size_t k = 0; k < v.elts.size(); ++k) out.push_back(PyValue::ref(arg, int(k)));
    return out;
  }
  if (v.kind == K::Range) {
    // Python's len(range(...)): ceil(span / |step|) items, charged before any is made (either direction).
    if (chargeItems && v.step != 0 && (v.step > 0 ? v.stop > v.i : v.stop < v.i)) {
      uint64_t span = v.step > 0 ? uint64_t(v.stop) - uint64_t(v.i) : uint64_t(v.i) - uint64_t(v.stop);
      uint64_t stride = v.step > 0 ? uint64_t(v.step) : 0 - uint64_t(v.step);
      chargeItems(span / stride + (span % stride != 0));
    }
    for (int64_t x = v.i; v.step > 0 ? x < v.stop : x > v.stop; x += v.step) out.push_back(PyValue::integer(x));
    return out;
  }
  return std::nullopt;
}

/// The element a Ref of `items` stands for, to compute with.
const PyValue &deref(const PyValue &item, std::span<const PyValue> args) {
  if (item.kind != K::Ref) return item;
  const PyValue &a = args[size_t(item.arg)];
  return item.elt < 0 ? a : a.elts[size_t(item.elt)];
}

} // namespace

const BuiltinInfo *lookupBuiltin(std::string_view name) {
  for (const auto &b : kBuiltins)
    if (b.name == name) return &b;
  return nullptr;
}

std::span<const BuiltinInfo> allBuiltins() { return kBuiltins; }

BuiltinResult callBuiltin(std::string_view fn, std::span<const PyValue> args,
                          const std::function<void(uint64_t)> &chargeItems) {
  std::string name(fn);
  if (fn == "range") {
    if (args.empty() || args.size() > 3)
      return raise("range expects 1 to 3 arguments, got " + std::to_string(args.size()));
    if (anyUnknown(args)) return unknownResult();
    int64_t bounds[3] = {0, 0, 1};
    for (size_t k = 0; k < args.size(); ++k) {
      auto x = intValue(args[k]);
      if (!x) return raise("expected an integer, got " + typeName(args[k]));
      bounds[args.size() == 1 ? 1 : k] = *x;
    }
    return value(PyValue::range(bounds[0], bounds[1], bounds[2]));
  }
  if (fn == "len") {
    if (args.size() != 1) return raise("len() takes exactly one argument (" + std::to_string(args.size()) + " given)");
    const PyValue &x = args[0];
    if (x.kind == K::Seq) return value(PyValue::integer(int64_t(x.elts.size())));
    if (x.kind == K::Str) return value(PyValue::integer(int64_t(x.s.size())));
    if (x.kind == K::Opaque && x.length) return value(PyValue::integer(*x.length));
    if (x.kind == K::Unknown) return unknownResult();
    return raise("object of type " + typeName(x) + " has no len()");
  }
  if (fn == "min" || fn == "max") {
    if (args.empty()) return raise(name + " expected at least 1 argument, got 0");
    std::vector<PyValue> list;
    if (args.size() == 1) {
      auto it = items(args[0], 0, chargeItems);
      if (!it) {
        if (args[0].kind == K::Unknown) return unknownResult();
        return raise(name + "() needs numbers");
      }
      list = std::move(*it);
    } else {
      for (size_t k = 0; k < args.size(); ++k) list.push_back(PyValue::ref(int(k), -1));
    }
    if (list.empty()) return raise(name + "() of an empty sequence");
    const PyValue *best = nullptr;
    bool unknown = false;
    for (const PyValue &item : list) {
      const PyValue &v = deref(item, args);
      if (v.kind == K::Unknown) {
        unknown = true;
        continue;
      }
      if (!v.isNumber()) return raise(name + "() needs numbers");
      if (!best || (fn == "min" ? v.number() < best->number() : v.number() > best->number())) best = &v;
    }
    if (unknown) return unknownResult();
    return value(*best);
  }
  if (fn == "int" || fn == "float") {
    if (args.size() != 1) return raise(name + "() takes one argument here");
    const PyValue &x = args[0];
    if (x.kind == K::Unknown) return unknownResult();
    if (!x.isNumber()) return raise(name + "() needs a number, got " + typeName(x));
    if (fn == "float") return value(PyValue::floating(x.number()));
    if (x.kind == K::Float && !(std::fabs(x.f) < 9.2e18))
      return raise("int() of " + toText(x) + " does not fit in 64 bits");
    return value(PyValue::integer(x.isIntLike() ? x.i : int64_t(x.f)));
  }
  if (fn == "abs") {
    if (args.size() != 1) return raise("abs() takes exactly one argument (" + std::to_string(args.size()) + " given)");
    const PyValue &x = args[0];
    if (x.kind == K::Unknown) return unknownResult();
    if (x.isIntLike()) {
      auto r = pyint::apply("*", x.i, x.i < 0 ? -1 : 1);
      if (r->problem != pyint::Problem::None) return raise(pyint::describe(r->problem, "abs"));
      return value(PyValue::integer(r->value));
    }
    if (x.kind == K::Float) return value(PyValue::floating(std::fabs(x.f)));
    return raise("bad operand type for abs(): " + typeName(x));
  }
  if (fn == "round") {
    if (args.empty() || args.size() > 2) return raise("round() takes 1 or 2 arguments");
    if (args[0].kind == K::Unknown) return unknownResult();
    if (!args[0].isNumber()) return raise("round() needs a number, got " + typeName(args[0]));
    return value(PyValue::integer(int64_t(std::llround(args[0].number()))));
  }
  if (fn == "bool") {
    if (args.empty()) return value(PyValue::boolean(false));
    const PyValue &x = args[0];
    switch (x.kind) {
    case K::None: return value(PyValue::boolean(false));
    case K::Bool:
    case K::Int: return value(PyValue::boolean(x.i != 0));
    case K::Float: return value(PyValue::boolean(x.f != 0));
    case K::Str: return value(PyValue::boolean(!x.s.empty()));
    case K::Seq: return value(PyValue::boolean(!x.elts.empty()));
    case K::Range: return value(PyValue::boolean(x.step > 0 ? x.stop > x.i : x.stop < x.i));
    case K::Opaque: return x.truth ? value(PyValue::boolean(*x.truth)) : unknownResult();
    default: return unknownResult();
    }
  }
  if (fn == "tuple" || fn == "list") {
    if (args.empty()) return value(PyValue::seq({}, fn == "list"));
    if (args.size() != 1) return raise(name + "() takes at most 1 argument");
    auto it = items(args[0], 0, chargeItems);
    if (!it) {
      if (args[0].kind == K::Unknown) return unknownResult();
      return raise(typeName(args[0]) + " is not iterable");
    }
    return value(PyValue::seq(std::move(*it), fn == "list"));
  }
  if (fn == "str") {
    if (args.empty()) return value(PyValue::str(""));
    if (args[0].kind == K::Unknown) return unknownResult();
    return value(PyValue::str(toText(args[0])));
  }
  if (fn == "print") return value(PyValue::none());
  if (fn == "isinstance") return value(PyValue::boolean(true));
  if (fn == "sum") {
    if (args.size() != 1) return raise("sum() takes one sequence here");
    auto it = items(args[0], 0, chargeItems);
    if (!it) {
      if (args[0].kind == K::Unknown) return unknownResult();
      return raise(typeName(args[0]) + " is not iterable");
    }
    PyValue acc = PyValue::integer(0);
    for (const PyValue &item : *it) {
      const PyValue &v = deref(item, args);
      if (v.kind == K::Unknown) return unknownResult();
      if (!v.isNumber()) return raise("sum() needs numbers, got " + typeName(v));
      if (acc.isIntLike() && v.isIntLike()) {
        auto r = pyint::apply("+", acc.i, v.i);
        if (r->problem != pyint::Problem::None) return raise(pyint::describe(r->problem, "+"));
        acc = PyValue::integer(r->value);
      } else {
        acc = PyValue::floating(acc.number() + v.number());
      }
    }
    return value(acc);
  }
  if (fn == "enumerate") {
    if (args.size() != 1) return raise("enumerate() takes one sequence here");
    auto it = items(args[0], 0, chargeItems);
    if (!it) return args[0].kind == K::Unknown ? unknownResult() : raise(typeName(args[0]) + " is not iterable");
    std::vector<PyValue> out;
    for (size_t k = 0; k < it->size(); ++k)
      out.push_back(PyValue::seq({PyValue::integer(int64_t(k)), (*it)[k]}, false));
    return value(PyValue::seq(std::move(out), true));
  }
  if (fn == "zip") {
    if (args.empty()) return raise("zip() takes sequences");
    std::vector<std::vector<PyValue>> columns;
    for (size_t a = 0; a < args.size(); ++a) {
      auto it = items(args[a], int(a), chargeItems);
      if (!it) return args[a].kind == K::Unknown ? unknownResult() : raise("zip() takes sequences");
      columns.push_back(std::move(*it));
    }
    size_t n = SIZE_MAX;
    for (auto &c : columns) n = std::min(n, c.size());
    std::vector<PyValue> out;
    for (size_t k = 0; k < n; ++k) {
      std::vector<PyValue> row;
      for (auto &c : columns) row.push_back(c[k]);
      out.push_back(PyValue::seq(std::move(row), false));
    }
    return value(PyValue::seq(std::move(out), true));
  }
  return raise("builtin '" + name + "' is not supported here");
}

// ---------------------------------------------------------------------------
// The math module
// ---------------------------------------------------------------------------

namespace {

struct MathFunction {
  std::string_view name; // canonical ("math.ceil")
  unsigned arity;        // positional arguments (math.log also takes an optional base)
  bool returnsInt;
};

constexpr MathFunction kMathFunctions[] = {
    {"math.ceil", 1, true},  {"math.floor", 1, true},  {"math.trunc", 1, true}, {"math.gcd", 2, true},
    {"math.isqrt", 1, true}, {"math.sqrt", 1, false},  {"math.exp", 1, false},  {"math.log", 1, false},
    {"math.log2", 1, false}, {"math.log10", 1, false}, {"math.pow", 2, false},  {"math.fabs", 1, false},
    {"math.sin", 1, false},  {"math.cos", 1, false},   {"math.tanh", 1, false}, {"math.erf", 1, false},
};

const MathFunction *lookupMath(std::string_view name) {
  for (const auto &f : kMathFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

/// A float result rounded toward an integer by math.ceil/floor/trunc: an int when it fits in 64 bits.
BuiltinResult integral(std::string_view fn, double x) {
  if (!std::isfinite(x))
    return raise(std::string(fn) + "() of " + llvm::formatv("{0}", x).str() + " is not an integer");
  if (!(std::fabs(x) < 9.2e18))
    return raise(std::string(fn) + "() of " + llvm::formatv("{0}", x).str() + " does not fit in 64 bits");
  return value(PyValue::integer(int64_t(x)));
}

} // namespace

bool isListMutator(std::string_view method) {
  return method == "append" || method == "extend" || method == "insert" || method == "pop" || method == "clear";
}

bool isMathFunction(std::string_view name) { return lookupMath(name) != nullptr; }

bool mathReturnsInt(std::string_view name) {
  const MathFunction *f = lookupMath(name);
  return f && f->returnsInt;
}

BuiltinResult callMath(std::string_view name, std::span<const PyValue> args) {
  const MathFunction *f = lookupMath(name);
  if (!f) return raise("'" + std::string(name) + "' is not supported here");
  std::string fn(name);
  bool takesBase = name == "math.log";
  if (args.size() != f->arity && !(takesBase && args.size() == 2))
    return raise(fn + "() takes " + std::to_string(f->arity) + (f->arity == 1 ? " argument" : " arguments") + " (" +
                 std::to_string(args.size()) + " given)");
  if (anyUnknown(args)) return unknownResult();
  for (const PyValue &a : args)
    if (!a.isNumber()) return raise(fn + "() needs a number, got " + typeName(a));
  const PyValue &x = args[0];
  if (name == "math.ceil" || name == "math.floor" || name == "math.trunc") {
    if (x.isIntLike()) return value(PyValue::integer(x.i));
    return integral(fn, name == "math.ceil"    ? std::ceil(x.f)
                        : name == "math.floor" ? std::floor(x.f)
                                               : std::trunc(x.f));
  }
  if (name == "math.gcd") {
    if (!x.isIntLike() || !args[1].isIntLike()) return raise("math.gcd() needs integers");
    if (x.i == INT64_MIN || args[1].i == INT64_MIN)
      return raise("math.gcd() of an integer that does not fit in 64 bits");
    int64_t a = std::abs(x.i), b = std::abs(args[1].i);
    while (b) {
      int64_t t = a % b;
      a = b;
      b = t;
    }
    return value(PyValue::integer(a));
  }
  if (name == "math.isqrt") {
    if (!x.isIntLike()) return raise("math.isqrt() needs an integer");
    if (x.i < 0) return raise("math.isqrt() of a negative number");
    auto r = int64_t(std::sqrt(double(x.i)));
    while (r > 0 && r > x.i / r) --r; // r*r <= x, exactly
    while ((r + 1) <= x.i / (r + 1)) ++r;
    return value(PyValue::integer(r));
  }
  double v = x.number();
  double out = 0;
  if (name == "math.sqrt") {
    if (v < 0) return raise("math.sqrt(): math domain error");
    out = std::sqrt(v);
  } else if (name == "math.log" || name == "math.log2" || name == "math.log10") {
    if (v <= 0 || (args.size() == 2 && args[1].number() <= 0)) return raise(fn + "(): math domain error");
    out = name == "math.log2" ? std::log2(v) : name == "math.log10" ? std::log10(v) : std::log(v);
    if (args.size() == 2) {
      double base = std::log(args[1].number());
      if (base == 0) return raise("math.log(): division by zero");
      out /= base;
    }
  } else if (name == "math.exp")
    out = std::exp(v);
  else if (name == "math.pow")
    out = std::pow(v, args[1].number());
  else if (name == "math.fabs")
    out = std::fabs(v);
  else if (name == "math.sin")
    out = std::sin(v);
  else if (name == "math.cos")
    out = std::cos(v);
  else if (name == "math.tanh")
    out = std::tanh(v);
  else if (name == "math.erf")
    out = std::erf(v);
  if (std::isinf(out) && std::isfinite(v)) return raise(fn + "(): math range error");
  return value(PyValue::floating(out));
}

// ---------------------------------------------------------------------------
// Tile attributes and methods
// ---------------------------------------------------------------------------

bool isKnownTileMember(std::string_view name) {
  static constexpr std::string_view kMembers[] = {"shape",   "dtype", "ndim",         "size", "itemsize",
                                                  "reshape", "view",  "broadcast_to", "ap"};
  return std::find(std::begin(kMembers), std::end(kMembers), name) != std::end(kMembers);
}

std::string unknownTileMemberMessage(std::string_view name) {
  return "unknown NKI API 'tile." + std::string(name) +
         "' (a tile method accelopt does not know); it is not checked, run or modelled";
}

// ---------------------------------------------------------------------------
// numpy on host scalars
// ---------------------------------------------------------------------------

namespace {

struct NumpyFunction {
  std::string_view name;
  unsigned arity;
  double (*fn)(double, double);
  bool keepsInt; // of int arguments, an int (np.abs(-3) is 3)
};

constexpr NumpyFunction kNumpyFunctions[] = {
    {"np.floor", 1, [](double x, double) { return std::floor(x); }, false},
    {"np.ceil", 1, [](double x, double) { return std::ceil(x); }, false},
    {"np.trunc", 1, [](double x, double) { return std::trunc(x); }, false},
    {"np.rint", 1, [](double x, double) { return std::nearbyint(x); }, false},
    {"np.sqrt", 1, [](double x, double) { return std::sqrt(x); }, false},
    {"np.exp", 1, [](double x, double) { return std::exp(x); }, false},
    {"np.log", 1, [](double x, double) { return std::log(x); }, false},
    {"np.log2", 1, [](double x, double) { return std::log2(x); }, false},
    {"np.sin", 1, [](double x, double) { return std::sin(x); }, false},
    {"np.cos", 1, [](double x, double) { return std::cos(x); }, false},
    {"np.tanh", 1, [](double x, double) { return std::tanh(x); }, false},
    {"np.abs", 1, [](double x, double) { return std::fabs(x); }, true},
    {"np.absolute", 1, [](double x, double) { return std::fabs(x); }, true},
    {"np.maximum", 2, [](double x, double y) { return std::isnan(x) || x > y ? x : y; }, true},
    {"np.minimum", 2, [](double x, double y) { return std::isnan(x) || x < y ? x : y; }, true},
};

const NumpyFunction *lookupNumpy(std::string_view name) {
  for (const auto &f : kNumpyFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

// Reductions of a host sequence of numbers to one numpy scalar (np.prod(a.shape[:2]), np.sum([1, 2])).
constexpr std::string_view kNumpyReductions[] = {"np.prod", "np.sum", "np.max", "np.amax", "np.min", "np.amin"};

bool isNumpyReduction(std::string_view name) {
  return std::find(std::begin(kNumpyReductions), std::end(kNumpyReductions), name) != std::end(kNumpyReductions);
}

/// np.prod / np.sum / np.max / np.min of a number or a (nested) sequence of numbers, as numpy computes it:
/// ints stay ints (int64, wrapping as numpy's does), an empty product or sum is the float 1.0 or 0.0, and
/// the max or min of nothing is numpy's ValueError.
BuiltinResult numpyReduction(std::string_view name, std::span<const PyValue> args) {
  std::string fn(name);
  if (args.size() != 1)
    return raise(fn + "() takes 1 argument (" + std::to_string(args.size()) + " given) at trace time");
  std::vector<const PyValue *> items;
  std::function<bool(const PyValue &)> flatten = [&](const PyValue &v) {
    if (v.kind == PyValue::Kind::Seq) {
      for (const PyValue &x : v.elts)
        if (!flatten(x)) return false;
      return true;
    }
    items.push_back(&v);
    return true;
  };
  flatten(args[0]);
  for (const PyValue *v : items)
    if (v->kind == PyValue::Kind::Unknown) return unknownResult();
  for (const PyValue *v : items)
    if (!v->isNumber()) return raise(fn + "() of a " + typeName(*v) + ": " + hostNumpyMessage(name));
  bool product = name == "np.prod", sum = name == "np.sum", max = name == "np.max" || name == "np.amax";
  if (items.empty()) {
    if (product || sum) return value(PyValue::floating(product ? 1.0 : 0.0));
    return raise(fn + "() of an empty sequence (numpy raises ValueError: zero-size array)");
  }
  bool allInt = std::all_of(items.begin(), items.end(), [](const PyValue *v) { return v->isIntLike(); });
  if (allInt) {
    uint64_t acc = product ? 1 : 0; // numpy's int64 arithmetic wraps
    int64_t best = items[0]->i;
    for (const PyValue *v : items) {
      if (product) acc *= uint64_t(v->i);
      if (sum) acc += uint64_t(v->i);
      best = max ? std::max(best, v->i) : std::min(best, v->i);
    }
    return value(PyValue::integer(product || sum ? int64_t(acc) : best));
  }
  double acc = product ? 1.0 : 0.0, best = items[0]->number();
  for (const PyValue *v : items) {
    double x = v->number();
    if (product) acc *= x;
    if (sum) acc += x;
    if (std::isnan(x) || std::isnan(best))
      best = std::nan("");
    else
      best = max ? std::max(best, x) : std::min(best, x);
  }
  return value(PyValue::floating(product || sum ? acc : best));
}

} // namespace

bool isNumpyScalarFunction(std::string_view name) { return lookupNumpy(name) != nullptr || isNumpyReduction(name); }

BuiltinResult callNumpyScalar(std::string_view name, std::span<const PyValue> args) {
  if (isNumpyReduction(name)) return numpyReduction(name, args);
  const NumpyFunction *f = lookupNumpy(name);
  if (!f) return raise(hostNumpyMessage(name));
  std::string fn(name);
  if (args.size() != f->arity)
    return raise(fn + "() takes " + std::to_string(f->arity) + (f->arity == 1 ? " argument" : " arguments") + " (" +
                 std::to_string(args.size()) + " given)");
  if (anyUnknown(args)) return unknownResult();
  for (const PyValue &a : args)
    if (!a.isNumber()) return raise(fn + "() of a " + typeName(a) + ": " + hostNumpyMessage(name));
  bool allInt = std::all_of(args.begin(), args.end(), [](const PyValue &a) { return a.isIntLike(); });
  if (f->keepsInt && allInt) {
    int64_t x = args[0].i, y = f->arity == 2 ? args[1].i : 0;
    if (f->arity == 1) {
      if (x == INT64_MIN) return raise(fn + "() of an integer that does not fit in 64 bits");
      return value(PyValue::integer(x < 0 ? -x : x));
    }
    return value(PyValue::integer(name == "np.maximum" ? std::max(x, y) : std::min(x, y)));
  }
  return value(PyValue::floating(f->fn(args[0].number(), f->arity == 2 ? args[1].number() : 0.0)));
}

std::string hostNumpyMessage(std::string_view name) {
  return "'" + std::string(name) +
         "' computes a host numpy array at trace time; accelopt evaluates numpy only on scalars, so it "
         "cannot check, run or model what the kernel does with it";
}

// ---------------------------------------------------------------------------
// NKI intrinsics
// ---------------------------------------------------------------------------

namespace {

constexpr IntrinsicInfo kIntrinsics[] = {
    {Intrinsic::Arange, "nl.arange", "nl.arange takes (stop) or (start, stop)"},
    {Intrinsic::Mgrid, "nl.mgrid", "nl.mgrid takes slices"},
    {Intrinsic::Ds, "nl.ds", "nl.ds takes (start, size)", {"start", "size"}},
    {Intrinsic::ParDim, "nl.par_dim", "nl.par_dim takes the partition dimension's size", {"size"}},
    {Intrinsic::ProgramId, "nl.program_id", "nl.program_id takes an axis", {"axis"}},
    {Intrinsic::NumPrograms, "nl.num_programs", "nl.num_programs takes an axis", {"axes"}},
    {Intrinsic::ProgramNdim, "nl.program_ndim", "nl.program_ndim takes no arguments"},
    {Intrinsic::NcVersion, "nisa.get_nc_version", "nisa.get_nc_version takes no arguments"},
};

} // namespace

const IntrinsicInfo *lookupIntrinsic(std::string_view name) {
  for (const auto &i : kIntrinsics)
    if (i.name == name) return &i;
  return nullptr;
}

std::span<const IntrinsicInfo> allIntrinsics() { return kIntrinsics; }

IntrinsicArguments intrinsicArguments(const IntrinsicInfo &info, const syntax::Expr &call) {
  IntrinsicArguments out;
  out.args = call.elts;
  for (const auto &kw : call.keywords) {
    auto slot = std::find(info.params.begin(), info.params.end(), kw.name);
    if (kw.name.empty() || slot == info.params.end()) {
      out.error = std::string(info.name) + "() got an unexpected keyword argument '" + kw.name + "'";
      return out;
    }
    size_t index = size_t(slot - info.params.begin());
    if (index < out.args.size() && out.args[index]) {
      out.error = std::string(info.name) + "() got multiple values for argument '" + kw.name + "'";
      return out;
    }
    if (out.args.size() <= index) out.args.resize(index + 1, nullptr);
    out.args[index] = kw.value;
  }
  if (auto hole = llvm::find(out.args, nullptr); hole != out.args.end())
    out.error = std::string(info.name) + "() missing required argument '" +
                std::string(info.params[size_t(hole - out.args.begin())]) + "'";
  return out;
}

ArangeBounds arangeBounds(std::span<const PyValue> args) {
  ArangeBounds out;
  if (args.empty() || args.size() > 2) {
    out.error = std::string(lookupIntrinsic("nl.arange")->usage);
    return out;
  }
  return mgridAxis(args.size() == 2 ? args[0] : PyValue::integer(0), args.size() == 2 ? args[1] : args[0]);
}

ArangeBounds mgridAxis(const PyValue &lo, const PyValue &hi) {
  ArangeBounds out;
  std::optional<int64_t> a = lo.kind == K::None ? std::optional<int64_t>(0) : intValue(lo), b = intValue(hi);
  for (const PyValue *v : {&lo, &hi})
    if (v->kind != K::Unknown && v->kind != K::None && !intValue(*v) && out.error.empty())
      out.error = "expected an integer, got " + typeName(*v);
  if (a) out.start = *a;
  if (a && b) {
    auto extent = pyint::apply("-", *b, *a);
    if (extent->problem != pyint::Problem::None)
      out.error = pyint::describe(extent->problem, "-");
    else
      out.extent = extent->value;
  }
  return out;
}

std::optional<int> mgridFieldAxis(std::string_view field) {
  static constexpr std::string_view kFields[] = {"p", "x", "y", "z"};
  for (size_t a = 0; a < std::size(kFields); ++a)
    if (kFields[a] == field) return int(a);
  return std::nullopt;
}

ArangeBounds dsBounds(std::span<const PyValue> args) {
  ArangeBounds out;
  if (args.size() != 2) {
    out.error = std::string(lookupIntrinsic("nl.ds")->usage);
    return out;
  }
  for (const PyValue *v : {&args[0], &args[1]})
    if (v->kind != K::Unknown && !intValue(*v) && out.error.empty())
      out.error = "nl.ds: expected an integer, got " + typeName(*v);
  out.start = intValue(args[0]);
  out.extent = intValue(args[1]);
  if (out.extent && *out.extent <= 0 && out.error.empty())
    out.error = "nl.ds: the size must be positive, got " + std::to_string(*out.extent);
  return out;
}

LaunchGrid LaunchGrid::at(const std::vector<int64_t> &dims, int64_t flat) {
  LaunchGrid g;
  g.dims = dims;
  g.instance.assign(dims.size(), 0);
  for (size_t k = dims.size(); k-- > 0;) {
    g.instance[k] = flat % dims[k];
    flat /= dims[k];
  }
  return g;
}

int64_t LaunchGrid::size() const {
  int64_t n = 1;
  for (int64_t d : dims) // saturates past kMaxGridInstances
    n = d > kMaxGridInstances ? kMaxGridInstances + 1 : std::min(n * std::max<int64_t>(d, 1), kMaxGridInstances + 1);
  return n;
}

std::string LaunchGrid::axisError(std::string_view callee, int64_t axis) const {
  if (dims.empty() || axis < ndim()) return "";
  return std::string(callee) + "(" + std::to_string(axis) + ") but the launch grid " + gridText(dims) + " has " +
         std::to_string(dims.size()) + (dims.size() == 1 ? " axis" : " axes");
}

static std::string tupleText(const std::vector<int64_t> &v) {
  std::string s = "(";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string LaunchGrid::instanceText() const {
  return tupleText(instance.empty() ? std::vector<int64_t>(dims.size()) : instance);
}

std::string gridText(const std::vector<int64_t> &dims) { return tupleText(dims); }

ParsedGrid parseGrid(std::string_view text) {
  ParsedGrid out;
  std::string_view t = text;
  auto trim = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  };
  t = trim(t);
  if (t.size() >= 2 && ((t.front() == '[' && t.back() == ']') || (t.front() == '(' && t.back() == ')')))
    t = trim(t.substr(1, t.size() - 2));
  int64_t total = 1;
  while (!t.empty()) {
    size_t comma = t.find(',');
    std::string_view item = trim(t.substr(0, comma));
    t = comma == std::string_view::npos ? std::string_view() : trim(t.substr(comma + 1));
    if (item.empty() && t.empty() && !out.dims.empty()) break; // "(2,)"
    int64_t v = 0;
    bool ok = !item.empty() && item.size() <= 9;
    for (char c : item) ok = ok && c >= '0' && c <= '9', v = v * 10 + (c - '0');
    if (!ok || v <= 0) {
      out.error = "bad launch grid '" + std::string(text) + "': expected positive extents, e.g. 2,3";
      return out;
    }
    out.dims.push_back(v);
    total *= v;
    if (total > kMaxGridInstances) {
      out.error = "launch grid '" + std::string(text) + "' has more than " + std::to_string(kMaxGridInstances) +
                  " instances (accelopt traces each one)";
      return out;
    }
  }
  if (out.dims.empty()) out.error = "bad launch grid '" + std::string(text) + "': expected positive extents, e.g. 2,3";
  return out;
}

AxisArg launchAxis(std::string_view callee, std::span<const PyValue> args, bool optional) {
  AxisArg out;
  if (args.empty()) {
    if (optional)
      out.axis = 0;
    else
      out.error = std::string(callee) + " takes an axis";
    return out;
  }
  if (args.size() > 1) {
    out.error = std::string(callee) + " takes one axis";
    return out;
  }
  if (args[0].kind == K::Unknown) return out;
  auto axis = intValue(args[0]);
  if (!axis || *axis < 0)
    out.error = std::string(callee) + "'s axis must be a non-negative integer, got " + toText(args[0]);
  else
    out.axis = *axis;
  return out;
}

// ---------------------------------------------------------------------------
// Argument binding
// ---------------------------------------------------------------------------

Binding bindArguments(std::span<const ParamSpec> params, size_t positional,
                      std::span<const std::string_view> keywords) {
  Binding b;
  b.argOf.assign(params.size(), Binding::Unbound);
  size_t next = 0; // the next positional argument
  bool keywordOnly = false;
  for (size_t p = 0; p < params.size(); ++p) {
    if (params[p].variadic) {
      next = positional; // *args takes the rest
      keywordOnly = true;
      continue;
    }
    if (!keywordOnly && next < positional) b.argOf[p] = int(next++);
  }
  for (size_t k = next; k < positional; ++k) b.extraPositional.push_back(k);
  bool takesAnyKeyword = std::any_of(params.begin(), params.end(), [](const ParamSpec &p) { return p.variadic; });
  for (size_t k = 0; k < keywords.size(); ++k) {
    auto it = std::find_if(params.begin(), params.end(),
                           [&](const ParamSpec &p) { return !p.variadic && p.name == keywords[k]; });
    if (it == params.end()) {
      if (!takesAnyKeyword) b.unknownKeywords.push_back(k);
      continue;
    }
    size_t p = size_t(std::distance(params.begin(), it));
    if (b.argOf[p] != Binding::Unbound && size_t(b.argOf[p]) < positional) b.repeated.push_back(p);
    b.argOf[p] = int(positional + k);
  }
  for (size_t p = 0; p < params.size(); ++p)
    if (params[p].required && !params[p].variadic && b.argOf[p] == Binding::Unbound) b.missing.push_back(p);
  return b;
}

std::vector<ParamSpec> paramsOf(const syntax::Stmt &def) {
  std::vector<ParamSpec> out;
  for (const auto &p : def.params) out.push_back({p.name, p.defaultValue == nullptr, p.isVarArgs});
  return out;
}

ParsedLiteral parseLiteral(std::string_view text, const std::function<bool(std::string_view)> &isClass) {
  ParsedLiteral out;
  auto buffer = syntax::SourceBuffer::fromText("<input>", "__input__ = " + std::string(text) + "\n");
  if (!buffer) {
    out.error = llvm::toString(buffer.takeError());
    return out;
  }
  out.module = syntax::Module::parse(std::move(*buffer));
  const auto &body = out.module->body();
  if (!out.module->errors().empty() || body.size() != 1 || body[0]->kind != syntax::StmtKind::Assign ||
      body[0]->targets.size() != 1 || !body[0]->value) {
    out.error = "'" + std::string(text) + "' is not a Python expression";
    return out;
  }
  if (!isModuleConstant(body[0]->value, isClass)) {
    out.error = "'" + std::string(text) +
                "' is not a literal (numbers, strings, None, tuples, lists, dtypes, and "
                "classes of the kernel's file called with such values)";
    return out;
  }
  out.value = body[0]->value;
  return out;
}

const syntax::Stmt *nestedFunctionAt(const syntax::Stmt &def, uint32_t offset) {
  const syntax::Stmt *found = nullptr;
  syntax::forEachStmt(def.body, [&](const syntax::Stmt *s) {
    if (s->kind == syntax::StmtKind::FunctionDef && s->range.begin <= offset && offset < s->range.end) found = s;
  });
  return found; // forEachStmt visits parents first: the last hit is the innermost
}

std::string_view classNameOf(const syntax::Stmt &s) {
  if (s.kind != syntax::StmtKind::Other || s.name != "class_definition" || s.targets.size() != 1 ||
      s.targets[0]->kind != syntax::ExprKind::Name)
    return "";
  return s.targets[0]->name;
}

ClassLayout classLayout(const syntax::Stmt &cls) {
  ClassLayout out;
  bool dataclass = std::any_of(cls.decorators.begin(), cls.decorators.end(), [](const syntax::Expr *d) {
    const syntax::Expr *callee = d->kind == syntax::ExprKind::Call ? d->base : d;
    std::string dotted = callee ? callee->dottedName() : "";
    return dotted == "dataclass" || dotted == "dataclasses.dataclass";
  });
  for (const syntax::Stmt *s : cls.body) {
    if (s->kind == syntax::StmtKind::FunctionDef && s->name == "__init__")
      out.error = "class '" + std::string(classNameOf(cls)) + "' defines __init__, which accelopt does not run";
    bool annotated = s->kind == syntax::StmtKind::AnnAssign || (s->kind == syntax::StmtKind::Assign && s->op == ":");
    if (s->kind == syntax::StmtKind::Assign) out.attributes.push_back(s);
    if (dataclass && annotated && s->targets.size() == 1 && s->targets[0]->kind == syntax::ExprKind::Name) {
      out.fields.push_back({s->targets[0]->name, s->value == nullptr, false});
      out.defaults.push_back(s->value);
    }
  }
  return out;
}

std::string_view operatorSymbol(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kOps[] = {
      {"operator.add", "+"},       {"operator.sub", "-"}, {"operator.mul", "*"},     {"operator.truediv", "/"},
      {"operator.floordiv", "//"}, {"operator.mod", "%"}, {"operator.pow", "**"},    {"operator.and_", "&"},
      {"operator.or_", "|"},       {"operator.xor", "^"}, {"operator.lshift", "<<"}, {"operator.rshift", ">>"}};
  for (const auto &[fn, sym] : kOps)
    if (fn == name) return sym;
  return "";
}

} // namespace accelopt::nki::pycore

namespace accelopt::nki {

std::string_view canonicalModule(std::string_view m) {
  for (const auto &spelling : pycore::kModules)
    if (spelling.full == m) return spelling.canonical;
  return "";
}

} // namespace accelopt::nki
