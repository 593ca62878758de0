// Python's integer operators for trace-time values, shared by the front end and the interpreter so
// that `check` and `run` compute the same numbers. Python ints are unbounded; ours are 64-bit, so a
// result that does not fit is reported, never wrapped (10**400 is not 0, (-2**63) // -1 is no SIGFPE).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace accelopt::nki::pyint {

enum class Problem : uint8_t {
  None,
  Overflow,       // the exact result is outside [-2**63, 2**63)
  DivisionByZero, // // or % by 0 (Python raises ZeroDivisionError)
  NegativeShift,  // << or >> by a negative count (Python raises ValueError)
};

struct Result {
  int64_t value = 0;
  Problem problem = Problem::None;
};

/// `a op b` for op in + - * // % ** << >> & | ^. std::nullopt when op is not an int -> int operator
/// (`/`, or `**` with a negative exponent: both give floats in Python).
std::optional<Result> apply(std::string_view op, int64_t a, int64_t b);

/// A message for a problem, naming the operator: "integer result of '*' does not fit in 64 bits ...".
std::string describe(Problem problem, std::string_view op);

/// a * b, a + b clamped to [-2**63, 2**63): for bounds analyses, where "past any real extent" is itself
/// the answer and a wrapped value would be a wrong one. `saturated` (when given) is set on a clamp.
int64_t saturatingMul(int64_t a, int64_t b, bool *saturated = nullptr);
int64_t saturatingAdd(int64_t a, int64_t b, bool *saturated = nullptr);

} // namespace accelopt::nki::pyint
