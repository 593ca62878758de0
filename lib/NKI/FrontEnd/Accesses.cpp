// Accesses: the affine index of every tensor subscript (basic and advanced indexing), whole-tensor
// reads, and the tile shapes and dtypes of tensor values.
#include "NKI/FrontEnd/KernelBuilder.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <algorithm>

#include <cmath>
#include <functional>
#include <limits>

namespace accelopt::nki::frontend {

Access KernelBuilder::wholeAccess(const Value &t, const Expr *at) {
  if (t.view) {
    Access a = *t.view;
    a.range = at ? at->range : a.range;
    a.throughList = a.throughList || t.throughList;
    return a;
  }
  Access a;
  a.tensor = t.tensor;
  a.throughList = t.throughList;
  a.range = at ? at->range : ByteRange{};
  const Tensor &T = K.tensors[t.tensor];
  for (size_t d = 0; d < T.shape.size(); ++d) {
    IndexDim dim;
    dim.full = true;
    a.dims.push_back(dim);
    if (int(d) >= T.blockDims()) {
      addPartialExtentBounds(t.tensor, d, int(a.tileShape.size()));
      a.tileShape.push_back(T.shape[d].value.value_or(0));
    }
  }
  a.exact = !UnknownShape.count(t.tensor);
  return a;
}

void KernelBuilder::addPartialExtentBounds(int tensor, size_t dim, int axis) {
  auto it = PartialExtents.find(tensor);
  if (it == PartialExtents.end()) return;
  for (const PartialExtent &p : it->second)
    if (p.dim == dim)
      for (const Affine &term : p.varying) addSizeBound(axis, p.extent, term);
}

void KernelBuilder::addSizeBound(int axis, int64_t extent, const Affine &size) {
  MaskBound m;
  m.axis = axis;
  m.extent = extent;
  m.base = size;
  m.base.scale(-1); // t - size < 0
  addSliceBound(m);
}

Access KernelBuilder::access(const Value &t, const Expr *sub) {
  Access a;
  a.tensor = t.tensor;
  a.throughList = t.throughList;
  a.range = sub->range;
  // An integer-indexed view (`q_b = q[b]`) fixes the leading dimensions; subscripting it indexes the
  // dimensions it leaves whole, as `q[b, ...]` would. The integer may be unknown at trace time
  // (`b = nl.program_id(0)`): the tile's shape is still the subscript's, and the access is inexact as
  // `q[b, ...]` is. Other views are kept as they are, inexact.
  std::vector<IndexDim> fixedDims;
  if (t.view) {
    const std::vector<IndexDim> &vd = t.view->dims;
    size_t fixed = 0;
    while (fixed < vd.size() && !vd[fixed].full && vd[fixed].aranges.empty()) ++fixed;
    bool unknownIndex = std::any_of(vd.begin(), vd.begin() + fixed, [](const IndexDim &d) { return !d.base.known; });
    bool integerView = (t.view->exact || unknownIndex) && fixed > 0 &&
                       std::all_of(vd.begin() + fixed, vd.end(), [](const IndexDim &d) {
                         return d.full && llvm::all_of(d.aranges, [](const ArangeTerm &r) { return r.extent > 0; });
                       });
    if (!integerView) {
      a = *t.view;
      a.range = sub->range;
      a.exact = false;
      return a;
    }
    fixedDims.assign(vd.begin(), vd.begin() + fixed);
    if (unknownIndex) a.exact = false;
  }
  const Tensor &T = K.tensors[t.tensor];
  std::vector<const Expr *> items(sub->elts.begin(), sub->elts.end());
  if (items.size() == 1 && items[0] && items[0]->kind == ExprKind::Tuple)
    items = std::vector<const Expr *>(items[0]->elts.begin(), items[0]->elts.end());
  size_t rank = T.shape.size();
  bool rankKnown = !UnknownShape.count(t.tensor);
  int ellipsisAt = -1;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i] && items[i]->kind == ExprKind::Ellipsis) ellipsisAt = int(i);
  size_t explicitCount = items.size() - (ellipsisAt >= 0 ? 1 : 0) + fixedDims.size();
  if (!rankKnown) rank = std::max(rank, explicitCount);
  if (rankKnown && explicitCount > rank) {
    diag(Diagnostic::Error, sub->range,
         llvm::formatv("too many indices for tensor '{0}' of rank {1}", T.name, rank).str(), Rule::IndexRank);
    a.exact = false;
  }
  std::vector<IndexDim> dims = std::move(fixedDims);
  int basicAxis = 0;
  int advancedRank = 0;
  std::vector<std::pair<size_t, int>> advancedDims; // (dimension, rank of its index) for the advanced ones
  auto fullDim = [&](size_t d) {
    IndexDim dim;
    dim.full = true;
    if (d < T.shape.size()) {
      int64_t ext = T.shape[d].value.value_or(0);
      if (ext > 0) {
        dim.aranges.push_back({basicAxis, ext, 1});
        addPartialExtentBounds(t.tensor, d, basicAxis);
      } else {
        a.exact = false;
      }
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
    // A slice `lo:hi:step` or nl.ds(start, size): one basic axis of the tile.
    auto sliceDim = [&](std::optional<IndexVal> loI, std::optional<IndexVal> hiI, int64_t step) {
      a.usesBasic = true;
      IndexDim dim;
      if (loI && hiI && hiI->minOf && !loI->minOf && loI->aranges.empty() && loI->base.known && step == 1) {
        // `lo:lo + min(E, n - lo)`: a tile of extent E (the least constant difference) of which each
        // iteration keeps its first `n - lo` indices, a MaskBound `t + (lo - n) < 0` on this axis.
        std::optional<int64_t> extent;
        std::vector<Affine> varying;
        for (const Affine &c : *hiI->minOf) {
          Affine diff = c;
          diff.add(loI->base, -1);
          if (diff.isConstant())
            extent = std::min(extent.value_or(diff.constant), diff.constant);
          else
            varying.push_back(diff);
        }
        dim.base = loI->base;
        if (extent && *extent > 0) {
          dim.aranges.push_back({basicAxis, *extent, 1});
          for (const Affine &d : varying) addSizeBound(basicAxis, *extent, d);
        } else {
          a.exact = false;
          dim.aranges.push_back({basicAxis, 0, 1});
        }
      } else if (loI && hiI && loI->aranges.empty() && hiI->aranges.empty() && !loI->minOf && !hiI->minOf) {
        Affine diff = hiI->base;
        diff.add(loI->base, -1);
        dim.base = loI->base;
        // A size that is one number on every iteration (c0:c1 with c1 = min(c0 + 512, n) in a loop of one
        // iteration) is that number.
        IndexVal size;
        size.base = diff;
        if (std::optional<int64_t> same = diff.isConstant() ? std::nullopt : uniformValue(size))
          diff = Affine::constantOf(*same);
        bool onlyUnrolled = diff.known && llvm::all_of(diff.terms, [&](const std::pair<int, int64_t> &t) {
                              return K.loops[size_t(t.first)].runsAs == LoopKind::Static;
                            });
        std::optional<int64_t> largest;
        if (onlyUnrolled && step == 1)
          if (auto r = affineRange(diff)) largest = r->second;
        if (diff.isConstant() && step > 0) {
          dim.aranges.push_back({basicAxis, (diff.constant + step - 1) / step, step});
        } else if (largest && *largest > 0) {
          // A size that varies only with unrolled loops (each copy of the body has its own constant size):
          // a tile of the largest size of which each copy keeps its first `hi - lo` indices, the MaskBound
          // `t - (hi - lo) < 0` on this axis (as for `lo:lo + min(E, n - lo)` above).
          dim.aranges.push_back({basicAxis, *largest, 1});
          addSizeBound(basicAxis, *largest, diff);
        } else if (!diff.known || onlyUnrolled) {
          // A symbolic size (input shapes unknown), or one of unrolled loops whose trip counts are unknown:
          // keep the axis, extent unknown.
          a.exact = false;
          dim.aranges.push_back({basicAxis, 0, step});
        } else {
          diag(Diagnostic::Error, it->range, "slice '" + text(it) + "' does not have a constant size", Rule::SliceSize);
          a.exact = false;
        }
      } else {
        // Bounds not affine (a min() of tile bounds, a value the trace does not know): still one basic
        // axis of the tile, of unknown extent (never an index of extent 1).
        dim.base = Affine::unknown();
        dim.aranges.push_back({basicAxis, 0, step});
        a.exact = false;
      }
      ++basicAxis;
      dims.push_back(dim);
    };
    if (it && it->kind == ExprKind::Slice) {
      Value lo = it->elts[0] ? eval(it->elts[0]) : Value::integer(0);
      Value hi = it->elts[1] ? eval(it->elts[1]) : Value();
      Value st = it->elts[2] ? eval(it->elts[2]) : Value::integer(1);
      size_t d = dims.size();
      if (!it->elts[1] && d < T.shape.size()) hi = Value::integer(T.shape[d]);
      sliceDim(lo.asIndex(), hi.asIndex(), st.isKnownInt() ? *st.i.value : 1);
      continue;
    }
    Value v = it ? eval(it) : Value::none();
    if (v.kind == Value::None) continue; // newaxis: no tensor dimension
    if (v.kind == Value::SliceV) {       // nl.ds(start, size)
      IndexVal hi = v.idx;
      if (v.i.isKnown())
        hi.base.add(Affine::constantOf(*v.i.value), 1);
      else
        hi.base = Affine::unknown();
      sliceDim(v.idx, hi, 1);
      continue;
    }
    if (auto idx = v.asIndex()) {
      IndexDim dim;
      dim.base = idx->base;
      dim.aranges = idx->aranges;
      if (!idx->aranges.empty()) {
        a.usesAdvanced = true;
        advancedRank = std::max(advancedRank, idx->rank);
        advancedDims.push_back({dims.size(), idx->rank});
      }
      if (!idx->base.known) a.exact = false;
      dims.push_back(dim);
      continue;
    }
    if (v.kind == Value::Tensor && !isHBM(K.tensors[v.tensor].buffer)) {
      // An on-chip tile as the index (`t[idx_tile, i_f]`, `t[idx[i_p, 0], i_f]`): an indirect (gather or
      // scatter) access whose indices are the tile's values at run time. Which elements is unknown, how
      // many is not: one per element of the index tile, on the tile's axes as an advanced index. The
      // statement reads the index tile (the DMA waits for it).
      std::vector<int64_t> shape = tileShapeOf(v);
      IndexDim dim;
      dim.base = Affine::unknown();
      for (size_t ax = 0; ax < shape.size(); ++ax)
        if (shape[ax] != 1) dim.aranges.push_back({int(ax), std::max<int64_t>(shape[ax], 0), 1});
      a.usesAdvanced = true;
      a.exact = false;
      advancedRank = std::max(advancedRank, std::max(int(shape.size()), 1));
      if (!dim.aranges.empty()) advancedDims.push_back({dims.size(), std::max(int(shape.size()), 1)});
      dims.push_back(dim);
      readOperand(v, it);
      continue;
    }
    IndexDim dim;
    dim.base = Affine::unknown();
    a.exact = false;
    dims.push_back(dim);
  }
  while (dims.size() < rank) dims.push_back(fullDim(dims.size()));
  // numpy broadcasts the advanced indices right-aligned: a 2-D nl.mgrid index next to a 3-D one spans
  // the last two axes of the 3-D grid.
  for (auto [d, dimRank] : advancedDims)
    for (auto &ar : dims[d].aranges) ar.axis += advancedRank - dimRank;
  // Tile shape: advanced -> the broadcast of the arange axes (numpy right-aligned);
  // basic -> the slice extents in order.
  if (a.usesAdvanced) {
    a.tileShape.assign(advancedRank, 1);
    std::vector<bool> unknown(advancedRank, false);
    for (auto &dim : dims)
      for (auto &ar : dim.aranges) {
        // Align ranks: an arange of lower rank broadcasts from the right.
        if (ar.axis < advancedRank) a.tileShape[ar.axis] = std::max(a.tileShape[ar.axis], ar.extent);
        // An extent the trace does not know (nl.arange(lo, hi) of loop-dependent bounds) is not 1.
        if (ar.axis < advancedRank && ar.extent == 0) unknown[ar.axis] = true;
      }
    for (int ax = 0; ax < advancedRank; ++ax)
      if (unknown[ax]) a.tileShape[ax] = 0;
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

void KernelBuilder::readOperand(const Value &v, const Expr *at, std::string_view param) {
  if (!Cur || v.kind != Value::Tensor) return;
  Access a = wholeAccess(v, at);
  a.param = std::string(param);
  Cur->reads.push_back(a);
}

std::vector<int64_t> KernelBuilder::tileShapeOf(const Value &v) const {
  if (v.kind != Value::Tensor) return {};
  if (v.view) return v.view->tileShape;
  const Tensor &t = K.tensors[v.tensor];
  std::vector<int64_t> s;
  for (size_t d = std::max(0, t.blockDims()); d < t.shape.size(); ++d) s.push_back(t.shape[d].value.value_or(0));
  return s;
}

DType KernelBuilder::dtypeOf(const Value &v) const {
  return v.kind == Value::Tensor ? K.tensors[v.tensor].dtype : DType::Float32;
}

} // namespace accelopt::nki::frontend
