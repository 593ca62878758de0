// The kernel evaluator: runs the kernel's trace-time Python concretely (loops are executed, helper
// functions called) over the runtime values of Values.h. Its methods live in one file per concept
// (Statements, Expressions, Views, Writes, Calls); the NKI runtime calls are the two hooks the
// Interpreter of Evaluator.cpp implements.
#pragma once

#include "Interp/Evaluator/Values.h"
#include "Interp/TileOps.h"
#include "NKI/Dialect.h"
#include "NKI/OpTable.h"
#include "NKI/PyCore.h"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace accelopt::interp::evaluator {

class KernelEvaluator {
public:
  /// Calls fn(k) for every coordinate vector k of `extent`, row-major.
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
  KernelEvaluator(const nki::KernelFile &file, const nki::Kernel &kernel, const RunOptions &options)
      : File(file), M(*file.module), K(kernel), Opts(options) {
    Frames.push_back({0, 0, 0}); // serial 0: outside every affine loop
  }

  virtual ~KernelEvaluator() {
    // A frame holding a function that closes over it is a reference cycle: break it.
    for (auto &frame : Captured) frame->clear();
  }

  RunResult run(std::vector<KernelArg> args);

protected:
  using Scope = ScopeMap;
  const nki::KernelFile &File;
  const syntax::Module &M;
  const nki::Kernel &K;
  const RunOptions &Opts;
  Scope *Env = nullptr;
  Scope *Globals = nullptr;
  std::vector<std::unique_ptr<syntax::Module>> Literals; // kernel arguments given as Python literals, parsed
  std::shared_ptr<Scope> Frame; // the scope Env points into, when it is a function's (closures capture it)
  std::shared_ptr<std::vector<std::shared_ptr<Scope>>> Enclosing; // the running function's closure scopes
  std::vector<std::shared_ptr<Scope>> Captured; // frames closures captured: cleared at the end (cycles)
  std::vector<std::string> Warnings;
  RunStats Stats;
  uint64_t DropoutCalls = 0; // seeds each dropout call's draws (TileOps dropout)
  std::chrono::steady_clock::time_point Start;
  std::vector<AffineFrame> Frames;
  uint32_t CurrentSerial = 0;
  uint32_t NextInstance = 1;
  /// Tensors holding race stamps. When the outermost affine loop ends, no later write can conflict
  /// with its stamps (a new loop instance shares no frame with them), so they are released.
  std::vector<std::weak_ptr<Tensor>> Stamped;
  void releaseStamps();
  int CallDepth = 0;
  nki::pycore::LaunchGrid Grid; // the instance running (K.grid's; none: one instance)
  bool ReportedSpmd = false;    // the no-grid note, once per run
  /// shared_hbm tensors the kernel allocates: one per allocation for the whole grid, the n-th allocation
  /// of every instance being the same tensor (NKI: visible to all instances).
  std::vector<std::shared_ptr<Tensor>> SharedHbm;
  size_t SharedHbmNext = 0; // this instance's next allocation

  struct ReturnSignal {
    Value value;
  };
  struct BreakSignal {};
  struct ContinueSignal {};

  std::string text(const Expr *e) const { return e ? (CurModule ? *CurModule : M).text(e).str() : ""; }

  // ----- imported modules next to the kernel (NKI/Imports.h) -----
  const syntax::Module *CurModule = nullptr; // a followed module whose function is running
  std::map<const nki::SiblingModule *, std::shared_ptr<Scope>> SiblingScopes;
  /// Binds the names `m` imports from followed modules into `scope`.
  void bindSiblingImports(const syntax::Module &m, Scope &scope);
  /// A followed module's globals (its imports, functions and constants), built at its first import.
  std::shared_ptr<Scope> siblingScope(const nki::SiblingModule &sib);
  /// The module (the kernel's file or a followed one) whose code is running.
  const syntax::Module &currentModule() const { return CurModule ? *CurModule : M; }

  // ----- names and imports -----
  void importInto(const Stmt *s, Scope &scope);

  Value lookup(const Expr *e);

  void chargeValue(uint64_t count, uint64_t itemBytes, llvm::StringRef what, const syntax::ByteRange &at);

  // ----- statements -----
  void checkTime(const syntax::ByteRange &r);

  void execBlock(const std::vector<const Stmt *> &stmts);

  void exec(const Stmt *s);

  void bind(const Expr *target, const Value &v);

  static bool isRangeCall(const Expr *call);

  /// A body of `pass`, docstrings and loops over ranges with such bodies does nothing when run.
  static bool hasNoEffect(const std::vector<const Stmt *> &body);

  void forLoop(const Stmt *s);

  void augAssign(const Stmt *s);

  // ----- expressions -----
  static std::string describe(const Value &v);

  std::string toText(const Value &v);

  bool truthy(const Value &v, const Expr *at);

  Value eval(const Expr *e);

  Value compare(const Expr *e);
  /// `[elt for x in iterable]`: its variable is the comprehension's own, as in Python 3.
  Value comprehension(const Expr *e);

  bool equal(const Value &a, const Value &b);

  IndexArr asIndexArr(const Value &v, const Expr *at);

  Value binary(const std::string &op, const Value &l, const Value &r, const syntax::ByteRange &range);

  Value attribute(const Expr *e);
  static bool isIndexGrid(const Value &v); // the tuple nl.mgrid[...] returns

  std::optional<nki::DType> dtypeOf(const Value &v);

  // ----- subscripts: views and index lifting -----
  Value subscript(const Expr *e);

  View wholeView(const TensorPtr &t);

  /// Builds the strided view of `base[subscript]`.
  View makeView(const Value &base, const Expr *sub, const Mask *mask);

  /// Turns subscript items into one index per dimension (IndexArr over tile axes) with
  /// the dimension's size. Basic slices get their own axes; advanced (arange) indices
  /// share the broadcast grid; integers are rank 0.
  std::vector<std::pair<IndexArr, int64_t>> indexComponents(const Expr *sub, const std::vector<int64_t> &shape);

  void applyComponents(View &v, const std::vector<std::pair<IndexArr, int64_t>> &comps,
                       const llvm::SmallVector<int64_t, 6> &strides, const Expr *sub);

  /// Bounds: every index within its dimension where the mask allows.
  void checkBounds(const View &v, const Mask *mask, const syntax::ByteRange &at);

  /// Copies the region into a contiguous [P, F] buffer (P = extent[0]).
  NDArray gather(const View &v, const Mask *mask, const syntax::ByteRange &at, bool checkUninit);
  /// The error of a read of never-written memory (gather's, and the one a carried lane reports later).
  static std::string neverWrittenMessage(const std::string &tensor, int64_t element, const std::vector<int64_t> &shape);
  /// Where the undefined lanes of `t` (or of the tensor it views) were read from never-written memory.
  static std::shared_ptr<const UndefinedOrigin> undefinedOriginOf(const Tensor *t);

  /// Writes `value` (broadcast to the region) into the view, rounding to its dtype.
  /// `combine` merges with the old element for accumulation.
  void scatter(const View &v, const NDArray &value, const Mask *mask, const syntax::ByteRange &at,
               const std::function<float(float oldv, float newv)> *combine, bool raceCheck);
  void scatterInto(const View &v, const NDArray &value, const Mask *mask, const syntax::ByteRange &at,
                   const std::function<float(float oldv, float newv)> *combine, bool raceCheck);
  /// A dtype view (`t.view(nl.uint8)`) reads its tensor's current bytes, and a write through it stores
  /// the bytes back: `toBase` re-encodes the view into the tensor it reinterprets.
  void syncReinterpreted(Tensor &view, bool toBase, const syntax::ByteRange &at);

  static std::string elementIndex(const std::vector<int64_t> &shape, int64_t flat);

  /// Two writes conflict when some affine loop instance encloses both in different iterations.
  bool conflicting(uint32_t a, uint32_t b) const;

  // ----- operands -----
  /// A 2-D, unit-stride, fp32 view used in place (no copy); null if the view has
  /// another layout. Bounds are checked; reads of never-written data are not.
  std::optional<Tile> directTile(const View &v, const syntax::ByteRange &at);

  /// A `dst += matmul(...)` destination the matmul may accumulate into directly.
  std::optional<Tile> MatmulAccumulator;
  bool MatmulAccumulated = false;

  View viewOf(const Value &v, const Expr *at);

  NDArray tileOf(const Value &v, const Expr *at, const Mask *mask, bool checkUninit = true);

  static ConstTile tile2d(const NDArray &a) { return a.asTile(); }

  TensorPtr newTile(std::vector<int64_t> shape, nki::DType dtype, nki::Buffer buffer, const std::string &name,
                    const syntax::ByteRange &at);

  float scalarOf(const Value &v, const Expr *at);

  // ----- calls -----
  void assignInto(const Expr *target, const Expr *valueExpr, const std::string *augOp);
  /// The mask= of the NKI call that produced the last result tile: an assignment
  /// of that tile writes only the masked-in elements.
  std::shared_ptr<Mask> LastMask;

  /// Writes a tile or number into `dst`; errors about the write point at `dstAt`
  /// (the destination expression) when given, else at the value.
  void writeValue(const View &dst, const Value &rhs, const Expr *at, const Mask *mask,
                  const std::function<float(float, float)> *combine, const Expr *dstAt = nullptr);

  /// PSUM accumulation group: `dst += nc_matmul(...)` into a plain 2-D fp32
  /// destination runs as one BLAS call with beta = 1, without copies.
  bool accumulateMatmulInPlace(const View &dst, const Expr *valueExpr, const std::string &op);

  void accumulateInto(const View &dst, const Value &rhs, const std::string &op, const syntax::ByteRange &at,
                      const Mask *mask);

  Value call(const Expr *e, View *dest);

  /// The argument at `position`, or given as `keyword=` (np.identity(n=128)); a clear error if neither.
  Value argument(const Expr *e, const std::vector<Value> &args, size_t position, std::string_view keyword,
                 const std::string &callee);

  std::vector<Value> positional(const Expr *e);

  int64_t intArg(const Value &v, const Expr *at);
  /// numpy broadcasting of an elementwise op's operands of one rank where the tile view alone cannot
  /// ([P, A, 1, 1] against [P, A, 3, 3]); (P,1), (1,F) and scalar operands stay as they are.
  void broadcastTogether(std::initializer_list<NDArray *> operands, const Expr *e);

  /// Builtins and NKI intrinsics are the trace-time Python core's (NKI/PyCore); these translate values.
  nki::pycore::PyValue toPy(const Value &v, const Expr *at);
  Value fromPy(const nki::pycore::PyValue &p, const std::vector<Value> &args, const Expr *at);
  Value builtin(const std::string &fn, const Expr *e);
  Value callIntrinsic(const nki::pycore::IntrinsicInfo &intrinsic, const Expr *e);

  Value callPython(const Value &fn, const Expr *e);
  /// `Cls(...)`: an Object holding the class attributes and a @dataclass's fields.
  Value construct(const Stmt &cls, const Expr *e);
  /// The attribute `name` of class `cls` (its body's assignment, evaluated in the module's scope).
  std::optional<Value> classAttribute(const Stmt &cls, const std::string &name);

  Value methodCall(const Value &m, const Expr *e);

  /// Arguments of an NKI call matched to the op table's parameters.
  struct Bound {
    std::vector<const Expr *> exprs;
    std::vector<Value> values;
    std::vector<bool> given;
  };

  Bound bindArgs(const nki::OpInfo *op, const Expr *e);

  // ----- the current `nki` dialect (Evaluator/Dialect.cpp) -----
  /// A destination-passing call: the op-table row's result written (or accumulated) into dst.
  Value dialectCall(const nki::DialectApi &api, const Expr *e);
  bool inPlaceAccumulation(const std::function<const Expr *(std::string_view)> &exprOf, const View &dst);
  std::tuple<int64_t, int64_t, std::vector<int64_t>>
  affinePattern(const nki::DialectApi &api, const std::function<const Expr *(std::string_view)> &exprOf,
                const View &dst);
  /// t.ap(pattern=[[step, num], ...], offset=): a strided view over the flattened tensor.
  Value accessPattern(const Value &m, const Expr *e);
  /// The current-dialect binding the next bindArgs uses instead of the op row's 0.1 order.
  const nki::DialectBinding *PendingBinding = nullptr;
  const nki::Dialect KernelDialect = nki::dialectOfImports(M);

  const Value *param(const nki::OpInfo *op, const Bound &b, std::string_view name);
  const Expr *paramExpr(const nki::OpInfo *op, const Bound &b, std::string_view name);
  bool flag(const nki::OpInfo *op, const Bound &b, std::string_view name);

  AluOp aluFrom(const Value *v, const Expr *at);

  PerPartition perPartition(const Value *v, const Expr *at, std::vector<NDArray> &keep, float dflt);

  static Tile tileView(NDArray &a) { return a.asTile(); }

  /// The NKI runtime: an op-table call and operator arithmetic on tiles (Evaluator.cpp).
  virtual Value nkiCall(const nki::OpInfo *op, const Expr *e, View *dest) = 0;
  virtual Value tileArithmetic(const std::string &op, const Value &l, const Value &r,
                               const syntax::ByteRange &range) = 0;

  static bool isLoopIterator(const std::string &n) { return nki::isLoopIterator(n); }

public:
  std::string location(uint32_t offset) const { return File.source().location(offset); }
};

} // namespace accelopt::interp::evaluator
