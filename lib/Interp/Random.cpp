#include "Interp/Random.h"

#include <cmath>
#include <numbers>

namespace accelopt::interp {

double Random::nextUniform() {
  // The top 53 bits fill a double's mantissa exactly.
  return static_cast<double>(Engine() >> 11) * 0x1.0p-53;
}

double Random::nextNormal() {
  if (SpareNormal) {
    double value = *SpareNormal;
    SpareNormal.reset();
    return value;
  }
  double u1 = 1.0 - nextUniform(); // in (0, 1], so the log is finite
  double u2 = nextUniform();
  double radius = std::sqrt(-2.0 * std::log(u1));
  double angle = 2.0 * std::numbers::pi * u2;
  SpareNormal = radius * std::sin(angle);
  return radius * std::cos(angle);
}

int64_t Random::nextInteger(int64_t low, int64_t high) {
  uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  // Rejecting the lowest (2^64 mod range) draws leaves a multiple of `range`
  // equally likely values, so the modulo below is unbiased.
  uint64_t rejectBelow = (0 - range) % range;
  uint64_t bits = Engine();
  while (bits < rejectBelow) bits = Engine();
  return static_cast<int64_t>(static_cast<uint64_t>(low) + bits % range);
}

void Random::fillNormal(std::span<float> out, float mean, float stddev) {
  for (float &value : out) value = static_cast<float>(mean + stddev * nextNormal());
}

void Random::fillUniform(std::span<float> out, float low, float high) {
  const float belowHigh = std::nextafter(high, low);
  for (float &value : out) {
    auto drawn = static_cast<float>(low + (static_cast<double>(high) - low) * nextUniform());
    value = drawn < high ? drawn : belowHigh;
  }
}

llvm::Error Random::fillIntegers(std::span<float> out, int64_t low, int64_t high) {
  if (low >= high)
    return llvm::createStringError(std::errc::invalid_argument, "random integers need low < high, got [%lld, %lld)",
                                   static_cast<long long>(low), static_cast<long long>(high));
  for (float &value : out) value = static_cast<float>(nextInteger(low, high));
  return llvm::Error::success();
}

} // namespace accelopt::interp
