// Line and indentation queries over source text, and identifier tokens (to
// pick fresh names): what an edit needs to place code, knowing only the text.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace accelopt::syntax {

/// Offset where the line containing `offset` starts.
uint32_t lineBegin(llvm::StringRef text, uint32_t offset);
/// Offset just past the newline ending the line containing `offset` (or text end).
uint32_t nextLineBegin(llvm::StringRef text, uint32_t offset);
/// Leading whitespace of the line containing `offset`.
std::string indentAt(llvm::StringRef text, uint32_t offset);
/// True if only whitespace lies between the line start and `offset`.
bool startsLine(llvm::StringRef text, uint32_t offset);
/// True if only whitespace or a comment follows `offset` on its line.
bool endsLine(llvm::StringRef text, uint32_t offset);
/// Line starts of every line in [begin, end) that is not blank.
std::vector<uint32_t> nonBlankLineStarts(llvm::StringRef text, uint32_t begin, uint32_t end);

/// Every identifier-like token in the text (to pick fresh names).
std::set<std::string> identifiersIn(llvm::StringRef text);
/// `base`, or `base2`, `base3`, ... : the first not in `taken`.
std::string freshName(const std::set<std::string> &taken, const std::string &base);

} // namespace accelopt::syntax
