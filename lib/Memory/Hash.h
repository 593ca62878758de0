// Content hashes for deduplication: normalised kernel sources and op lists.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <string>

namespace accelopt::memory {

/// Lower-case hex SHA-256 of `data`.
std::string sha256Hex(llvm::StringRef data);

/// Python source without comments, trailing whitespace, blank lines and a
/// trailing newline difference: two candidates that differ only there are one.
std::string normalizeSource(llvm::StringRef text);

/// sha256Hex(normalizeSource(text)): the `source_hash` of kernels and candidates.
std::string sourceHash(llvm::StringRef text);

/// A hash of an op list (object keys sorted, so key order does not matter).
std::string opsHash(const nlohmann::json &ops);

} // namespace accelopt::memory
