// The interpreter's runtime values: tensors, affine index arrays, strided views, masks and the
// trace-time Python values the evaluator computes with.
#pragma once

#include "Interp/Interpreter.h"
#include "NKI/KernelIR.h"
#include "Syntax/PyAST.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace accelopt::interp::evaluator {

using syntax::Expr, syntax::ExprKind, syntax::Stmt;
namespace PyStmt = syntax;

/// A runtime failure at a source position; converted to llvm::Error at the API boundary.
struct RuntimeError {
  uint32_t offset;
  std::string message;
  bool inSibling = false; // already said at the call in the kernel's file, naming its place in another file
};

[[noreturn]] inline void fail(const syntax::ByteRange &r, std::string msg) {
  throw RuntimeError{r.begin, std::move(msg)};
}

/// Race detection: the affine iteration serial of the last write of each element of a tensor.
/// One stamp per block of kBlock elements while a block is written whole with one serial (the
/// common case: tile rows), and one per element for the blocks written in parts, so that a
/// full-size tensor does not carry 4 bytes of stamps per element.
class RaceStamps {
public:
  static constexpr int64_t kBlock = 64;
  bool empty() const { return Blocks.empty(); }
  void reset(int64_t elements) {
    Blocks.assign(size_t((elements + kBlock - 1) / kBlock), 0);
    Exact.clear();
    Exact.resize(Blocks.size());
  }
  void release() {
    std::vector<uint32_t>().swap(Blocks);
    std::vector<std::unique_ptr<uint32_t[]>>().swap(Exact);
  }
  uint32_t get(int64_t i) const {
    size_t b = size_t(i / kBlock);
    return Exact[b] ? Exact[b][i % kBlock] : Blocks[b];
  }
  void set(int64_t i, uint32_t v) {
    size_t b = size_t(i / kBlock);
    if (!Exact[b]) {
      if (Blocks[b] == v) return;
      Exact[b].reset(new uint32_t[kBlock]);
      std::fill(Exact[b].get(), Exact[b].get() + kBlock, Blocks[b]);
    }
    Exact[b][i % kBlock] = v;
  }
  /// Whether every element of [lo, lo + n) holds 0 or `v` (then no write of another iteration can
  /// conflict): one comparison per whole block, so a tile row's check costs no per-element lookups.
  bool onlyZeroOr(int64_t lo, int64_t n, uint32_t v) const {
    for (int64_t i = lo, end = lo + n; i < end;) {
      size_t b = size_t(i / kBlock);
      int64_t blockEnd = std::min(end, int64_t(b + 1) * kBlock);
      if (!Exact[b]) {
        if (Blocks[b] != 0 && Blocks[b] != v) return false;
      } else {
        for (int64_t j = i; j < blockEnd; ++j)
          if (uint32_t s = Exact[b][j % kBlock]; s != 0 && s != v) return false;
      }
      i = blockEnd;
    }
    return true;
  }
  /// Elements [lo, lo + n) all get `v`: whole blocks collapse back to one stamp.
  void setRange(int64_t lo, int64_t n, uint32_t v) {
    int64_t i = lo, end = lo + n;
    for (; i < end && i % kBlock; ++i) set(i, v);
    for (; i + kBlock <= end; i += kBlock) {
      size_t b = size_t(i / kBlock);
      Blocks[b] = v;
      Exact[b].reset();
    }
    for (; i < end; ++i) set(i, v);
  }

private:
  std::vector<uint32_t> Blocks;
  std::vector<std::unique_ptr<uint32_t[]>> Exact;
};

/// Where lanes of never-written memory were first read into a computation (`t` partly written, then
/// `nl.exp(t)`): the read's place and its error, reported when those lanes reach a stored result.
struct UndefinedOrigin {
  syntax::ByteRange at;
  std::string message;
};

struct Tensor {
  NDArray data;
  nki::Buffer buffer = nki::Buffer::SBUF;
  std::string name;
  int parDim = 0;                 // -1 for HBM
  RaceStamps stamps;              // race detection: affine iteration serial of the last write
  std::shared_ptr<Tensor> viewed; // a reshape view: the tensor whose storage `data` borrows
  /// A dtype view (`t.view(nl.uint8)`): the tensor whose bytes `data` holds decoded (synced at each access).
  std::shared_ptr<Tensor> reinterprets;
  bool written = false; // some element was stored (a kernel's outputs written into its arguments)
  /// Set when undefined lanes of this tensor were computed from never-written memory (else from a mask).
  std::shared_ptr<const UndefinedOrigin> undefinedFrom;
};
using TensorPtr = std::shared_ptr<Tensor>;

/// c + sum(coeff[a] * k[a]), k[a] in [0, extent[a]); rank = extent.size().
struct IndexArr {
  int64_t c = 0;
  llvm::SmallVector<int64_t, 4> coeff;
  llvm::SmallVector<int64_t, 4> extent;
  /// The extents of the nl.mgrid the index was built from (empty for nl.arange terms). Indexing broadcasts
  /// the open grid (`extent`); a value made of grid fields (nisa.iota(3 * g.y + g.z)) has the whole grid's
  /// shape, as numpy.mgrid's dense arrays do.
  llvm::SmallVector<int64_t, 4> grid;
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
  struct DimIndex {
    IndexArr idx;
    int64_t size;
  };
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
        if (ax == rank - 1)
          c = g.coeff[a];
        else
          base += g.coeff[a] * k[ax];
      }
      if (c == 0) {
        if (base < 0) return {0, 0};
      } else if (c > 0) {
        lo = std::max(lo, base >= 0 ? 0 : (-base + c - 1) / c); // j >= ceil(-base / c)
      } else {
        if (base < 0) return {0, 0};
        hi = std::min(hi, base / -c + 1); // j <= floor(base / -c)
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
/// Names bound in one Python scope (a frame, the module, an object's attributes).
using ScopeMap = std::unordered_map<std::string, Value>;

struct Value {
  enum Kind : uint8_t {
    None,
    Bool,
    Int,
    Float,
    Str,
    Tuple,
    List,
    Dict,
    Path,
    PyFunc,
    TensorV,
    ViewV,
    Index,
    SliceV,
    EllipsisV,
    MaskV,
    HostArray,
    Method,
    ParDim,
    RangeV,
    Object, // an instance of a class of the module: attrs
  } kind = None;
  int64_t i = 0;
  double f = 0;
  std::string s;                   // Str; Path (canonical dotted name); Method name
  std::shared_ptr<ValueList> elts; // Tuple/List/Dict(k,v,k,v)/SliceV(lo,hi,step)/RangeV(start,stop,step)
  TensorPtr tensor;                // TensorV / Method receiver
  std::shared_ptr<View> view;      // ViewV
  IndexArr idx;                    // Index
  std::shared_ptr<Mask> mask;      // MaskV
  std::shared_ptr<NDArray> host;   // HostArray (numpy constants)
  const Stmt *fn = nullptr;        // PyFunc (a def, or a class: calling it builds an Object)
  /// PyFunc defined inside a function: the scopes it closes over, innermost first. A function stored in
  /// the frame it closes over makes a cycle; the evaluator clears captured frames when it ends.
  std::shared_ptr<std::vector<std::shared_ptr<ScopeMap>>> closure;
  std::shared_ptr<ScopeMap> attrs;                 // Object: its attributes (shared, as Python's)
  nki::LoopKind loopKind = nki::LoopKind::PyRange; // RangeV

  static Value none() { return {}; }
  static Value integer(int64_t v) {
    Value x;
    x.kind = Int;
    x.i = v;
    return x;
  }
  static Value boolean(bool b) {
    Value x;
    x.kind = Bool;
    x.i = b;
    return x;
  }
  static Value number(double v) {
    Value x;
    x.kind = Float;
    x.f = v;
    return x;
  }
  static Value str(std::string v) {
    Value x;
    x.kind = Str;
    x.s = std::move(v);
    return x;
  }
  static Value path(std::string p) {
    Value x;
    x.kind = Path;
    x.s = std::move(p);
    return x;
  }
  static Value seq(ValueList e, Kind k = Tuple) {
    Value x;
    x.kind = k;
    x.elts = std::make_shared<ValueList>(std::move(e));
    return x;
  }
  static Value ofTensor(TensorPtr t) {
    Value x;
    x.kind = TensorV;
    x.tensor = std::move(t);
    return x;
  }
  static Value ofView(View v) {
    Value x;
    x.kind = ViewV;
    x.view = std::make_shared<View>(std::move(v));
    return x;
  }
  static Value ofIndex(IndexArr a) {
    if (a.scalar()) return integer(a.c);
    Value x;
    x.kind = Index;
    x.idx = std::move(a);
    return x;
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

} // namespace accelopt::interp::evaluator
