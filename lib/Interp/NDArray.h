// Dense row-major fp32 arrays and 2-D tile views of them.
//
// All NKI arithmetic is fp32, so every tensor is stored as float; a tensor of a
// narrower dtype holds fp32 values already rounded to that dtype (DTypeRounding.h).
// Every allocation is charged to one process-wide byte counter with a cap, so a
// candidate kernel that would exhaust host memory fails with an error instead.
#pragma once

#include "NKI/Types.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace accelopt::interp {

// --- Process-wide memory accounting -------------------------------------------

inline constexpr uint64_t kNoMemoryCap = UINT64_MAX;

/// Caps the bytes all live NDArrays may hold together (default: kNoMemoryCap).
/// Lowering the cap below the current usage only affects later allocations.
void setMemoryCap(uint64_t bytes);
uint64_t memoryCap();
/// Bytes currently held by live NDArrays.
uint64_t allocatedBytes();
/// Python values (lists, tuples, strings) are charged too, when they are built: an error when `count`
/// items of `itemBytes` each would pass the cap on top of the arrays (`[0] * 10**9`, report D6).
llvm::Error checkValueBytes(uint64_t count, uint64_t itemBytes, llvm::StringRef what);

// --- Tile views ----------------------------------------------------------------

/// A read-only 2-D [rows x cols] view with a row stride in elements: rows are
/// partitions, columns the (flattened) free axis. Does not own its data.
struct ConstTile {
  const float *data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t rowStride = 0;

  static ConstTile contiguous(const float *data, int64_t rows, int64_t cols) { return {data, rows, cols, cols}; }
  const float *row(int64_t r) const { return data + r * rowStride; }
  float at(int64_t r, int64_t c) const { return data[r * rowStride + c]; }
};

/// A writable 2-D view; converts to ConstTile.
struct Tile {
  float *data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t rowStride = 0;

  static Tile contiguous(float *data, int64_t rows, int64_t cols) { return {data, rows, cols, cols}; }
  float *row(int64_t r) const { return data + r * rowStride; }
  float &at(int64_t r, int64_t c) const { return data[r * rowStride + c]; }
  operator ConstTile() const { return {data, rows, cols, rowStride}; }
};

/// Writes out[j] = valueAt(j) for j in [0, n). The fixed-size inner loop over a
/// local chunk is what lets GCC vectorise at -O2 (its cost model there only
/// vectorises loops with a known trip count) and keeps in-place use (`out`
/// aliasing an input) well defined.
template <class ValueAt> inline void generateElements(float *out, int64_t n, ValueAt valueAt) {
  constexpr int64_t kChunk = 16;
  int64_t j = 0;
  for (; j + kChunk <= n; j += kChunk) {
    float chunk[kChunk];
    for (int64_t k = 0; k < kChunk; ++k) chunk[k] = valueAt(j + k);
    std::memcpy(out + j, chunk, sizeof chunk);
  }
  for (; j < n; ++j) out[j] = valueAt(j);
}

/// "[128, 512]": shapes in error messages.
std::string formatShape(std::span<const int64_t> shape);

// --- NDArray -------------------------------------------------------------------

namespace detail {
/// Frees NDArray storage and returns its bytes to the global account.
struct ReleaseStorage {
  uint64_t bytes = 0;
  bool owned = true;        // false for views of another array's storage
  uint64_t mappedBytes = 0; // non-zero: the storage is its own memory mapping of this length (munmap)
  void operator()(float *data) const;
};
} // namespace detail

class NDArray {
public:
  /// An empty rank-1 array of shape [0].
  NDArray();
  NDArray(NDArray &&) noexcept = default;
  NDArray &operator=(NDArray &&) noexcept = default;
  // Copies allocate and may fail, so they are explicit: see clone().
  NDArray(const NDArray &) = delete;
  NDArray &operator=(const NDArray &) = delete;

  /// Contents unspecified (not zeroed: most arrays are overwritten right away).
  static llvm::Expected<NDArray> allocate(std::vector<int64_t> shape, nki::DType dtype = nki::DType::Float32);
  /// Every element equal to `value` (not rounded: pass a value of the dtype).
  static llvm::Expected<NDArray> full(std::vector<int64_t> shape, nki::DType dtype, float value);
  /// Every element holds the never-written marker (Uninit.h).
  static llvm::Expected<NDArray> uninitialized(std::vector<int64_t> shape, nki::DType dtype = nki::DType::Float32);
  /// Copies `values` (which must have the shape's element count).
  static llvm::Expected<NDArray> fromValues(std::vector<int64_t> shape, nki::DType dtype,
                                            std::span<const float> values);

  llvm::Expected<NDArray> clone() const;
  /// A copy with numpy's broadcasting to `shape` (dimensions aligned from the right; each equal or 1).
  llvm::Expected<NDArray> broadcastTo(const std::vector<int64_t> &shape) const;
  /// The same elements under another shape of the same count, without a copy: writes through the view
  /// reach `base` (NKI's reshape of an HBM tensor). `base` must outlive the view.
  static llvm::Expected<NDArray> viewOf(NDArray &base, std::vector<int64_t> shape);
  /// `in`'s bytes (little-endian, row-major) read as `to` (NKI's `t.view(dtype)`): the last axis scales by
  /// the ratio of the element sizes. Fails when the last axis is not a whole number of `to` elements, or an
  /// int32/uint32 element is not exact in fp32 storage. A never-written or masked-off element marks every
  /// element its bytes reach.
  static llvm::Expected<NDArray> reinterpret(const NDArray &in, nki::DType to);

  const std::vector<int64_t> &shape() const { return Shape; }
  int64_t rank() const { return static_cast<int64_t>(Shape.size()); }
  int64_t dim(int64_t axis) const { return Shape[static_cast<size_t>(axis)]; }
  int64_t numel() const { return Numel; }
  /// Row-major element strides.
  std::vector<int64_t> strides() const;
  nki::DType dtype() const { return Dtype; }

  /// False for a view of another array's storage (viewOf): moving it out does not move the elements' owner.
  bool ownsStorage() const { return Storage.get_deleter().owned; }
  float *data() { return Storage.get(); }
  const float *data() const { return Storage.get(); }
  std::span<float> values() { return {Storage.get(), static_cast<size_t>(Numel)}; }
  std::span<const float> values() const { return {Storage.get(), static_cast<size_t>(Numel)}; }

  /// Element at a full index (no bounds checks beyond debug asserts).
  float &at(std::initializer_list<int64_t> index);
  float at(std::initializer_list<int64_t> index) const;

  /// Reinterprets the data with another shape of the same element count.
  llvm::Error reshape(std::vector<int64_t> newShape);
  /// Rounds every value to `dtype` and relabels the array.
  void convertTo(nki::DType dtype);
  /// Relabels without rounding, for values known to be representable already.
  void setDType(nki::DType dtype) { Dtype = dtype; }
  void fill(float value);

  /// The array as a tile: dim 0 is the partition axis and the remaining dims are
  /// flattened into the free axis. A rank-1 array of P elements is a (P, 1)
  /// column (NKI aligns 1-D vectors with partitions); rank 0 is (1, 1).
  Tile asTile();
  ConstTile asTile() const;

private:
  NDArray(std::vector<int64_t> shape, int64_t numel, nki::DType dtype,
          std::unique_ptr<float[], detail::ReleaseStorage> storage);
  /// allocate(), saying in `zeroFilled` whether the storage is fresh zero pages (a large array gets its
  /// own mapping: `full(.., 0.0f)` then touches no page until the kernel writes it).
  static llvm::Expected<NDArray> allocate(std::vector<int64_t> shape, nki::DType dtype, bool &zeroFilled);
  int64_t flatIndex(std::initializer_list<int64_t> index) const;

  std::vector<int64_t> Shape;
  int64_t Numel = 0;
  nki::DType Dtype = nki::DType::Float32;
  std::unique_ptr<float[], detail::ReleaseStorage> Storage;
};

/// numpy's broadcast of two shapes (aligned from the right; each dimension equal or 1), or std::nullopt.
std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b);

} // namespace accelopt::interp
