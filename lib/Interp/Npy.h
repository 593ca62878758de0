// Reading and writing numpy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Supported element types: little-endian (or single-byte) f2, f4, f8, i1, i2,
// i4, i8, u1, u2, u4, u8 and b1, C order only. Values are read into an fp32
// NDArray whose dtype is the closest NKI dtype (f8 -> float32; 64-bit integers
// -> int32 / uint32, saturated). Malformed, truncated and unsupported files are
// errors naming the file and the problem.
#pragma once

#include "Interp/NDArray.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace accelopt::interp {

llvm::Expected<NDArray> readNpy(llvm::StringRef path);

/// Parses the bytes of a whole .npy file; `source` names it in errors.
llvm::Expected<NDArray> parseNpy(llvm::StringRef bytes, llvm::StringRef source);

enum class NpyElementType {
  Float32,    // always '<f4'
  ArrayDType, // the array's dtype where numpy has it (f2, i1..u4, b1), else '<f4'
};

/// Writes atomically: a temporary file next to `path` is renamed over it, so
/// readers never see a partial file.
llvm::Error writeNpy(llvm::StringRef path, const NDArray &array, NpyElementType elementType = NpyElementType::Float32);

} // namespace accelopt::interp
