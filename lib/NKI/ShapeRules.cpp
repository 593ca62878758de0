#include "NKI/ShapeRules.h"

#include <algorithm>

namespace accelopt::nki {

ReducedShape reduceFreeAxes(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes, bool keepdims) {
  ReducedShape r;
  int rank = int(shape.size());
  r.firstAxis = std::max(rank - 1, 1);
  for (int64_t ax : axes) {
    if (ax < 0) ax += rank;
    if (ax <= 0 || ax >= rank) {
      r.error = "reduction axis must be a free axis (1.." + std::to_string(rank - 1) + ")";
      continue;
    }
    r.firstAxis = std::min(r.firstAxis, int(ax));
  }
  r.shape.assign(shape.begin(), shape.begin() + std::min(r.firstAxis, rank));
  r.shape.resize(keepdims ? std::max<size_t>(shape.size(), r.shape.size() + 1) : r.shape.size() + 1, 1);
  return r;
}

} // namespace accelopt::nki
