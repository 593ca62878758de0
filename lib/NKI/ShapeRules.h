// Result shapes that the front end (trace) and the interpreter (run) must agree on.
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace accelopt::nki {

/// The shape of a free-axis reduction (nl.sum/max/mean/..., nisa.tensor_reduce) of a tile of `shape`
/// over `axes` (empty: the last axis). NKI reduces trailing free axes: listed axes without gaps reduce
/// from the first of them to the end ([P, A, B, C] over [2] or [2, 3] is [P, A, 1]); listed axes with
/// gaps (a pooling window's interleaved [2, 4] of [P, A, B, C, D], which the compiler lowers with an
/// access pattern) reduce exactly those axes, the others keep their order ([P, A, C, 1]). A reduction
/// that includes the last axis leaves one element per row; with `keepdims` every reduced axis stays as 1.
/// `error` says why `axes` is not a set of free axes.
struct ReducedShape {
  std::vector<int64_t> shape;
  std::vector<int> keptAxes;    ///< the input axes the result keeps, in order (axis 0 first)
  std::vector<int> reducedAxes; ///< the reduced input axes, ascending
  std::string error;
  /// The reduced axes are the trailing ones: the input is already [kept..., reduced...] in memory.
  bool trailing() const { return reducedAxes.empty() || int(keptAxes.size()) == reducedAxes.front(); }
};
ReducedShape reduceFreeAxes(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes, bool keepdims = false);

} // namespace accelopt::nki
