#include "Interp/NDArray.h"

#include "Interp/DTypeRounding.h"
#include "Interp/Uninit.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <utility>

#include <sys/mman.h>

namespace accelopt::interp {

namespace {

std::atomic<uint64_t> gAllocatedBytes{0};
std::atomic<uint64_t> gMemoryCap{kNoMemoryCap};

// 64-byte alignment: whole cache lines, and full-width SIMD loads in BLAS.
constexpr uint64_t kAlignment = 64;

// Arrays of at least this many bytes get their own anonymous mapping, aligned to and advised as 2 MiB
// transparent huge pages: a full-size kernel's tensors (GiBs) then take one page fault per 2 MiB instead
// of one per 4 KiB (most of a run's system time before), their pages come zero-filled (nl.zeros touches
// nothing until written), and freeing one returns its memory at once.
constexpr uint64_t kMappedFrom = 8ull << 20;
constexpr uint64_t kHugePage = 2ull << 20;

/// A zero-filled mapping of `bytes` (a multiple of kHugePage) aligned to kHugePage, or nullptr.
float *mapZeroed(uint64_t bytes) {
  uint64_t length = bytes + kHugePage; // room to align the start
  void *p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(p);
  uintptr_t aligned = (start + kHugePage - 1) & ~(uintptr_t(kHugePage) - 1);
  if (aligned > start) ::munmap(p, aligned - start);
  if (uintptr_t end = start + length, used = aligned + bytes; end > used)
    ::munmap(reinterpret_cast<void *>(used), end - used);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void *>(aligned), bytes, MADV_HUGEPAGE); // advice only: no error if refused
#endif
  return reinterpret_cast<float *>(aligned);
}

std::string formatGiB(uint64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.2f", static_cast<double>(bytes) / double(1ull << 30));
  return os.str();
}

/// Charges `bytes` to the global counter unless that would pass the cap.
llvm::Error reserveBytes(uint64_t bytes, std::span<const int64_t> shape) {
  uint64_t current = gAllocatedBytes.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t cap = gMemoryCap.load(std::memory_order_relaxed);
    uint64_t wanted = current + bytes;
    if (wanted < current || wanted > cap)
      return llvm::createStringError(
          std::errc::not_enough_memory,
          "kernel would allocate %s GiB, more than the cap %s GiB (tensor of shape %s needs %s GiB)",
          formatGiB(wanted < current ? UINT64_MAX : wanted).c_str(), formatGiB(cap).c_str(), formatShape(shape).c_str(),
          formatGiB(bytes).c_str());
    if (gAllocatedBytes.compare_exchange_weak(current, wanted, std::memory_order_relaxed))
      return llvm::Error::success();
  }
}

/// Element count of a shape, rejecting negative dims and overflow.
llvm::Expected<int64_t> countElements(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return llvm::createStringError(std::errc::invalid_argument, "negative dimension in tensor shape %s",
                                     formatShape(shape).c_str());
    // Storage is fp32 and byte counts must fit in 64 bits.
    if (d != 0 && count > INT64_MAX / 4 / d)
      return llvm::createStringError(std::errc::value_too_large, "tensor shape %s has too many elements",
                                     formatShape(shape).c_str());
    count *= d;
  }
  return count;
}

} // namespace

void setMemoryCap(uint64_t bytes) { gMemoryCap.store(bytes, std::memory_order_relaxed); }
uint64_t memoryCap() { return gMemoryCap.load(std::memory_order_relaxed); }
uint64_t allocatedBytes() { return gAllocatedBytes.load(std::memory_order_relaxed); }

llvm::Error checkValueBytes(uint64_t count, uint64_t itemBytes, llvm::StringRef what) {
  uint64_t bytes = llvm::SaturatingMultiply(count, itemBytes);
  uint64_t wanted = llvm::SaturatingAdd(allocatedBytes(), bytes);
  uint64_t cap = memoryCap();
  if (wanted <= cap) return llvm::Error::success();
  return llvm::createStringError(
      std::errc::not_enough_memory,
      "kernel would allocate %s GiB, more than the cap %s GiB (%s of %llu items needs %s GiB)",
      formatGiB(wanted).c_str(), formatGiB(cap).c_str(), what.str().c_str(), static_cast<unsigned long long>(count),
      formatGiB(bytes).c_str());
}

std::string formatShape(std::span<const int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

void detail::ReleaseStorage::operator()(float *data) const {
  if (!owned) return;
  if (mappedBytes)
    ::munmap(data, mappedBytes);
  else
    std::free(data);
  gAllocatedBytes.fetch_sub(bytes, std::memory_order_relaxed);
}

NDArray::NDArray() : Shape{0} {}

llvm::Expected<NDArray> NDArray::viewOf(NDArray &base, std::vector<int64_t> shape) {
  llvm::Expected<int64_t> numel = countElements(shape);
  if (!numel) return numel.takeError();
  if (*numel != base.numel())
    return llvm::createStringError(std::errc::invalid_argument, "cannot view %s as %s",
                                   formatShape(base.shape()).c_str(), formatShape(shape).c_str());
  return NDArray(std::move(shape), *numel, base.dtype(),
                 std::unique_ptr<float[], detail::ReleaseStorage>(base.data(), detail::ReleaseStorage{0, false}));
}

NDArray::NDArray(std::vector<int64_t> shape, int64_t numel, nki::DType dtype,
                 std::unique_ptr<float[], detail::ReleaseStorage> storage)
    : Shape(std::move(shape)), Numel(numel), Dtype(dtype), Storage(std::move(storage)) {}

llvm::Expected<NDArray> NDArray::allocate(std::vector<int64_t> shape, nki::DType dtype) {
  bool zeroFilled = false;
  return allocate(std::move(shape), dtype, zeroFilled);
}

llvm::Expected<NDArray> NDArray::allocate(std::vector<int64_t> shape, nki::DType dtype, bool &zeroFilled) {
  zeroFilled = false;
  llvm::Expected<int64_t> numel = countElements(shape);
  if (!numel) return numel.takeError();
  if (*numel == 0) return NDArray(std::move(shape), 0, dtype, {});
  uint64_t bytes = static_cast<uint64_t>(*numel) * sizeof(float);
  uint64_t padded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (llvm::Error err = reserveBytes(padded, shape)) return err;
  if (padded >= kMappedFrom) {
    uint64_t mapped = (padded + kHugePage - 1) / kHugePage * kHugePage;
    if (float *data = mapZeroed(mapped)) {
      zeroFilled = true;
      return NDArray(
          std::move(shape), *numel, dtype,
          std::unique_ptr<float[], detail::ReleaseStorage>(data, detail::ReleaseStorage{padded, true, mapped}));
    }
  }
  auto *data = static_cast<float *>(std::aligned_alloc(kAlignment, padded));
  if (!data) {
    gAllocatedBytes.fetch_sub(padded, std::memory_order_relaxed);
    return llvm::createStringError(std::errc::not_enough_memory,
                                   "out of host memory allocating %s GiB for tensor of shape %s",
                                   formatGiB(padded).c_str(), formatShape(shape).c_str());
  }
  return NDArray(std::move(shape), *numel, dtype,
                 std::unique_ptr<float[], detail::ReleaseStorage>(data, detail::ReleaseStorage{padded}));
}

llvm::Expected<NDArray> NDArray::full(std::vector<int64_t> shape, nki::DType dtype, float value) {
  bool zeroFilled = false;
  llvm::Expected<NDArray> array = allocate(std::move(shape), dtype, zeroFilled);
  // Fresh pages already hold +0.0 (all bits zero); -0.0 is written.
  if (array && !(zeroFilled && std::bit_cast<uint32_t>(value) == 0)) array->fill(value);
  return array;
}

llvm::Expected<NDArray> NDArray::uninitialized(std::vector<int64_t> shape, nki::DType dtype) {
  llvm::Expected<NDArray> array = allocate(std::move(shape), dtype);
  if (array) fillUninit(array->data(), array->numel());
  return array;
}

llvm::Expected<NDArray> NDArray::fromValues(std::vector<int64_t> shape, nki::DType dtype,
                                            std::span<const float> values) {
  llvm::Expected<NDArray> array = allocate(std::move(shape), dtype);
  if (!array) return array.takeError();
  if (static_cast<int64_t>(values.size()) != array->numel())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "%zu values given for a tensor of shape %s (%lld elements)", values.size(),
                                   formatShape(array->shape()).c_str(), static_cast<long long>(array->numel()));
  std::copy(values.begin(), values.end(), array->data());
  return array;
}

llvm::Expected<NDArray> NDArray::clone() const { return fromValues(Shape, Dtype, values()); }

llvm::Expected<NDArray> NDArray::reinterpret(const NDArray &in, nki::DType to) {
  const int64_t from = nki::dtypeBytes(in.dtype()), into = nki::dtypeBytes(to);
  std::vector<int64_t> shape = in.shape();
  if (shape.empty()) shape = {1};
  const int64_t last = shape.back(), rowBytes = last * from;
  if (rowBytes % into != 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the last dimension holds " + std::to_string(rowBytes) + " bytes (" +
                                       std::to_string(last) + " x " + std::string(nki::dtypeName(in.dtype())) +
                                       "), which is not a whole number of " + std::string(nki::dtypeName(to)) +
                                       " elements");
  shape.back() = rowBytes / into;
  auto out = allocate(shape, to);
  if (!out) return out.takeError();
  const int64_t rows = last == 0 ? 0 : in.numel() / last, outLast = shape.back();
  std::vector<uint8_t> bytes(static_cast<size_t>(rowBytes));
  std::vector<float> marker(static_cast<size_t>(rowBytes)); // the undefined marker each byte carries, or 0
  const float *src = in.data();
  float *dst = out->data();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < last; ++k) {
      float v = src[r * last + k];
      bool undefined = isUndefinedMarker(v);
      bytesOfValue(undefined ? 0.0f : v, in.dtype(), &bytes[static_cast<size_t>(k * from)]);
      for (int64_t b = 0; b < from; ++b) marker[static_cast<size_t>(k * from + b)] = undefined ? v : 0.0f;
    }
    for (int64_t k = 0; k < outLast; ++k) {
      float m = 0.0f;
      for (int64_t b = 0; b < into && m == 0.0f; ++b) m = marker[static_cast<size_t>(k * into + b)];
      bool exact = true;
      float v = m != 0.0f ? m : valueOfBytes(&bytes[static_cast<size_t>(k * into)], to, &exact);
      if (!exact)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "element " + std::to_string(r * outLast + k) + " reads as the " + std::string(nki::dtypeName(to)) + " " +
                std::to_string(static_cast<int64_t>(v)) + ", which the interpreter's fp32 storage cannot hold exactly");
      dst[r * outLast + k] = v;
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()), 1);
  for (size_t k = 1; k <= out.size(); ++k) {
    int64_t x = k <= a.size() ? a[a.size() - k] : 1, y = k <= b.size() ? b[b.size() - k] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - k] = x == 1 ? y : x;
  }
  return out;
}

llvm::Expected<NDArray> NDArray::broadcastTo(const std::vector<int64_t> &shape) const {
  auto joint = broadcastShapes(Shape, shape);
  if (!joint || *joint != shape)
    return llvm::createStringError(std::errc::invalid_argument, "shape %s does not broadcast to %s",
                                   formatShape(Shape).c_str(), formatShape(shape).c_str());
  auto out = allocate(shape, Dtype);
  if (!out) return out.takeError();
  // Source strides aligned with the output's dimensions; a broadcast dimension has stride 0.
  std::vector<int64_t> from(shape.size(), 0), own = strides();
  size_t lead = shape.size() - Shape.size();
  for (size_t d = 0; d < Shape.size(); ++d) from[lead + d] = Shape[d] == 1 ? 0 : own[d];
  std::vector<int64_t> index(shape.size(), 0);
  const float *src = data();
  float *dst = out->data();
  for (int64_t flat = 0; flat < out->numel(); ++flat) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * from[d];
    dst[flat] = src[offset];
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> NDArray::strides() const {
  std::vector<int64_t> result(Shape.size(), 1);
  for (size_t i = Shape.size(); i-- > 1;) result[i - 1] = result[i] * Shape[i];
  return result;
}

int64_t NDArray::flatIndex(std::initializer_list<int64_t> index) const {
  assert(index.size() == Shape.size() && "index rank differs from the array rank");
  int64_t flat = 0;
  size_t axis = 0;
  for (int64_t i : index) {
    assert(i >= 0 && i < Shape[axis] && "index out of bounds");
    flat = flat * Shape[axis++] + i;
  }
  return flat;
}

float &NDArray::at(std::initializer_list<int64_t> index) { return data()[flatIndex(index)]; }
float NDArray::at(std::initializer_list<int64_t> index) const { return data()[flatIndex(index)]; }

llvm::Error NDArray::reshape(std::vector<int64_t> newShape) {
  llvm::Expected<int64_t> count = countElements(newShape);
  if (!count) return count.takeError();
  if (*count != Numel)
    return llvm::createStringError(std::errc::invalid_argument, "cannot reshape a tensor of shape %s into shape %s",
                                   formatShape(Shape).c_str(), formatShape(newShape).c_str());
  Shape = std::move(newShape);
  return llvm::Error::success();
}

void NDArray::convertTo(nki::DType dtype) {
  roundToDType(values(), dtype);
  Dtype = dtype;
}

void NDArray::fill(float value) { std::fill_n(data(), Numel, value); }

Tile NDArray::asTile() {
  ConstTile view = std::as_const(*this).asTile();
  return Tile::contiguous(data(), view.rows, view.cols);
}

ConstTile NDArray::asTile() const {
  int64_t rows = Shape.empty() ? 1 : Shape[0];
  int64_t cols = 1;
  for (size_t axis = 1; axis < Shape.size(); ++axis) cols *= Shape[axis];
  return ConstTile::contiguous(data(), rows, cols);
}

} // namespace accelopt::interp
