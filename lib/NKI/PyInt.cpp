#include "NKI/PyInt.h"

#include <limits>
#include <string>

namespace accelopt::nki::pyint {

namespace {

constexpr int64_t Min = std::numeric_limits<int64_t>::min();

Result overflow() { return {0, Problem::Overflow}; }

Result floorDiv(int64_t a, int64_t b) {
  if (b == 0) return {0, Problem::DivisionByZero};
  if (a == Min && b == -1) return overflow(); // 2**63: the one quotient past int64 (x86 traps on it)
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return {q};
}

Result floorMod(int64_t a, int64_t b) {
  if (b == 0) return {0, Problem::DivisionByZero};
  if (b == -1) return {0}; // also Min % -1, which traps in C
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return {m};
}

/// Exponentiation by squaring: O(log b) steps, so 2**10**18 is refused at once instead of looping.
Result power(int64_t a, int64_t b) {
  int64_t result = 1, base = a;
  bool baseOverflowed = false;
  while (b > 0) {
    if (b & 1) {
      if (baseOverflowed || __builtin_mul_overflow(result, base, &result)) return overflow();
    }
    b >>= 1;
    if (b > 0 && !baseOverflowed) baseOverflowed = __builtin_mul_overflow(base, base, &base);
  }
  return {result};
}

Result shiftLeft(int64_t a, int64_t b) {
  if (b < 0) return {0, Problem::NegativeShift};
  if (a == 0) return {0};
  if (b >= 63) return overflow();
  int64_t r = static_cast<int64_t>(static_cast<uint64_t>(a) << b);
  if ((r >> b) != a) return overflow();
  return {r};
}

Result shiftRight(int64_t a, int64_t b) {
  if (b < 0) return {0, Problem::NegativeShift};
  if (b >= 63) return {a < 0 ? -1 : 0};
  return {a >> b}; // arithmetic shift: floor division by 2**b, as in Python
}

} // namespace

std::optional<Result> apply(std::string_view op, int64_t a, int64_t b) {
  Result r;
  if (op == "+") return __builtin_add_overflow(a, b, &r.value) ? overflow() : r;
  if (op == "-") return __builtin_sub_overflow(a, b, &r.value) ? overflow() : r;
  if (op == "*") return __builtin_mul_overflow(a, b, &r.value) ? overflow() : r;
  if (op == "//") return floorDiv(a, b);
  if (op == "%") return floorMod(a, b);
  if (op == "**") return b < 0 ? std::nullopt : std::optional<Result>(power(a, b));
  if (op == "<<") return shiftLeft(a, b);
  if (op == ">>") return shiftRight(a, b);
  if (op == "&") return Result{a & b};
  if (op == "|") return Result{a | b};
  if (op == "^") return Result{a ^ b};
  return std::nullopt;
}

std::string describe(Problem problem, std::string_view op) {
  switch (problem) {
  case Problem::None: return "";
  case Problem::Overflow:
    return "integer result of '" + std::string(op) +
           "' does not fit in 64 bits; accelopt's trace-time integers are limited to [-2**63, 2**63)";
  case Problem::DivisionByZero: return "integer division by zero";
  case Problem::NegativeShift: return "negative shift count";
  }
  return "";
}

int64_t saturatingMul(int64_t a, int64_t b, bool *saturated) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  if (saturated) *saturated = true;
  return (a < 0) != (b < 0) ? Min : std::numeric_limits<int64_t>::max();
}

int64_t saturatingAdd(int64_t a, int64_t b, bool *saturated) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  if (saturated) *saturated = true;
  return a < 0 ? Min : std::numeric_limits<int64_t>::max();
}

} // namespace accelopt::nki::pyint
