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
