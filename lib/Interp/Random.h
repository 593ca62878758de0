// Deterministic seeded random numbers for kernel inputs.
//
// The engine is std::mt19937_64, whose output sequence the C++ standard fixes;
// the distributions are our own (the standard library's differ between
// implementations), so a seed gives the same inputs on every machine. Normal
// values use the Box–Muller transform in double precision (std::log/sqrt/cos/sin
// are accurate to well under an fp32 ulp) and are rounded once to fp32.
#pragma once

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <random>
#include <span>

namespace accelopt::interp {

class Random {
public:
  explicit Random(uint64_t seed) : Engine(seed) {}

  uint64_t nextBits() { return Engine(); }
  /// Uniform in [0, 1) with 53 random bits.
  double nextUniform();
  /// Standard normal; values come in Box–Muller pairs, the second is kept for the next call.
  double nextNormal();
  /// Uniform integer in [low, high); requires low < high.
  int64_t nextInteger(int64_t low, int64_t high);

  void fillNormal(std::span<float> out, float mean, float stddev);
  /// Uniform in [low, high): the fp32 rounding never yields `high` itself.
  void fillUniform(std::span<float> out, float low, float high);
  /// Uniform integers in [low, high) like numpy's randint; an empty range is an error.
  llvm::Error fillIntegers(std::span<float> out, int64_t low, int64_t high);

private:
  std::mt19937_64 Engine;
  std::optional<double> SpareNormal;
};

} // namespace accelopt::interp
