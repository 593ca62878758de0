// The interpreter: runs the kernel's trace-time Python concretely (loops are
// executed, helper functions called) and performs every NKI call on fp32 data.
//
// Index expressions stay affine: an index value is c + sum(coeff[a] * k[a]) over
// the axes of a broadcast grid, so every access is a strided region (offset plus
// one stride per tile axis) and gathers/scatters are strided copies.
#include "NKI/PyInt.h"
#include "Interp/Interpreter.h"

#include "Interp/DTypeRounding.h"
#include "Interp/Random.h"
#include "Interp/TileOps.h"
#include "Interp/Uninit.h"
#include "NKI/OpTable.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cblas.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace accelopt::interp {

using syntax::Expr;
using syntax::ExprKind;
using syntax::Stmt;
namespace PyStmt = syntax;

namespace {

/// A runtime failure at a source position; converted to llvm::Error at the API boundary.
struct RuntimeError {
  uint32_t offset;
  std::string message;
};

[[noreturn]] void fail(const syntax::ByteRange &r, std::string msg) { throw RuntimeError{r.begin, std::move(msg)}; }

struct Tensor {
  NDArray data;
  nki::Buffer buffer = nki::Buffer::SBUF;
  std::string name;
  int parDim = 0;                   // -1 for HBM
  std::vector<uint32_t> stamps;     // race detection: affine iteration serial of the last write
  std::shared_ptr<Tensor> viewed;   // a reshape view: the tensor whose storage `data` borrows
};
using TensorPtr = std::shared_ptr<Tensor>;

/// c + sum(coeff[a] * k[a]), k[a] in [0, extent[a]); rank = extent.size().
struct IndexArr {
  int64_t c = 0;
  llvm::SmallVector<int64_t, 4> coeff;
  llvm::SmallVector<int64_t, 4> extent;
  int rank() const { return int(extent.size()); }
  bool scalar() const {
    for (int64_t x : coeff)
      if (x) return false;
    return true;
  }
  /// Right-aligned numpy broadcast to `r` axes.
  IndexArr widened(int r) const {
    IndexArr o;
    o.c = c;
    int pad = r - rank();
    o.coeff.assign(pad, 0);
    o.extent.assign(pad, 1);
    o.coeff.append(coeff.begin(), coeff.end());
    o.extent.append(extent.begin(), extent.end());
    return o;
  }
  int64_t minValue() const {
    int64_t v = c;
    for (int a = 0; a < rank(); ++a) v += std::min<int64_t>(0, coeff[a] * (extent[a] - 1));
    return v;
  }
  int64_t maxValue() const {
    int64_t v = c;
    for (int a = 0; a < rank(); ++a) v += std::max<int64_t>(0, coeff[a] * (extent[a] - 1));
    return v;
  }
};

/// A region of a tensor as a strided tile: element(k) = offset + sum(stride[a] * k[a]).
struct View {
  TensorPtr tensor;
  int64_t offset = 0;
  llvm::SmallVector<int64_t, 6> stride;
  llvm::SmallVector<int64_t, 6> extent;
  // Per index dimension, for bounds checks that respect masks.
  struct DimIndex { IndexArr idx; int64_t size; };
  std::vector<DimIndex> dims;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t e : extent) n *= e;
    return n;
  }
  std::vector<int64_t> shape() const { return {extent.begin(), extent.end()}; }
};

/// A conjunction of affine constraints `expr >= 0` over the tile axes.
struct Mask {
  std::vector<IndexArr> geZero;
  /// For a row of the tile (outer coordinates `k`, last axis free), the allowed
  /// range [lo, hi) of the last coordinate: each constraint is affine in it.
  std::pair<int64_t, int64_t> rowRange(const int64_t *k, int rank, int64_t inner) const {
    int64_t lo = 0, hi = inner;
    for (const auto &g : geZero) {
      int64_t base = g.c, c = 0;
      int off = rank - g.rank();
      for (int a = 0; a < g.rank(); ++a) {
        int ax = a + off;
        if (ax < 0 || !g.coeff[a]) continue;
        if (ax == rank - 1) c = g.coeff[a];
        else base += g.coeff[a] * k[ax];
      }
      if (c == 0) {
        if (base < 0) return {0, 0};
      } else if (c > 0) {
        lo = std::max(lo, base >= 0 ? 0 : (-base + c - 1) / c);   // j >= ceil(-base / c)
      } else {
        if (base < 0) return {0, 0};
        hi = std::min(hi, base / -c + 1);                          // j <= floor(base / -c)
      }
    }
    return {lo, std::max(lo, hi)};
  }
  bool allows(const int64_t *k, int rank) const {
    for (const auto &g : geZero) {
      int64_t v = g.c;
      int off = rank - g.rank();
      for (int a = 0; a < g.rank(); ++a) {
        int ax = a + off;
        if (ax >= 0 && g.coeff[a]) v += g.coeff[a] * k[ax];
      }
      if (v < 0) return false;
    }
    return true;
  }
};

struct Value;
using ValueList = std::vector<Value>;

struct Value {
  enum Kind : uint8_t {
    None, Bool, Int, Float, Str, Tuple, List, Dict, Path, PyFunc, TensorV, ViewV, Index, SliceV, EllipsisV,
    MaskV, HostArray, Method, ParDim, RangeV,
  } kind = None;
  int64_t i = 0;
  double f = 0;
  std::string s;                       // Str; Path (canonical dotted name); Method name
  std::shared_ptr<ValueList> elts;     // Tuple/List/Dict(k,v,k,v)/SliceV(lo,hi,step)/RangeV(start,stop,step)
  TensorPtr tensor;                    // TensorV / Method receiver
  std::shared_ptr<View> view;          // ViewV
  IndexArr idx;                        // Index
  std::shared_ptr<Mask> mask;          // MaskV
  std::shared_ptr<NDArray> host;       // HostArray (numpy constants)
  const Stmt *fn = nullptr;            // PyFunc
  nki::LoopKind loopKind = nki::LoopKind::PyRange;  // RangeV

  static Value none() { return {}; }
  static Value integer(int64_t v) { Value x; x.kind = Int; x.i = v; return x; }
  static Value boolean(bool b) { Value x; x.kind = Bool; x.i = b; return x; }
  static Value number(double v) { Value x; x.kind = Float; x.f = v; return x; }
  static Value str(std::string v) { Value x; x.kind = Str; x.s = std::move(v); return x; }
  static Value path(std::string p) { Value x; x.kind = Path; x.s = std::move(p); return x; }
  static Value seq(ValueList e, Kind k = Tuple) { Value x; x.kind = k; x.elts = std::make_shared<ValueList>(std::move(e)); return x; }
  static Value ofTensor(TensorPtr t) { Value x; x.kind = TensorV; x.tensor = std::move(t); return x; }
  static Value ofView(View v) { Value x; x.kind = ViewV; x.view = std::make_shared<View>(std::move(v)); return x; }
  static Value ofIndex(IndexArr a) {
    if (a.scalar()) return integer(a.c);
    Value x; x.kind = Index; x.idx = std::move(a); return x;
  }

  bool isNumber() const { return kind == Int || kind == Bool || kind == Float; }
  bool isIntLike() const { return kind == Int || kind == Bool; }
  double num() const { return kind == Float ? f : double(i); }
  bool isSeq() const { return kind == Tuple || kind == List; }
  bool isTile() const { return kind == TensorV || kind == ViewV; }
};

/// Iteration identity for race detection: each iteration of an affine loop gets a
/// serial; a serial knows its loop instance, iteration and enclosing serial.
struct AffineFrame {
  uint32_t instance;
  int64_t iteration;
  uint32_t parent;
};

class Interpreter {
public:
  Interpreter(const nki::KernelFile &file, const nki::Kernel &kernel, const RunOptions &options)
      : File(file), M(*file.module), K(kernel), Opts(options) {
    Frames.push_back({0, 0, 0});  // serial 0: outside every affine loop
  }

  RunResult run(std::vector<KernelArg> args) {
    Start = std::chrono::steady_clock::now();
    Scope globals;
    for (const Stmt *s : M.body()) {
      if (s->kind == PyStmt::StmtKind::Import || s->kind == PyStmt::StmtKind::ImportFrom) importInto(s, globals);
      else if (s->kind == PyStmt::StmtKind::FunctionDef) { Value f; f.kind = Value::PyFunc; f.fn = s; globals[s->name] = f; }
    }
    // Module-level constants (no calls, so nothing with side effects runs).
    for (const Stmt *s : M.body())
      if (s->kind == PyStmt::StmtKind::Assign && simpleExpr(s->value)) {
        Env = &globals;
        try {
          Value v = eval(s->value);
          for (auto *t : s->targets) bind(t, v);
        } catch (const RuntimeError &) {
        }
      }
    Globals = &globals;
    std::vector<Value> argv;
    const Stmt *def = K.def;
    Scope local;
    for (size_t p = 0; p < def->params.size(); ++p) {
      const auto &param = def->params[p];
      const KernelArg *arg = nullptr;
      for (auto &a : args)
        if (a.name == param.name) arg = &a;
      if (!arg && p < args.size() && args[p].name.empty()) arg = &args[p];
      if (!arg) {
        if (param.defaultValue) {
          Env = &globals;
          local[param.name] = eval(param.defaultValue);
          continue;
        }
        fail(param.range, "no value for kernel argument '" + param.name + "'");
      }
      if (arg->array) {
        auto t = std::make_shared<Tensor>();
        t->data = std::move(*const_cast<KernelArg *>(arg)->array);
        t->buffer = nki::Buffer::SharedHBM;
        t->parDim = -1;
        t->name = param.name;
        local[param.name] = Value::ofTensor(t);
      } else {
        local[param.name] = arg->isInt ? Value::integer(int64_t(arg->scalar)) : Value::number(arg->scalar);
      }
    }
    Env = &local;
    Value ret = Value::none();
    try {
      execBlock(def->body);
    } catch (ReturnSignal &r) {
      ret = std::move(r.value);
    }
    RunResult result;
    auto collect = [&](const Value &v) {
      if (v.kind == Value::TensorV) {
        if (auto bad = firstUninit(v.tensor->data.data(), v.tensor->data.numel()))
          Warnings.push_back(File.source().location(def->range.begin) +
                             llvm::formatv(": warning: output '{0}' has never-written elements (first at flat index {1})",
                                           v.tensor->name, *bad).str());
        auto copy = v.tensor->data.clone();
        if (!copy) fail(def->range, llvm::toString(copy.takeError()));
        result.outputs.push_back(std::move(*copy));
      }
    };
    if (ret.isSeq()) for (auto &e : *ret.elts) collect(e);
    else collect(ret);
    result.warnings = std::move(Warnings);
    Stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
    result.stats = Stats;
    return result;
  }

private:
  using Scope = std::unordered_map<std::string, Value>;
  const nki::KernelFile &File;
  const syntax::Module &M;
  const nki::Kernel &K;
  const RunOptions &Opts;
  Scope *Env = nullptr;
  Scope *Globals = nullptr;
  std::vector<std::string> Warnings;
  RunStats Stats;
  std::chrono::steady_clock::time_point Start;
  std::vector<AffineFrame> Frames;
  uint32_t CurrentSerial = 0;
  uint32_t NextInstance = 1;
  int CallDepth = 0;

  struct ReturnSignal { Value value; };
  struct BreakSignal {};
  struct ContinueSignal {};

  std::string text(const Expr *e) const { return e ? M.text(e).str() : ""; }

  static bool simpleExpr(const Expr *e) {
    if (!e) return true;
    if (e->kind == ExprKind::Call || e->kind == ExprKind::Lambda) return false;
    if (e->base && !simpleExpr(e->base)) return false;
    for (auto *x : e->elts)
      if (!simpleExpr(x)) return false;
    return true;
  }

  // ----- names and imports -----
  void importInto(const Stmt *s, Scope &scope) {
    if (s->kind == PyStmt::StmtKind::Import) {
      for (auto &[name, alias] : s->imports) {
        std::string canon(nki::canonicalModule(name));
        if (!alias.empty()) scope[alias] = Value::path(canon.empty() ? name : canon);
        else {
          std::string head = name.substr(0, name.find('.'));
          std::string hc(nki::canonicalModule(head));
          scope[head] = Value::path(hc.empty() ? head : hc);
        }
      }
      return;
    }
    std::string mod(nki::canonicalModule(s->name));
    for (auto &[name, alias] : s->imports) {
      if (name == "*") continue;
      std::string local = alias.empty() ? name : alias;
      std::string sub(nki::canonicalModule(s->name + "." + name));
      if (!sub.empty()) scope[local] = Value::path(sub);
      else scope[local] = Value::path((mod.empty() ? s->name : mod) + "." + name);
    }
  }

  static std::string normalizePath(std::string p) {
    auto rep = [&](std::string_view from, std::string_view to) {
      if (p.rfind(from, 0) == 0) p = std::string(to) + p.substr(from.size());
    };
    rep("neuronxcc.nki.language.", "nl.");
    rep("neuronxcc.nki.isa.", "nisa.");
    rep("neuronxcc.nki.", "nki.");
    rep("nki.isa.", "nisa.");
    rep("nki.language.", "nl.");
    rep("numpy.", "np.");
    if (p == "nki.isa") p = "nisa";
    if (p == "nki.language") p = "nl";
    return p;
  }

  Value lookup(const Expr *e) {
    auto it = Env->find(e->name);
    if (it != Env->end()) return it->second;
    if (Globals && Env != Globals) {
      auto g = Globals->find(e->name);
      if (g != Globals->end()) return g->second;
    }
    static const char *builtins[] = {"range", "len", "min", "max", "int", "float", "abs", "tuple", "list",
                                     "print", "isinstance", "bool", "str", "enumerate", "zip", "sum", "round"};
    for (const char *b : builtins)
      if (e->name == b) return Value::path(std::string("builtins.") + b);
    fail(e->range, "name '" + e->name + "' is not defined");
  }

  void chargeValue(uint64_t count, uint64_t itemBytes, llvm::StringRef what, const syntax::ByteRange &at) {
    if (llvm::Error err = checkValueBytes(count, itemBytes, what)) fail(at, llvm::toString(std::move(err)));
  }

  // ----- statements -----
  void checkTime(const syntax::ByteRange &r) {
    if (Opts.timeoutSeconds <= 0) return;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
    if (elapsed > Opts.timeoutSeconds)
      fail(r, llvm::formatv("timed out after {0:F1} s (--timeout {1})", elapsed, Opts.timeoutSeconds).str());
  }

  void execBlock(const std::vector<const Stmt *> &stmts) {
    for (const Stmt *s : stmts) exec(s);
  }

  void exec(const Stmt *s) {
    using SK = PyStmt::StmtKind;
    switch (s->kind) {
    case SK::Expr: {
      // A docstring does nothing; an f-string runs its interpolations when CPython traces the kernel.
      if (s->value && s->value->kind == ExprKind::Str && !s->value->isFString) return;
      eval(s->value);
      return;
    }
    case SK::Assign: {
      const Expr *target = s->targets.back();
      if (target->kind == ExprKind::Subscript) {
        assignInto(target, s->value, /*accumulate=*/nullptr);
        for (size_t t = 0; t + 1 < s->targets.size(); ++t) bind(s->targets[t], eval(s->targets.back()));
        return;
      }
      Value v = eval(s->value);
      for (auto *t : s->targets) bind(t, v);
      return;
    }
    case SK::AnnAssign: return;
    case SK::AugAssign: return augAssign(s);
    case SK::For: return forLoop(s);
    case SK::While: {
      int64_t guard = 0;
      while (truthy(eval(s->value), s->value)) {
        if (++guard > 100000000) fail(s->headerRange, "while loop did not terminate");
        checkTime(s->headerRange);
        try { execBlock(s->body); } catch (BreakSignal &) { break; } catch (ContinueSignal &) {}
      }
      return;
    }
    case SK::If:
      if (truthy(eval(s->value), s->value)) execBlock(s->body);
      else execBlock(s->orelse);
      return;
    case SK::Return: throw ReturnSignal{s->value ? eval(s->value) : Value::none()};
    case SK::Assert: {
      if (!truthy(eval(s->value), s->value)) {
        std::string msg = s->msg ? toText(eval(s->msg)) : "";
        fail(s->range, "assertion failed" + (msg.empty() ? std::string() : ": " + msg));
      }
      return;
    }
    case SK::Pass: return;
    case SK::Break: throw BreakSignal{};
    case SK::Continue: throw ContinueSignal{};
    case SK::FunctionDef: { Value f; f.kind = Value::PyFunc; f.fn = s; (*Env)[s->name] = f; return; }
    case SK::Import: case SK::ImportFrom: importInto(s, *Env); return;
    case SK::Other:
      fail(s->range, "statement '" + s->name + "' is not supported by the interpreter");
    }
  }

  void bind(const Expr *target, const Value &v) {
    if (target->kind == ExprKind::Name) {
      if (v.kind == Value::TensorV && (v.tensor->name.empty() || v.tensor->name.rfind("tile", 0) == 0))
        v.tensor->name = target->name;  // name tensors after their Python variable for messages
      (*Env)[target->name] = v;
      return;
    }
    if (target->kind == ExprKind::Tuple || target->kind == ExprKind::List) {
      if (!v.isSeq() || v.elts->size() != target->elts.size())
        fail(target->range, llvm::formatv("cannot unpack {0} into {1} names", describe(v), target->elts.size()).str());
      for (size_t i = 0; i < target->elts.size(); ++i) bind(target->elts[i], (*v.elts)[i]);
      return;
    }
    fail(target->range, "cannot assign to '" + text(target) + "'");
  }

  static bool isRangeCall(const Expr *call) {
    llvm::StringRef callee = call->base ? llvm::StringRef(call->base->dottedName()) : "";
    return callee == "range" || callee.endswith(".affine_range") || callee.endswith(".sequential_range") ||
           callee.endswith(".static_range");
  }

  /// A body of `pass`, docstrings and loops over ranges with such bodies does nothing when run.
  static bool hasNoEffect(const std::vector<const Stmt *> &body) {
    for (const Stmt *s : body) {
      if (s->kind == PyStmt::StmtKind::Pass) continue;
      if (s->kind == PyStmt::StmtKind::Expr && s->value && s->value->kind == ExprKind::Str && !s->value->isFString)
        continue;
      // An inner loop over nl.*_range / range of plain names and numbers, itself without effect.
      if (s->kind == PyStmt::StmtKind::For && s->orelse.empty() && s->targets.size() == 1 &&
          s->targets[0]->kind == ExprKind::Name && s->value && s->value->kind == ExprKind::Call &&
          isRangeCall(s->value) &&
          std::all_of(s->value->elts.begin(), s->value->elts.end(), [](const Expr *a) {
            return a->kind == ExprKind::Int || a->kind == ExprKind::Name;
          }) &&
          hasNoEffect(s->body))
        continue;
      return false;
    }
    return true;
  }

  void forLoop(const Stmt *s) {
    Value it = eval(s->value);
    const Expr *target = s->targets[0];
    if (it.kind == Value::RangeV) {
      int64_t start = (*it.elts)[0].i, stop = (*it.elts)[1].i, step = (*it.elts)[2].i;
      if (step == 0) fail(s->value->range, "range step must not be zero");
      if (hasNoEffect(s->body)) {
        // Nothing to run, however many iterations (reliability report D5): only the loop variable
        // keeps its last value, as in Python. 128-bit: stop - start may not fit 64 bits.
        __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
        __int128 stride = step > 0 ? __int128(step) : -__int128(step);
        __int128 count = span > 0 ? (span + stride - 1) / stride : 0;
        if (count > 0) bind(target, Value::integer(int64_t(__int128(start) + (count - 1) * __int128(step))));
        return;
      }
      bool affine = it.loopKind == nki::LoopKind::Affine && Opts.detectRaces;
      uint32_t instance = affine ? NextInstance++ : 0;
      uint32_t outerSerial = CurrentSerial;
      int64_t n = 0;
      bool past = false;  // the next value would pass int64's end: the range is over
      for (int64_t v = start; !past && (step > 0 ? v < stop : v > stop); past = __builtin_add_overflow(v, step, &v), ++n) {
        checkTime(s->headerRange);
        if (affine) {
          Frames.push_back({instance, n, outerSerial});
          CurrentSerial = uint32_t(Frames.size() - 1);
        }
        bind(target, Value::integer(v));
        bool stop = false;
        try { execBlock(s->body); } catch (BreakSignal &) { stop = true; } catch (ContinueSignal &) {}
        CurrentSerial = outerSerial;
        if (stop) break;
      }
      return;
    }
    if (it.isSeq()) {
      for (const Value &v : *it.elts) {
        bind(target, v);
        bool stop = false;
        try { execBlock(s->body); } catch (BreakSignal &) { stop = true; } catch (ContinueSignal &) {}
        if (stop) break;
      }
      return;
    }
    fail(s->value->range, "cannot iterate over " + describe(it));
  }

  void augAssign(const Stmt *s) {
    const Expr *target = s->targets[0];
    if (target->kind == ExprKind::Subscript) {
      assignInto(target, s->value, &s->op);
      return;
    }
    Value cur = eval(target);
    if (cur.isTile()) {
      // `acc += nl.matmul(...)`: accumulate into the whole tile in place.
      View dst = cur.kind == Value::ViewV ? *cur.view : wholeView(cur.tensor);
      if (accumulateMatmulInPlace(dst, s->value, s->op)) return;
      LastMask.reset();
      Value rhs = eval(s->value);
      auto mask = std::move(LastMask);
      accumulateInto(dst, rhs, s->op, s->value->range, mask.get());
      return;
    }
    Value rhs = eval(s->value);
    bind(target, binary(s->op, cur, rhs, s->range));
  }

  // ----- expressions -----
  static std::string describe(const Value &v) {
    switch (v.kind) {
    case Value::None: return "None";
    case Value::Bool: case Value::Int: return "an int";
    case Value::Float: return "a float";
    case Value::Str: return "a string";
    case Value::Tuple: return "a tuple";
    case Value::List: return "a list";
    case Value::TensorV: case Value::ViewV: return "a tensor";
    case Value::Index: return "an index expression";
    case Value::Path: return "'" + v.s + "'";
    default: return "a value";
    }
  }

  std::string toText(const Value &v) {
    switch (v.kind) {
    case Value::Str: return v.s;
    case Value::Int: return std::to_string(v.i);
    case Value::Bool: return v.i ? "True" : "False";
    case Value::Float: return llvm::formatv("{0}", v.f).str();
    case Value::None: return "None";
    case Value::Tuple: case Value::List: {
      std::string out = v.kind == Value::Tuple ? "(" : "[";
      for (size_t i = 0; i < v.elts->size(); ++i) out += (i ? ", " : "") + toText((*v.elts)[i]);
      if (v.kind == Value::Tuple && v.elts->size() == 1) out += ",";
      return out + (v.kind == Value::Tuple ? ")" : "]");
    }
    default: return describe(v);
    }
  }

  bool truthy(const Value &v, const Expr *at) {
    switch (v.kind) {
    case Value::None: return false;
    case Value::Bool: case Value::Int: return v.i != 0;
    case Value::Float: return v.f != 0;
    case Value::Str: return !v.s.empty();
    case Value::Tuple: case Value::List: return !v.elts->empty();
    case Value::Index: case Value::MaskV:
      fail(at->range, "control flow depends on an nl.arange expression; use mask= instead");
    default: return true;
    }
  }

  Value eval(const Expr *e) {
    if (!e) return Value::none();
    switch (e->kind) {
    case ExprKind::Int: return Value::integer(e->intValue);
    case ExprKind::Float: return Value::number(e->floatValue);
    case ExprKind::Bool: return Value::boolean(e->boolValue);
    case ExprKind::None: return Value::none();
    case ExprKind::Ellipsis: { Value v; v.kind = Value::EllipsisV; return v; }
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
    case ExprKind::Tuple: case ExprKind::List: {
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

  Value compare(const Expr *e) {
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
        if (op == ">=") m->geZero.push_back(diff(l, r, 0));
        else if (op == ">") m->geZero.push_back(diff(l, r, -1));
        else if (op == "<=") m->geZero.push_back(diff(r, l, 0));
        else if (op == "<") m->geZero.push_back(diff(r, l, -1));
        else if (op == "==") { m->geZero.push_back(diff(l, r, 0)); m->geZero.push_back(diff(r, l, 0)); }
        else fail(e->range, "mask comparison '" + op + "' is not supported");
        Value v;
        v.kind = Value::MaskV;
        v.mask = m;
        return v;
      }
      bool r;
      if (op == "==" || op == "is") r = equal(left, right);
      else if (op == "!=" || op == "is not") r = !equal(left, right);
      else if (op == "in" || op == "not in") {
        bool found = false;
        if (right.isSeq()) for (auto &x : *right.elts) found |= equal(left, x);
        r = op == "in" ? found : !found;
      } else {
        if (!left.isNumber() || !right.isNumber()) fail(e->range, "cannot compare " + describe(left) + " and " + describe(right));
        double a = left.num(), b = right.num();
        r = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b;
      }
      if (!r) return Value::boolean(false);
      left = right;
    }
    return result;
  }

  bool equal(const Value &a, const Value &b) {
    if (a.isNumber() && b.isNumber()) return a.num() == b.num();
    if (a.isSeq() && b.isSeq()) {
      if (a.elts->size() != b.elts->size()) return false;
      for (size_t i = 0; i < a.elts->size(); ++i)
        if (!equal((*a.elts)[i], (*b.elts)[i])) return false;
      return true;
    }
    if (a.kind == Value::None || b.kind == Value::None) return a.kind == b.kind;
    if (a.kind == Value::Str && b.kind == Value::Str) return a.s == b.s;
    if (a.kind == Value::Path && b.kind == Value::Path) return a.s == b.s;
    return false;
  }

  IndexArr asIndexArr(const Value &v, const Expr *at) {
    if (v.kind == Value::Index) return v.idx;
    if (v.isIntLike()) { IndexArr a; a.c = v.i; return a; }
    if (v.kind == Value::Float && v.f == std::floor(v.f)) { IndexArr a; a.c = int64_t(v.f); return a; }
    fail(at->range, "expected an integer index, got " + describe(v));
  }

  Value binary(const std::string &op, const Value &l, const Value &r, const syntax::ByteRange &range) {
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
      if (l.kind != Value::Index) { if (!l.isIntLike()) fail(range, "index arithmetic needs integers"); a.c = l.i; }
      if (r.kind != Value::Index) { if (!r.isIntLike()) fail(range, "index arithmetic needs integers"); b.c = r.i; }
      if (op == "+" || op == "-") {
        int rank = std::max(a.rank(), b.rank());
        IndexArr x = a.widened(rank), y = b.widened(rank);
        int64_t s = op == "+" ? 1 : -1;
        for (int k = 0; k < rank; ++k) {
          x.coeff[k] += s * y.coeff[k];
          x.extent[k] = std::max(x.extent[k], y.extent[k]);
        }
        x.c += s * y.c;
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
      chargeValue(llvm::SaturatingMultiply(uint64_t(l.elts->size()), uint64_t(std::max<int64_t>(r.i, 0))),
                  sizeof(Value), "a list or tuple", range);
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
      if (op == "/") { if (b == 0) fail(range, "division by zero"); return Value::number(double(a) / double(b)); }
    }
    double a = l.num(), b = r.num();
    if (op == "+") return Value::number(a + b);
    if (op == "-") return Value::number(a - b);
    if (op == "*") return Value::number(a * b);
    if (op == "/") { if (b == 0) fail(range, "division by zero"); return Value::number(a / b); }
    if (op == "//") { if (b == 0) fail(range, "division by zero"); return Value::number(std::floor(a / b)); }
    if (op == "%") { if (b == 0) fail(range, "division by zero"); return Value::number(a - std::floor(a / b) * b); }
    if (op == "**") return Value::number(std::pow(a, b));
    fail(range, "unsupported operator " + op);
  }

  Value attribute(const Expr *e) {
    Value base = eval(e->base);
    if (base.kind == Value::Path) {
      std::string p = normalizePath(base.s + "." + e->name);
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
      if (e->name == "dtype") {
        nki::DType dt = (base.kind == Value::TensorV ? base.tensor : base.view->tensor)->data.dtype();
        return Value::path("dtype." + std::string(dtypeSpelling(dt)));
      }
      Value m = base;
      m.kind = Value::Method;
      m.s = e->name;
      if (base.kind == Value::ViewV) m.tensor = nullptr;
      return m;
    }
    fail(e->range, "attribute '" + e->name + "' of " + describe(base) + " is not supported");
  }

  static std::string_view dtypeSpelling(nki::DType t) {
    switch (t) {
    case nki::DType::Float32: return "float32";
    case nki::DType::BFloat16: return "bfloat16";
    case nki::DType::Float16: return "float16";
    case nki::DType::Int32: return "int32";
    case nki::DType::UInt16: return "uint16";
    case nki::DType::UInt8: return "uint8";
    case nki::DType::Int8: return "int8";
    default: return "float32";
    }
  }

  std::optional<nki::DType> dtypeOf(const Value &v) {
    if (v.kind != Value::Path) return std::nullopt;
    std::string s = v.s;
    if (s.rfind("dtype.", 0) == 0) s = s.substr(6);
    return nki::parseDType(s);
  }

  // ----- subscripts: views and index lifting -----
  Value subscript(const Expr *e) {
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
      ValueList grids;
      int rank = int(e->elts.size());
      for (int a = 0; a < rank; ++a) {
        Value sl = eval(e->elts[a]);
        if (sl.kind != Value::SliceV) fail(e->range, "nl.mgrid takes slices");
        int64_t lo = (*sl.elts)[0].kind == Value::None ? 0 : (*sl.elts)[0].i, hi = (*sl.elts)[1].i;
        IndexArr x;
        x.c = lo;
        x.coeff.assign(rank, 0);
        x.extent.assign(rank, 1);
        x.coeff[a] = 1;
        x.extent[a] = hi - lo;
        grids.push_back(Value::ofIndex(x));
      }
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

  View wholeView(const TensorPtr &t) {
    View v;
    v.tensor = t;
    auto strides = t->data.strides();
    for (int d = 0; d < t->data.rank(); ++d) {
      v.stride.push_back(strides[d]);
      v.extent.push_back(t->data.dim(d));
    }
    if (v.extent.empty()) { v.stride.push_back(1); v.extent.push_back(1); }
    return v;
  }

  /// Builds the strided view of `base[subscript]`.
  View makeView(const Value &base, const Expr *sub, const Mask *mask) {
    if (base.kind == Value::ViewV) {
      // Indexing a view: index its tile axes as if they were a tensor's dims.
      const View &parent = *base.view;
      View v;
      v.tensor = parent.tensor;
      v.offset = parent.offset;
      std::vector<std::pair<IndexArr, int64_t>> comps = indexComponents(sub, parent.shape());
      applyComponents(v, comps, parent.stride, sub);
      return v;
    }
    const TensorPtr &t = base.tensor;
    View v;
    v.tensor = t;
    auto comps = indexComponents(sub, t->data.shape());
    auto strides = t->data.strides();
    llvm::SmallVector<int64_t, 6> st(strides.begin(), strides.end());
    applyComponents(v, comps, st, sub);
    (void)mask;
    return v;
  }

  /// Turns subscript items into one index per dimension (IndexArr over tile axes) with
  /// the dimension's size. Basic slices get their own axes; advanced (arange) indices
  /// share the broadcast grid; integers are rank 0.
  std::vector<std::pair<IndexArr, int64_t>> indexComponents(const Expr *sub, const std::vector<int64_t> &shape) {
    std::vector<const Expr *> items(sub->elts.begin(), sub->elts.end());
    if (items.size() == 1 && items[0]->kind == ExprKind::Tuple)
      items.assign(items[0]->elts.begin(), items[0]->elts.end());
    int ellipsis = -1;
    for (size_t i = 0; i < items.size(); ++i)
      if (items[i]->kind == ExprKind::Ellipsis) ellipsis = int(i);
    size_t explicitCount = items.size() - (ellipsis >= 0);
    if (explicitCount > shape.size())
      fail(sub->range, llvm::formatv("too many indices ({0}) for a tensor of rank {1}", explicitCount, shape.size()).str());
    // Evaluate first to learn whether the subscript is basic or advanced.
    struct Item { bool isSlice = false; int64_t lo = 0, hi = 0, step = 1; IndexArr idx; bool full = false; };
    std::vector<Item> dims;
    bool basic = false, advanced = false;
    int advRank = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      size_t d = dims.size();
      if (int(i) == ellipsis) {
        for (size_t k = 0; k < shape.size() - explicitCount; ++k) {
          Item it;
          it.isSlice = true;
          it.full = true;
          it.hi = shape[dims.size()];
          dims.push_back(it);
        }
        continue;
      }
      Value v = eval(items[i]);
      Item it;
      if (v.kind == Value::SliceV) {
        basic = true;
        it.isSlice = true;
        int64_t size = shape[d];
        auto get = [&](int k, int64_t dflt) -> int64_t {
          const Value &x = (*v.elts)[k];
          if (x.kind == Value::None) return dflt;
          if (!x.isIntLike()) fail(items[i]->range, "slice bounds must be integers");
          return x.i < 0 ? x.i + size : x.i;
        };
        it.step = get(2, 1);
        if (it.step <= 0) fail(items[i]->range, "slice steps must be positive");
        it.lo = get(0, 0);
        it.hi = get(1, size);
        if (it.lo < 0 || it.hi > size || it.lo > it.hi)
          fail(items[i]->range, llvm::formatv("slice [{0}:{1}] is out of bounds for dimension {2} of size {3}",
                                              it.lo, it.hi, d, size).str());
      } else if (v.kind == Value::Index) {
        advanced = true;
        it.idx = v.idx;
        advRank = std::max(advRank, v.idx.rank());
      } else if (v.isIntLike() || (v.kind == Value::Float && v.f == std::floor(v.f))) {
        it.idx.c = v.isIntLike() ? v.i : int64_t(v.f);
      } else if (v.kind == Value::None) {
        continue;
      } else {
        fail(items[i]->range, "tensor index must be an integer, a slice or an nl.arange expression, not " + describe(v));
      }
      dims.push_back(it);
    }
    while (dims.size() < shape.size()) {
      Item it;
      it.isSlice = true;
      it.full = true;
      it.hi = shape[dims.size()];
      dims.push_back(it);
    }
    if (basic && advanced) {
      // Full slices (from "..." or omitted trailing dims) are fine next to advanced
      // indices: they become their own trailing axes.
      for (auto &it : dims)
        if (it.isSlice && !it.full) fail(sub->range, "subscript mixes basic indexing (slices) with advanced indexing (nl.arange)");
    }
    std::vector<std::pair<IndexArr, int64_t>> out;
    if (advanced) {
      int extraAxes = 0;
      for (auto &it : dims) extraAxes += it.isSlice;
      int rank = advRank + extraAxes;
      int nextAxis = advRank;
      for (size_t d = 0; d < dims.size(); ++d) {
        auto &it = dims[d];
        IndexArr x;
        if (it.isSlice) {
          x.coeff.assign(rank, 0);
          x.extent.assign(rank, 1);
          x.c = it.lo;
          x.coeff[nextAxis] = it.step;
          x.extent[nextAxis] = (it.hi - it.lo + it.step - 1) / it.step;
          ++nextAxis;
        } else {
          x = it.idx.widened(advRank);
          x.coeff.resize(rank, 0);
          x.extent.resize(rank, 1);
        }
        out.push_back({x, shape[d]});
      }
      return out;
    }
    int rank = 0;
    for (auto &it : dims) rank += it.isSlice;
    int axis = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      auto &it = dims[d];
      IndexArr x;
      x.coeff.assign(rank, 0);
      x.extent.assign(rank, 1);
      if (it.isSlice) {
        x.c = it.lo;
        x.coeff[axis] = it.step;
        x.extent[axis] = (it.hi - it.lo + it.step - 1) / it.step;
        ++axis;
      } else {
        x.c = it.idx.c;
      }
      out.push_back({x, shape[d]});
    }
    return out;
  }

  void applyComponents(View &v, const std::vector<std::pair<IndexArr, int64_t>> &comps,
                       const llvm::SmallVector<int64_t, 6> &strides, const Expr *sub) {
    int rank = 0;
    for (auto &[x, size] : comps) rank = std::max(rank, x.rank());
    v.extent.assign(rank, 1);
    v.stride.assign(rank, 0);
    for (size_t d = 0; d < comps.size(); ++d) {
      IndexArr x = comps[d].first.widened(rank);
      v.offset += strides[d] * x.c;
      for (int a = 0; a < rank; ++a) {
        v.stride[a] += strides[d] * x.coeff[a];
        v.extent[a] = std::max(v.extent[a], x.extent[a]);
      }
      v.dims.push_back({x, comps[d].second});
    }
    if (rank == 0) {  // a single element: a (1, 1) tile
      v.extent = {1};
      v.stride = {1};
    }
    (void)sub;
  }

  /// Bounds: every index within its dimension where the mask allows.
  void checkBounds(const View &v, const Mask *mask, const syntax::ByteRange &at) {
    for (size_t d = 0; d < v.dims.size(); ++d) {
      const IndexArr &x = v.dims[d].idx;
      const int64_t size = v.dims[d].size;
      int64_t lo = x.minValue(), hi = x.maxValue();
      if (lo >= 0 && hi < size) continue;
      if (!mask) fail(at, llvm::formatv("index of dimension {0} ranges over [{1}, {2}], out of bounds for size {3} of '{4}'",
                                        d, lo, hi, size, v.tensor->name).str());
      // With a mask, only the allowed elements must be in bounds: check them all.
      forEachElement(v.extent, [&](const int64_t *k) {
        if (!mask->allows(k, int(v.extent.size()))) return;
        int64_t val = x.c;
        for (int a = 0; a < x.rank(); ++a) val += x.coeff[a] * k[a];
        if (val < 0 || val >= size)
          fail(at, llvm::formatv("masked index {0} of dimension {1} is out of bounds for size {2} of '{3}'", val, d,
                                 size, v.tensor->name).str());
      });
    }
  }

  template <typename F> static void forEachElement(const llvm::SmallVector<int64_t, 6> &extent, F &&fn) {
    int rank = int(extent.size());
    llvm::SmallVector<int64_t, 6> k(rank, 0);
    for (int64_t e : extent)
      if (e <= 0) return;
    while (true) {
      fn(k.data());
      int a = rank - 1;
      while (a >= 0 && ++k[a] == extent[a]) k[a--] = 0;
      if (a < 0) return;
    }
  }

  /// Copies the region into a contiguous [P, F] buffer (P = extent[0]).
  NDArray gather(const View &v, const Mask *mask, const syntax::ByteRange &at, bool checkUninit) {
    checkBounds(v, mask, at);
    auto out = NDArray::allocate(v.shape(), v.tensor->data.dtype());
    if (!out) fail(at, llvm::toString(out.takeError()));
    float *dst = out->data();
    const float *src = v.tensor->data.data();
    int rank = int(v.extent.size());
    int64_t inner = v.extent[rank - 1], innerStride = v.stride[rank - 1];
    int64_t i = 0;
    llvm::SmallVector<int64_t, 6> outer(v.extent.begin(), v.extent.end() - 1);
    auto row = [&](const int64_t *k) {
      int64_t base = v.offset;
      for (int a = 0; a + 1 < rank; ++a) base += v.stride[a] * k[a];
      if (mask) {
        auto [lo, hi] = mask->rowRange(k, rank, inner);
        for (int64_t j = 0; j < inner; ++j) dst[i + j] = j >= lo && j < hi ? src[base + j * innerStride] : 0.0f;
      } else if (innerStride == 1) {
        std::memcpy(dst + i, src + base, sizeof(float) * inner);
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[i + j] = src[base + j * innerStride];
      }
      i += inner;
    };
    if (rank == 1) { int64_t z = 0; row(&z); }
    else forEachElement(outer, row);
    if (checkUninit && Opts.detectUninitReads)
      if (auto bad = firstUninit(out->data(), out->numel()))
        fail(at, llvm::formatv("reads never-written memory of '{0}' (tile element {1} of {2}); "
                               "initialise it or check the indices",
                               v.tensor->name, *bad, formatShape(out->shape())).str());
    return std::move(*out);
  }

  /// Writes `value` (broadcast to the region) into the view, rounding to its dtype.
  /// `combine` merges with the old element for accumulation.
  void scatter(const View &v, const NDArray &value, const Mask *mask, const syntax::ByteRange &at,
               const std::function<float(float oldv, float newv)> *combine, bool raceCheck) {
    checkBounds(v, mask, at);
    int rank = int(v.extent.size());
    // Broadcast: value shape right-aligned against the view's tile shape.
    std::vector<int64_t> vshape = value.shape();
    if (value.numel() != v.numel()) {
      bool ok = true;
      size_t vr = vshape.size();
      // (P,) against (P, F): partition-aligned vector.
      if (vr == 1 && rank >= 1 && vshape[0] == v.extent[0]) { vshape = {vshape[0]}; vshape.resize(rank, 1); vr = rank; }
      if (vr > size_t(rank)) ok = false;
      for (size_t a = 0; ok && a < vr; ++a) {
        int64_t want = v.extent[rank - vr + a];
        if (vshape[a] != want && vshape[a] != 1) ok = false;
      }
      // A tile whose element count matches but shape differs (free-dim reshape in a DMA).
      if (!ok)
        fail(at, "cannot write a " + formatShape(value.shape()) + " tile into a " + formatShape(v.shape()) + " region of '" +
                     v.tensor->name + "'");
      vshape.insert(vshape.begin(), rank - vr, 1);
    } else {
      vshape = v.shape();
    }
    llvm::SmallVector<int64_t, 6> vstride(rank, 0);
    int64_t acc = 1;
    for (int a = rank - 1; a >= 0; --a) {
      vstride[a] = vshape[a] == 1 ? 0 : acc;
      acc *= vshape[a];
    }
    Tensor &t = *v.tensor;
    nki::DType dt = t.data.dtype();
    bool round = dt != nki::DType::Float32;
    bool stamp = raceCheck && Opts.detectRaces && CurrentSerial != 0;
    if (stamp && t.stamps.empty()) t.stamps.assign(t.data.numel(), 0);
    bool track = !t.stamps.empty();
    float *dst = t.data.data();
    const float *src = value.data();
    int64_t inner = v.extent[rank - 1], dStride = v.stride[rank - 1], sStride = vstride[rank - 1];
    llvm::SmallVector<int64_t, 6> full(rank, 0);
    auto row = [&](const int64_t *k) {
      int64_t off = v.offset, voff = 0;
      for (int a = 0; a + 1 < rank; ++a) {
        off += v.stride[a] * k[a];
        voff += vstride[a] * k[a];
        full[a] = k[a];
      }
      if (!mask && !combine && !round) {
        // The common case: a straight copy of the row, then the race stamps.
        if (dStride == 1 && sStride == 1) std::memcpy(dst + off, src + voff, sizeof(float) * inner);
        else for (int64_t j = 0; j < inner; ++j) dst[off + j * dStride] = src[voff + j * sStride];
        if (!track) return;
        uint32_t stampValue = stamp ? CurrentSerial : 0;
        for (int64_t j = 0; j < inner; ++j) {
          uint32_t &slot = t.stamps[off + j * dStride];
          if (stamp && slot != 0 && slot != CurrentSerial && conflicting(slot, CurrentSerial))
            fail(at, llvm::formatv("race: two iterations of an affine_range loop write element {0} of '{1}' "
                                   "(use sequential_range, += accumulation, or index by the loop variable)",
                                   elementIndex(t.data.shape(), off + j * dStride), t.name).str());
          slot = stampValue;
        }
        return;
      }
      auto [lo, hi] = mask ? mask->rowRange(full.data(), rank, inner) : std::pair<int64_t, int64_t>{0, inner};
      for (int64_t j = lo; j < hi; ++j) {
        int64_t o = off + j * dStride;
        float x = src[voff + j * sStride];
        if (combine) x = (*combine)(dst[o], x);
        dst[o] = round ? roundToDType(x, dt) : x;
        if (track) {
          uint32_t old = t.stamps[o];
          if (stamp && old != 0 && old != CurrentSerial && conflicting(old, CurrentSerial))
            fail(at, llvm::formatv("race: two iterations of an affine_range loop write element {0} of '{1}' "
                                   "(use sequential_range, += accumulation, or index by the loop variable)",
                                   elementIndex(t.data.shape(), o), t.name).str());
          t.stamps[o] = stamp ? CurrentSerial : 0;
        }
      }
    };
    if (rank == 1) {
      int64_t z = 0;
      row(&z);
    } else {
      llvm::SmallVector<int64_t, 6> outer(v.extent.begin(), v.extent.end() - 1);
      forEachElement(outer, row);
    }
  }

  static std::string elementIndex(const std::vector<int64_t> &shape, int64_t flat) {
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = flat % shape[d];
      flat /= shape[d];
    }
    std::string out = "[";
    for (size_t d = 0; d < idx.size(); ++d) out += (d ? ", " : "") + std::to_string(idx[d]);
    return out + "]";
  }

  /// Two writes conflict when some affine loop instance encloses both in different iterations.
  bool conflicting(uint32_t a, uint32_t b) const {
    for (uint32_t x = a; x != 0; x = Frames[x].parent)
      for (uint32_t y = b; y != 0; y = Frames[y].parent)
        if (Frames[x].instance == Frames[y].instance) return Frames[x].iteration != Frames[y].iteration;
    return false;
  }

  // ----- operands -----
  /// A 2-D, unit-stride, fp32 view used in place (no copy); null if the view has
  /// another layout. Bounds are checked; reads of never-written data are not.
  std::optional<Tile> directTile(const View &v, const syntax::ByteRange &at) {
    if (v.extent.size() != 2 || v.stride[1] != 1 || v.tensor->data.dtype() != nki::DType::Float32) return std::nullopt;
    checkBounds(v, nullptr, at);
    return Tile{v.tensor->data.data() + v.offset, v.extent[0], v.extent[1], v.stride[0]};
  }

  /// A `dst += matmul(...)` destination the matmul may accumulate into directly.
  std::optional<Tile> MatmulAccumulator;
  bool MatmulAccumulated = false;

  View viewOf(const Value &v, const Expr *at) {
    if (v.kind == Value::ViewV) return *v.view;
    if (v.kind == Value::TensorV) return wholeView(v.tensor);
    fail(at ? at->range : syntax::ByteRange{}, "expected a tensor, got " + describe(v));
  }

  NDArray tileOf(const Value &v, const Expr *at, const Mask *mask, bool checkUninit = true) {
    if (v.kind == Value::TensorV && v.tensor->parDim < 0 && !v.tensor->data.numel())
      fail(at->range, "empty tensor");
    return gather(viewOf(v, at), mask, at->range, checkUninit);
  }

  static ConstTile tile2d(const NDArray &a) { return a.asTile(); }

  TensorPtr newTile(std::vector<int64_t> shape, nki::DType dtype, nki::Buffer buffer, const std::string &name,
                    const syntax::ByteRange &at) {
    auto arr = NDArray::uninitialized(std::move(shape), dtype);
    if (!arr) fail(at, llvm::toString(arr.takeError()));
    auto t = std::make_shared<Tensor>();
    t->data = std::move(*arr);
    t->buffer = buffer;
    t->name = name;
    return t;
  }

  float scalarOf(const Value &v, const Expr *at) {
    if (v.isNumber()) return float(v.num());
    fail(at->range, "expected a number, got " + describe(v));
  }

  // ----- calls -----
  void assignInto(const Expr *target, const Expr *valueExpr, const std::string *augOp) {
    Value base = eval(target->base);
    if (!base.isTile()) fail(target->range, "cannot assign into " + describe(base));
    View dst = makeView(base, target, nullptr);
    if (augOp) {
      if (accumulateMatmulInPlace(dst, valueExpr, *augOp)) return;
      LastMask.reset();
      Value rhs = eval(valueExpr);
      auto mask = std::move(LastMask);
      accumulateInto(dst, rhs, *augOp, valueExpr->range, mask.get());
      return;
    }
    LastMask.reset();
    Value rhs = valueExpr->kind == ExprKind::Call ? call(valueExpr, &dst) : eval(valueExpr);
    if (rhs.kind == Value::None && valueExpr->kind == ExprKind::Call) return;  // the call wrote dst itself
    auto mask = std::move(LastMask);
    writeValue(dst, rhs, valueExpr, mask.get(), nullptr);
  }
  /// The mask= of the NKI call that produced the last result tile: an assignment
  /// of that tile writes only the masked-in elements.
  std::shared_ptr<Mask> LastMask;

  /// Writes a tile or number into `dst`; errors about the write point at `dstAt`
  /// (the destination expression) when given, else at the value.
  void writeValue(const View &dst, const Value &rhs, const Expr *at, const Mask *mask,
                  const std::function<float(float, float)> *combine, const Expr *dstAt = nullptr) {
    const syntax::ByteRange &where = (dstAt ? dstAt : at)->range;
    if (rhs.isTile()) {
      NDArray val = gather(viewOf(rhs, at), mask, at->range, /*checkUninit=*/true);
      scatter(dst, val, mask, where, combine, combine == nullptr);
    } else if (rhs.isNumber()) {
      auto val = NDArray::full({1}, nki::DType::Float32, float(rhs.num()));
      if (!val) fail(at->range, llvm::toString(val.takeError()));
      scatter(dst, *val, mask, where, combine, combine == nullptr);
    } else {
      fail(at->range, "cannot store " + describe(rhs) + " into a tensor");
    }
  }

  /// PSUM accumulation group: `dst += nc_matmul(...)` into a plain 2-D fp32
  /// destination runs as one BLAS call with beta = 1, without copies.
  bool accumulateMatmulInPlace(const View &dst, const Expr *valueExpr, const std::string &op) {
    if (op != "+" || valueExpr->kind != ExprKind::Call) return false;
    auto tile = directTile(dst, valueExpr->range);
    if (!tile) return false;
    if (Opts.detectUninitReads)
      for (int64_t r = 0; r < tile->rows; ++r)
        if (firstUninit(tile->row(r), tile->cols)) return false;  // let the generic path report it
    MatmulAccumulator = tile;
    MatmulAccumulated = false;
    LastMask.reset();
    Value rhs;
    try {
      rhs = eval(valueExpr);
    } catch (...) {
      MatmulAccumulator.reset();
      throw;
    }
    MatmulAccumulator.reset();
    if (MatmulAccumulated) return true;
    // Not a matmul after all: accumulate its result the ordinary way.
    auto mask = std::move(LastMask);
    accumulateInto(dst, rhs, op, valueExpr->range, mask.get());
    return true;
  }

  void accumulateInto(const View &dst, const Value &rhs, const std::string &op, const syntax::ByteRange &at,
                      const Mask *mask) {
    auto alu = interp::aluOpFromName(op == "+" ? "add" : op == "-" ? "subtract" : op == "*" ? "multiply"
                                     : op == "/" ? "divide" : op == "max" ? "maximum" : op);
    if (!alu) fail(at, "unsupported accumulation '" + op + "='");
    // Accumulating reads the destination: it must have been written.
    NDArray acc = gather(dst, mask, at, /*checkUninit=*/true);
    auto check = [&](llvm::Error err) {
      if (err) fail(at, llvm::toString(std::move(err)));
    };
    if (rhs.isTile()) check(applyBinary(*alu, acc.asTile(), acc.asTile(), gather(viewOf(rhs, nullptr), mask, at, true).asTile()));
    else if (rhs.isNumber()) check(applyBinary(*alu, acc.asTile(), acc.asTile(), float(rhs.num())));
    else fail(at, "cannot accumulate " + describe(rhs));
    scatter(dst, acc, mask, at, nullptr, /*raceCheck=*/false);
  }

  Value call(const Expr *e, View *dest) {
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

  /// The argument at `position`, or given as `keyword=` (np.identity(n=128)); a clear error if neither.
  Value argument(const Expr *e, const std::vector<Value> &args, size_t position, std::string_view keyword,
                 const std::string &callee) {
    if (position < args.size()) return args[position];
    if (const Expr *kw = e->keyword(keyword)) return eval(kw);
    fail(e->range, callee + " is missing its argument '" + std::string(keyword) + "'");
  }

  std::vector<Value> positional(const Expr *e) {
    std::vector<Value> out;
    for (auto *a : e->elts) out.push_back(eval(a));
    return out;
  }

  int64_t intArg(const Value &v, const Expr *at) {
    if (v.isIntLike()) return v.i;
    if (v.kind == Value::Float && v.f == std::floor(v.f)) return int64_t(v.f);
    fail(at->range, "expected an integer, got " + describe(v));
  }

  Value builtin(const std::string &fn, const Expr *e) {
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

  Value callPython(const Stmt *fn, const Expr *e) {
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

  Value methodCall(const Value &m, const Expr *e) {
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

  /// Arguments of an NKI call matched to the op table's parameters.
  struct Bound {
    std::vector<const Expr *> exprs;
    std::vector<Value> values;
    std::vector<bool> given;
  };

  Bound bindArgs(const nki::OpInfo *op, const Expr *e) {
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

  const Value *param(const nki::OpInfo *op, const Bound &b, std::string_view name) {
    int i = op->paramIndex(name);
    return i >= 0 && b.given[i] ? &b.values[i] : nullptr;
  }
  const Expr *paramExpr(const nki::OpInfo *op, const Bound &b, std::string_view name) {
    int i = op->paramIndex(name);
    return i >= 0 ? b.exprs[i] : nullptr;
  }
  bool flag(const nki::OpInfo *op, const Bound &b, std::string_view name) {
    const Value *v = param(op, b, name);
    return v && v->isNumber() && v->num() != 0;
  }

  AluOp aluFrom(const Value *v, const Expr *at) {
    if (!v || v->kind != Value::Path) fail(at->range, "expected an operator such as nl.add or np.multiply");
    auto op = aluOpFromName(v->s);
    if (!op) fail(at->range, "'" + v->s + "' is not an ALU operator");
    return *op;
  }

  PerPartition perPartition(const Value *v, const Expr *at, std::vector<NDArray> &keep, float dflt) {
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

  static Tile tileView(NDArray &a) { return a.asTile(); }

  Value nkiCall(const nki::OpInfo *op, const Expr *e, View *dest) {
    using nki::OpKind;
    ++Stats.instructions;
    // Only this (outermost) call may accumulate into a `+=` destination, not calls in its arguments.
    std::optional<Tile> accumulator = std::exchange(MatmulAccumulator, std::nullopt);
    Bound b = bindArgs(op, e);
    const Value *maskV = param(op, b, "mask");
    const Mask *mask = maskV && maskV->kind == Value::MaskV ? maskV->mask.get() : nullptr;
    LastMask.reset();
    const Value *dtypeV = param(op, b, "dtype");
    std::optional<nki::DType> dtype = dtypeV ? dtypeOf(*dtypeV) : std::nullopt;
    std::vector<NDArray> keep;

    // Result in a fresh fp32 tile; written to `dest` (masked) or returned.
    auto finish = [&](NDArray result, nki::Buffer buffer) -> Value {
      if (dest) {
        scatter(*dest, result, mask, e->range, nullptr, true);
        return Value::none();
      }
      if (dtype) result.convertTo(*dtype);
      if (mask) {
        // Masked-off elements of a new tile were never written.
        llvm::SmallVector<int64_t, 6> ext(result.shape().begin(), result.shape().end());
        int64_t flat = 0;
        float *d = result.data();
        forEachElement(ext, [&](const int64_t *k) {
          if (!mask->allows(k, int(ext.size()))) d[flat] = uninitValue();
          ++flat;
        });
        LastMask = std::make_shared<Mask>(*mask);
      }
      auto t = std::make_shared<Tensor>();
      t->data = std::move(result);
      t->buffer = buffer;
      t->name = "tile@" + std::to_string(File.source().lineCol(e->range.begin).line);
      return Value::ofTensor(t);
    };
    // Operands are found by the slot the op table gives them, never by the parameter's spelling.
    auto slotValue = [&](nki::Slot s) -> const Value * {
      int i = op->slotIndex(s);
      return i >= 0 && b.given[i] ? &b.values[i] : nullptr;
    };
    auto slotExpr = [&](nki::Slot s) -> const Expr * {
      int i = op->slotIndex(s);
      return i >= 0 ? b.exprs[i] : nullptr;
    };
    auto operand = [&](nki::Slot s, bool useMask = true) -> NDArray {
      int i = op->slotIndex(s);
      if (i < 0) fail(e->range, std::string(op->name) + " has no such operand in the op table");
      std::string_view name = op->params[i].name;
      if (!b.given[i]) fail(e->range, std::string(op->name) + " needs '" + std::string(name) + "'");
      if (!b.values[i].isTile()) fail(b.exprs[i]->range, std::string(op->name) + " operand '" + std::string(name) +
                                                              "' must be a tensor, got " + describe(b.values[i]));
      return gather(viewOf(b.values[i], b.exprs[i]), useMask ? mask : nullptr, b.exprs[i]->range, true);
    };
    // The row's own ALU op (nl.add, nl.sum), else its function argument (nisa.tensor_tensor op=).
    auto rowAlu = [&]() -> AluOp {
      if (op->numerics.alu) return *op->numerics.alu;
      return aluFrom(slotValue(nki::Slot::Func), e);
    };
    auto alloc = [&](const std::vector<int64_t> &shape) {
      auto a = NDArray::allocate(shape, nki::DType::Float32);
      if (!a) fail(e->range, llvm::toString(a.takeError()));
      return std::move(*a);
    };
    auto check = [&](llvm::Error err) {
      if (err) fail(e->range, llvm::toString(std::move(err)));
    };
    auto bufferParam = [&](nki::Buffer dflt) {
      const Value *bv = param(op, b, "buffer");
      if (bv && bv->kind == Value::Path)
        if (auto *c = nki::lookupConstant(bv->s); c && c->kind == nki::NamedConstant::BufferKind) return nki::Buffer(c->value);
      return dflt;
    };

    switch (op->kind) {
    case OpKind::Alloc: {
      nki::Buffer buffer = bufferParam(op->result);
      if (op->slot(nki::Slot::Host)) {
        const Value *c = slotValue(nki::Slot::Host);
        if (!c || c->kind != Value::HostArray) fail(e->range, std::string(op->name) + " needs a numpy array (np.identity(...))");
        auto t = std::make_shared<Tensor>();
        auto copy = c->host->clone();
        if (!copy) fail(e->range, llvm::toString(copy.takeError()));
        t->data = std::move(*copy);
        t->buffer = nki::Buffer::SharedHBM;
        t->parDim = -1;
        t->name = "constant";
        return Value::ofTensor(t);
      }
      const Value *shapeV = param(op, b, "shape");
      if (!shapeV || !shapeV->isSeq()) fail(e->range, std::string(op->name) + " needs a shape tuple");
      std::vector<int64_t> shape;
      int parDim = 0;
      for (size_t d = 0; d < shapeV->elts->size(); ++d) {
        const Value &x = (*shapeV->elts)[d];
        if (x.kind == Value::ParDim) parDim = int(d);
        shape.push_back(x.kind == Value::ParDim ? x.i : intArg(x, e));
      }
      nki::DType dt = dtype.value_or(nki::DType::Float32);
      const Value *fillV = slotValue(nki::Slot::Fill);
      llvm::Expected<NDArray> arr = op->numerics.fill ? NDArray::full(shape, dt, *op->numerics.fill)
                                    : fillV           ? NDArray::full(shape, dt, roundToDType(scalarOf(*fillV, e), dt))
                                                      : NDArray::uninitialized(shape, dt);
      if (!arr) fail(e->range, llvm::toString(arr.takeError()));
      auto t = std::make_shared<Tensor>();
      t->data = std::move(*arr);
      t->buffer = buffer;
      t->parDim = nki::isHBM(buffer) ? -1 : parDim;
      const Value *nameV = param(op, b, "name");
      t->name = nameV && nameV->kind == Value::Str && !nameV->s.empty() ? nameV->s : "";
      return Value::ofTensor(t);
    }
    case OpKind::Load: case OpKind::Copy: {
      NDArray data = operand(nki::Slot::Data);
      return finish(std::move(data), nki::Buffer::SBUF);
    }
    case OpKind::Store: {
      const Value *dst = slotValue(nki::Slot::Dest);
      const Expr *dstE = slotExpr(nki::Slot::Dest);
      const Value *value = slotValue(nki::Slot::Data);
      if (!dst || !dst->isTile()) fail(e->range, std::string(op->name) + " needs a destination tensor");
      writeValue(viewOf(*dst, dstE), *value, slotExpr(nki::Slot::Data), mask, nullptr, dstE);
      return Value::none();
    }
    case OpKind::DmaCopy: {
      const Value *dst = slotValue(nki::Slot::Dest);
      const Value *src = slotValue(nki::Slot::Data);
      const Value *rmw = param(op, b, "dst_rmw_op");
      if (!dst || !src) fail(e->range, std::string(op->name) + " needs dst= and src=");
      if (rmw && rmw->kind == Value::Path) {
        AluOp a = aluFrom(rmw, e);
        std::function<float(float, float)> combine = [a](float o, float n) { return applyAlu(a, o, n); };
        writeValue(viewOf(*dst, slotExpr(nki::Slot::Dest)), *src, slotExpr(nki::Slot::Data), mask, &combine);
      } else {
        writeValue(viewOf(*dst, slotExpr(nki::Slot::Dest)), *src, slotExpr(nki::Slot::Data), mask, nullptr);
      }
      return Value::none();
    }
    case OpKind::Matmul: {
      // A matmul mask restricts the moving operand's free axis and the output.
      NDArray st = operand(nki::Slot::Stationary, false);
      NDArray mv = operand(nki::Slot::Moving, true);
      ConstTile stT = st.asTile(), mvT = mv.asTile();
      NDArray transposed;
      if (nki::matmulTransposesStationary(*op, flag(op, b, "transpose_x"))) {
        // x is [M, K]: the compiler transposes it for TensorE.
        transposed = alloc({stT.cols, stT.rows});
        check(transpose(transposed.asTile(), stT));
        stT = transposed.asTile();
      }
      Stats.matmulFlops += 2.0 * double(stT.rows) * double(stT.cols) * double(mvT.cols);
      if (accumulator && !mask && accumulator->rows == stT.cols && accumulator->cols == mvT.cols) {
        check(matmul(*accumulator, stT, mvT, true));
        MatmulAccumulated = true;
        return Value::none();
      }
      NDArray out = alloc({stT.cols, mvT.cols});
      check(matmul(out.asTile(), stT, mvT, false));
      return finish(std::move(out), nki::Buffer::PSUM);
    }
    case OpKind::Transpose: {
      NDArray in = operand(nki::Slot::Data, false);
      ConstTile t = in.asTile();
      NDArray out = alloc({t.cols, t.rows});
      check(transpose(out.asTile(), t));
      return finish(std::move(out), nki::Buffer::PSUM);
    }
    case OpKind::Activation: {
      // The row fixes the function (nl.exp, nl.negative = copy(-1 * x)) or takes it as an argument.
      bool fixed = op->numerics.act.has_value();
      NDArray data = operand(nki::Slot::Data);
      ActFunc func;
      if (fixed) {
        func = *op->numerics.act;
      } else {
        const Value *fv = slotValue(nki::Slot::Func);
        if (!fv || fv->kind != Value::Path) fail(e->range, std::string(op->name) + " needs op=<function>");
        auto f = actFuncFromName(fv->s);
        if (!f) fail(slotExpr(nki::Slot::Func)->range, "'" + fv->s + "' is not an activation function");
        func = *f;
      }
      PerPartition scale = perPartition(fixed ? nullptr : param(op, b, "scale"), e, keep, op->numerics.scale);
      const Value *biasV = fixed ? nullptr : param(op, b, "bias");
      PerPartition bias = biasV && biasV->kind != Value::None ? perPartition(biasV, paramExpr(op, b, "bias"), keep, 0.0f)
                                                              : PerPartition::noBias();
      NDArray out = alloc(data.shape());
      check(activation(out.asTile(), func, data.asTile(), scale, bias));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::TensorTensor: {
      AluOp a = rowAlu();
      constexpr nki::Slot n1 = nki::Slot::Data, n2 = nki::Slot::Data2;
      const Value *x = slotValue(n1), *y = slotValue(n2);
      if (x && y && x->isNumber() && y->isTile()) {
        NDArray yd = operand(n2);
        NDArray out = alloc(yd.shape());
        check(applyBinary(a, out.asTile(), float(x->num()), yd.asTile()));
        return finish(std::move(out), nki::Buffer::SBUF);
      }
      NDArray xd = operand(n1);
      if (y && y->isNumber()) {
        NDArray out = alloc(xd.shape());
        check(applyBinary(a, out.asTile(), xd.asTile(), float(y->num())));
        return finish(std::move(out), nki::Buffer::SBUF);
      }
      NDArray yd = operand(n2);
      // The output takes the larger of the two shapes ((P,1) broadcasts).
      std::vector<int64_t> shape = xd.numel() >= yd.numel() ? xd.shape() : yd.shape();
      NDArray out = alloc(shape);
      check(applyBinary(a, out.asTile(), xd.asTile(), yd.asTile()));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::TensorScalar: {
      NDArray data = operand(nki::Slot::Data);
      ScalarStep first{aluFrom(param(op, b, "op0"), e), perPartition(param(op, b, "operand0"), e, keep, 0.0f),
                       flag(op, b, "reverse0")};
      std::optional<ScalarStep> second;
      const Value *op1 = param(op, b, "op1");
      if (op1 && op1->kind == Value::Path)
        second = ScalarStep{aluFrom(op1, e), perPartition(param(op, b, "operand1"), e, keep, 0.0f), flag(op, b, "reverse1")};
      NDArray out = alloc(data.shape());
      check(tensorScalar(out.asTile(), data.asTile(), first, second));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Reduce: {
      NDArray data = operand(nki::Slot::Data);
      AluOp a = rowAlu();
      bool mean = op->numerics.mean;
      // Reduce the trailing free axes from the smallest listed axis on.
      const Value *axisV = param(op, b, "axis");
      int rank = int(data.rank());
      int first = rank - 1;
      if (axisV) {
        std::vector<int64_t> axes;
        if (axisV->isSeq()) for (auto &x : *axisV->elts) axes.push_back(intArg(x, e));
        else axes.push_back(intArg(*axisV, e));
        for (int64_t ax : axes) {
          if (ax < 0) ax += rank;
          if (ax <= 0 || ax >= rank) fail(e->range, "reduction axis must be a free axis (1.." + std::to_string(rank - 1) + ")");
          first = std::min<int>(first, int(ax));
        }
      }
      int64_t rows = 1, cols = 1;
      for (int d = 0; d < first; ++d) rows *= data.dim(d);
      for (int d = first; d < rank; ++d) cols *= data.dim(d);
      std::vector<int64_t> outShape(data.shape().begin(), data.shape().begin() + first);
      outShape.push_back(1);
      NDArray out = alloc(outShape);
      check(tensorReduce(Tile{out.data(), rows, 1, 1}, a, ConstTile{data.data(), rows, cols, cols}, flag(op, b, "negate")));
      if (mean) for (float &v : out.values()) v /= float(cols);
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Scan: {
      NDArray d0 = operand(nki::Slot::Data), d1 = operand(nki::Slot::Data2);
      PerPartition init = perPartition(param(op, b, "initial"), paramExpr(op, b, "initial"), keep, 0.0f);
      NDArray out = alloc(d0.shape());
      check(tensorTensorScan(out.asTile(), d0.asTile(), d1.asTile(), init, aluFrom(param(op, b, "op0"), e),
                             aluFrom(param(op, b, "op1"), e), flag(op, b, "reverse0"), flag(op, b, "reverse1")));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Reciprocal: {
      NDArray data = operand(nki::Slot::Data);
      NDArray out = alloc(data.shape());
      check(reciprocal(out.asTile(), data.asTile()));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Memset: {
      const Value *shapeV = param(op, b, "shape");
      std::vector<int64_t> shape;
      if (shapeV && shapeV->isSeq()) for (auto &x : *shapeV->elts) shape.push_back(intArg(x, e));
      float value = scalarOf(*slotValue(nki::Slot::Fill), e);
      NDArray out = alloc(shape);
      memset(out.asTile(), roundToDType(value, dtype.value_or(nki::DType::Float32)));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Iota: {
      const Value *ex = param(op, b, "expr");
      if (!ex || ex->kind != Value::Index || ex->idx.rank() > 2) fail(e->range, std::string(op->name) + " needs a 2-D nl.arange expression");
      IndexArr x = ex->idx.widened(2);
      NDArray out = alloc({x.extent[0], x.extent[1]});
      iota(out.asTile(), x.c, x.coeff[0], x.coeff[1]);
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::LoopReduce: {
      if (!dest) fail(e->range, std::string(op->name) + " must be assigned into a tensor (dst[...] = nl.loop_reduce(...))");
      NDArray x = operand(nki::Slot::Data);
      AluOp a = rowAlu();
      // First write of each element stores x; later ones combine with what is there.
      std::function<float(float, float)> combine = [a](float o, float n) { return isUninit(o) ? n : applyAlu(a, n, o); };
      scatter(*dest, x, mask, e->range, &combine, false);
      return Value::none();
    }
    case OpKind::Broadcast: break;
    }
    fail(e->range, std::string(op->name) + " is not supported by the interpreter");
  }

  Value tileArithmetic(const std::string &op, const Value &l, const Value &r, const syntax::ByteRange &range) {
    ++Stats.instructions;
    std::optional<AluOp> alu = op == "+" ? AluOp::Add : op == "-" ? AluOp::Subtract : op == "*" ? AluOp::Multiply
                               : op == "/" ? AluOp::Divide : op == "**" ? std::optional(AluOp::Power) : std::nullopt;
    if (!alu) fail(range, "operator " + op + " is not supported on tiles");
    auto out = [&](std::vector<int64_t> shape) {
      auto a = NDArray::allocate(std::move(shape), nki::DType::Float32);
      if (!a) fail(range, llvm::toString(a.takeError()));
      return std::move(*a);
    };
    auto check = [&](llvm::Error err) {
      if (err) fail(range, llvm::toString(std::move(err)));
    };
    if ((!l.isTile() && !l.isNumber()) || (!r.isTile() && !r.isNumber()))
      fail(range, "unsupported operand types for " + op + ": " + describe(l) + " and " + describe(r));
    NDArray result;
    if (l.isTile() && r.isTile()) {
      NDArray a = gather(viewOf(l, nullptr), nullptr, range, true), b = gather(viewOf(r, nullptr), nullptr, range, true);
      result = out(a.numel() >= b.numel() ? a.shape() : b.shape());
      check(applyBinary(*alu, result.asTile(), a.asTile(), b.asTile()));
    } else if (l.isTile()) {
      NDArray a = gather(viewOf(l, nullptr), nullptr, range, true);
      result = out(a.shape());
      check(applyBinary(*alu, result.asTile(), a.asTile(), float(r.num())));
    } else {
      NDArray b = gather(viewOf(r, nullptr), nullptr, range, true);
      result = out(b.shape());
      check(applyBinary(*alu, result.asTile(), float(l.num()), b.asTile()));
    }
    auto t = std::make_shared<Tensor>();
    t->data = std::move(result);
    t->name = "tile";
    return Value::ofTensor(t);
  }

  static bool isLoopIterator(const std::string &n) { return nki::isLoopIterator(n); }

public:
  std::string location(uint32_t offset) const { return File.source().location(offset); }
};

} // namespace

llvm::Expected<RunResult> runKernel(const nki::KernelFile &file, const nki::Kernel &kernel,
                                    std::vector<KernelArg> args, const RunOptions &options) {
  // Tiles are small (<= 128x512): BLAS threads only contend; parallelism comes
  // from evaluating candidates side by side.
  static std::once_flag singleThreadedBlas;
  std::call_once(singleThreadedBlas, [] { openblas_set_num_threads(1); });
  Interpreter interp(file, kernel, options);
  try {
    return interp.run(std::move(args));
  } catch (const RuntimeError &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   interp.location(e.offset) + ": error: " + e.message);
  } catch (const std::exception &e) {
    // A defect of the interpreter, not of the kernel: said so, never a crash of the whole tool.
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file.source().path() + ": error: internal error of the interpreter (" + e.what() +
                                       "); please report it with this kernel");
  }
}

} // namespace accelopt::interp
