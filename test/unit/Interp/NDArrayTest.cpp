#include "Interp/NDArray.h"
#include "Interp/Uninit.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

using namespace accelopt::interp;
using accelopt::nki::DType;

namespace {

/// Restores the process-wide cap when a test that changes it ends.
struct ScopedMemoryCap {
  explicit ScopedMemoryCap(uint64_t bytes) : previous(memoryCap()) { setMemoryCap(bytes); }
  ~ScopedMemoryCap() { setMemoryCap(previous); }
  uint64_t previous;
};

constexpr uint64_t kMiB = 1ull << 20;

} // namespace

TEST(NDArray, AllocatesRowMajorWithShapeAndStrides) {
  NDArray a = llvm::cantFail(NDArray::full({2, 3, 4}, DType::BFloat16, 0.0f));
  EXPECT_EQ(a.rank(), 3);
  EXPECT_EQ(a.numel(), 24);
  EXPECT_EQ(a.dtype(), DType::BFloat16);
  EXPECT_EQ(a.strides(), (std::vector<int64_t>{12, 4, 1}));
  a.at({1, 2, 3}) = 7.0f;
  EXPECT_EQ(a.data()[1 * 12 + 2 * 4 + 3], 7.0f);
  EXPECT_EQ(std::as_const(a).at({1, 2, 3}), 7.0f);
}

TEST(NDArray, DefaultIsEmpty) {
  NDArray a;
  EXPECT_EQ(a.shape(), std::vector<int64_t>{0});
  EXPECT_EQ(a.numel(), 0);
}

TEST(NDArray, FromValuesAndCloneAreIndependentCopies) {
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  NDArray a = llvm::cantFail(NDArray::fromValues({2, 3}, DType::Float32, values));
  NDArray b = llvm::cantFail(a.clone());
  b.at({0, 0}) = 100.0f;
  EXPECT_EQ(a.at({0, 0}), 1.0f);
  EXPECT_EQ(b.at({1, 2}), 6.0f);
  EXPECT_EQ(b.shape(), a.shape());
}

TEST(NDArray, FromValuesRejectsWrongCount) {
  std::vector<float> values{1, 2, 3};
  llvm::Expected<NDArray> a = NDArray::fromValues({2, 2}, DType::Float32, values);
  ASSERT_FALSE(a);
  EXPECT_EQ(llvm::toString(a.takeError()), "3 values given for a tensor of shape [2, 2] (4 elements)");
}

TEST(NDArray, RejectsNegativeAndOverflowingShapes) {
  llvm::Expected<NDArray> negative = NDArray::allocate({4, -1});
  ASSERT_FALSE(negative);
  EXPECT_EQ(llvm::toString(negative.takeError()), "negative dimension in tensor shape [4, -1]");
  llvm::Expected<NDArray> huge = NDArray::allocate({1ll << 40, 1ll << 40});
  ASSERT_FALSE(huge);
  EXPECT_EQ(llvm::toString(huge.takeError()), "tensor shape [1099511627776, 1099511627776] has too many elements");
}

TEST(NDArray, ZeroSizedArraysNeedNoStorage) {
  uint64_t before = allocatedBytes();
  NDArray a = llvm::cantFail(NDArray::allocate({0, 128}));
  EXPECT_EQ(a.numel(), 0);
  EXPECT_EQ(allocatedBytes(), before);
  ConstTile tile = std::as_const(a).asTile();
  EXPECT_EQ(tile.rows, 0);
  EXPECT_EQ(tile.cols, 128);
}

TEST(NDArray, ReshapeKeepsDataAndChecksCount) {
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  NDArray a = llvm::cantFail(NDArray::fromValues({2, 3}, DType::Float32, values));
  ASSERT_FALSE(a.reshape({3, 2}));
  EXPECT_EQ(a.at({2, 1}), 6.0f);
  llvm::Error err = a.reshape({4, 2});
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(llvm::toString(std::move(err)), "cannot reshape a tensor of shape [3, 2] into shape [4, 2]");
}

TEST(NDArray, AsTileFlattensFreeDimsAndTreatsVectorsAsColumns) {
  NDArray cube = llvm::cantFail(NDArray::allocate({128, 4, 8}));
  Tile t = cube.asTile();
  EXPECT_EQ(t.rows, 128);
  EXPECT_EQ(t.cols, 32);
  EXPECT_EQ(t.rowStride, 32);
  EXPECT_EQ(t.data, cube.data());

  NDArray vector = llvm::cantFail(NDArray::allocate({128}));
  EXPECT_EQ(vector.asTile().rows, 128);
  EXPECT_EQ(vector.asTile().cols, 1);

  NDArray scalar = llvm::cantFail(NDArray::allocate({}));
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.asTile().rows, 1);
  EXPECT_EQ(scalar.asTile().cols, 1);
}

TEST(NDArray, ConvertToRoundsAndRelabels) {
  std::vector<float> values{1.0f + 0x1p-9f, 2.7f, -2.7f};
  NDArray a = llvm::cantFail(NDArray::fromValues({3}, DType::Float32, values));
  a.convertTo(DType::BFloat16);
  EXPECT_EQ(a.dtype(), DType::BFloat16);
  EXPECT_EQ(a.at({0}), 1.0f);
  a.convertTo(DType::Int8);
  EXPECT_EQ(a.at({1}), 2.0f);
  EXPECT_EQ(a.at({2}), -2.0f);
}

TEST(MemoryCap, AccountsLiveBytesAndReleasesThem) {
  uint64_t before = allocatedBytes();
  {
    NDArray a = llvm::cantFail(NDArray::allocate({1000}));
    // 4000 bytes rounded up to whole 64-byte lines.
    EXPECT_EQ(allocatedBytes(), before + 4032);
    NDArray moved = std::move(a);
    EXPECT_EQ(allocatedBytes(), before + 4032);
    NDArray assigned;
    assigned = std::move(moved);
    EXPECT_EQ(allocatedBytes(), before + 4032);
  }
  EXPECT_EQ(allocatedBytes(), before);
}

TEST(MemoryCap, RefusesAllocationBeyondTheCapWithAClearMessage) {
  ASSERT_EQ(allocatedBytes(), 0u) << "another test leaked arrays";
  ScopedMemoryCap cap(512 * kMiB);
  llvm::Expected<NDArray> big = NDArray::allocate({1 << 14, 1 << 14}); // 1 GiB of fp32
  ASSERT_FALSE(big);
  EXPECT_EQ(llvm::toString(big.takeError()), "kernel would allocate 1.00 GiB, more than the cap 0.50 GiB "
                                             "(tensor of shape [16384, 16384] needs 1.00 GiB)");
  EXPECT_EQ(allocatedBytes(), 0u);
}

TEST(MemoryCap, CountsEveryLiveArray) {
  uint64_t before = allocatedBytes();
  ScopedMemoryCap cap(before + 1 * kMiB);
  std::vector<int64_t> shape{160 * 1024}; // 640 KiB
  NDArray first = llvm::cantFail(NDArray::allocate(shape));
  llvm::Expected<NDArray> second = NDArray::allocate(shape);
  ASSERT_FALSE(second);
  llvm::consumeError(second.takeError());
  first = NDArray();
  llvm::Expected<NDArray> third = NDArray::allocate(shape);
  EXPECT_TRUE(bool(third));
}

TEST(NDArray, LargeArraysAreMappedAlignedFilledAndAccounted) {
  // 32 MiB + 4 bytes: past the size that gets its own huge-page mapping (and not a whole number of pages).
  uint64_t before = allocatedBytes();
  std::vector<int64_t> shape{8 * 1024 * 1024 + 1};
  {
    NDArray zeros = llvm::cantFail(NDArray::full(shape, DType::Float32, 0.0f));
    EXPECT_EQ(allocatedBytes(), before + (uint64_t(shape[0]) * 4 + 63) / 64 * 64);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(zeros.data()) % 64, 0u);
    for (int64_t i : {int64_t(0), shape[0] / 2, shape[0] - 1}) EXPECT_EQ(std::bit_cast<uint32_t>(zeros.data()[i]), 0u);
    NDArray negZeros = llvm::cantFail(NDArray::full(shape, DType::Float32, -0.0f)); // not the fresh pages' bits
    EXPECT_TRUE(std::signbit(negZeros.data()[shape[0] - 1]));
    NDArray sevens = llvm::cantFail(NDArray::full(shape, DType::Float32, 7.0f));
    EXPECT_EQ(sevens.data()[shape[0] - 1], 7.0f);
    NDArray marked = llvm::cantFail(NDArray::uninitialized(shape));
    EXPECT_TRUE(isUninit(marked.data()[shape[0] - 1]));
    EXPECT_EQ(firstUninit(marked.data(), marked.numel()), 0);
    zeros.data()[3] = 2.0f; // writable
    NDArray copy = llvm::cantFail(zeros.clone());
    EXPECT_EQ(copy.data()[3], 2.0f);
  }
  EXPECT_EQ(allocatedBytes(), before);
}

TEST(Uninit, PatternIsASignallingNaN) {
  float marker = uninitValue();
  EXPECT_TRUE(std::isnan(marker));
  EXPECT_EQ(std::bit_cast<uint32_t>(marker) & kQuietNaNBit, 0u);
  EXPECT_TRUE(isUninit(marker));
  EXPECT_FALSE(isUninit(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_FALSE(isUninit(0.0f));
}

TEST(Uninit, QuietedNeverYieldsThePattern) {
  EXPECT_EQ(std::bit_cast<uint32_t>(quieted(uninitValue())), 0x7FFADBADu);
  EXPECT_EQ(quieted(1.5f), 1.5f);
  EXPECT_EQ(std::bit_cast<uint32_t>(quieted(-std::numeric_limits<float>::infinity())), 0xFF800000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(quieted(std::bit_cast<float>(0xFF800001u))), 0xFFC00001u);
}

TEST(Uninit, ArithmeticOnThePatternGivesAnOrdinaryNaN) {
  volatile float marker = uninitValue(); // keep the compiler from folding
  float sum = marker + 1.0f;
  EXPECT_TRUE(std::isnan(sum));
  EXPECT_FALSE(isUninit(sum));
}

TEST(Uninit, FirstUninitFindsTheEarliestMarker) {
  NDArray a = llvm::cantFail(NDArray::full({100}, DType::Float32, 1.0f));
  EXPECT_EQ(firstUninit(a.data(), a.numel()), std::nullopt);
  for (int64_t position : {99, 64, 17, 16, 15, 0}) {
    a.data()[position] = uninitValue();
    EXPECT_EQ(firstUninit(a.data(), a.numel()), position);
  }
  EXPECT_EQ(firstUninit(a.data(), 0), std::nullopt);
}

TEST(Uninit, UninitializedArraysHoldTheMarkerEverywhere) {
  NDArray a = llvm::cantFail(NDArray::uninitialized({3, 7}, DType::Float16));
  for (float v : a.values()) EXPECT_TRUE(isUninit(v));
  EXPECT_EQ(firstUninit(a.data(), a.numel()), 0);
  a.fill(0.0f);
  EXPECT_EQ(firstUninit(a.data(), a.numel()), std::nullopt);
}
