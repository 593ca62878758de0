// Rounding fp32 values to the value set of an NKI dtype.
//
// Tensors are always stored as fp32 (NDArray.h); writing into a tensor of a
// narrower dtype rounds each value to the nearest value of that dtype, kept as
// fp32. The choices, where hardware documentation is silent:
//
//  * bfloat16, float16, tfloat32, float8_e5m2: IEEE round-to-nearest-even; values
//    past the largest finite number become +-inf; subnormals are kept (float16:
//    steps of 2^-24; float8_e5m2: 2^-16).
//  * float8_e4m3 (OCP "e4m3fn": max 448, no infinity, one NaN encoding): RNE,
//    subnormal steps of 2^-9; a value that rounds past 448 (|x| > 464) and +-inf
//    become NaN, as in the non-saturating OCP conversion (the ml_dtypes/JAX
//    behaviour), so overflow is visible instead of silently clamped.
//  * NaN stays NaN with its sign, is quieted, and keeps the payload bits the
//    narrower format can hold.
//  * Integer dtypes: truncate toward zero (numpy astype), then saturate to the
//    type's range instead of wrapping, so an out-of-range value lands on the
//    nearest representable bound; NaN becomes 0. int32/uint32 bounds are held as
//    the nearest fp32 (2^31, 2^32).
//  * bool: 1 for any non-zero value (NaN included, as numpy), else 0.
//  * The never-written marker (Uninit.h) passes through unchanged for every
//    dtype, so a cast copy of unwritten data is still recognisably unwritten.
#pragma once

#include "NKI/Types.h"

#include <cstdint>
#include <span>

namespace accelopt::interp {

float roundToDType(float value, nki::DType dtype);

/// Rounds in place.
void roundToDType(std::span<float> values, nki::DType dtype);

/// out[i] = roundToDType(in[i]); `in` and `out` have equal size and may be the same buffer.
void roundToDType(std::span<const float> in, std::span<float> out, nki::DType dtype);

/// The machine epsilon of a floating-point dtype, 2^-(fraction bits): the spacing of its values
/// above 1 (bfloat16 2^-7, float16 and tfloat32 2^-10, float8_e4m3 2^-3, float8_e5m2 2^-2, float32
/// 2^-23); 0 for integer and bool dtypes, whose rounding is exact on integers.
double dtypeEpsilon(nki::DType dtype);

/// IEEE binary16 bit pattern of `value` (rounded to nearest even first).
uint16_t float16Bits(float value);
/// The fp32 value of an IEEE binary16 bit pattern (exact).
float float16FromBits(uint16_t bits);

/// The little-endian bytes (dtypeBytes(dtype) of them) that hold `value`, rounded to `dtype` first:
/// IEEE bit patterns for the float dtypes (bfloat16 the top half of fp32, float8_e5m2 the top byte of
/// float16, float8_e4m3 as "e4m3fn"), two's complement for the integers, 0/1 for bool.
void bytesOfValue(float value, nki::DType dtype, uint8_t *out);
/// The value of `dtype` whose little-endian bytes are `in`, as fp32 storage holds it (an int32/uint32
/// beyond 2^24 rounds to the nearest fp32: `exact` is set false then).
float valueOfBytes(const uint8_t *in, nki::DType dtype, bool *exact = nullptr);

} // namespace accelopt::interp
