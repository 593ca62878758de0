// numpy's finfo / iinfo of the NKI dtypes (nl.finfo(nl.bfloat16).min in a kernel): one table for the
// front end and the interpreter.
#pragma once

#include "NKI/Types.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace accelopt::nki {

/// The attributes `nl.finfo(dt)` / `np.finfo(dt)` (float dtypes: min, max, eps, tiny, smallest_normal,
/// bits) or `nl.iinfo(dt)` / `np.iinfo(dt)` (integer dtypes: min, max, bits) has for `dtype`, each with
/// whether it is an integer; empty when the dtype has no such info (iinfo of a float, finfo of an int).
struct DTypeLimit {
  std::string_view name;
  double value;
  bool isInt;
};
std::vector<DTypeLimit> dtypeLimits(DType dtype, bool integerInfo);

/// "finfo" or "iinfo" for the callees that build such an object ("nl.finfo", "np.iinfo", ...), else "".
std::string_view dtypeInfoKind(std::string_view canonicalCallee);

} // namespace accelopt::nki
