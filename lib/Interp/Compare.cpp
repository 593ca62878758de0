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
  double diff2 = 0, ref2 = 0, worstExcess = -INFINITY;
  bool nonFiniteMismatch = false;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double x = a[i], y = b[i];
    // numpy.isclose: infinities are close only to themselves (same sign); NaN is taken as close only
    // to NaN (the candidate reproduces the original). Any other pair with a non-finite side differs,
    // whatever the tolerance: inf - inf and |NaN| would make the tolerance test NaN, never > 0.
    bool finite = std::isfinite(x) && std::isfinite(y);
    bool same = !finite && ((std::isnan(x) && std::isnan(y)) || x == y);
    double err = finite ? std::fabs(x - y) : same ? 0 : INFINITY;
    double excess = finite ? err - (tol.atol + tol.rtol * std::fabs(y)) : same ? -INFINITY : INFINITY;
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
    if (finite) {
      diff2 += (x - y) * (x - y);
      ref2 += y * y;
    } else if (!same) {
      nonFiniteMismatch = true;
    }
  }
  c.relL2 = nonFiniteMismatch ? INFINITY : ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return c;
}

} // namespace accelopt::interp
