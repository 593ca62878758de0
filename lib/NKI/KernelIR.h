// The kernel IR: loops, statements, tensors and affine index expressions of one
// @nki.jit function, each with its source range. Built by the front end
// (FrontEnd.h); read by the verifier, rewrites, interpreter, model and LSP.
#pragma once

#include "NKI/OpTable.h"
#include "NKI/Types.h"
#include "Syntax/PyAST.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::nki {

using syntax::ByteRange;

/// An integer fixed at trace time: a value when input shapes are known, else
/// the expression that computes it (e.g. "delta.shape[0] // 128").
struct SymInt {
  std::optional<int64_t> value;
  std::string text;

  static SymInt known(int64_t v) { return {v, std::to_string(v)}; }
  static SymInt symbolic(std::string t) { return {std::nullopt, std::move(t)}; }
  bool isKnown() const { return value.has_value(); }
  const std::string &str() const { return text; }
};

/// constant + sum(coeff * n_loop) over normalised loop counters n in [0, trip).
/// (A loop variable i = start + step * n, so it is affine in n too.)
struct Affine {
  int64_t constant = 0;
  llvm::SmallVector<std::pair<int, int64_t>, 2> terms; // (loop id, coeff), sorted by loop id
  bool known = true;                                   // false when it depends on something unknown or non-affine

  static Affine constantOf(int64_t c) {
    Affine a;
    a.constant = c;
    return a;
  }
  static Affine unknown() {
    Affine a;
    a.known = false;
    return a;
  }
  bool isConstant() const { return known && terms.empty(); }
  int64_t coeff(int loop) const {
    for (auto &[l, c] : terms)
      if (l == loop) return c;
    return 0;
  }
  void add(const Affine &o, int64_t scale = 1);
  void scale(int64_t s);
};

/// coeff * k with k in [0, extent), placed on `axis` of the access's tile.
struct ArangeTerm {
  int axis = 0;
  int64_t extent = 1;
  int64_t coeff = 1;
};

/// The index set of one tensor dimension: base + sum of arange terms.
struct IndexDim {
  Affine base;
  llvm::SmallVector<ArangeTerm, 1> aranges;
  bool full = false; // the whole dimension (":" or implied by "..." / missing indices)
};

struct Access {
  int tensor = -1;
  std::vector<IndexDim> dims;     // one per tensor dimension
  std::vector<int64_t> tileShape; // shape of the tile this access moves (0 = unknown extent)
  ByteRange range;                // the subscript (or the name for whole-tensor uses)
  std::string param;              // the op parameter this operand binds ("moving", "src", ...)
  bool isWrite = false;
  bool isAccumulate = false; // `+=` (or loop_reduce) destination
  bool usesBasic = false;    // slices in the subscript
  bool usesAdvanced = false; // nl.arange terms in the subscript
  bool exact = true;         // false when some dimension could not be resolved
  /// Reached through a Python list the kernel filled (`tiles[k]`): the list keeps each loop
  /// iteration's tile alive, so its use outside the allocating loop is legal.
  bool throughList = false;
};

enum class LoopKind : uint8_t { Affine, Sequential, Static, PyRange };
std::string_view loopKindName(LoopKind k); // "affine_range", ..., "range"

/// A child of a loop or of the kernel body, in source order.
struct NodeRef {
  bool isLoop = false;
  int index = -1;
  bool operator==(const NodeRef &o) const { return isLoop == o.isLoop && index == o.index; }
};

struct Loop {
  int id = -1;
  LoopKind kind = LoopKind::Affine; // as written (a Python `range` is PyRange)
  /// How the compiler runs it: `kind` with a Python `range` resolved by the kernel's dialect
  /// (resolvedLoopKind, NKI/Dialect.h), never PyRange. The verifier, the model and the planner read this.
  LoopKind runsAs = LoopKind::Affine;
  std::string iv; // induction variable name
  SymInt start, stop, step, tripCount;
  int parent = -1; // enclosing loop id, -1 at kernel level
  int depth = 0;
  std::vector<NodeRef> body;
  const syntax::Stmt *syntax = nullptr;
  ByteRange range;       // the whole for statement
  ByteRange headerRange; // "for i in nl.affine_range(4):"
  ByteRange iterRange;   // the iterator call "nl.affine_range(4)"
  ByteRange bodyRange;
  int foreign = -1; // traced from another file: its Kernel::foreignCalls index (every range is the call's)
};

enum class StmtKind : uint8_t {
  Alloc,      // x = nl.ndarray(...) / zeros / full / shared_constant
  Op,         // x = <op>(...) (new tile) or t[idx] = <op>(...) (write into t)
  Accumulate, // t[idx] += <expr>
  Store,      // nl.store(...) as a statement
  Assign,     // trace-time Python assignment (ints, index expressions, views)
  Assert,
  Return,
  Python, // any other statement (if, calls to helpers, ...)
};
std::string_view stmtKindName(StmtKind k);

/// One conjunct of a `mask=` the model can size: along tile axis `axis` (0: partitions) index t in
/// [0, extent) is kept when coeff * t + base < 0, coeff +1 or -1, base affine in the loop counters (every
/// comparison of one unit-stride arange with a bound normalises to this). axis -1: a predicate on the loop
/// counters alone (base < 0 keeps the whole tile, else none of it).
struct MaskBound {
  int axis = -1;
  int64_t extent = 0;
  int64_t coeff = 1;
  Affine base;
  /// Indices kept in an instance whose base evaluates to `base`.
  int64_t kept(int64_t base) const {
    if (axis < 0) return base < 0 ? extent : 0;
    if (coeff > 0) return std::clamp<int64_t>(-base, 0, extent); // t < -base
    return extent - std::clamp<int64_t>(base + 1, 0, extent);    // t > base
  }
};

struct Statement {
  int id = -1;
  StmtKind kind = StmtKind::Python;
  const OpInfo *op = nullptr; // the NKI call, if any
  std::string callee;         // canonical name of that call ("nisa.nc_matmul")
  std::vector<Access> reads;
  std::vector<Access> writes;
  std::vector<std::string> defines; // Python names bound here
  std::vector<std::string> uses;    // Python names read here
  int parent = -1;                  // enclosing loop id
  int definesTensor = -1;           // the tensor an Alloc or `x = op(...)` creates
  bool hasMask = false;
  /// The mask's conjuncts when every one has the MaskBound form (else empty, and the mask is not sized).
  std::vector<MaskBound> maskBounds;
  /// In the else branch of an `if` on a conjunction of loop-only bounds (axis -1): the statement runs in
  /// the iterations where not all of them hold.
  std::vector<MaskBound> unlessAll;
  /// Flag parameters of the call that evaluated to true at trace time (transpose_x=True).
  std::vector<std::string> setFlags;
  /// The engine the call's `engine=` argument names (Unknown: not given, or left to the compiler).
  Engine engine = Engine::Unknown;
  const syntax::Stmt *syntax = nullptr; // in another file's syntax tree when `foreign` >= 0
  ByteRange range;
  /// Traced from a function of another file: its Kernel::foreignCalls index. Its ranges (and its accesses')
  /// are then the called name at the call in the kernel's file.
  int foreign = -1;

  bool flag(std::string_view name) const {
    for (const std::string &f : setFlags)
      if (f == name) return true;
    return false;
  }
};

struct Tensor {
  int id = -1;
  std::string name; // Python name at definition ("" for anonymous)
  Buffer buffer = Buffer::Unknown;
  std::vector<SymInt> shape;
  int parDim = 0; // index of the partition dimension (-1 for HBM)
  DType dtype = DType::Float32;
  bool dtypeKnown = true;
  int definedBy = -1; // statement id, -1 for kernel arguments
  int scope = -1;     // loop the tensor is defined in (-1: kernel level)
  bool isArgument = false;
  bool isOutput = false;  // returned by the kernel
  bool isTile = false;    // created by an op result rather than an allocation
  bool shapeKnown = true; // false for arguments without input shapes (may even be scalars)
  int aliasOf = -1;       // reshape views of another tensor
  /// The op-table row whose result this tile is (a call or a tile operator such as `a * b`), so a
  /// layer that meets the tile inside another call's arguments knows what computed it.
  const OpInfo *producer = nullptr;
  ByteRange range;

  /// Dimensions before the partition dimension are block dimensions.
  int blockDims() const { return parDim > 0 ? parDim : 0; }
  /// Bytes of one tile in one partition (free dims after the partition dim), if known.
  std::optional<int64_t> bytesPerPartition() const;
  /// Bytes per partition of all blocks together, if known.
  std::optional<int64_t> totalBytesPerPartition() const;
  std::string shapeString() const;
};

struct KernelParam {
  std::string name;
  int tensor = -1;              // for array arguments
  std::optional<double> scalar; // for scalar arguments with a known value
};

/// A front-end diagnostic (unknown API, unsupported construct, ...).
struct Diagnostic {
  enum Severity : uint8_t { Error, Warning, Note } severity = Error;
  uint32_t offset = 0;
  uint32_t endOffset = 0;
  std::string message;
  std::string rule; // e.g. "partition-dim"
};

/// A call of a function defined in another file of the user's project (`from .utils import load_tile`),
/// traced in place like a function of the kernel's file. The statements and loops its body produced carry
/// its index; for diagnostics and rewrites they sit at the called name of the outermost such call in the
/// kernel's file, and no rewrite edits them (the engine refuses, naming the function and its file).
struct ForeignCall {
  std::string function;                         // "load_tile"
  std::string origin;                           // where it is defined: "utils.py:3:1"
  const syntax::SourceBuffer *source = nullptr; // its file (owned by KernelFile::imports); syntax ranges are in it
  ByteRange callee;                             // the called name at the outermost call in the kernel's file
  ByteRange statement;                          // the kernel's statement holding that call
};

struct Kernel {
  std::string name;
  const syntax::Stmt *def = nullptr;
  const syntax::SourceBuffer *source = nullptr; // owned by the KernelFile's module
  std::vector<KernelParam> params;
  std::vector<Loop> loops;
  std::vector<Statement> stmts;
  std::vector<Tensor> tensors;
  std::vector<NodeRef> body;
  std::vector<Diagnostic> diagnostics;
  std::vector<ForeignCall> foreignCalls;
  bool shapesKnown = true;
  /// The file's NKI dialect (from its imports): rewrites emit calls in it.
  Dialect dialect = Dialect::Neuronxcc;
  /// The launch grid's extents (`kernel[2, 3]`, --grid); empty: one instance. This IR is instance 0's.
  std::vector<int64_t> grid;
  /// The IR of instances 1.. (row-major) when the trace reads nl.program_id; null when every instance
  /// traces alike (then the grid's work is instance 0's times the grid's size).
  std::shared_ptr<const std::vector<Kernel>> gridInstances;
  int64_t gridSize() const;

  const Loop *loopById(int id) const { return id >= 0 && id < int(loops.size()) ? &loops[id] : nullptr; }
  /// Resolves "L3", "S12", or a unique induction variable name; null if none/ambiguous.
  std::optional<NodeRef> resolve(std::string_view ref) const;
  /// Loop ids from outermost to the loop directly enclosing `loop` (inclusive).
  std::vector<int> loopNest(int loop) const;
  /// The children list containing `node` (kernel body or a loop body).
  const std::vector<NodeRef> &siblingsOf(NodeRef node) const;
  int parentOf(NodeRef node) const;
  ByteRange rangeOf(NodeRef node) const;
  /// True if loop `outer` encloses loop/statement `node` (at any depth).
  bool encloses(int outer, NodeRef node) const;
  /// The call of another file's function that `node` was traced from; null for the kernel's own code.
  const ForeignCall *foreignOf(NodeRef node) const;
};

} // namespace accelopt::nki
