#include "Interp/DTypeRounding.h"
#include "Interp/NDArray.h"
#include "Interp/Npy.h"
#include "Interp/Random.h"
#include "Interp/Uninit.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

using namespace accelopt::interp;
using accelopt::nki::DType;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float fromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t bitsOf(float x) { return std::bit_cast<uint32_t>(x); }

constexpr DType kAllDTypes[] = {
    DType::Float32, DType::BFloat16, DType::Float16, DType::TFloat32, DType::Float8E4M3, DType::Float8E5M2, DType::Int8,
    DType::UInt8,   DType::Int16,    DType::UInt16,  DType::Int32,    DType::UInt32,     DType::Bool,
};

/// Values spanning every binade of fp32 plus the special cases.
std::vector<float> interestingValues() {
  std::vector<float> values{0.0f,
                            -0.0f,
                            kInf,
                            -kInf,
                            std::numeric_limits<float>::quiet_NaN(),
                            fromBits(0xFF812345u),
                            fromBits(0x00000001u),
                            fromBits(0x007FFFFFu),
                            std::numeric_limits<float>::max(),
                            65504.0f,
                            65520.0f,
                            448.0f,
                            464.0f,
                            57344.0f,
                            61440.0f,
                            0.5f,
                            -2.5f,
                            127.5f,
                            300.0f,
                            -300.0f};
  Random random(7);
  for (int i = 0; i < 4000; ++i) {
    int exponent = static_cast<int>(random.nextInteger(-150, 130));
    double sign = random.nextUniform() < 0.5 ? -1.0 : 1.0;
    values.push_back(static_cast<float>(sign * std::ldexp(1.0 + random.nextUniform(), exponent)));
  }
  return values;
}

} // namespace

TEST(BFloat16, RoundsTiesToEven) {
  EXPECT_EQ(roundToDType(1.0f + 0x1p-8f, DType::BFloat16), 1.0f);               // tie, down to even
  EXPECT_EQ(roundToDType(1.0f + 3 * 0x1p-8f, DType::BFloat16), 1.0f + 0x1p-6f); // tie, up to even
  EXPECT_EQ(roundToDType(1.0f + 0x1p-8f + 0x1p-20f, DType::BFloat16), 1.0f + 0x1p-7f);
  EXPECT_EQ(roundToDType(-(1.0f + 3 * 0x1p-8f), DType::BFloat16), -(1.0f + 0x1p-6f));
  EXPECT_EQ(roundToDType(3.140625f, DType::BFloat16), 3.140625f); // exactly representable
  EXPECT_EQ(roundToDType(0.1f, DType::BFloat16), fromBits(0x3DCD0000u));
}

TEST(BFloat16, OverflowsToInfinityAndKeepsSubnormals) {
  EXPECT_EQ(roundToDType(fromBits(0x7F7F7FFFu), DType::BFloat16), fromBits(0x7F7F0000u));
  EXPECT_EQ(roundToDType(fromBits(0x7F7F8000u), DType::BFloat16), kInf); // tie, odd -> up
  EXPECT_EQ(roundToDType(std::numeric_limits<float>::max(), DType::BFloat16), kInf);
  EXPECT_EQ(roundToDType(-std::numeric_limits<float>::max(), DType::BFloat16), -kInf);
  EXPECT_EQ(roundToDType(kInf, DType::BFloat16), kInf);
  EXPECT_EQ(bitsOf(roundToDType(fromBits(0x00008000u), DType::BFloat16)), 0u);
  EXPECT_EQ(bitsOf(roundToDType(fromBits(0x00018000u), DType::BFloat16)), 0x00020000u);
  EXPECT_EQ(bitsOf(roundToDType(-0.0f, DType::BFloat16)), 0x80000000u);
}

TEST(BFloat16, PreservesNaNAsQuietNaN) {
  EXPECT_EQ(bitsOf(roundToDType(fromBits(0x7F800001u), DType::BFloat16)), 0x7FC00000u);
  EXPECT_EQ(bitsOf(roundToDType(fromBits(0xFFC12345u), DType::BFloat16)), 0xFFC10000u);
  // A NaN whose payload would carry into the sign bit when rounded stays a NaN.
  EXPECT_EQ(bitsOf(roundToDType(fromBits(0x7FFFFFFFu), DType::BFloat16)), 0x7FFF0000u);
}

TEST(Float16, RoundsTiesToEvenAndOverflowsToInfinity) {
  EXPECT_EQ(roundToDType(1.0f + 0x1p-11f, DType::Float16), 1.0f);
  EXPECT_EQ(roundToDType(1.0f + 3 * 0x1p-11f, DType::Float16), 1.0f + 0x1p-9f);
  EXPECT_EQ(roundToDType(1.0f + 0x1p-11f + 0x1p-20f, DType::Float16), 1.0f + 0x1p-10f);
  EXPECT_EQ(roundToDType(65504.0f, DType::Float16), 65504.0f);
  EXPECT_EQ(roundToDType(65519.0f, DType::Float16), 65504.0f);
  EXPECT_EQ(roundToDType(65520.0f, DType::Float16), kInf);
  EXPECT_EQ(roundToDType(-65520.0f, DType::Float16), -kInf);
  EXPECT_EQ(roundToDType(1e6f, DType::Float16), kInf);
  EXPECT_EQ(roundToDType(0.1f, DType::Float16), 0.0999755859375f);
}

TEST(Float16, RoundsSubnormalsInStepsOf2ToMinus24) {
  EXPECT_EQ(roundToDType(0x1p-24f, DType::Float16), 0x1p-24f);
  EXPECT_EQ(roundToDType(0x1p-25f, DType::Float16), 0.0f); // tie -> 0 (even)
  EXPECT_EQ(roundToDType(0x1p-25f + 0x1p-30f, DType::Float16), 0x1p-24f);
  EXPECT_EQ(roundToDType(3 * 0x1p-25f, DType::Float16), 0x1p-23f);        // 1.5 steps -> 2
  EXPECT_EQ(roundToDType(5 * 0x1p-25f, DType::Float16), 0x1p-23f);        // 2.5 steps -> 2
  EXPECT_EQ(roundToDType(0x1p-14f - 0x1p-25f, DType::Float16), 0x1p-14f); // into the normals
  EXPECT_EQ(roundToDType(-3 * 0x1p-25f, DType::Float16), -0x1p-23f);
  EXPECT_EQ(bitsOf(roundToDType(-0x1p-26f, DType::Float16)), 0x80000000u);
  EXPECT_TRUE(std::isnan(roundToDType(fromBits(0x7F800001u), DType::Float16)));
}

TEST(Float16, BitsRoundTripEveryPattern) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    auto half = static_cast<uint16_t>(bits);
    float value = float16FromBits(half);
    bool isNaN = (half & 0x7C00) == 0x7C00 && (half & 0x03FF) != 0;
    ASSERT_EQ(std::isnan(value), isNaN) << std::hex << bits;
    if (isNaN) continue;
    ASSERT_EQ(roundToDType(value, DType::Float16), value) << std::hex << bits;
    ASSERT_EQ(float16Bits(value), half) << std::hex << bits;
  }
  EXPECT_EQ(float16Bits(1.0f), 0x3C00);
  EXPECT_EQ(float16Bits(-2.0f), 0xC000);
  EXPECT_EQ(float16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float16Bits(0x1p-24f), 0x0001);
  EXPECT_EQ(float16Bits(70000.0f), 0x7C00);
  EXPECT_EQ(float16Bits(1.0f + 0x1p-11f), 0x3C00);
}

TEST(Float16, MatchesNumpyAstype) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "numpy is not available at /usr/bin/python3";
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("accelopt-f16", dir));
  std::string in = (dir + "/in.npy").str(), out = (dir + "/out.npy").str();
  std::vector<float> values = interestingValues();
  NDArray input = llvm::cantFail(NDArray::fromValues({static_cast<int64_t>(values.size())}, DType::Float32, values));
  ASSERT_FALSE(writeNpy(in, input));
  std::string command = "/usr/bin/python3 -c \"import numpy as np, warnings; warnings.simplefilter('ignore'); "
                        "np.save('" +
                        out + "', np.load('" + in + "').astype(np.float16).astype(np.float32))\"";
  ASSERT_EQ(std::system(command.c_str()), 0);
  NDArray expected = llvm::cantFail(readNpy(out));
  ASSERT_EQ(expected.numel(), input.numel());
  for (size_t i = 0; i < values.size(); ++i) {
    float ours = roundToDType(values[i], DType::Float16);
    float theirs = expected.data()[i];
    if (std::isnan(theirs))
      EXPECT_TRUE(std::isnan(ours)) << values[i];
    else
      EXPECT_EQ(bitsOf(ours), bitsOf(theirs)) << "input " << values[i];
  }
  llvm::sys::fs::remove_directories(dir);
}

TEST(TFloat32, KeepsTenMantissaBitsAndTheFp32ExponentRange) {
  EXPECT_EQ(roundToDType(1.0f + 0x1p-11f, DType::TFloat32), 1.0f);
  EXPECT_EQ(roundToDType(1.0f + 3 * 0x1p-11f, DType::TFloat32), 1.0f + 0x1p-9f);
  EXPECT_EQ(roundToDType(1e30f, DType::TFloat32), fromBits(0x714A0000u)); // 1e30f is 0x7149F2CA
  EXPECT_EQ(roundToDType(3e38f, DType::TFloat32), fromBits(0x7F61C000u));
  EXPECT_EQ(roundToDType(std::numeric_limits<float>::max(), DType::TFloat32), kInf);
}

TEST(Float8E4M3, SaturatesNothingAndOverflowsToNaN) {
  EXPECT_EQ(roundToDType(448.0f, DType::Float8E4M3), 448.0f);
  EXPECT_EQ(roundToDType(464.0f, DType::Float8E4M3), 448.0f); // tie -> even (448)
  EXPECT_TRUE(std::isnan(roundToDType(465.0f, DType::Float8E4M3)));
  EXPECT_TRUE(std::isnan(roundToDType(-1000.0f, DType::Float8E4M3)));
  EXPECT_TRUE(std::isnan(roundToDType(kInf, DType::Float8E4M3)));
  EXPECT_TRUE(std::isnan(roundToDType(-kInf, DType::Float8E4M3)));
  EXPECT_EQ(roundToDType(0.3f, DType::Float8E4M3), 0.3125f);
  EXPECT_EQ(roundToDType(17.0f, DType::Float8E4M3), 16.0f); // tie -> even mantissa
  EXPECT_EQ(roundToDType(19.0f, DType::Float8E4M3), 20.0f); // tie -> even mantissa
  EXPECT_EQ(roundToDType(-0.3f, DType::Float8E4M3), -0.3125f);
}

TEST(Float8E4M3, RoundsSubnormalsInStepsOf2ToMinus9) {
  EXPECT_EQ(roundToDType(0x1p-9f, DType::Float8E4M3), 0x1p-9f);
  EXPECT_EQ(roundToDType(0x1p-10f, DType::Float8E4M3), 0.0f);
  EXPECT_EQ(roundToDType(3 * 0x1p-10f, DType::Float8E4M3), 0x1p-8f);
  EXPECT_EQ(roundToDType(7 * 0x1p-9f, DType::Float8E4M3), 7 * 0x1p-9f); // largest subnormal
  EXPECT_EQ(roundToDType(0x1p-6f, DType::Float8E4M3), 0x1p-6f);
}

TEST(Float8E5M2, RoundsToTwoMantissaBitsAndOverflowsToInfinity) {
  EXPECT_EQ(roundToDType(57344.0f, DType::Float8E5M2), 57344.0f);
  EXPECT_EQ(roundToDType(61439.0f, DType::Float8E5M2), 57344.0f);
  EXPECT_EQ(roundToDType(61440.0f, DType::Float8E5M2), kInf); // tie, odd -> up
  EXPECT_EQ(roundToDType(-kInf, DType::Float8E5M2), -kInf);
  EXPECT_EQ(roundToDType(1.125f, DType::Float8E5M2), 1.0f);
  EXPECT_EQ(roundToDType(1.375f, DType::Float8E5M2), 1.5f);
  EXPECT_EQ(roundToDType(0x1p-16f, DType::Float8E5M2), 0x1p-16f);
  EXPECT_EQ(roundToDType(0x1p-17f, DType::Float8E5M2), 0.0f);
  EXPECT_EQ(roundToDType(3 * 0x1p-17f, DType::Float8E5M2), 0x1p-15f);
  EXPECT_TRUE(std::isnan(roundToDType(std::numeric_limits<float>::quiet_NaN(), DType::Float8E5M2)));
}

TEST(IntegerDTypes, TruncateTowardZeroAndSaturate) {
  EXPECT_EQ(roundToDType(2.7f, DType::Int8), 2.0f);
  EXPECT_EQ(roundToDType(-2.7f, DType::Int8), -2.0f);
  EXPECT_EQ(roundToDType(127.9f, DType::Int8), 127.0f);
  EXPECT_EQ(roundToDType(300.0f, DType::Int8), 127.0f);
  EXPECT_EQ(roundToDType(-300.0f, DType::Int8), -128.0f);
  EXPECT_EQ(roundToDType(-5.0f, DType::UInt8), 0.0f);
  EXPECT_EQ(roundToDType(255.5f, DType::UInt8), 255.0f);
  EXPECT_EQ(roundToDType(1e9f, DType::Int16), 32767.0f);
  EXPECT_EQ(roundToDType(-1e9f, DType::Int16), -32768.0f);
  EXPECT_EQ(roundToDType(70000.0f, DType::UInt16), 65535.0f);
  EXPECT_EQ(roundToDType(-123456.7f, DType::Int32), -123456.0f);
  EXPECT_EQ(roundToDType(3e9f, DType::Int32), 2147483648.0f);
  EXPECT_EQ(roundToDType(-kInf, DType::Int32), -2147483648.0f);
  EXPECT_EQ(roundToDType(-1.0f, DType::UInt32), 0.0f);
  EXPECT_EQ(roundToDType(std::numeric_limits<float>::quiet_NaN(), DType::Int32), 0.0f);
  EXPECT_EQ(bitsOf(roundToDType(-0.5f, DType::Int8)), 0u); // integers have no -0
}

TEST(BoolDType, IsOneForAnyNonZero) {
  EXPECT_EQ(roundToDType(0.5f, DType::Bool), 1.0f);
  EXPECT_EQ(roundToDType(-3.0f, DType::Bool), 1.0f);
  EXPECT_EQ(roundToDType(-0.0f, DType::Bool), 0.0f);
  EXPECT_EQ(roundToDType(std::numeric_limits<float>::quiet_NaN(), DType::Bool), 1.0f);
}

TEST(DTypeRounding, UninitMarkerSurvivesEveryDType) {
  for (DType dtype : kAllDTypes) {
    EXPECT_TRUE(isUninit(roundToDType(uninitValue(), dtype)));
    std::vector<float> buffer{1.0f, uninitValue(), 2.0f};
    roundToDType(buffer, dtype);
    EXPECT_TRUE(isUninit(buffer[1]));
  }
}

TEST(DTypeRounding, BufferRoundingEqualsElementRounding) {
  std::vector<float> values = interestingValues();
  for (DType dtype : kAllDTypes) {
    std::vector<float> inPlace = values;
    roundToDType(inPlace, dtype);
    std::vector<float> outOfPlace(values.size());
    roundToDType(std::span<const float>(values), outOfPlace, dtype);
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t expected = bitsOf(roundToDType(values[i], dtype));
      ASSERT_EQ(bitsOf(inPlace[i]), expected) << "dtype " << int(dtype) << " value " << values[i];
      ASSERT_EQ(bitsOf(outOfPlace[i]), expected) << "dtype " << int(dtype) << " value " << values[i];
    }
  }
}

TEST(DTypeRounding, RoundingIsIdempotent) {
  std::vector<float> values = interestingValues();
  for (DType dtype : kAllDTypes)
    for (float v : values) {
      float once = roundToDType(v, dtype);
      if (std::isnan(once)) continue;
      ASSERT_EQ(roundToDType(once, dtype), once) << "dtype " << int(dtype) << " value " << v;
    }
}
