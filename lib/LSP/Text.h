// Text positions as the Language Server Protocol counts them: 0-based lines and
// 0-based columns in UTF-16 code units, converted to and from byte offsets into
// the UTF-8 text the rest of accelopt works on; and incremental document edits.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accelopt::lsp {

/// An LSP Position (both fields 0-based; `character` in UTF-16 code units).
struct Position {
  uint32_t line = 0;
  uint32_t character = 0;
  bool operator==(const Position &o) const { return line == o.line && character == o.character; }
};

/// Line starts of a text, with conversions between byte offsets and Positions.
/// Lines end at "\n", "\r\n" or a lone "\r", as LSP defines them.
class LineIndex {
public:
  explicit LineIndex(llvm::StringRef text);

  uint32_t lineCount() const { return static_cast<uint32_t>(Starts.size()); }
  /// Byte offset of a Position. A line past the end maps to the end of the
  /// text; a character past the end of its line maps to the line's end (before
  /// its terminator); a character inside a surrogate pair maps to the start of
  /// that code point.
  uint32_t offset(Position p) const;
  /// Position of a byte offset (clamped to the text; an offset inside a UTF-8
  /// sequence counts as the start of that code point).
  Position position(uint32_t offset) const;

private:
  llvm::StringRef Text;
  std::vector<uint32_t> Starts;          // byte offset where each line begins
  uint32_t lineEnd(uint32_t line) const; // offset of the terminator (or text end)
};

/// UTF-16 code units of a UTF-8 string (a 4-byte sequence counts 2, any other
/// code point 1; malformed bytes count 1 each).
uint32_t utf16Length(llvm::StringRef utf8);

/// Reads {"line": n, "character": c}; throws nlohmann::json errors when malformed.
Position positionFromJson(const nlohmann::json &j);
nlohmann::json toJson(Position p);
/// {"start": ..., "end": ...} for a byte range.
nlohmann::json rangeJson(const LineIndex &index, uint32_t begin, uint32_t end);

/// Applies one TextDocumentContentChangeEvent: with a "range", replaces that
/// range (UTF-16 positions) by "text"; without one, replaces the whole text.
/// Fails on a malformed change (missing text, start after end).
llvm::Error applyContentChange(std::string &text, const nlohmann::json &change);

} // namespace accelopt::lsp
