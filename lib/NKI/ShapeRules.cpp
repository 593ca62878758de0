#include "NKI/ShapeRules.h"

#include <algorithm>

namespace accelopt::nki {

ReducedShape reduceFreeAxes(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes, bool keepdims) {
  ReducedShape r;
  int rank = int(shape.size());
  std::vector<bool> reduced(size_t(std::max(rank, 1)), false);
  if (axes.empty() && rank > 1) reduced[size_t(rank - 1)] = true;
  for (int64_t ax : axes) {
    if (ax < 0) ax += rank;
    if (ax <= 0 || ax >= rank) {
      r.error = "reduction axis must be a free axis (1.." + std::to_string(rank - 1) + ")";
      continue;
    }
    reduced[size_t(ax)] = true;
  }
  // NKI reduces the last contiguous free axes: a listed run without gaps ([1], [2, 3]) means "from its
  // first axis to the end" (the rmsnorm tutorial's axis=[1] of a [P, 1, N] mgrid tile sums the row). A
  // list with gaps ([2, 4] of a pooling window) reduces exactly the listed axes, as numpy does.
  std::vector<int> listed;
  for (int d = 0; d < rank; ++d)
    if (reduced[size_t(d)]) listed.push_back(d);
  if (!listed.empty() && listed.back() - listed.front() + 1 == int(listed.size()))
    for (int d = listed.front(); d < rank; ++d) reduced[size_t(d)] = true;
  for (int d = 0; d < rank; ++d) {
    if (reduced[size_t(d)]) {
      r.reducedAxes.push_back(d);
      if (keepdims) r.shape.push_back(1);
    } else {
      r.keptAxes.push_back(d);
      r.shape.push_back(shape[size_t(d)]);
    }
  }
  if (!keepdims && (rank <= 1 || reduced[size_t(rank - 1)])) r.shape.push_back(1);
  return r;
}

} // namespace accelopt::nki
