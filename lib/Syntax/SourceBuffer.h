// A kernel source file in memory with byte <-> line/column mapping.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace accelopt::syntax {

/// A position for humans: 1-based line, 1-based column counted in bytes.
struct LineCol {
  uint32_t line = 0;
  uint32_t col = 0;
};

/// Half-open byte range [begin, end) into a SourceBuffer.
struct ByteRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool empty() const { return begin == end; }
  bool contains(uint32_t offset) const { return begin <= offset && offset < end; }
};

class SourceBuffer {
public:
  /// Largest file accepted: NKI kernels are small; a 10 MB input is a mistake.
  static constexpr size_t MaxBytes = 4 * 1024 * 1024;

  SourceBuffer(std::string path, std::string text);

  /// Reads a file; refuses missing files, directories, oversized and non-UTF-8 input
  /// with messages of the form "PATH: error: ...".
  static llvm::Expected<std::unique_ptr<SourceBuffer>> fromFile(llvm::StringRef path);
  /// Wraps in-memory text (editor buffers, tests); validates like fromFile.
  static llvm::Expected<std::unique_ptr<SourceBuffer>> fromText(std::string path, std::string text);

  llvm::StringRef path() const { return Path; }
  llvm::StringRef text() const { return Text; }
  llvm::StringRef slice(ByteRange r) const { return llvm::StringRef(Text).slice(r.begin, r.end); }

  LineCol lineCol(uint32_t offset) const;
  /// Byte offset of a 1-based line/column (clamped to the buffer).
  uint32_t offsetOf(LineCol lc) const;
  /// Byte offset where 0-based `line` starts.
  uint32_t lineStart(uint32_t line0) const;
  uint32_t lineCount() const { return static_cast<uint32_t>(LineStarts.size()); }
  /// The text of the (1-based) line without its newline.
  llvm::StringRef lineText(uint32_t line) const;
  /// "path:line:col" for diagnostics.
  std::string location(uint32_t offset) const;

private:
  std::string Path;
  std::string Text;
  std::vector<uint32_t> LineStarts;
};

/// Writes `text` to `path` so that no reader and no crash ever sees a half-written file: through a
/// temporary file beside it, flushed to disk (file and directory) before a rename. An existing file
/// keeps its mode and (where permitted) its owner and group.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text);

/// Rewrites a file the user owns in place (--in-place): like writeFileAtomically, and also
/// - refuses (as a conflict) when the file no longer holds `readText`, the text the edit was computed
///   from: an edit saved meanwhile is never lost and a deleted file never comes back;
/// - writes through a symbolic link to its target instead of replacing the link;
/// - keeps hard links: a file with several names is rewritten in its own inode, after its old text has
///   been saved (and flushed) to a backup file beside it that is removed once the new text is on disk.
llvm::Error rewriteFileInPlace(llvm::StringRef path, llvm::StringRef readText, llvm::StringRef text);

/// Returns the offset of the first byte that is not valid UTF-8, or -1.
int64_t findInvalidUtf8(llvm::StringRef text);

} // namespace accelopt::syntax
