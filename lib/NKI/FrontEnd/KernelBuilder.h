// The front end's abstract evaluator of trace-time Python: the values it computes with and the
// KernelBuilder that walks one kernel body. Its methods live in one file per concept (Builder,
// Statements, Loops, Accesses, Expressions, Calls).
#pragma once

#include "NKI/Dialect.h"
#include "NKI/FrontEnd.h"
#include "NKI/OpTable.h"
#include "NKI/PyCore.h"
#include "NKI/Rules.h"
#include "Syntax/NameBindings.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace accelopt::nki::frontend {

using syntax::Expr;
using syntax::ExprKind;
using syntax::Stmt;
namespace PyStmt = syntax;

/// An index expression value: loop-affine base plus nl.arange terms of a
/// broadcast of rank `rank` (0 for plain integers and loop variables).
struct IndexVal {
  Affine base;
  llvm::SmallVector<ArangeTerm, 1> aranges;
  int rank = 0;
  /// The extents of the nl.mgrid an index was built from (dense grids, as numpy.mgrid's: a value made
  /// of grid fields spans every axis of the grid); empty for nl.arange terms.
  llvm::SmallVector<int64_t, 4> grid;
  /// The shape the index has as a value (nisa.iota's result): per axis the grid's extent or the largest
  /// arange extent on it, else 1.
  std::vector<int64_t> shape() const;
  /// `min(a, b, ...)` of affine values that differ between iterations (a partial last tile's bound,
  /// `lo + min(128, n - lo)`): the value is the least of these, and `base` is unknown.
  std::shared_ptr<std::vector<Affine>> minOf;
};

struct Value {
  enum Kind : uint8_t {
    Unknown,
    None,
    Bool,
    Int,
    Float,
    Str,
    Seq,
    Path,
    Tensor,
    Index,
    Iter,
    Method,
    SliceV,
    Ellipsis,
    Object, // an instance of a class of the module (a configuration object); s: its class
  } kind = Unknown;
  SymInt i;     // Int (also Bool as 0/1)
  double f = 0; // Float (known), Bool
  bool fKnown = false;
  std::string s;           // Str text; Path canonical dotted name; Method name; Unknown: source text
  std::vector<Value> elts; // Seq
  bool isList = false;
  /// List: the loop its value was made in (-1: kernel level, -2: unknown). A list made outside a loop
  /// and filled with one fresh tile per iteration stands for block dimensions of one tensor.
  int listScope = -2;
  int blockTensor = -1;                 // List: the tensor whose leading block dimensions it indexes
  std::vector<IndexDim> blockPrefix;    // List: the block indices fixed before it (an inner list)
  int tensor = -1;                      // Tensor / Method receiver
  bool throughList = false;             // Tensor: taken out of a list the kernel filled
  std::shared_ptr<Access> view;         // Tensor: a subscripted view (null = whole tensor)
  IndexVal idx;                         // Index
  LoopKind loopKind = LoopKind::Affine; // Iter
  SymInt start, stop, step;             // Iter
                                        // SliceV (nl.ds): idx is the start, i the size
  bool sliceHas[3] = {false, false, false};
  std::shared_ptr<std::map<std::string, Value>> attrs; // Object: its attributes (shared, as Python's)
  /// Path "mask": its conjuncts when each has the MaskBound form (null: a mask the model cannot size).
  std::shared_ptr<std::vector<MaskBound>> maskBounds;

  static Value unknown(std::string text = "") {
    Value v;
    v.s = std::move(text);
    return v;
  }
  static Value none() {
    Value v;
    v.kind = None;
    return v;
  }
  static Value integer(SymInt x) {
    Value v;
    v.kind = Int;
    v.i = std::move(x);
    return v;
  }
  static Value integer(int64_t x) { return integer(SymInt::known(x)); }
  static Value boolean(bool b) {
    Value v;
    v.kind = Bool;
    v.f = b;
    v.fKnown = true;
    v.i = SymInt::known(b);
    return v;
  }
  static Value floating(double x) {
    Value v;
    v.kind = Float;
    v.f = x;
    v.fKnown = true;
    return v;
  }
  static Value str(std::string x) {
    Value v;
    v.kind = Str;
    v.s = std::move(x);
    return v;
  }
  static Value path(std::string p) {
    Value v;
    v.kind = Path;
    v.s = std::move(p);
    return v;
  }
  static Value seq(std::vector<Value> e, bool list = false) {
    Value v;
    v.kind = Seq;
    v.elts = std::move(e);
    v.isList = list;
    return v;
  }
  static Value tensorRef(int t) {
    Value v;
    v.kind = Tensor;
    v.tensor = t;
    return v;
  }
  static Value index(IndexVal x) {
    Value v;
    v.kind = Index;
    v.idx = std::move(x);
    return v;
  }

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
    if ((kind == Int || kind == Bool) && i.isKnown()) {
      IndexVal x;
      x.base = Affine::constantOf(*i.value);
      return x;
    }
    if (kind == Int) {
      IndexVal x;
      x.base = Affine::unknown();
      return x;
    }
    return std::nullopt;
  }
  std::string text() const {
    switch (kind) {
    case Int:
    case Bool: return i.text;
    case Float: return fKnown ? llvm::formatv("{0}", f).str() : s;
    case Str: return "'" + s + "'";
    case Path: return s;
    default: return s.empty() ? "?" : s;
    }
  }
};

class KernelBuilder {
public:
  KernelBuilder(const syntax::Module &m, const std::map<std::string, std::string> &moduleAliases,
                const InputSpecs *inputs, pycore::LaunchGrid grid = {}, const ModuleImports *imports = nullptr)
      : M(m), Aliases(moduleAliases), Inputs(inputs), Grid(std::move(grid)), Imports(imports) {}

  Kernel build(const Stmt *def);
  /// The trace read nl.program_id or nl.num_programs (so other grid instances may trace differently).
  bool readLaunchGrid() const { return ReadGrid; }

private:
  const syntax::Module &M;
  std::set<std::string> ReportedMissingImports; // one error per alias and kernel
  std::optional<syntax::FileBindings> Bindings; // the file's bound names, found at the first unknown name
  std::set<std::pair<std::string, uint32_t>> ReportedUndefinedNames;
  bool EvaluatingLiteral = false;             // an input given as a Python literal: its names are not the file's
  bool ReportedSpmd = false;                  // the one-instance launch grid, said once per kernel
  bool ReadGrid = false;                      // nl.program_id / nl.num_programs was called
  std::map<std::string, std::string> Aliases; // local name -> canonical dotted prefix
  const InputSpecs *Inputs;
  pycore::LaunchGrid Grid; // the instance traced
  Kernel K;
  Dialect KernelDialect = Dialect::Neuronxcc; // from the file's imports (NKI/Dialect.h)
  std::map<std::string, Value> Env;
  std::map<std::string, const Stmt *> Helpers;           // module-level ones are not inlined (their calls stay opaque)
  std::map<std::string, const Stmt *> Classes;           // the module's classes (Value::path("class.NAME"))
  std::vector<std::unique_ptr<syntax::Module>> Literals; // arguments given as Python literals, parsed
  /// The `if` conditions on loop variables the statements being traced sit under (`if j + 1 < n:`): each
  /// statement made there carries it as a mask (sized when it has the MaskBound form) and reads its names.
  struct IterationGuard {
    std::optional<std::vector<MaskBound>> bounds; // nullopt: a condition the model cannot size
    std::vector<MaskBound> unlessAll;             // the else branch of a conjunction (bounds nullopt)
    std::vector<std::string> names;
  };
  std::vector<IterationGuard> Guards;
  /// The guard of an `if` whose condition is known in each iteration (it reads loop variables and
  /// trace-time values only); std::nullopt for a condition on other (run-time) data.
  std::optional<IterationGuard> iterationGuard(const Expr *cond, const Value &value) const;
  // Per-statement scratch while evaluating one statement.
  Statement *Cur = nullptr;
  int CurLoop = -1;

  // ----- diagnostics -----
  void diag(Diagnostic::Severity sev, ByteRange r, std::string msg, Rule rule);

  std::string text(const Expr *e) const { return e ? (CurModule ? *CurModule : M).text(e).str() : ""; }

  // ----- imported modules next to the kernel (NKI/Imports.h) -----
  const ModuleImports *Imports;
  const syntax::Module *CurModule = nullptr; // a followed module whose function is being evaluated
  const SiblingModule *InSibling = nullptr;  // its module: diagnostics there are said at the call
  const Stmt *SiblingDef = nullptr;          // the function of it being evaluated
  ByteRange SiblingCall;                     // the outermost call in the kernel's file
  bool BuildingSiblingEnv = false;           // its module-level names are being evaluated
  bool LastHelperTileWork = false;           // the last scalarHelperCall refused tiles or tile work
  std::map<const SiblingModule *, std::map<std::string, Value>> SiblingEnvs;
  std::map<const syntax::Module *, syntax::FileBindings> SiblingBindings;
  /// Binds the names `m` imports from followed modules into Env (and drops their dotted aliases).
  void bindSiblingImports(const syntax::Module &m);
  /// A followed module's names: its functions (helpers), imports and module constants.
  const std::map<std::string, Value> &siblingEnv(const SiblingModule &sib);
  Value siblingValue(const ImportTarget &t);
  /// Saves which module's code is being evaluated (its aliases, module, function, outermost call and foreign
  /// call) and restores it on scope exit, so a followed module's function runs with its own names.
  struct ModuleScope {
    KernelBuilder &B;
    std::map<std::string, std::string> aliases;
    const syntax::Module *module;
    const SiblingModule *sibling;
    const Stmt *def;
    ByteRange call;
    int foreign;
    explicit ModuleScope(KernelBuilder &b)
        : B(b), aliases(b.Aliases), module(b.CurModule), sibling(b.InSibling), def(b.SiblingDef), call(b.SiblingCall),
          foreign(b.CurForeign) {}
    ModuleScope(const ModuleScope &) = delete;
    ModuleScope &operator=(const ModuleScope &) = delete;
    ~ModuleScope() {
      B.Aliases = std::move(aliases);
      B.CurModule = module;
      B.InSibling = sibling;
      B.SiblingDef = def;
      B.SiblingCall = call;
      B.CurForeign = foreign;
    }
  };
  /// The module (the kernel's file or a followed one) whose code is being evaluated.
  const syntax::Module &currentModule() const { return CurModule ? *CurModule : M; }

  // ----- names -----
  std::string canonical(const Expr *e) const;

  /// Module-level constants (TILE = 128, sizes computed from them) are visible
  /// inside kernels; anything with a call is left alone.
  void bindModuleConstants();

  // ----- parameters -----
  void bindParams(const Stmt *def);
  std::set<int> UnknownShape; // argument tensors whose rank is unknown
  /// An allocation dimension sized `min(E, n - i * E)` (the partial last tile of a loop, as the nki dialect
  /// writes it without masks): the tensor has extent E there, and each whole-dimension access keeps the
  /// first `term` indices for every loop-varying term of the min.
  struct PartialExtent {
    size_t dim = 0;
    int64_t extent = 0;
    std::vector<Affine> varying;
  };
  std::map<int, std::vector<PartialExtent>> PartialExtents; // by tensor id
  /// The MaskBounds of PartialExtents on tensor `tensor`'s dimension `dim`, tile axis `axis`.
  void addPartialExtentBounds(int tensor, size_t dim, int axis);

  // ----- statements -----
  Statement &newStmt(const Stmt *s, StmtKind kind, int parent);

  void block(const std::vector<const Stmt *> &stmts, std::vector<NodeRef> &out, int loop);

  static bool isNoOp(const Stmt *s);

  void statement(const Stmt *s, std::vector<NodeRef> &out, int loop);

  static void recordImport(const Stmt *s, std::map<std::string, std::string> &aliases);

public:
  static void recordModuleImports(const syntax::Module &m, std::map<std::string, std::string> &aliases);
  static std::string canonicalOf(const Expr *e, const std::map<std::string, std::string> &aliases);

private:
  void collectNames(const Stmt *s, Statement &st);

  // ----- loops -----
  void forLoop(const Stmt *s, std::vector<NodeRef> &out, int parent);

  // ----- assignment -----
  void bind(const Expr *target, const Value &v);

  static Value symbolicInt(std::string textual) { return Value::integer(SymInt::symbolic(std::move(textual))); }

  void assign(const Stmt *s);

  /// A tile created while evaluating a call turned out to be written into an
  /// existing destination; it never exists.
  void discardTile(int id);

  void augAssign(const Stmt *s);

  void exprStatement(const Stmt *s);

  void assertion(const Stmt *s);

  void ret(const Stmt *s);

  // ----- accesses -----
  Access wholeAccess(const Value &t, const Expr *at);

  /// Builds the access of `t[subscript]` (t may itself be a view).
  Access access(const Value &t, const Expr *sub);

  // ----- expressions -----
  /// Evaluates an expression. NKI calls record reads in the current statement
  /// and return their result tile. `dest` is the subscript being assigned, so
  /// the result shape of e.g. nl.load can be checked against it later.
  Value eval(const Expr *e, std::optional<Buffer> resultBuffer = std::nullopt, const Expr *dest = nullptr);

  Value compare(const Expr *e);

  std::optional<bool> equalValues(const Value &a, const Value &b);

  Value binary(const std::string &op, const Value &l, const Value &r, ByteRange range, std::string textual = "");
  /// `index < limit` and its variants as a MaskBound; nullopt for a comparison the model cannot size.
  static std::optional<MaskBound> maskBound(const Value &l, const std::string &op, const Value &r);
  /// `min(...)` of integers some of which are affine in loop counters: an IndexVal with minOf.
  std::optional<Value> minOfAffines(const std::vector<Value> &args) const;
  /// The least and greatest value of an affine form over its loops' iterations (trip counts known).
  std::optional<std::pair<int64_t, int64_t>> affineRange(const Affine &a) const;
  /// The value an integer takes on every iteration of its loops, when it is the same on all of them
  /// (an affine form over loops of one iteration, the min of such forms).
  std::optional<int64_t> uniformValue(const IndexVal &x) const;
  /// min(terms) with the terms that are never the least dropped: one left is an affine value, and a
  /// value that is the same on every iteration is that integer.
  Value minValue(std::shared_ptr<std::vector<Affine>> terms) const;
  /// `x + c`, `x - c`, `k * x` (k > 0) of such a min, which stays one; nullopt for anything else.
  std::optional<Value> minArithmetic(const std::string &op, const Value &l, const Value &r) const;
  /// A shape extent: an integer, or an affine value that is the same on every iteration of its loops.
  SymInt extentOf(const Value &x) const;
  /// A conjunct a bounded slice puts on the current statement (its tiles are partial in some iterations).
  void addSliceBound(const MaskBound &m);
  /// The statement keeps the first `size` indices (an affine value) of its tile's axis `axis` of extent `extent`.
  void addSizeBound(int axis, int64_t extent, const Affine &size);

  Value attribute(const Expr *e);

  Value subscript(const Expr *e);

  // ----- calls -----
  std::vector<Value> CallArgs;

  /// CPython runs every call of a kernel when it is traced; a call that is neither NKI, numpy, math, a
  /// side-effect-free builtin nor a function of this file runs host code that accelopt neither evaluates
  /// nor analyses (a shell command in an f-string, a file read). Returns why, for the host-code rule.
  std::optional<std::string> hostCodeCall(const Value &fn, const Expr *e) const;

  Value call(const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest);

  /// A call of a helper function of the file (`div_ceil(a.shape[0], 128)`) whose arguments hold no tensor
  /// and whose body only assigns and returns trace-time values computed by builtins, `math` and such
  /// helpers: its result, as CPython computes it when tracing. std::nullopt for any other helper (the
  /// call stays opaque).
  std::optional<Value> scalarHelperCall(const Stmt &def, const Expr *e, const std::vector<Value> &args,
                                        const std::vector<Value> &keywordArgs);
  /// `Cls(...)`: an Object with the class attributes and the @dataclass fields bound to the arguments.
  Value construct(const Stmt &cls, const Expr *e);
  /// A call of a function defined in the kernel (a closure over the kernel's names), as a statement or the
  /// value of an assignment: its body is traced in place, so its loops and statements join the IR (each
  /// call adds them again). Returns false (and does nothing) for any other statement.
  bool inlineNestedCall(const Stmt *s, std::vector<NodeRef> &out, int loop);
  /// Traces the calls of kernel-defined functions nested in `s`'s expressions before `s` (the
  /// statement then reads their results from InlinedCalls).
  void inlineCallsInExpressions(const Stmt *s, std::vector<NodeRef> &out, int loop);
  /// Traces one call of a function defined in the kernel where it is called; its result, or
  /// nullopt when the call stays opaque (not such a function, trace-time only, too deep).
  std::optional<Value> inlineCall(const Stmt *s, const Expr *call, std::vector<NodeRef> &out, int loop);
  std::map<const Expr *, Value> InlinedCalls; // results of calls inlined ahead of the statement being traced
  std::optional<Value> InlineResult;          // the value a `return` of the nested function being inlined gave
  bool Returned = false;                      // a `return` ended the nested function being inlined
  int InlineDepth = 0;
  int InlineCalls = 0; // nested-function calls traced in place for this kernel
  /// The call of another file's function being traced (a Kernel::foreignCalls index), -1 in the kernel's own
  /// code: statements and loops made meanwhile carry it.
  int CurForeign = -1;
  /// Once traced: the ranges of what foreign calls made become the call's place in the kernel's file.
  void placeForeignNodes();
  /// Past this many traced calls (recursion fanning out: f calls f twice) the rest stay opaque, so tracing
  /// ends in well under a second.
  static constexpr int kMaxInlineCalls = 2000;
  int HelperDepth = 0;                    // nested scalar helper calls being evaluated
  int HelperCalls = 0;                    // scalar helper calls evaluated for this kernel
  std::map<std::string, Value> ModuleEnv; // the module's names (constants, helpers): a helper's globals

  /// Builtins and NKI intrinsics are the trace-time Python core's (NKI/PyCore); these translate values.
  pycore::PyValue toPy(const Value &v) const;
  Value fromPy(const pycore::PyValue &p, const std::vector<Value> &args, const Expr *e) const;
  Value builtinCall(const std::string &fn, const Expr *e);
  Value callIntrinsic(const pycore::IntrinsicInfo &intrinsic, const Expr *e);

  /// Positional and keyword arguments matched to the op's parameters.
  std::vector<const Expr *> bindArgs(const OpInfo *op, const Expr *e);

  void readOperand(const Value &v, const Expr *at, std::string_view param = {});

  std::vector<int64_t> tileShapeOf(const Value &v) const;

  DType dtypeOf(const Value &v) const;

  Value newTile(const OpInfo *op, std::vector<int64_t> shape, Buffer buffer, DType dtype, ByteRange range);
  /// The element of a list whose elements are all the same tile (or lists of one same tile).
  static std::optional<Value> uniformElement(const Value &list);

  std::optional<DType> dtypeValue(const Value &v) const;

  /// `preBound`: the call's arguments already bound to the op's parameters (a current-dialect call).
  Value opCall(const OpInfo *op, const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest,
               const std::vector<const Expr *> *preBound = nullptr);

  // ----- the current `nki` dialect (FrontEnd/Dialect.cpp) -----
  /// A destination-passing call of the current dialect, built as its 0.1 spelling `dst = op(...)`.
  Value dialectCall(const DialectApi &api, const Expr *e);
  void reportRemovedApi(const std::string &canonicalName, const Expr *e);
  void reportRemovedKeywords(const Expr *e);
  /// t.ap(pattern=[[step, num], ...], offset=...): all of t may be read; the tile has the pattern's shape.
  Value accessPattern(const Value &m, const Expr *e);
  /// nisa.iota's and nisa.affine_select's pattern= has the GpSimd engine's form ([step, num] pairs, up to 4).
  void checkPattern(const DialectApi &api, const Expr *e, const Value &v);
  /// True when a statement before the current one wrote `tensor`.
  bool writtenBefore(int tensor) const;
  /// psum-banks: the PSUM tensors live at once fit the 8 banks (each starts on its own).
  void checkPsumBanks();

  std::vector<int64_t> intList(const Value &v) const;

  Value allocation(const OpInfo *op, const Expr *e, const Value &shapeVal, DType dtype, Buffer buffer, bool dtypeGiven,
                   const std::vector<const Expr *> &bound);

  Value methodCall(const Value &m, const Expr *e);
  /// `t.view(dtype)`: an alias of t's bytes read as `to` (no data movement, so nothing to cost); the last
  /// dimension scales by the size ratio and must hold a whole number of `to` elements.
  Value dtypeView(const Value &m, DType to, const Expr *e);

  // ----- Python lists of tiles (FrontEnd/TileLists.cpp) -----
  /// `lst.append(item)` of a fresh tile (or of an inner list of tiles) made in the loop that fills a
  /// list made outside it: the tile becomes one tensor with a leading block dimension per list level,
  /// as a 0.1 kernel writes it. False (nothing changed) for any other append.
  bool appendAsBlock(Value &list, const Value &item);
  /// `lst[i] = tile` of a fresh tile into a list made outside the loop (`[None] * n` filled by index).
  bool storeAsBlock(Value &list, const Value &index, const Value &item);
  /// `lst[i]` of a list of block tiles: the view of the tensor's block.
  std::optional<Value> blockElement(const Value &list, const Value &index);
  /// `[elt for x in range(n)]` (or over a list): a fresh tile per element is one tensor with a leading
  /// block dimension of n; other elements are evaluated for each x.
  Value comprehension(const Expr *e);
  /// Adds a leading block dimension of `extent` to `tensor`, indexed by `index` in the statements made
  /// since `fromStmt` and in the names bound now; the tensor then lives in loop `scope`.
  void addBlockDim(int tensor, int64_t extent, const Affine &index, int fromStmt, int scope);
};

bool isKernelDecorator(const Expr *d, const std::map<std::string, std::string> &aliases);

} // namespace accelopt::nki::frontend
