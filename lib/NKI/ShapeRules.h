// Result shapes that the front end (trace) and the interpreter (run) must agree on.
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace accelopt::nki {

/// The shape of a free-axis reduction (nl.sum/max/mean/..., nisa.tensor_reduce) of a tile of `shape`
/// over `axes` (empty: the last axis). NKI reduces the trailing free axes only ([1], [1, 2], ...), so
/// the result keeps the axes before the first reduced one and one element per row: [P, A, B, C]
/// over axes [2, 3] is [P, A, 1]; with `keepdims` every reduced axis stays as 1 ([P, A, 1, 1]).
/// `error` says why `axes` is not a set of trailing free axes.
struct ReducedShape {
  std::vector<int64_t> shape;
  int firstAxis = 0; ///< the first reduced axis; the rest up to the rank are reduced too
  std::string error;
};
ReducedShape reduceFreeAxes(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes, bool keepdims = false);

} // namespace accelopt::nki
