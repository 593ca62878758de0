#include "Interp/DTypeRounding.h"

#include "Interp/NDArray.h"
#include "Interp/Uninit.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

namespace accelopt::interp {

namespace {

constexpr uint32_t kAbsMask = 0x7FFFFFFFu;
constexpr uint32_t kInfBits = 0x7F800000u;

inline uint32_t bitsOf(float x) { return std::bit_cast<uint32_t>(x); }
inline float fromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

/// Keeps `kMantissaBits` of the 23 fp32 mantissa bits, rounding to nearest even,
/// in fp32's exponent range. A carry out of the mantissa bumps the exponent, which
/// also turns values past the largest finite number into infinity. NaNs keep the
/// high payload bits and are quieted. Branch-free so buffer loops vectorise.
template <int kMantissaBits> inline float roundMantissa(float x) {
  constexpr int kDropped = 23 - kMantissaBits;
  constexpr uint32_t kDroppedMask = (1u << kDropped) - 1;
  uint32_t bits = bitsOf(x);
  uint32_t keptLsb = (bits >> kDropped) & 1u;
  uint32_t rounded = (bits + (kDroppedMask >> 1) + keptLsb) & ~kDroppedMask;
  uint32_t nan = (bits & ~kDroppedMask) | kQuietNaNBit;
  bool isNaN = (bits & kAbsMask) > kInfBits;
  return fromBits(isNaN ? nan : rounded);
}

/// A binary floating-point format narrower than fp32 in exponent range too.
struct SmallFloat {
  int minNormalExponent; // exponent of the smallest normal number
  float maxFinite;
  bool hasInfinity; // overflow to +-inf, else to NaN
};

constexpr SmallFloat kFloat16{-14, 65504.0f, true};
constexpr SmallFloat kFloat8E5M2{-14, 57344.0f, true};
constexpr SmallFloat kFloat8E4M3{-6, 448.0f, false};

/// 2^exponent for exponents within fp32's normal range.
constexpr float powerOfTwo(int exponent) {
  float result = 1.0f;
  for (; exponent > 0; --exponent) result *= 2.0f;
  for (; exponent < 0; ++exponent) result *= 0.5f;
  return result;
}

template <int kMantissaBits, SmallFloat kFormat> inline float roundSmallFloat(float x) {
  constexpr float smallestNormal = powerOfTwo(kFormat.minNormalExponent);
  // Adding a constant whose ulp equals the subnormal step rounds |x| to a
  // multiple of that step with the FPU's own round-to-nearest-even.
  constexpr float subnormalShift = powerOfTwo(kFormat.minNormalExponent - kMantissaBits + 23);
  float magnitude = std::fabs(x);
  float normal = roundMantissa<kMantissaBits>(magnitude);
  float subnormal = (magnitude + subnormalShift) - subnormalShift;
  float rounded = magnitude < smallestNormal ? subnormal : normal;
  float overflow =
      kFormat.hasInfinity ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  rounded = rounded > kFormat.maxFinite ? overflow : rounded;
  return std::copysign(rounded, x);
}

inline float truncateSaturate(float x, float lowest, float highest) {
  // Adding +0 turns a -0 (from truncating small negatives) into 0: integers have no -0.
  float truncated = std::trunc(x) + 0.0f;
  truncated = truncated < lowest ? lowest : truncated;
  truncated = truncated > highest ? highest : truncated;
  return x != x ? 0.0f : truncated;
}

// Fraction bits each float dtype keeps: the rounding below and dtypeEpsilon read them.
constexpr int kBFloat16Bits = 7, kTFloat32Bits = 10, kFloat16Bits = 10, kFloat8E5M2Bits = 2, kFloat8E4M3Bits = 3;

/// Calls `body` with the per-element rounding function of `dtype`, so buffer loops
/// are instantiated once per dtype and carry no dispatch inside.
template <class Body> void withRounding(nki::DType dtype, Body &&body) {
  using nki::DType;
  switch (dtype) {
  case DType::Float32: return body([](float x) { return x; });
  case DType::BFloat16: return body([](float x) { return roundMantissa<kBFloat16Bits>(x); });
  case DType::TFloat32: return body([](float x) { return roundMantissa<kTFloat32Bits>(x); });
  case DType::Float16: return body([](float x) { return roundSmallFloat<kFloat16Bits, kFloat16>(x); });
  case DType::Float8E5M2: return body([](float x) { return roundSmallFloat<kFloat8E5M2Bits, kFloat8E5M2>(x); });
  case DType::Float8E4M3: return body([](float x) { return roundSmallFloat<kFloat8E4M3Bits, kFloat8E4M3>(x); });
  case DType::Int8: return body([](float x) { return truncateSaturate(x, -128.0f, 127.0f); });
  case DType::UInt8: return body([](float x) { return truncateSaturate(x, 0.0f, 255.0f); });
  case DType::Int16: return body([](float x) { return truncateSaturate(x, -32768.0f, 32767.0f); });
  case DType::UInt16: return body([](float x) { return truncateSaturate(x, 0.0f, 65535.0f); });
  case DType::Int32: return body([](float x) { return truncateSaturate(x, -2147483648.0f, 2147483647.0f); });
  case DType::UInt32: return body([](float x) { return truncateSaturate(x, 0.0f, 4294967295.0f); });
  case DType::Bool: return body([](float x) { return x != 0.0f ? 1.0f : 0.0f; });
  }
}

} // namespace

double dtypeEpsilon(nki::DType dtype) {
  using nki::DType;
  switch (dtype) {
  case DType::Float32: return std::ldexp(1.0, -23);
  case DType::BFloat16: return std::ldexp(1.0, -kBFloat16Bits);
  case DType::TFloat32: return std::ldexp(1.0, -kTFloat32Bits);
  case DType::Float16: return std::ldexp(1.0, -kFloat16Bits);
  case DType::Float8E5M2: return std::ldexp(1.0, -kFloat8E5M2Bits);
  case DType::Float8E4M3: return std::ldexp(1.0, -kFloat8E4M3Bits);
  default: return 0;
  }
}

float roundToDType(float value, nki::DType dtype) {
  if (isUndefinedMarker(value)) return value;
  float result = value;
  withRounding(dtype, [&](auto round) { result = round(value); });
  return result;
}

void roundToDType(std::span<const float> in, std::span<float> out, nki::DType dtype) {
  assert(in.size() == out.size() && "rounding buffers differ in size");
  if (dtype == nki::DType::Float32) {
    if (in.data() != out.data()) std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  withRounding(dtype, [&](auto round) {
    const float *source = in.data();
    generateElements(out.data(), static_cast<int64_t>(out.size()), [&](int64_t i) {
      float x = source[i];
      float rounded = round(x);
      return isUndefinedMarker(x) ? x : rounded;
    });
  });
}

void roundToDType(std::span<float> values, nki::DType dtype) {
  roundToDType(std::span<const float>(values), values, dtype);
}

uint16_t float16Bits(float value) {
  float rounded = roundSmallFloat<10, kFloat16>(value);
  uint32_t bits = bitsOf(rounded);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & kAbsMask;
  if (magnitude > kInfBits) // NaN: keep the top payload bits, stay a (quiet) NaN
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x03FFu));
  if (magnitude == kInfBits) return static_cast<uint16_t>(sign | 0x7C00u);
  int exponent = static_cast<int>(magnitude >> 23) - 127;
  if (exponent < -14) // subnormal (or zero): an exact multiple of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(fromBits(magnitude) * powerOfTwo(24)));
  uint32_t mantissa = (magnitude >> 13) & 0x03FFu;
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(exponent + 15) << 10 | mantissa);
}

float float16FromBits(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x03FFu;
  if (exponent == 0x1F) // infinity, or a NaN that is quieted like every NaN we produce
    return fromBits(sign | kInfBits | mantissa << 13 | (mantissa ? kQuietNaNBit : 0u));
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * powerOfTwo(-24);
    return fromBits(sign | bitsOf(magnitude));
  }
  return fromBits(sign | (exponent + 127 - 15) << 23 | mantissa << 13);
}

namespace {
uint8_t float8E4M3Bits(float v) {
  uint32_t sign = (bitsOf(v) >> 24) & 0x80u;
  if (std::isnan(v)) return static_cast<uint8_t>(sign | 0x7Fu);
  float a = std::fabs(v);
  if (a == 0.0f) return static_cast<uint8_t>(sign);
  // No infinity in this format: past the largest finite value (448) is that value.
  if (std::isinf(a) || a > 448.0f) return static_cast<uint8_t>(sign | 0x7Eu);
  // Subnormal: an exact multiple of 2^-9.
  if (a < powerOfTwo(-6)) return static_cast<uint8_t>(sign | static_cast<uint32_t>(a * powerOfTwo(9)));
  int k = 0;
  float f = std::frexp(a, &k); // a = f * 2^k, f in [0.5, 1)
  auto mantissa = static_cast<uint32_t>((2.0f * f - 1.0f) * 8.0f);
  return static_cast<uint8_t>(sign | static_cast<uint32_t>(k - 1 + 7) << 3 | mantissa);
}

float float8E4M3FromBits(uint8_t b) {
  float sign = (b & 0x80u) ? -1.0f : 1.0f;
  uint32_t exponent = (b >> 3) & 0xFu, mantissa = b & 0x7u;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * static_cast<float>(mantissa) * powerOfTwo(-9);
  return sign * (1.0f + static_cast<float>(mantissa) / 8.0f) * powerOfTwo(static_cast<int>(exponent) - 7);
}
} // namespace

void bytesOfValue(float value, nki::DType dtype, uint8_t *out) {
  using nki::DType;
  float v = roundToDType(value, dtype);
  uint64_t bits = 0;
  switch (dtype) {
  case DType::Float32:
  case DType::TFloat32: bits = bitsOf(v); break;
  case DType::BFloat16: bits = bitsOf(v) >> 16; break;
  case DType::Float16: bits = float16Bits(v); break;
  case DType::Float8E5M2: bits = float16Bits(v) >> 8; break;
  case DType::Float8E4M3: bits = float8E4M3Bits(v); break;
  case DType::Bool: bits = v != 0.0f ? 1 : 0; break;
  default: { // two's complement; a NaN or an out-of-range value would make the conversion undefined
    double d = std::isnan(v) ? 0.0 : std::clamp(static_cast<double>(v), -0x1p63, 0x1p63 - 1024.0);
    bits = static_cast<uint64_t>(static_cast<int64_t>(d));
    break;
  }
  }
  for (int i = 0; i < nki::dtypeBytes(dtype); ++i) out[i] = static_cast<uint8_t>(bits >> (8 * i));
}

float valueOfBytes(const uint8_t *in, nki::DType dtype, bool *exact) {
  using nki::DType;
  uint64_t bits = 0;
  for (int i = 0; i < nki::dtypeBytes(dtype); ++i) bits |= static_cast<uint64_t>(in[i]) << (8 * i);
  if (exact) *exact = true;
  auto integer = [&](int64_t x) {
    auto f = static_cast<float>(x);
    if (exact) *exact = static_cast<int64_t>(f) == x;
    return f;
  };
  switch (dtype) {
  case DType::Float32:
  case DType::TFloat32: return fromBits(static_cast<uint32_t>(bits));
  case DType::BFloat16: return fromBits(static_cast<uint32_t>(bits) << 16);
  case DType::Float16: return float16FromBits(static_cast<uint16_t>(bits));
  case DType::Float8E5M2: return float16FromBits(static_cast<uint16_t>(bits << 8));
  case DType::Float8E4M3: return float8E4M3FromBits(static_cast<uint8_t>(bits));
  case DType::Int8: return static_cast<float>(static_cast<int8_t>(bits));
  case DType::UInt8: return static_cast<float>(static_cast<uint8_t>(bits));
  case DType::Int16: return static_cast<float>(static_cast<int16_t>(bits));
  case DType::UInt16: return static_cast<float>(static_cast<uint16_t>(bits));
  case DType::Int32: return integer(static_cast<int32_t>(bits));
  case DType::UInt32: return integer(static_cast<int64_t>(static_cast<uint32_t>(bits)));
  case DType::Bool: return bits != 0 ? 1.0f : 0.0f;
  }
  return 0.0f;
}

} // namespace accelopt::interp
