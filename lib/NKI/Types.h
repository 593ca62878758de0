// Basic NKI vocabulary shared by every layer: data types, engines, buffers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace accelopt::nki {

enum class DType : uint8_t {
  Float32,
  BFloat16,
  Float16,
  TFloat32,
  Float8E4M3,
  Float8E5M2,
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Bool,
};

/// Bytes one element occupies in SBUF/PSUM/HBM.
constexpr int dtypeBytes(DType t) {
  switch (t) {
  case DType::Float32:
  case DType::TFloat32:
  case DType::Int32:
  case DType::UInt32: return 4;
  case DType::BFloat16:
  case DType::Float16:
  case DType::Int16:
  case DType::UInt16: return 2;
  case DType::Float8E4M3:
  case DType::Float8E5M2:
  case DType::Int8:
  case DType::UInt8:
  case DType::Bool: return 1;
  }
  return 4;
}

constexpr bool isFloat(DType t) {
  switch (t) {
  case DType::Float32:
  case DType::BFloat16:
  case DType::Float16:
  case DType::TFloat32:
  case DType::Float8E4M3:
  case DType::Float8E5M2: return true;
  default: return false;
  }
}

/// NKI type promotion of two operand dtypes (docs/NKI.md 1.7): float beats int; two floats give the wider, or a
/// widened type when neither holds the other ((fp16, bf16) -> fp32, (fp8_e4m3, fp8_e5m2) -> bf16); two ints the
/// wider, a signed type wide enough for both when their signedness differs ((int8, uint8) -> int16,
/// (int32, uint32) -> fp32); bool gives way to any other type.
DType promoteDTypes(DType a, DType b);

/// Canonical numpy-style name ("float32", "bfloat16", ...).
std::string_view dtypeName(DType t);
/// Accepts numpy/NKI spellings ("float32", "np.float32", "nl.bfloat16") and
/// short forms ("f32", "bf16", "f16", "i32", ...).
std::optional<DType> parseDType(std::string_view s);

enum class Engine : uint8_t { Tensor, Vector, Scalar, GpSimd, Sync, DMA, Unknown };
std::string_view engineName(Engine e);

/// Where a tensor lives. PrivateHBM is `nl.hbm` / `nl.private_hbm`.
/// The two NKI dialects (NKI/Dialect.h declares how their APIs differ).
enum class Dialect : uint8_t {
  Neuronxcc, ///< `neuronxcc.nki` (NKI 0.1): ISA calls return their result tile
  Nki,       ///< `nki` (NKI 0.2+): every ISA call writes an explicit destination, `dst` first
};

enum class Buffer : uint8_t { SharedHBM, PrivateHBM, SBUF, PSUM, Unknown };
std::string_view bufferName(Buffer b);
constexpr bool isHBM(Buffer b) { return b == Buffer::SharedHBM || b == Buffer::PrivateHBM; }
constexpr bool isOnChip(Buffer b) { return b == Buffer::SBUF || b == Buffer::PSUM; }

} // namespace accelopt::nki
