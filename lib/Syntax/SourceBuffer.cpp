#include "Syntax/SourceBuffer.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

namespace accelopt::syntax {

SourceBuffer::SourceBuffer(std::string path, std::string text)
    : Path(std::move(path)), Text(std::move(text)) {
  LineStarts.push_back(0);
  for (uint32_t i = 0; i < Text.size(); ++i)
    if (Text[i] == '\n') LineStarts.push_back(i + 1);
}

int64_t findInvalidUtf8(llvm::StringRef text) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.data());
  const llvm::UTF8 *cursor = begin;
  if (llvm::isLegalUTF8String(&cursor, begin + text.size())) return -1;
  return cursor - begin;
}

llvm::Expected<std::unique_ptr<SourceBuffer>> SourceBuffer::fromText(std::string path,
                                                                     std::string text) {
  if (text.size() > MaxBytes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: error: file is {1} bytes, larger than the {2} byte limit for a kernel source",
                      path, text.size(), MaxBytes));
  auto buffer = std::make_unique<SourceBuffer>(std::move(path), std::move(text));
  if (int64_t bad = findInvalidUtf8(buffer->text()); bad >= 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   buffer->location(static_cast<uint32_t>(bad)) +
                                       ": error: file is not valid UTF-8");
  if (buffer->text().find('\0') != llvm::StringRef::npos)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        buffer->location(static_cast<uint32_t>(buffer->text().find('\0'))) +
            ": error: file contains a NUL byte (binary file?)");
  return buffer;
}

llvm::Expected<std::unique_ptr<SourceBuffer>> SourceBuffer::fromFile(llvm::StringRef path) {
  if (llvm::sys::fs::is_directory(path))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": error: is a directory, not a kernel file");
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(path, size) && size > MaxBytes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: error: file is {1} bytes, larger than the {2} byte limit for a kernel source",
                      path, size, MaxBytes));
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": error: cannot read file: " + file.getError().message());
  return fromText(path.str(), (*file)->getBuffer().str());
}

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text) {
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  if (llvm::Error err = llvm::writeFileAtomically(model, path, text))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": error: cannot write the file: " + llvm::toString(std::move(err)));
  return llvm::Error::success();
}

LineCol SourceBuffer::lineCol(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, Text.size());
  auto it = std::upper_bound(LineStarts.begin(), LineStarts.end(), offset);
  uint32_t line0 = static_cast<uint32_t>(it - LineStarts.begin()) - 1;
  return {line0 + 1, offset - LineStarts[line0] + 1};
}

uint32_t SourceBuffer::lineStart(uint32_t line0) const {
  if (line0 >= LineStarts.size()) return static_cast<uint32_t>(Text.size());
  return LineStarts[line0];
}

uint32_t SourceBuffer::offsetOf(LineCol lc) const {
  if (lc.line == 0) return 0;
  uint32_t start = lineStart(lc.line - 1);
  uint32_t end = lc.line < LineStarts.size() ? LineStarts[lc.line] : Text.size();
  return std::min<uint32_t>(start + (lc.col ? lc.col - 1 : 0), end);
}

llvm::StringRef SourceBuffer::lineText(uint32_t line) const {
  if (line == 0 || line > LineStarts.size()) return {};
  uint32_t start = LineStarts[line - 1];
  uint32_t end = line < LineStarts.size() ? LineStarts[line] : Text.size();
  return llvm::StringRef(Text).slice(start, end).rtrim("\r\n");
}

std::string SourceBuffer::location(uint32_t offset) const {
  LineCol lc = lineCol(offset);
  return llvm::formatv("{0}:{1}:{2}", Path, lc.line, lc.col).str();
}

} // namespace accelopt::syntax
