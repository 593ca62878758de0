#include "NKI/Types.h"
#include "NKI/PyCore.h"

#include <string>

namespace accelopt::nki {

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::Float32: return "float32";
  case DType::BFloat16: return "bfloat16";
  case DType::Float16: return "float16";
  case DType::TFloat32: return "tfloat32";
  case DType::Float8E4M3: return "float8_e4m3";
  case DType::Float8E5M2: return "float8_e5m2";
  case DType::Int8: return "int8";
  case DType::UInt8: return "uint8";
  case DType::Int16: return "int16";
  case DType::UInt16: return "uint16";
  case DType::Int32: return "int32";
  case DType::UInt32: return "uint32";
  case DType::Bool: return "bool_";
  }
  return "?";
}

DType promoteDTypes(DType a, DType b) {
  if (a == b || b == DType::Bool) return a;
  if (a == DType::Bool) return b;
  if (isFloat(a) != isFloat(b)) return isFloat(a) ? a : b;
  int wa = dtypeBytes(a), wb = dtypeBytes(b);
  if (isFloat(a)) {
    if (wa != wb) return wa > wb ? a : b;
    if (wa == 4) return DType::Float32;                // (tf32, fp32)
    return wa == 2 ? DType::Float32 : DType::BFloat16; // (fp16, bf16), (fp8_e4m3, fp8_e5m2)
  }
  auto isSigned = [](DType t) { return t == DType::Int8 || t == DType::Int16 || t == DType::Int32; };
  if (isSigned(a) == isSigned(b)) return wa >= wb ? a : b;
  DType s = isSigned(a) ? a : b, u = isSigned(a) ? b : a;
  if (dtypeBytes(s) > dtypeBytes(u)) return s;
  switch (dtypeBytes(u)) {
  case 1: return DType::Int16;
  case 2: return DType::Int32;
  default: return DType::Float32;
  }
}

std::optional<DType> parseDType(std::string_view spelled) {
  std::string canonical = pycore::canonicalPath(spelled);
  std::string_view s = canonical;
  for (std::string_view prefix : {"np.", "nl."})
    if (s.substr(0, prefix.size()) == prefix) {
      s.remove_prefix(prefix.size());
      break;
    }
  struct Spelling {
    std::string_view name;
    DType type;
  };
  static constexpr Spelling spellings[] = {
      {"float32", DType::Float32},
      {"f32", DType::Float32},
      {"fp32", DType::Float32},
      {"bfloat16", DType::BFloat16},
      {"bf16", DType::BFloat16},
      {"float16", DType::Float16},
      {"f16", DType::Float16},
      {"fp16", DType::Float16},
      {"tfloat32", DType::TFloat32},
      {"tf32", DType::TFloat32},
      {"float8_e4m3", DType::Float8E4M3},
      {"fp8_e4m3", DType::Float8E4M3},
      {"float8_e5m2", DType::Float8E5M2},
      {"fp8_e5m2", DType::Float8E5M2},
      {"int8", DType::Int8},
      {"i8", DType::Int8},
      {"uint8", DType::UInt8},
      {"u8", DType::UInt8},
      {"int16", DType::Int16},
      {"i16", DType::Int16},
      {"uint16", DType::UInt16},
      {"u16", DType::UInt16},
      {"int32", DType::Int32},
      {"i32", DType::Int32},
      {"uint32", DType::UInt32},
      {"u32", DType::UInt32},
      {"bool_", DType::Bool},
      {"bool", DType::Bool},
  };
  for (const auto &sp : spellings)
    if (sp.name == s) return sp.type;
  return std::nullopt;
}

std::string_view engineName(Engine e) {
  switch (e) {
  case Engine::Tensor: return "tensor";
  case Engine::Vector: return "vector";
  case Engine::Scalar: return "scalar";
  case Engine::GpSimd: return "gpsimd";
  case Engine::Sync: return "sync";
  case Engine::DMA: return "dma";
  case Engine::Unknown: return "unknown";
  }
  return "?";
}

std::string_view bufferName(Buffer b) {
  switch (b) {
  case Buffer::SharedHBM: return "shared_hbm";
  case Buffer::PrivateHBM: return "hbm";
  case Buffer::SBUF: return "sbuf";
  case Buffer::PSUM: return "psum";
  case Buffer::Unknown: return "unknown";
  }
  return "?";
}

} // namespace accelopt::nki
