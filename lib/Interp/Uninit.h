// The "never written" marker of the interpreter.
//
// Uninitialised SBUF/PSUM/HBM tensors are filled with one specific signalling-NaN
// bit pattern. Data moves (load, store, copy, transpose, dtype rounding) carry
// the pattern along unchanged, so an output element that was never written can be
// told apart from one that was computed from bad data. Arithmetic never yields
// the pattern: x86 (and IEEE 754 in general) quiets a signalling NaN operand, so
// the result has the quiet bit set. Helpers that return an operand without doing
// arithmetic (selects, single-element folds) pass it through `quieted`.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

namespace accelopt::interp {

/// Exponent all ones, quiet bit (bit 22) clear, non-zero payload 0x3ADBAD.
inline constexpr uint32_t kUninitBits = 0x7FBADBADu;
inline constexpr uint32_t kQuietNaNBit = 0x00400000u;

/// A second signalling pattern for the lanes a masked op left out of its new result tile (rows past a
/// tensor's end): legal NKI while they stay out of stored results. Data moves carry it like the uninit
/// pattern; elementwise ops carry it to the same lanes of their result.
inline constexpr uint32_t kMaskedOffBits = 0x7FBADBAEu;

inline float uninitValue() { return std::bit_cast<float>(kUninitBits); }
inline float maskedOffValue() { return std::bit_cast<float>(kMaskedOffBits); }

inline bool isUninit(float x) { return std::bit_cast<uint32_t>(x) == kUninitBits; }
inline bool isMaskedOff(float x) { return std::bit_cast<uint32_t>(x) == kMaskedOffBits; }
/// Either marker: rounding to a narrower dtype keeps the value as it is.
inline bool isUndefinedMarker(float x) { return isUninit(x) || isMaskedOff(x); }

/// Sets the quiet bit of a NaN (keeping sign and payload); other values are unchanged.
/// The result is never the uninit pattern.
/// Branch-free (signed compare of the magnitude) so elementwise loops using it vectorise.
inline float quieted(float x) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  auto magnitude = static_cast<int32_t>(bits & 0x7FFFFFFFu);
  return std::bit_cast<float>(bits | (magnitude > 0x7F800000 ? kQuietNaNBit : 0u));
}

inline void fillUninit(float *data, int64_t n) {
  const float marker = uninitValue();
  for (int64_t i = 0; i < n; ++i) data[i] = marker;
}

/// Index of the first element holding the uninit pattern, if any. Scans in blocks
/// with a branch-free inner loop so the common "nothing found" case is fast.
inline std::optional<int64_t> firstWithBits(const float *data, int64_t n, uint32_t pattern) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t bits[kBlock];
    std::memcpy(bits, data + i, sizeof bits);
    uint32_t hits = 0;
    for (int64_t k = 0; k < kBlock; ++k) hits |= static_cast<uint32_t>(bits[k] == pattern);
    if (hits) break;
  }
  for (; i < n; ++i)
    if (std::bit_cast<uint32_t>(data[i]) == pattern) return i;
  return std::nullopt;
}

inline std::optional<int64_t> firstUninit(const float *data, int64_t n) { return firstWithBits(data, n, kUninitBits); }
inline std::optional<int64_t> firstMaskedOff(const float *data, int64_t n) {
  return firstWithBits(data, n, kMaskedOffBits);
}

} // namespace accelopt::interp
