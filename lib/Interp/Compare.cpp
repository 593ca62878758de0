#include "Interp/Compare.h"

#include <cmath>

namespace accelopt::interp {

std::string Comparison::where(const std::vector<int64_t> &shape) const {
  if (worstIndex < 0) return "[]";
  std::vector<int64_t> idx(shape.size());
  int64_t rest = worstIndex;
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d) out += (d ? ", " : "") + std::to_string(idx[d]);
  return out + "]";
}

Comparison compareArrays(const NDArray &actual, const NDArray &expected, const Tolerance &tol) {
  Comparison c;
  if (actual.numel() != expected.numel()) {
    c.shapesMatch = c.allclose = false;
    return c;
  }
  const float *a = actual.data(), *b = expected.data();
  double diff2 = 0, ref2 = 0, worstExcess = -1;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double x = a[i], y = b[i];
    bool bothNaN = std::isnan(x) && std::isnan(y);
    double err = bothNaN ? 0 : std::fabs(x - y);
    if (std::isnan(err)) err = INFINITY;
    double excess = err - (tol.atol + tol.rtol * std::fabs(y));
    if (excess > 0) {
      c.allclose = false;
      ++c.mismatches;
    }
    if (excess > worstExcess || c.worstIndex < 0) {
      worstExcess = excess;
      c.worstIndex = i;
      c.worstActual = x;
      c.worstExpected = y;
    }
    c.maxAbsError = std::max(c.maxAbsError, err);
    if (!bothNaN) {
      diff2 += (x - y) * (x - y);
      ref2 += y * y;
    }
  }
  c.relL2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return c;
}

} // namespace accelopt::interp
