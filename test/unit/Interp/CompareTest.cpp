#include "Interp/Compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace accelopt::interp;
using accelopt::nki::DType;

namespace {

NDArray vector(const std::vector<float> &values) {
  NDArray a = llvm::cantFail(NDArray::full({static_cast<int64_t>(values.size())}, DType::Float32, 0.0f));
  for (size_t i = 0; i < values.size(); ++i) a.data()[i] = values[i];
  return a;
}

Comparison compare(const std::vector<float> &actual, const std::vector<float> &expected) {
  return compareArrays(vector(actual), vector(expected), Tolerance{});
}

} // namespace

TEST(CompareArrays, WithinToleranceIsClose) {
  Comparison c = compare({1.0f, 2.005f}, {1.0f, 2.0f});
  EXPECT_TRUE(c.allclose);
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_NEAR(c.maxAbsError, 0.005, 1e-6);
}

TEST(CompareArrays, EqualInfinitiesAreCloseWithNoError) {
  Comparison c = compare({INFINITY, -INFINITY, 1.0f}, {INFINITY, -INFINITY, 1.0f});
  EXPECT_TRUE(c.allclose);
  EXPECT_EQ(c.maxAbsError, 0);
  EXPECT_EQ(c.relL2, 0);
}

TEST(CompareArrays, OppositeInfinitiesDiffer) {
  Comparison c = compare({1.0f, INFINITY}, {1.0f, -INFINITY});
  EXPECT_FALSE(c.allclose);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.worstIndex, 1);
  EXPECT_TRUE(std::isinf(c.relL2));
}

TEST(CompareArrays, FiniteWhereTheOriginalIsInfiniteDiffers) {
  // |1 - inf| - (atol + rtol * inf) is NaN: the tolerance test alone would call this close.
  Comparison c = compare({1.0f, 5.0f}, {1.0f, INFINITY});
  EXPECT_FALSE(c.allclose);
  EXPECT_EQ(c.worstIndex, 1);
  EXPECT_EQ(c.worstActual, 5.0);
}

TEST(CompareArrays, NaNIsCloseOnlyToNaN) {
  EXPECT_TRUE(compare({NAN}, {NAN}).allclose);
  EXPECT_FALSE(compare({1.0f}, {NAN}).allclose);
  EXPECT_FALSE(compare({NAN}, {1.0f}).allclose);
}

TEST(CompareArrays, WorstElementIsTheLargestViolation) {
  Comparison c = compare({0.0f, 10.0f, 3.0f}, {0.0f, 0.0f, 0.0f});
  EXPECT_EQ(c.worstIndex, 1);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.maxAbsError, 10.0);
}
