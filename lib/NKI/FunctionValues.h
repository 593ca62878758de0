#pragma once
// What a function value (op=nl.add, op=np.maximum) computes, for the calls that take one.
#include "NKI/OpTable.h"

#include <optional>
#include <string_view>

namespace accelopt::nki {

/// The ALU op a function value names (nl.add, np.maximum, ...), if it is an elementwise binary op.
std::optional<AluOp> aluOfFunctionValue(std::string_view canonicalName);

/// Whether `dst = op(dst, x)` repeated in any order gives one result (add, multiply, max, min): an
/// in-place tensor_tensor with such an op accumulates like `+=`.
bool accumulatesInAnyOrder(AluOp op);

} // namespace accelopt::nki
