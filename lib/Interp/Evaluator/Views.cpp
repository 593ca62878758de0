// Indexing: subscripts of tensors as strided views, bounds checks that respect masks, and the
// gather/scatter between views and contiguous tiles (dtype rounding, race stamps).
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

View KernelEvaluator::wholeView(const TensorPtr &t) {
  View v;
  v.tensor = t;
  auto strides = t->data.strides();
  for (int d = 0; d < t->data.rank(); ++d) {
    v.stride.push_back(strides[d]);
    v.extent.push_back(t->data.dim(d));
  }
  if (v.extent.empty()) {
    v.stride.push_back(1);
    v.extent.push_back(1);
  }
  return v;
}

View KernelEvaluator::makeView(const Value &base, const Expr *sub, const Mask *mask) {
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

std::vector<std::pair<IndexArr, int64_t>> KernelEvaluator::indexComponents(const Expr *sub,
                                                                           const std::vector<int64_t> &shape) {
  std::vector<const Expr *> items(sub->elts.begin(), sub->elts.end());
  if (items.size() == 1 && items[0]->kind == ExprKind::Tuple)
    items.assign(items[0]->elts.begin(), items[0]->elts.end());
  int ellipsis = -1;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i]->kind == ExprKind::Ellipsis) ellipsis = int(i);
  size_t explicitCount = items.size() - (ellipsis >= 0);
  if (explicitCount > shape.size())
    fail(sub->range,
         llvm::formatv("too many indices ({0}) for a tensor of rank {1}", explicitCount, shape.size()).str());
  // Evaluate first to learn whether the subscript is basic or advanced.
  struct Item {
    bool isSlice = false;
    int64_t lo = 0, hi = 0, step = 1;
    IndexArr idx;
    bool full = false;
  };
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
        fail(items[i]->range,
             llvm::formatv("slice [{0}:{1}] is out of bounds for dimension {2} of size {3}", it.lo, it.hi, d, size)
                 .str());
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
      if (it.isSlice && !it.full)
        fail(sub->range, "subscript mixes basic indexing (slices) with advanced indexing (nl.arange)");
  }
  std::vector<std::pair<IndexArr, int64_t>> out;
  if (advanced) {
    // An omitted trailing index over a size-1 dimension (t[i_p, i_f] of a [P, F, 1] tile, as the layernorm
    // tutorial indexes) adds no axis: the tile stays the index grid, so masks written over the grid's
    // indices align with it.
    auto implicitUnit = [](const Item &it) { return it.full && it.hi - it.lo == 1; };
    int extraAxes = 0;
    for (auto &it : dims) extraAxes += it.isSlice && !implicitUnit(it);
    int rank = advRank + extraAxes;
    int nextAxis = advRank;
    for (size_t d = 0; d < dims.size(); ++d) {
      auto &it = dims[d];
      IndexArr x;
      if (it.isSlice && implicitUnit(it)) {
        x.coeff.assign(rank, 0);
        x.extent.assign(rank, 1);
        x.c = it.lo;
      } else if (it.isSlice) {
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

void KernelEvaluator::applyComponents(View &v, const std::vector<std::pair<IndexArr, int64_t>> &comps,
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
  if (rank == 0) { // a single element: a (1, 1) tile
    v.extent = {1};
    v.stride = {1};
  }
  (void)sub;
}

void KernelEvaluator::checkBounds(const View &v, const Mask *mask, const syntax::ByteRange &at) {
  for (size_t d = 0; d < v.dims.size(); ++d) {
    const IndexArr &x = v.dims[d].idx;
    const int64_t size = v.dims[d].size;
    int64_t lo = x.minValue(), hi = x.maxValue();
    if (lo >= 0 && hi < size) continue;
    if (!mask)
      fail(at, llvm::formatv("index of dimension {0} ranges over [{1}, {2}], out of bounds for size {3} of '{4}'", d,
                             lo, hi, size, v.tensor->name)
                   .str());
    // With a mask, only the allowed elements must be in bounds: check them all.
    forEachElement(v.extent, [&](const int64_t *k) {
      if (!mask->allows(k, int(v.extent.size()))) return;
      int64_t val = x.c;
      for (int a = 0; a < x.rank(); ++a) val += x.coeff[a] * k[a];
      if (val < 0 || val >= size)
        fail(at, llvm::formatv("masked index {0} of dimension {1} is out of bounds for size {2} of '{3}'", val, d, size,
                               v.tensor->name)
                     .str());
    });
  }
}

void KernelEvaluator::syncReinterpreted(Tensor &view, bool toBase, const syntax::ByteRange &at) {
  if (!view.reinterprets) return;
  Tensor &base = *view.reinterprets;
  syncReinterpreted(base, false, at); // a view of a view reads the bytes underneath first
  auto synced = NDArray::reinterpret(toBase ? view.data : base.data, toBase ? base.data.dtype() : view.data.dtype());
  if (!synced) fail(at, "dtype view of '" + base.name + "': " + llvm::toString(synced.takeError()));
  NDArray &into = toBase ? base.data : view.data;
  std::copy(synced->values().begin(), synced->values().end(), into.values().begin());
  if (toBase) {
    for (Tensor *t = &base; t; t = t->viewed.get()) t->written = true;
    syncReinterpreted(base, true, at);
  }
}

NDArray KernelEvaluator::gather(const View &v, const Mask *mask, const syntax::ByteRange &at, bool checkUninit) {
  checkBounds(v, mask, at);
  syncReinterpreted(*v.tensor, false, at);
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
  if (rank == 1) {
    int64_t z = 0;
    row(&z);
  } else
    forEachElement(outer, row);
  if (checkUninit && Opts.detectUninitReads)
    if (auto bad = firstUninit(out->data(), out->numel()))
      fail(at, neverWrittenMessage(v.tensor->name, *bad, out->shape()));
  return std::move(*out);
}

std::string KernelEvaluator::neverWrittenMessage(const std::string &tensor, int64_t element,
                                                 const std::vector<int64_t> &shape) {
  return llvm::formatv("reads never-written memory of '{0}' (tile element {1} of {2}); "
                       "initialise it or check the indices",
                       tensor, element, formatShape(shape))
      .str();
}

std::shared_ptr<const UndefinedOrigin> KernelEvaluator::undefinedOriginOf(const Tensor *t) {
  for (; t; t = t->viewed.get())
    if (t->undefinedFrom) return t->undefinedFrom;
  return nullptr;
}

void KernelEvaluator::scatter(const View &v, const NDArray &value, const Mask *mask, const syntax::ByteRange &at,
                              const std::function<float(float oldv, float newv)> *combine, bool raceCheck) {
  syncReinterpreted(*v.tensor, false, at);
  scatterInto(v, value, mask, at, combine, raceCheck);
  syncReinterpreted(*v.tensor, true, at);
}

void KernelEvaluator::scatterInto(const View &v, const NDArray &value, const Mask *mask, const syntax::ByteRange &at,
                                  const std::function<float(float oldv, float newv)> *combine, bool raceCheck) {
  checkBounds(v, mask, at);
  for (Tensor *t = v.tensor.get(); t; t = t->viewed.get()) t->written = true;
  int rank = int(v.extent.size());
  // Broadcast: value shape right-aligned against the view's tile shape.
  std::vector<int64_t> vshape = value.shape();
  if (value.numel() != v.numel()) {
    bool ok = true;
    size_t vr = vshape.size();
    // (P,) against (P, F): partition-aligned vector.
    if (vr == 1 && rank >= 1 && vshape[0] == v.extent[0]) {
      vshape = {vshape[0]};
      vshape.resize(rank, 1);
      vr = rank;
    }
    if (vr > size_t(rank)) ok = false;
    for (size_t a = 0; ok && a < vr; ++a) {
      int64_t want = v.extent[rank - vr + a];
      if (vshape[a] != want && vshape[a] != 1) ok = false;
    }
    // A tile whose element count matches but shape differs (free-dim reshape in a DMA).
    if (!ok)
      fail(at, "cannot write a " + formatShape(value.shape()) + " tile into a " + formatShape(v.shape()) +
                   " region of '" + v.tensor->name + "'");
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
  if (stamp && t.stamps.empty()) {
    t.stamps.reset(t.data.numel());
    Stamped.push_back(v.tensor);
  }
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
      if (dStride == 1 && sStride == 1)
        std::memcpy(dst + off, src + voff, sizeof(float) * inner);
      else
        for (int64_t j = 0; j < inner; ++j) dst[off + j * dStride] = src[voff + j * sStride];
      if (!track) return;
      uint32_t stampValue = stamp ? CurrentSerial : 0;
      // Only elements another iteration stamped can conflict: a contiguous row checks its blocks first.
      bool mayConflict = stamp && (dStride != 1 || !t.stamps.onlyZeroOr(off, inner, CurrentSerial));
      for (int64_t j = 0; mayConflict && j < inner; ++j) {
        uint32_t slot = t.stamps.get(off + j * dStride);
        if (stamp && slot != 0 && slot != CurrentSerial && conflicting(slot, CurrentSerial))
          fail(at, llvm::formatv("race: two iterations of an affine_range loop write element {0} of '{1}' "
                                 "(use sequential_range, += accumulation, or index by the loop variable)",
                                 elementIndex(t.data.shape(), off + j * dStride), t.name)
                       .str());
      }
      if (dStride == 1)
        t.stamps.setRange(off, inner, stampValue);
      else
        for (int64_t j = 0; j < inner; ++j) t.stamps.set(off + j * dStride, stampValue);
      return;
    }
    auto [lo, hi] = mask ? mask->rowRange(full.data(), rank, inner) : std::pair<int64_t, int64_t>{0, inner};
    for (int64_t j = lo; j < hi; ++j) {
      int64_t o = off + j * dStride;
      float x = src[voff + j * sStride];
      if (combine) x = (*combine)(dst[o], x);
      dst[o] = round ? roundToDType(x, dt) : x;
      if (track) {
        uint32_t old = t.stamps.get(o);
        if (stamp && old != 0 && old != CurrentSerial && conflicting(old, CurrentSerial))
          fail(at, llvm::formatv("race: two iterations of an affine_range loop write element {0} of '{1}' "
                                 "(use sequential_range, += accumulation, or index by the loop variable)",
                                 elementIndex(t.data.shape(), o), t.name)
                       .str());
        t.stamps.set(o, stamp ? CurrentSerial : 0);
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

std::string KernelEvaluator::elementIndex(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d) out += (d ? ", " : "") + std::to_string(idx[d]);
  return out + "]";
}

void KernelEvaluator::releaseStamps() {
  for (const std::weak_ptr<Tensor> &w : Stamped)
    if (TensorPtr t = w.lock()) t->stamps.release();
  Stamped.clear();
}

bool KernelEvaluator::conflicting(uint32_t a, uint32_t b) const {
  for (uint32_t x = a; x != 0; x = Frames[x].parent)
    for (uint32_t y = b; y != 0; y = Frames[y].parent)
      if (Frames[x].instance == Frames[y].instance) return Frames[x].iteration != Frames[y].iteration;
  return false;
}

std::optional<Tile> KernelEvaluator::directTile(const View &v, const syntax::ByteRange &at) {
  if (v.extent.size() != 2 || v.stride[1] != 1 || v.tensor->data.dtype() != nki::DType::Float32) return std::nullopt;
  checkBounds(v, nullptr, at);
  return Tile{v.tensor->data.data() + v.offset, v.extent[0], v.extent[1], v.stride[0]};
}

View KernelEvaluator::viewOf(const Value &v, const Expr *at) {
  if (v.kind == Value::ViewV) return *v.view;
  if (v.kind == Value::TensorV) return wholeView(v.tensor);
  fail(at ? at->range : syntax::ByteRange{}, "expected a tensor, got " + describe(v));
}

NDArray KernelEvaluator::tileOf(const Value &v, const Expr *at, const Mask *mask, bool checkUninit) {
  if (v.kind == Value::TensorV && v.tensor->parDim < 0 && !v.tensor->data.numel()) fail(at->range, "empty tensor");
  return gather(viewOf(v, at), mask, at->range, checkUninit);
}

TensorPtr KernelEvaluator::newTile(std::vector<int64_t> shape, nki::DType dtype, nki::Buffer buffer,
                                   const std::string &name, const syntax::ByteRange &at) {
  auto arr = NDArray::uninitialized(std::move(shape), dtype);
  if (!arr) fail(at, llvm::toString(arr.takeError()));
  auto t = std::make_shared<Tensor>();
  t->data = std::move(*arr);
  t->buffer = buffer;
  t->name = name;
  return t;
}

float KernelEvaluator::scalarOf(const Value &v, const Expr *at) {
  if (v.isNumber()) return float(v.num());
  fail(at->range, "expected a number, got " + describe(v));
}

} // namespace accelopt::interp::evaluator
