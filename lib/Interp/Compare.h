// Numeric comparison of kernel outputs, as the numeric check of candidates.
#pragma once

#include "Interp/NDArray.h"

#include <string>

namespace accelopt::interp {

struct Tolerance {
  double atol = 1e-4; // AccelOpt's defaults
  double rtol = 1e-2;
  double relL2 = 2e-5; // ||a - b|| / ||b|| bound used against numpy references
};

struct Comparison {
  bool shapesMatch = true;
  bool allclose = true; // |a - b| <= atol + rtol * |b| everywhere; an infinity equals only itself, NaN only NaN
  double maxAbsError = 0;
  int64_t worstIndex = -1; // flat index of the largest violation (or largest error)
  double worstActual = 0, worstExpected = 0;
  double relL2 = 0;
  int64_t mismatches = 0;
  std::string where(const std::vector<int64_t> &shape) const; // "[3, 17]"
};

/// Compares `actual` with `expected` (same element count; shapes may differ by a reshape).
Comparison compareArrays(const NDArray &actual, const NDArray &expected, const Tolerance &tol);

} // namespace accelopt::interp
