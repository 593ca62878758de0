// The front end is an abstract evaluator of trace-time Python: it walks a
// kernel body once (as NKI 0.1.0 tracing does), folds integers and shapes,
// treats loop variables as affine symbols, and records loops, statements,
// tensors and accesses into the kernel IR.
#include "NKI/FrontEnd.h"
#include "NKI/PyInt.h"
#include "NKI/Rules.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace accelopt::nki {

using syntax::Expr;
using syntax::ExprKind;
using syntax::Stmt;
namespace PyStmt = syntax;

// ---------------------------------------------------------------------------
// Input specs
// ---------------------------------------------------------------------------

static llvm::Error specError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "error: " + msg);
}

llvm::Expected<InputSpecs> parseInputSpecs(llvm::StringRef text) {
  InputSpecs specs;
  llvm::StringRef rest = text.trim();
  while (!rest.empty()) {
    // Split at the next comma that is not inside brackets/parentheses.
    size_t depth = 0, cut = rest.size();
    for (size_t i = 0; i < rest.size(); ++i) {
      char c = rest[i];
      if (c == '[' || c == '(') ++depth;
      else if ((c == ']' || c == ')') && depth) --depth;
      else if (c == ',' && depth == 0) { cut = i; break; }
    }
    llvm::StringRef item = rest.take_front(cut).trim();
    rest = cut < rest.size() ? rest.drop_front(cut + 1).trim() : llvm::StringRef();
    if (item.empty()) continue;
    auto [name, value] = item.split('=');
    name = name.trim();
    value = value.trim();
    if (name.empty() || value.empty() || !item.contains('='))
      return specError("bad --inputs item '" + item + "': expected name=dtype[d0,d1,...] or name=number");
    InputSpec spec;
    spec.name = name.str();
    // Optional "~init" suffix: x=f32[4,4]~uniform(0,1)
    auto [typed, init] = value.split('~');
    spec.init = init.trim().str();
    typed = typed.trim();
    size_t bracket = typed.find('[');
    if (bracket == llvm::StringRef::npos) {
      double v;
      if (typed.getAsDouble(v))
        return specError("bad --inputs item '" + item +
                         "': a scalar must be a number, an array dtype[shape] (e.g. f32[128,512])");
      spec.isScalar = true;
      spec.scalar = v;
      int64_t asInt;
      spec.isInt = !typed.getAsInteger(10, asInt);
    } else {
      auto dt = parseDType(typed.take_front(bracket).trim());
      if (!dt)
        return specError("unknown dtype '" + typed.take_front(bracket) + "' in --inputs item '" + item +
                         "' (use float32/bfloat16/float16 or f32/bf16/f16, ...)");
      spec.dtype = *dt;
      llvm::StringRef dims = typed.drop_front(bracket + 1);
      if (!dims.endswith("]"))
        return specError("missing ']' in --inputs item '" + item + "'");
      dims = dims.drop_back();
      llvm::SmallVector<llvm::StringRef, 6> parts;
      dims.split(parts, ',', -1, false);
      for (auto p : parts) {
        int64_t d;
        if (p.trim().getAsInteger(10, d) || d <= 0)
          return specError("bad dimension '" + p.trim() + "' in --inputs item '" + item +
                           "' (dimensions are positive integers)");
        spec.shape.push_back(d);
      }
    }
    for (auto &s : specs)
      if (s.name == spec.name) return specError("input '" + spec.name + "' given twice in --inputs");
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string formatInputSpecs(const InputSpecs &specs) {
  std::string out;
  for (const auto &s : specs) {
    if (!out.empty()) out += ",";
    out += s.name + "=";
    if (s.isScalar) {
      out += s.isInt ? std::to_string(int64_t(s.scalar)) : llvm::formatv("{0}", s.scalar).str();
      continue;
    }
    out += std::string(dtypeName(s.dtype)) + "[";
    for (size_t i = 0; i < s.shape.size(); ++i) out += (i ? "," : "") + std::to_string(s.shape[i]);
    out += "]";
  }
  return out;
}

// ---------------------------------------------------------------------------
// Trace-time values
// ---------------------------------------------------------------------------

namespace {

/// An index expression value: loop-affine base plus nl.arange terms of a
/// broadcast of rank `rank` (0 for plain integers and loop variables).
struct IndexVal {
  Affine base;
  llvm::SmallVector<ArangeTerm, 1> aranges;
  int rank = 0;
};

struct Value {
  enum Kind : uint8_t {
    Unknown, None, Bool, Int, Float, Str, Seq, Path, Tensor, Index, Iter, Method, SliceV, Ellipsis,
  } kind = Unknown;
  SymInt i;                      // Int (also Bool as 0/1)
  double f = 0;                  // Float (known), Bool
  bool fKnown = false;
  std::string s;                 // Str text; Path canonical dotted name; Method name; Unknown: source text
  std::vector<Value> elts;       // Seq
  bool isList = false;
  int tensor = -1;               // Tensor / Method receiver
  std::shared_ptr<Access> view;  // Tensor: a subscripted view (null = whole tensor)
  IndexVal idx;                  // Index
  LoopKind loopKind = LoopKind::Affine;  // Iter
  SymInt start, stop, step;      // Iter; SliceV uses start/stop/step (text "" = omitted)
  bool sliceHas[3] = {false, false, false};

  static Value unknown(std::string text = "") { Value v; v.s = std::move(text); return v; }
  static Value none() { Value v; v.kind = None; return v; }
  static Value integer(SymInt x) { Value v; v.kind = Int; v.i = std::move(x); return v; }
  static Value integer(int64_t x) { return integer(SymInt::known(x)); }
  static Value boolean(bool b) { Value v; v.kind = Bool; v.f = b; v.fKnown = true; v.i = SymInt::known(b); return v; }
  static Value floating(double x) { Value v; v.kind = Float; v.f = x; v.fKnown = true; return v; }
  static Value str(std::string x) { Value v; v.kind = Str; v.s = std::move(x); return v; }
  static Value path(std::string p) { Value v; v.kind = Path; v.s = std::move(p); return v; }
  static Value seq(std::vector<Value> e, bool list = false) { Value v; v.kind = Seq; v.elts = std::move(e); v.isList = list; return v; }
  static Value tensorRef(int t) { Value v; v.kind = Tensor; v.tensor = t; return v; }
  static Value index(IndexVal x) { Value v; v.kind = Index; v.idx = std::move(x); return v; }

  bool isKnownInt() const { return (kind == Int || kind == Bool) && i.isKnown(); }
  bool isNumber() const { return kind == Int || kind == Float || kind == Bool; }
  std::optional<double> number() const {
    if ((kind == Int || kind == Bool) && i.isKnown()) return double(*i.value);
    if (kind == Float && fKnown) return f;
    return std::nullopt;
  }
  /// Affine view of an integer-like value.
  std::optional<IndexVal> asIndex() const {
    if (kind == Index) return idx;
    if ((kind == Int || kind == Bool) && i.isKnown()) { IndexVal x; x.base = Affine::constantOf(*i.value); return x; }
    if (kind == Int) { IndexVal x; x.base = Affine::unknown(); return x; }
    return std::nullopt;
  }
  std::string text() const {
    switch (kind) {
    case Int: case Bool: return i.text;
    case Float: return fKnown ? llvm::formatv("{0}", f).str() : s;
    case Str: return "'" + s + "'";
    case Path: return s;
    default: return s.empty() ? "?" : s;
    }
  }
};

} // namespace

void Affine::add(const Affine &o, int64_t s) {
  if (!o.known) known = false;
  constant += s * o.constant;
  for (const auto &term : o.terms) {
    int loop = term.first;
    auto it = std::find_if(terms.begin(), terms.end(), [loop](auto &t) { return t.first == loop; });
    if (it != terms.end()) it->second += s * term.second;
    else terms.push_back({loop, s * term.second});
  }
  terms.erase(std::remove_if(terms.begin(), terms.end(), [](auto &t) { return t.second == 0; }), terms.end());
  std::sort(terms.begin(), terms.end());
}

void Affine::scale(int64_t s) {
  constant *= s;
  for (auto &t : terms) t.second *= s;
  if (s == 0) terms.clear();
}

std::string_view loopKindName(LoopKind k) {
  switch (k) {
  case LoopKind::Affine: return "affine_range";
  case LoopKind::Sequential: return "sequential_range";
  case LoopKind::Static: return "static_range";
  case LoopKind::PyRange: return "range";
  }
  return "?";
}

std::string_view stmtKindName(StmtKind k) {
  switch (k) {
  case StmtKind::Alloc: return "alloc";
  case StmtKind::Op: return "op";
  case StmtKind::Accumulate: return "accumulate";
  case StmtKind::Store: return "store";
  case StmtKind::Assign: return "assign";
  case StmtKind::Assert: return "assert";
  case StmtKind::Return: return "return";
  case StmtKind::Python: return "python";
  }
  return "?";
}

std::optional<int64_t> Tensor::bytesPerPartition() const {
  if (isHBM(buffer)) return std::nullopt;
  int64_t elems = 1;
  for (size_t d = parDim + 1; d < shape.size(); ++d) {
    if (!shape[d].isKnown()) return std::nullopt;
    elems *= *shape[d].value;
  }
  return elems * dtypeBytes(dtype);
}

std::optional<int64_t> Tensor::totalBytesPerPartition() const {
  auto tile = bytesPerPartition();
  if (!tile) return std::nullopt;
  int64_t blocks = 1;
  for (int d = 0; d < blockDims(); ++d) {
    if (!shape[d].isKnown()) return std::nullopt;
    blocks *= *shape[d].value;
  }
  return *tile * blocks;
}

std::string Tensor::shapeString() const {
  std::string out = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d) out += ", ";
    if (int(d) == parDim && parDim > 0) out += "par_dim(" + shape[d].str() + ")";
    else out += shape[d].str();
  }
  return out + "]";
}

std::optional<NodeRef> Kernel::resolve(std::string_view ref) const {
  auto parseId = [&](char prefix) -> std::optional<int> {
    if (ref.size() < 2 || ref[0] != prefix) return std::nullopt;
    int v = 0;
    for (char c : ref.substr(1)) {
      if (c < '0' || c > '9') return std::nullopt;
      // Past every id the kernel has: stop before `L4294967296` wraps around to L0.
      if (v > (1 << 24)) return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  if (auto l = parseId('L'); l && *l < int(loops.size())) return NodeRef{true, *l};
  if (auto s = parseId('S'); s && *s < int(stmts.size())) return NodeRef{false, *s};
  std::optional<NodeRef> found;
  for (const auto &loop : loops)
    if (loop.iv == ref) {
      if (found) return std::nullopt;  // ambiguous
      found = NodeRef{true, loop.id};
    }
  return found;
}

std::vector<int> Kernel::loopNest(int loop) const {
  std::vector<int> nest;
  for (int l = loop; l >= 0; l = loops[l].parent) nest.push_back(l);
  std::reverse(nest.begin(), nest.end());
  return nest;
}

int Kernel::parentOf(NodeRef node) const {
  return node.isLoop ? loops[node.index].parent : stmts[node.index].parent;
}

const std::vector<NodeRef> &Kernel::siblingsOf(NodeRef node) const {
  int p = parentOf(node);
  return p < 0 ? body : loops[p].body;
}

ByteRange Kernel::rangeOf(NodeRef node) const {
  return node.isLoop ? loops[node.index].range : stmts[node.index].range;
}

bool Kernel::encloses(int outer, NodeRef node) const {
  for (int p = parentOf(node); p >= 0; p = loops[p].parent)
    if (p == outer) return true;
  return false;
}

// ---------------------------------------------------------------------------
// The abstract evaluator
// ---------------------------------------------------------------------------

namespace {

class KernelBuilder {
public:
  KernelBuilder(const syntax::Module &m, const std::map<std::string, std::string> &moduleAliases,
                const InputSpecs *inputs)
      : M(m), Aliases(moduleAliases), Inputs(inputs) {}

  Kernel build(const Stmt *def) {
    K.name = def->name;
    K.def = def;
    K.source = &M.source();
    K.shapesKnown = Inputs != nullptr;
    bindModuleConstants();
    bindParams(def);
    block(def->body, K.body, -1);
    return std::move(K);
  }

private:
  const syntax::Module &M;
  std::set<std::string> ReportedMissingImports;  // one error per alias and kernel
  std::map<std::string, std::string> Aliases;  // local name -> canonical dotted prefix
  const InputSpecs *Inputs;
  Kernel K;
  std::map<std::string, Value> Env;
  std::map<std::string, const Stmt *> Helpers;  // not inlined; calls stay opaque
  // Per-statement scratch while evaluating one statement.
  Statement *Cur = nullptr;
  int CurLoop = -1;

  // ----- diagnostics -----
  void diag(Diagnostic::Severity sev, ByteRange r, std::string msg, Rule rule) {
    K.diagnostics.push_back({sev, r.begin, r.end, std::move(msg), ruleId(rule)});
  }

  std::string text(const Expr *e) const { return e ? M.text(e).str() : ""; }

  // ----- names -----
  std::string canonical(const Expr *e) const {
    std::string dotted = e ? e->dottedName() : "";
    if (dotted.empty()) return "";
    auto dot = dotted.find('.');
    std::string head = dotted.substr(0, dot);
    auto it = Aliases.find(head);
    if (it == Aliases.end()) return "";
    std::string full = it->second + (dot == std::string::npos ? "" : dotted.substr(dot));
    return normalizePath(full);
  }

  static const char *conventionalModule(llvm::StringRef alias) {
    return llvm::StringSwitch<const char *>(alias)
        .Case("nl", "neuronxcc.nki.language")
        .Case("nisa", "neuronxcc.nki.isa")
        .Case("nki", "neuronxcc.nki")
        .Case("np", "numpy")
        .Default(nullptr);
  }

  static std::string normalizePath(std::string p) {
    auto replacePrefix = [&](std::string_view from, std::string_view to) {
      if (p.rfind(from, 0) == 0) p = std::string(to) + p.substr(from.size());
    };
    replacePrefix("nki.isa.", "nisa.");
    replacePrefix("nki.language.", "nl.");
    if (p == "nki.isa") p = "nisa";
    if (p == "nki.language") p = "nl";
    return p;
  }

  /// Module-level constants (TILE = 128, sizes computed from them) are visible
  /// inside kernels; anything with a call is left alone.
  void bindModuleConstants() {
    std::function<bool(const Expr *)> simple = [&](const Expr *e) {
      if (!e) return true;
      if (e->kind == ExprKind::Call || e->kind == ExprKind::Lambda) return false;
      if (e->base && !simple(e->base)) return false;
      for (auto *x : e->elts)
        if (!simple(x)) return false;
      return true;
    };
    for (const Stmt *s : M.body()) {
      if (s->kind == PyStmt::StmtKind::FunctionDef) Helpers[s->name] = s, Env[s->name] = Value::path("helper." + s->name);
      if (s->kind != PyStmt::StmtKind::Assign || !simple(s->value)) continue;
      Value v = eval(s->value);
      for (const Expr *t : s->targets) bind(t, v);
    }
  }

  // ----- parameters -----
  void bindParams(const Stmt *def) {
    for (const auto &p : def->params) {
      KernelParam kp;
      kp.name = p.name;
      const InputSpec *spec = nullptr;
      if (Inputs)
        for (const auto &s : *Inputs)
          if (s.name == p.name) spec = &s;
      if (Inputs && !spec && !p.defaultValue && !p.isVarArgs)
        diag(Diagnostic::Error, p.range,
             "no shape for kernel argument '" + p.name + "' in the inputs (" +
                 formatInputSpecs(*Inputs) + ")",
             Rule::Inputs);
      if (spec && spec->isScalar) {
        kp.scalar = spec->scalar;
        Env[p.name] = spec->isInt ? Value::integer(int64_t(spec->scalar)) : Value::floating(spec->scalar);
      } else if (spec || !p.defaultValue) {
        Tensor t;
        t.id = int(K.tensors.size());
        t.name = p.name;
        t.buffer = Buffer::SharedHBM;
        t.parDim = -1;
        t.isArgument = true;
        t.range = p.range;
        if (spec) {
          t.dtype = spec->dtype;
          for (int64_t d : spec->shape) t.shape.push_back(SymInt::known(d));
        } else {
          t.dtypeKnown = false;
        }
        kp.tensor = t.id;
        K.tensors.push_back(t);
        Env[p.name] = Value::tensorRef(kp.tensor);
        if (!spec) {
          unknownShape.insert(kp.tensor);
          K.tensors[kp.tensor].shapeKnown = false;
        }
      } else {
        Env[p.name] = eval(p.defaultValue);
      }
      K.params.push_back(kp);
    }
    if (Inputs)
      for (const auto &s : *Inputs) {
        bool found = false;
        for (const auto &p : def->params) found |= p.name == s.name;
        if (!found)
          diag(Diagnostic::Warning, def->headerRange,
               "input '" + s.name + "' is not a parameter of kernel '" + def->name + "'", Rule::Inputs);
      }
  }
  std::set<int> unknownShape;  // argument tensors whose rank is unknown

  // ----- statements -----
  Statement &newStmt(const Stmt *s, StmtKind kind, int parent) {
    Statement st;
    st.id = int(K.stmts.size());
    st.kind = kind;
    st.parent = parent;
    st.syntax = s;
    st.range = s->range;
    K.stmts.push_back(std::move(st));
    return K.stmts.back();
  }

  void block(const std::vector<const Stmt *> &stmts, std::vector<NodeRef> &out, int loop) {
    for (const Stmt *s : stmts) statement(s, out, loop);
  }

  static bool isNoOp(const Stmt *s) {
    return s->kind == PyStmt::StmtKind::Pass ||
           (s->kind == PyStmt::StmtKind::Expr && s->value && s->value->kind == ExprKind::Str && !s->value->isFString);
  }

  void statement(const Stmt *s, std::vector<NodeRef> &out, int loop) {
    using SK = PyStmt::StmtKind;
    if (isNoOp(s)) return;  // docstrings and traced ' end loop ' markers (an f-string runs its interpolations)
    if (s->kind == SK::Import || s->kind == SK::ImportFrom) {
      recordImport(s, Aliases);
      return;
    }
    if (s->kind == SK::FunctionDef) {
      Helpers[s->name] = s;
      Env[s->name] = Value::path("helper." + s->name);
      return;
    }
    if (s->kind == SK::For) {
      forLoop(s, out, loop);
      return;
    }
    if (s->kind == SK::If) {
      Value cond = eval(s->value);
      if (auto n = cond.number()) {
        // Trace-time condition: only the taken branch exists in the traced kernel.
        block(*n != 0 ? s->body : s->orelse, out, loop);
        return;
      }
    }
    StmtKind kind = StmtKind::Python;
    switch (s->kind) {
    case SK::Assign: case SK::AnnAssign: kind = StmtKind::Assign; break;
    case SK::AugAssign: kind = StmtKind::Assign; break;
    case SK::Assert: kind = StmtKind::Assert; break;
    case SK::Return: kind = StmtKind::Return; break;
    default: break;
    }
    Statement &st = newStmt(s, kind, loop);
    int id = st.id;
    out.push_back({false, id});
    Cur = &K.stmts[id];
    CurLoop = loop;
    collectNames(s, K.stmts[id]);
    switch (s->kind) {
    case SK::Assign: assign(s); break;
    case SK::AugAssign: augAssign(s); break;
    case SK::Expr: exprStatement(s); break;
    case SK::Assert: assertion(s); break;
    case SK::Return: ret(s); break;
    case SK::If:
      diag(Diagnostic::Warning, s->headerRange,
           "condition is not known at trace time; the branches are not analysed", Rule::TraceTime);
      break;
    case SK::While:
      diag(Diagnostic::Warning, s->headerRange, "while loops are not analysed", Rule::TraceTime);
      break;
    default: break;
    }
    Cur = nullptr;
  }

  static void recordImport(const Stmt *s, std::map<std::string, std::string> &aliases) {
    if (s->kind == PyStmt::StmtKind::Import) {
      for (auto &[name, alias] : s->imports) {
        std::string canon(canonicalModule(name));
        if (alias.empty()) {
          // `import neuronxcc.nki.language` binds `neuronxcc`; handle the common roots.
          std::string head = name.substr(0, name.find('.'));
          std::string headCanon(canonicalModule(head));
          aliases[head] = headCanon.empty() ? head : headCanon;
          if (head == "neuronxcc") aliases[head] = "neuronxcc";
        } else if (!canon.empty()) {
          aliases[alias] = canon;
        } else {
          aliases[alias] = name;
        }
      }
    } else {
      std::string mod(canonicalModule(s->name));
      for (auto &[name, alias] : s->imports) {
        if (name == "*") continue;
        std::string local = alias.empty() ? name : alias;
        std::string sub(canonicalModule(s->name + "." + name));
        if (!sub.empty()) aliases[local] = sub;           // from neuronxcc.nki import language as nl
        else if (!mod.empty()) aliases[local] = mod + "." + name;  // from neuronxcc.nki.language import par_dim
      }
    }
  }

public:
  static void recordModuleImports(const syntax::Module &m, std::map<std::string, std::string> &aliases) {
    for (const Stmt *s : m.body())
      if (s->kind == PyStmt::StmtKind::Import || s->kind == PyStmt::StmtKind::ImportFrom)
        recordImport(s, aliases);
  }
  static std::string canonicalOf(const Expr *e, const std::map<std::string, std::string> &aliases) {
    std::string dotted = e ? e->dottedName() : "";
    if (dotted.empty()) return "";
    auto dot = dotted.find('.');
    auto it = aliases.find(dotted.substr(0, dot));
    if (it == aliases.end()) return "";
    return normalizePath(it->second + (dot == std::string::npos ? "" : dotted.substr(dot)));
  }

private:
  void collectNames(const Stmt *s, Statement &st) {
    std::function<void(const Expr *, bool)> walk = [&](const Expr *e, bool binding) {
      if (!e) return;
      if (e->kind == ExprKind::Name) {
        auto &list = binding ? st.defines : st.uses;
        if (std::find(list.begin(), list.end(), e->name) == list.end()) list.push_back(e->name);
        return;
      }
      if (binding && (e->kind == ExprKind::Tuple || e->kind == ExprKind::List)) {
        for (auto *x : e->elts) walk(x, true);
        return;
      }
      if (binding) {  // t[idx] = ... / a.b = ... read t and the index
        walk(e, false);
        return;
      }
      walk(e->base, false);
      for (auto *x : e->elts) walk(x, false);
      for (auto &kw : e->keywords) walk(kw.value, false);
    };
    for (auto *t : s->targets) walk(t, s->kind == PyStmt::StmtKind::Assign || s->kind == PyStmt::StmtKind::AnnAssign);
    if (s->kind == PyStmt::StmtKind::AugAssign)
      for (auto *t : s->targets)
        if (t->kind == ExprKind::Name) st.defines.push_back(t->name);
    walk(s->value, false);
    walk(s->msg, false);
  }

  // ----- loops -----
  void forLoop(const Stmt *s, std::vector<NodeRef> &out, int parent) {
    const Expr *iter = s->value;
    Loop loop;
    loop.id = int(K.loops.size());
    loop.parent = parent;
    loop.depth = parent < 0 ? 0 : K.loops[parent].depth + 1;
    loop.syntax = s;
    loop.range = s->range;
    loop.headerRange = s->headerRange;
    loop.bodyRange = s->bodyRange;
    loop.iterRange = iter ? iter->range : ByteRange{};
    const Expr *target = s->targets.empty() ? nullptr : s->targets[0];
    loop.iv = target && target->kind == ExprKind::Name ? target->name : (target ? text(target) : "_");
    bool isRange = false;
    if (iter && iter->kind == ExprKind::Call) {
      std::string callee = canonical(iter->base);
      if (callee.empty() && iter->base && iter->base->kind == ExprKind::Name && iter->base->name == "range") {
        loop.kind = LoopKind::PyRange;
        isRange = true;
      } else if (isLoopIterator(callee)) {
        loop.kind = callee == "nl.affine_range" ? LoopKind::Affine
                    : callee == "nl.sequential_range" ? LoopKind::Sequential : LoopKind::Static;
        isRange = true;
      }
      if (isRange) {
        std::vector<Value> args;
        for (auto *a : iter->elts) args.push_back(eval(a));
        auto asSym = [&](const Value &v) {
          if (v.kind == Value::Int || v.kind == Value::Bool) return v.i;
          return SymInt::symbolic(v.text());
        };
        if (args.size() == 1) {
          loop.start = SymInt::known(0), loop.stop = asSym(args[0]), loop.step = SymInt::known(1);
        } else if (args.size() >= 2) {
          loop.start = asSym(args[0]), loop.stop = asSym(args[1]);
          loop.step = args.size() > 2 ? asSym(args[2]) : SymInt::known(1);
        } else {
          isRange = false;
        }
      }
    }
    if (!isRange) {
      // `for x in some_list:` and other Python iteration: opaque statement.
      Statement &st = newStmt(s, StmtKind::Python, parent);
      out.push_back({false, st.id});
      diag(Diagnostic::Warning, s->headerRange,
           "loop over '" + text(iter) + "' is not an NKI or range loop; its body is not analysed",
           Rule::TraceTime);
      return;
    }
    if (loop.start.isKnown() && loop.stop.isKnown() && loop.step.isKnown() && *loop.step.value != 0) {
      // 128-bit: stop - start of a range spanning int64 does not fit 64 bits.
      __int128 a = *loop.start.value, b = *loop.stop.value, st = *loop.step.value;
      __int128 n = st > 0 ? (b - a + st - 1) / st : (a - b - st - 1) / -st;
      if (n > std::numeric_limits<int64_t>::max()) {
        diag(Diagnostic::Error, s->headerRange, "loop trip count does not fit in 64 bits", Rule::TraceInt);
        n = 0;
      }
      loop.tripCount = SymInt::known(std::max<int64_t>(0, int64_t(n)));
    } else if (loop.start.isKnown() && *loop.start.value == 0 && loop.step.isKnown() &&
               *loop.step.value == 1) {
      loop.tripCount = loop.stop;
    } else {
      loop.tripCount = SymInt::symbolic("len(" + text(iter) + ")");
    }
    int id = loop.id;
    K.loops.push_back(loop);
    out.push_back({true, id});
    // The induction variable as an affine symbol: start + step * n.
    IndexVal iv;
    if (K.loops[id].start.isKnown() && K.loops[id].step.isKnown()) {
      iv.base.constant = *K.loops[id].start.value;
      iv.base.terms.push_back({id, *K.loops[id].step.value});
    } else {
      iv.base = Affine::unknown();
      iv.base.terms.push_back({id, 1});
    }
    Value ivVal = Value::index(iv);
    ivVal.s = K.loops[id].iv;
    if (target && target->kind == ExprKind::Name) Env[target->name] = ivVal;
    std::vector<NodeRef> body;
    block(s->body, body, id);
    K.loops[id].body = std::move(body);
  }

  // ----- assignment -----
  void bind(const Expr *target, const Value &v) {
    if (!target) return;
    if (target->kind == ExprKind::Name) {
      Env[target->name] = v;
      return;
    }
    if (target->kind == ExprKind::Tuple || target->kind == ExprKind::List) {
      for (size_t i = 0; i < target->elts.size(); ++i) {
        if (v.kind == Value::Seq && i < v.elts.size()) bind(target->elts[i], v.elts[i]);
        else if (v.kind == Value::Unknown && !v.s.empty())
          bind(target->elts[i], symbolicInt(v.s + "[" + std::to_string(i) + "]"));
        else bind(target->elts[i], Value::unknown(text(target->elts[i])));
      }
      return;
    }
  }

  static Value symbolicInt(std::string textual) { return Value::integer(SymInt::symbolic(std::move(textual))); }

  void assign(const Stmt *s) {
    if (!s->value) return;
    // Subscript targets write into an existing tensor.
    const Expr *target = s->targets.empty() ? nullptr : s->targets.back();
    bool writesTensor = target && target->kind == ExprKind::Subscript;
    Value v = eval(s->value, /*resultBuffer=*/std::nullopt, writesTensor ? target : nullptr);
    if (writesTensor) {
      Value dst = eval(target->base);
      if (dst.kind == Value::Tensor) {
        Access a = access(dst, target);
        a.isWrite = true;
        if (Cur->op && Cur->op->kind == OpKind::LoopReduce) {
          // dst = op(x, dst): the destination is read and accumulated into.
          a.isAccumulate = true;
          Cur->reads.push_back(a);
          Cur->reads.back().isWrite = false;
        }
        Cur->writes.push_back(a);
        if (Cur->kind == StmtKind::Assign) Cur->kind = StmtKind::Op;
        // Writing a fresh result into a tensor: the tile is the destination itself.
        if (Cur->definesTensor >= 0 && K.tensors[Cur->definesTensor].isTile) {
          discardTile(Cur->definesTensor);
          Cur->definesTensor = -1;
        }
      } else {
        diag(Diagnostic::Warning, target->range,
             "assignment into '" + text(target->base) + "', which is not a known tensor", Rule::TraceTime);
      }
      return;
    }
    if (v.kind == Value::Tensor && Cur->definesTensor >= 0) {
      Tensor &t = K.tensors[Cur->definesTensor];
      if (t.name.empty() && target && target->kind == ExprKind::Name) t.name = target->name;
    }
    for (const Expr *t : s->targets) bind(t, v);
  }

  /// A tile created while evaluating a call turned out to be written into an
  /// existing destination; it never exists.
  void discardTile(int id) {
    if (id == int(K.tensors.size()) - 1) K.tensors.pop_back();
    else K.tensors[id].name = "<discarded>";
  }

  void augAssign(const Stmt *s) {
    const Expr *target = s->targets.empty() ? nullptr : s->targets[0];
    if (!target) return;
    Value base = eval(target->kind == ExprKind::Subscript ? target->base : target);
    if (base.kind == Value::Tensor) {
      Value rhs = eval(s->value);
      (void)rhs;
      Access a = target->kind == ExprKind::Subscript ? access(base, target) : wholeAccess(base, target);
      Access r = a;
      a.isWrite = true;
      a.isAccumulate = s->op == "+" || s->op == "*" || s->op == "-";
      Cur->reads.push_back(r);
      Cur->writes.push_back(a);
      Cur->kind = StmtKind::Accumulate;
      if (Cur->definesTensor >= 0 && K.tensors[Cur->definesTensor].isTile) {
        discardTile(Cur->definesTensor);
        Cur->definesTensor = -1;
      }
      return;
    }
    // Trace-time integer update (`offset += 128`).
    Value rhs = eval(s->value);
    Value updated = binary(s->op, base, rhs, s->value->range);
    bind(target, updated);
  }

  void exprStatement(const Stmt *s) {
    Value v = eval(s->value);
    (void)v;
    if (Cur->op && Cur->op->kind == OpKind::Store) Cur->kind = StmtKind::Store;
    else if (Cur->op) Cur->kind = StmtKind::Op;
  }

  void assertion(const Stmt *s) {
    Value v = eval(s->value);
    if (auto n = v.number(); n && *n == 0) {
      std::string msg = s->msg ? eval(s->msg).s : "";
      diag(Diagnostic::Error, s->range,
           "assertion failed at trace time" + (msg.empty() ? std::string() : ": " + msg) +
               " (check the input shapes)",
           Rule::Assert);
    }
  }

  void ret(const Stmt *s) {
    Value v = eval(s->value);
    auto mark = [&](const Value &x) {
      if (x.kind == Value::Tensor) K.tensors[x.tensor].isOutput = true;
    };
    mark(v);
    if (v.kind == Value::Seq)
      for (auto &e : v.elts) mark(e);
  }

  // ----- accesses -----
  Access wholeAccess(const Value &t, const Expr *at) {
    if (t.view) {
      Access a = *t.view;
      a.range = at ? at->range : a.range;
      return a;
    }
    Access a;
    a.tensor = t.tensor;
    a.range = at ? at->range : ByteRange{};
    const Tensor &T = K.tensors[t.tensor];
    for (size_t d = 0; d < T.shape.size(); ++d) {
      IndexDim dim;
      dim.full = true;
      a.dims.push_back(dim);
      if (int(d) >= T.blockDims()) a.tileShape.push_back(T.shape[d].value.value_or(0));
    }
    a.exact = !unknownShape.count(t.tensor);
    return a;
  }

  /// Builds the access of `t[subscript]` (t may itself be a view).
  Access access(const Value &t, const Expr *sub) {
    Access a;
    a.tensor = t.tensor;
    a.range = sub->range;
    if (t.view) {  // subscripting a view: keep the view, mark inexact
      a = *t.view;
      a.range = sub->range;
      a.exact = false;
      return a;
    }
    const Tensor &T = K.tensors[t.tensor];
    std::vector<const Expr *> items(sub->elts.begin(), sub->elts.end());
    if (items.size() == 1 && items[0] && items[0]->kind == ExprKind::Tuple)
      items = std::vector<const Expr *>(items[0]->elts.begin(), items[0]->elts.end());
    size_t rank = T.shape.size();
    bool rankKnown = !unknownShape.count(t.tensor);
    int ellipsisAt = -1;
    for (size_t i = 0; i < items.size(); ++i)
      if (items[i] && items[i]->kind == ExprKind::Ellipsis) ellipsisAt = int(i);
    size_t explicitCount = items.size() - (ellipsisAt >= 0 ? 1 : 0);
    if (!rankKnown) rank = std::max(rank, explicitCount);
    if (rankKnown && explicitCount > rank) {
      diag(Diagnostic::Error, sub->range,
           llvm::formatv("too many indices for tensor '{0}' of rank {1}", T.name, rank).str(),
           Rule::IndexRank);
      a.exact = false;
    }
    std::vector<IndexDim> dims;
    int basicAxis = 0;
    int advancedRank = 0;
    auto fullDim = [&](size_t d) {
      IndexDim dim;
      dim.full = true;
      if (d < T.shape.size()) {
        int64_t ext = T.shape[d].value.value_or(0);
        if (ext > 0) dim.aranges.push_back({basicAxis, ext, 1});
        else a.exact = false;
      }
      dim.base = Affine::constantOf(0);
      ++basicAxis;
      return dim;
    };
    for (size_t i = 0; i < items.size(); ++i) {
      const Expr *it = items[i];
      if (int(i) == ellipsisAt) {
        size_t fill = rank > explicitCount ? rank - explicitCount : 0;
        for (size_t k = 0; k < fill; ++k) dims.push_back(fullDim(dims.size()));
        continue;
      }
      if (it && it->kind == ExprKind::Slice) {
        a.usesBasic = true;
        IndexDim dim;
        Value lo = it->elts[0] ? eval(it->elts[0]) : Value::integer(0);
        Value hi = it->elts[1] ? eval(it->elts[1]) : Value();
        Value st = it->elts[2] ? eval(it->elts[2]) : Value::integer(1);
        size_t d = dims.size();
        if (!it->elts[1] && d < T.shape.size()) hi = Value::integer(T.shape[d]);
        auto loI = lo.asIndex(), hiI = hi.asIndex();
        int64_t step = st.isKnownInt() ? *st.i.value : 1;
        if (loI && hiI && loI->aranges.empty() && hiI->aranges.empty()) {
          Affine diff = hiI->base;
          diff.add(loI->base, -1);
          dim.base = loI->base;
          if (diff.isConstant() && step > 0) {
            dim.aranges.push_back({basicAxis, (diff.constant + step - 1) / step, step});
          } else if (!diff.known) {
            a.exact = false;  // symbolic size (input shapes unknown): keep the axis, extent unknown
            dim.aranges.push_back({basicAxis, 0, step});
          } else {
            diag(Diagnostic::Error, it->range,
                 "slice '" + text(it) + "' does not have a constant size", Rule::SliceSize);
            a.exact = false;
          }
        } else {
          dim.base = Affine::unknown();
          a.exact = false;
        }
        ++basicAxis;
        dims.push_back(dim);
        continue;
      }
      Value v = it ? eval(it) : Value::none();
      if (v.kind == Value::None) continue;  // newaxis: no tensor dimension
      if (auto idx = v.asIndex()) {
        IndexDim dim;
        dim.base = idx->base;
        dim.aranges = idx->aranges;
        if (!idx->aranges.empty()) {
          a.usesAdvanced = true;
          advancedRank = std::max(advancedRank, idx->rank);
        }
        if (!idx->base.known) a.exact = false;
        dims.push_back(dim);
        continue;
      }
      IndexDim dim;
      dim.base = Affine::unknown();
      a.exact = false;
      dims.push_back(dim);
    }
    while (dims.size() < rank) dims.push_back(fullDim(dims.size()));
    // Tile shape: advanced -> the broadcast of the arange axes (numpy right-aligned);
    // basic -> the slice extents in order.
    if (a.usesAdvanced) {
      a.tileShape.assign(advancedRank, 1);
      for (auto &dim : dims)
        for (auto &ar : dim.aranges) {
          // Align ranks: an arange of lower rank broadcasts from the right.
          if (ar.axis < advancedRank) a.tileShape[ar.axis] = std::max(a.tileShape[ar.axis], ar.extent);
        }
    } else {
      for (auto &dim : dims)
        for (auto &ar : dim.aranges) {
          if (int(a.tileShape.size()) <= ar.axis) a.tileShape.resize(ar.axis + 1, 1);
          a.tileShape[ar.axis] = ar.extent;
        }
    }
    if (a.tileShape.empty()) a.tileShape.push_back(1);
    a.dims = std::move(dims);
    if (!rankKnown || (a.usesBasic && a.usesAdvanced)) a.exact = false;
    return a;
  }

  // ----- expressions -----
  /// Evaluates an expression. NKI calls record reads in the current statement
  /// and return their result tile. `dest` is the subscript being assigned, so
  /// the result shape of e.g. nl.load can be checked against it later.
  Value eval(const Expr *e, std::optional<Buffer> resultBuffer = std::nullopt,
             const Expr *dest = nullptr) {
    if (!e) return Value::none();
    switch (e->kind) {
    case ExprKind::Int: return Value::integer(e->intValue);
    case ExprKind::Float: return Value::floating(e->floatValue);
    case ExprKind::Bool: return Value::boolean(e->boolValue);
    case ExprKind::None: return Value::none();
    case ExprKind::Ellipsis: { Value v; v.kind = Value::Ellipsis; return v; }
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
      if (e->name == "range" || e->name == "len" || e->name == "min" || e->name == "max" ||
          e->name == "int" || e->name == "float" || e->name == "tuple" || e->name == "abs" ||
          e->name == "print" || e->name == "isinstance" || e->name == "list")
        return Value::path("builtins." + e->name);
      // The usual module aliases, used but never imported (AccelOpt stores kernels that way and its
      // harness prepends the imports): CPython stops with a NameError, so nothing here is modelled.
      if (const char *module = conventionalModule(e->name)) {
        if (ReportedMissingImports.insert(e->name).second)
          diag(Diagnostic::Error, e->range,
               "name '" + e->name + "' is not defined: the file does not import it (add `import " + module + " as " +
                   e->name + "`)",
               Rule::Imports);
      }
      return Value::unknown(e->name);
    }
    case ExprKind::Tuple: case ExprKind::List: {
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
      return Value::unknown(text(e));
    }
    case ExprKind::Compare: return compare(e);
    case ExprKind::IfExp: {
      Value c = eval(e->elts[0]);
      if (auto n = c.number()) return eval(*n != 0 ? e->elts[1] : e->elts[2]);
      eval(e->elts[1]);
      eval(e->elts[2]);
      return Value::unknown(text(e));
    }
    default:
      return Value::unknown(text(e));
    }
  }

  Value compare(const Expr *e) {
    std::vector<Value> vals;
    for (auto *x : e->elts) vals.push_back(eval(x));
    bool result = true;
    for (size_t i = 0; i + 1 < vals.size() && i < e->ops.size(); ++i) {
      auto eq = equalValues(vals[i], vals[i + 1]);
      const std::string &op = e->ops[i];
      std::optional<bool> r;
      if (op == "==" || op == "is") r = eq;
      else if (op == "!=" || op == "is not") { if (eq) r = !*eq; }
      else {
        auto a = vals[i].number(), b = vals[i + 1].number();
        if (a && b) {
          if (op == "<") r = *a < *b;
          else if (op == "<=") r = *a <= *b;
          else if (op == ">") r = *a > *b;
          else if (op == ">=") r = *a >= *b;
        } else if (vals[i].kind == Value::Index || vals[i + 1].kind == Value::Index) {
          // A mask predicate over aranges/loop variables: a compile-time mask value.
          Value m = Value::path("mask");
          m.s = "mask";
          return m;
        }
      }
      if (!r) return Value::unknown(text(e));
      result = result && *r;
    }
    return Value::boolean(result);
  }

  std::optional<bool> equalValues(const Value &a, const Value &b) {
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
    if (a.kind == Value::Path && b.kind == Value::Path) return a.s == b.s;
    return std::nullopt;
  }

  Value binary(const std::string &op, const Value &l, const Value &r, ByteRange range,
               std::string textual = "") {
    if (textual.empty()) textual = "(" + l.text() + " " + op + " " + r.text() + ")";
    // Tile arithmetic lowers to nl.* ops (operator overloads).
    if (l.kind == Value::Tensor || r.kind == Value::Tensor) {
      static const std::map<std::string, std::string> ops = {
          {"+", "nl.add"}, {"-", "nl.subtract"}, {"*", "nl.multiply"}, {"/", "nl.divide"},
          {"**", "nl.power"}};
      auto it = ops.find(op);
      const OpInfo *info = it != ops.end() ? lookupOp(it->second) : nullptr;
      if (l.kind == Value::Tensor) readOperand(l, nullptr);
      if (r.kind == Value::Tensor) readOperand(r, nullptr);
      if (!info) return Value::unknown(textual);
      if (Cur && !Cur->op) { Cur->op = info; Cur->callee = std::string(info->name); }
      const Value &shaped = l.kind == Value::Tensor ? l : r;
      return newTile(info, tileShapeOf(shaped), Buffer::SBUF, dtypeOf(shaped), range);
    }
    if (op == "+" && l.kind == Value::Seq && r.kind == Value::Seq) {
      std::vector<Value> e = l.elts;
      e.insert(e.end(), r.elts.begin(), r.elts.end());
      return Value::seq(e, l.isList);
    }
    if (op == "+" && l.kind == Value::Str && r.kind == Value::Str) return Value::str(l.s + r.s);
    // Integer/affine arithmetic.
    auto li = l.asIndex(), ri = r.asIndex();
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

  Value attribute(const Expr *e) {
    std::string canon = canonical(e);
    if (!canon.empty()) {
      if (const NamedConstant *c = lookupConstant(canon)) {
        if (c->kind == NamedConstant::Int) return Value::integer(c->value);
      }
      return Value::path(canon);
    }
    Value base = eval(e->base);
    if (base.kind == Value::Tensor) {
      const Tensor &t = K.tensors[base.tensor];
      if (e->name == "shape") {
        if (base.view) {
          std::vector<Value> dims;
          for (int64_t d : base.view->tileShape) dims.push_back(Value::integer(d));
          return Value::seq(dims);
        }
        if (unknownShape.count(base.tensor)) {
          Value v = Value::unknown(t.name + ".shape");
          return v;
        }
        std::vector<Value> dims;
        for (auto &d : t.shape) dims.push_back(Value::integer(d));
        return Value::seq(dims);
      }
      if (e->name == "dtype") {
        if (!t.dtypeKnown) return Value::unknown(t.name + ".dtype");
        return Value::path("dtype." + std::string(dtypeName(t.dtype)));
      }
      if (e->name == "reshape" || e->name == "broadcast_to" || e->name == "view") {
        Value m = base;
        m.kind = Value::Method;
        m.s = e->name;
        return m;
      }
    }
    if (base.kind == Value::Seq && e->name == "count") return Value::unknown(text(e));
    return Value::unknown(text(e));
  }

  Value subscript(const Expr *e) {
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
          if (lo.isKnownInt() && hi.isKnownInt()) {
            x.base = Affine::constantOf(*lo.i.value);
            x.aranges.push_back({i, *hi.i.value - *lo.i.value, 1});
          } else {
            x.base = Affine::unknown();
          }
        }
        grids.push_back(Value::index(x));
      }
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
      if (i.isKnownInt()) {
        int64_t k = *i.i.value;
        if (k < 0) k += base.elts.size();
        if (k >= 0 && k < int64_t(base.elts.size())) return base.elts[k];
      }
    }
    if (base.kind == Value::Unknown && !base.s.empty() && e->elts.size() == 1) {
      Value i = eval(e->elts[0]);
      if (i.isKnownInt()) return symbolicInt(base.s + "[" + i.i.text + "]");
    }
    for (auto *x : e->elts) eval(x);
    return Value::unknown(text(e));
  }

  // ----- calls -----
  std::vector<Value> callArgs;

  /// CPython runs every call of a kernel when it is traced; a call that is neither NKI, numpy, math, a
  /// side-effect-free builtin nor a function of this file runs host code that accelopt neither evaluates
  /// nor analyses (a shell command in an f-string, a file read). Returns why, for the host-code rule.
  std::optional<std::string> hostCodeCall(const Value &fn, const Expr *e) const {
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

  Value call(const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest) {
    Value fn = eval(e->base);
    if (fn.kind == Value::Method) return methodCall(fn, e);
    if (auto why = hostCodeCall(fn, e)) diag(Diagnostic::Warning, e->base->range, std::move(*why), Rule::HostCode);
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
             "unknown NKI API '" + name + "'; its effects are not analysed", Rule::UnknownApi);
      for (auto *a : e->elts) eval(a);
      for (auto &kw : e->keywords) eval(kw.value);
      return Value::unknown(text(e));
    }
    return opCall(op, e, resultBuffer, dest);
  }

  Value builtinCall(const std::string &fn, const Expr *e) {
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

  /// Positional and keyword arguments matched to the op's parameters.
  std::vector<const Expr *> bindArgs(const OpInfo *op, const Expr *e) {
    std::vector<const Expr *> bound(op->params.size(), nullptr);
    for (size_t i = 0; i < e->elts.size(); ++i) {
      if (i < bound.size()) bound[i] = e->elts[i];
      else diag(Diagnostic::Warning, e->elts[i]->range,
                llvm::formatv("too many arguments to {0}", op->name).str(), Rule::CallArgs);
    }
    for (const auto &kw : e->keywords) {
      int idx = op->paramIndex(kw.name);
      if (idx < 0) {
        if (kw.name != "name" && kw.name != "lazy_initialization")
          diag(Diagnostic::Warning, kw.range,
               "unknown keyword '" + kw.name + "' for " + std::string(op->name), Rule::CallArgs);
        continue;
      }
      bound[idx] = kw.value;
    }
    return bound;
  }

  void readOperand(const Value &v, const Expr *at, std::string_view param = {}) {
    if (!Cur || v.kind != Value::Tensor) return;
    Access a = wholeAccess(v, at);
    a.param = std::string(param);
    Cur->reads.push_back(a);
  }

  std::vector<int64_t> tileShapeOf(const Value &v) const {
    if (v.kind != Value::Tensor) return {};
    if (v.view) return v.view->tileShape;
    const Tensor &t = K.tensors[v.tensor];
    std::vector<int64_t> s;
    for (size_t d = std::max(0, t.blockDims()); d < t.shape.size(); ++d) s.push_back(t.shape[d].value.value_or(0));
    return s;
  }

  DType dtypeOf(const Value &v) const {
    return v.kind == Value::Tensor ? K.tensors[v.tensor].dtype : DType::Float32;
  }

  Value newTile(const OpInfo *op, std::vector<int64_t> shape, Buffer buffer, DType dtype, ByteRange range) {
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

  std::optional<DType> dtypeValue(const Value &v) const {
    if (v.kind != Value::Path) return std::nullopt;
    std::string s = v.s;
    if (s.rfind("dtype.", 0) == 0) s = s.substr(6);
    return parseDType(s);
  }

  Value opCall(const OpInfo *op, const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest) {
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
             Rule::CallArgs);
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

  std::vector<int64_t> intList(const Value &v) const {
    std::vector<int64_t> out;
    if (v.kind != Value::Seq) return out;
    for (auto &x : v.elts) {
      if (x.kind == Value::Seq && x.s == "par_dim" && !x.elts.empty()) out.push_back(x.elts[0].i.value.value_or(0));
      else out.push_back(x.isKnownInt() ? *x.i.value : 0);
    }
    return out;
  }

  Value allocation(const OpInfo *op, const Expr *e, const Value &shapeVal, DType dtype, Buffer buffer,
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
      diag(Diagnostic::Warning, e->range, "shape of this tensor is not known at trace time", Rule::TraceTime);
    }
    if (!dtypeGiven) t.dtypeKnown = false;
    K.tensors.push_back(t);
    if (Cur) {
      Cur->kind = StmtKind::Alloc;
      Cur->definesTensor = t.id;
    }
    return Value::tensorRef(t.id);
  }

  Value methodCall(const Value &m, const Expr *e) {
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
};

bool isKernelDecorator(const Expr *d, const std::map<std::string, std::string> &aliases) {
  const Expr *callee = d->kind == ExprKind::Call ? d->base : d;
  std::string canon = KernelBuilder::canonicalOf(callee, aliases);
  if (canon.empty()) canon = callee ? callee->dottedName() : "";
  return canon == "nki.jit" || canon == "nki.baremetal" || canon == "nki.trace" ||
         canon == "nki.benchmark" || canon == "nki.simulate_kernel" || canon == "nki.compiler.skip_middle_end_transformations";
}

} // namespace

llvm::Expected<KernelFile> buildKernelFile(std::unique_ptr<syntax::SourceBuffer> source,
                                           const FrontEndOptions &options) {
  return buildKernelFile(syntax::Module::parse(std::move(source)), options);
}

llvm::Expected<KernelFile> buildKernelFile(std::unique_ptr<syntax::Module> module, const FrontEndOptions &options) {
  KernelFile file;
  std::string path = module->source().path().str();
  file.module = std::move(module);
  const syntax::Module &m = *file.module;
  if (!m.errors().empty()) {
    std::string msg;
    for (const auto &err : m.errors()) {
      if (!msg.empty()) msg += "\n";
      msg += m.source().location(err.offset) + ": error: " + err.message;
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  }
  std::map<std::string, std::string> aliases;
  KernelBuilder::recordModuleImports(m, aliases);
  bool foundAny = false;
  for (const Stmt *fn : m.functions()) {
    bool isKernel = false;
    for (const Expr *d : fn->decorators) isKernel |= isKernelDecorator(d, aliases);
    if (!isKernel) continue;
    foundAny = true;
    if (!options.kernelName.empty() && fn->name != options.kernelName) continue;
    KernelBuilder builder(m, aliases, options.inputs);
    file.kernels.push_back(builder.build(fn));
  }
  if (!foundAny)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ":1:1: error: no @nki.jit kernel in this file (is it an NKI kernel?)");
  if (file.kernels.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ":1:1: error: no kernel named '" + options.kernelName +
                                       "' in this file");
  return file;
}

llvm::Expected<KernelFile> loadKernelFile(llvm::StringRef path, const FrontEndOptions &options) {
  auto source = syntax::SourceBuffer::fromFile(path);
  if (!source) return source.takeError();
  return buildKernelFile(std::move(*source), options);
}

} // namespace accelopt::nki
