#include "Syntax/SourceBuffer.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace accelopt::syntax {

SourceBuffer::SourceBuffer(std::string path, std::string text) : Path(std::move(path)), Text(std::move(text)) {
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

llvm::Expected<std::unique_ptr<SourceBuffer>> SourceBuffer::fromText(std::string path, std::string text) {
  if (text.size() > MaxBytes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: error: file is {1} bytes, larger than the {2} byte limit for a kernel source", path,
                      text.size(), MaxBytes));
  auto buffer = std::make_unique<SourceBuffer>(std::move(path), std::move(text));
  if (int64_t bad = findInvalidUtf8(buffer->text()); bad >= 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   buffer->location(static_cast<uint32_t>(bad)) + ": error: file is not valid UTF-8");
  // CPython reads old-Mac files (lines ended by a lone CR); tree-sitter sees one long line, and every
  // later message would be "no @nki.jit kernel". Name the cause instead.
  if (!buffer->text().contains('\n') && buffer->text().count('\r') > 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   buffer->path() + ": error: lines end in a lone CR (old Mac line endings); "
                                                    "convert them to LF or CRLF");
  if (buffer->text().find('\0') != llvm::StringRef::npos)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   buffer->location(static_cast<uint32_t>(buffer->text().find('\0'))) +
                                       ": error: file contains a NUL byte (binary file?)");
  return buffer;
}

llvm::Expected<std::unique_ptr<SourceBuffer>> SourceBuffer::fromFile(llvm::StringRef path) {
  if (llvm::sys::fs::is_directory(path))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), path + ": error: is a directory, not a kernel file");
  // A FIFO or a device would block the read forever or never end.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
      status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path +
                                       ": error: is not a regular file (a FIFO, socket or device), not a kernel file");
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(path, size) && size > MaxBytes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: error: file is {1} bytes, larger than the {2} byte limit for a kernel source", path, size,
                      MaxBytes));
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": error: cannot read file: " + file.getError().message());
  return fromText(path.str(), (*file)->getBuffer().str());
}

namespace {

std::error_code lastError() { return {errno, std::generic_category()}; }

llvm::Error fileError(llvm::StringRef path, const llvm::Twine &what, std::error_code ec) {
  return llvm::createStringError(ec, path + ": error: " + what + ": " + ec.message());
}

/// Writes all of `text` at the start of `fd` and flushes it to the disk.
std::error_code writeAllAndSync(int fd, llvm::StringRef text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return lastError();
    done += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(text.size())) != 0 || ::fsync(fd) != 0) return lastError();
  return {};
}

/// A rename is durable only once the directory that holds the name is flushed too.
std::error_code syncDirectory(llvm::StringRef file) {
  llvm::SmallString<256> dir = llvm::sys::path::parent_path(file);
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return lastError();
  std::error_code ec = ::fsync(fd) != 0 ? lastError() : std::error_code();
  ::close(fd);
  return ec;
}

/// Creates `path`'s sibling from `model` (with %%%%%% placeholders) holding `text`, flushed.
llvm::Expected<std::string> writeSibling(llvm::StringRef path, const llvm::Twine &model, llvm::StringRef text,
                                         const struct stat *like) {
  int fd = -1;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp)) {
    llvm::StringRef dir = llvm::sys::path::parent_path(path);
    return fileError(path, "cannot create a temporary file in " + (dir.empty() ? llvm::StringRef(".") : dir), ec);
  }
  if (like) {
    // Keep the file's permissions, and its owner and group where this user may set them.
    if (::fchmod(fd, like->st_mode & 07777) != 0) {
      std::error_code ec = lastError();
      ::close(fd);
      llvm::sys::fs::remove(temp);
      return fileError(path, "cannot keep the file's mode", ec);
    }
    if (::fchown(fd, like->st_uid, like->st_gid) != 0) (void)::fchown(fd, static_cast<uid_t>(-1), like->st_gid);
  }
  std::error_code ec = writeAllAndSync(fd, text);
  if (::close(fd) != 0 && !ec) ec = lastError();
  if (ec) {
    llvm::sys::fs::remove(temp);
    return fileError(path, "cannot write the file", ec);
  }
  return std::string(temp);
}

/// Replaces `target` by a flushed temporary file; `beforeRename` may still refuse the write.
llvm::Error replaceThroughTemp(llvm::StringRef target, llvm::StringRef text, const struct stat *like,
                               llvm::function_ref<llvm::Error()> beforeRename) {
  auto temp = writeSibling(target, target + ".tmp-%%%%%%", text, like);
  if (!temp) return temp.takeError();
  if (beforeRename)
    if (llvm::Error err = beforeRename()) {
      llvm::sys::fs::remove(*temp);
      return err;
    }
  if (std::error_code ec = llvm::sys::fs::rename(*temp, target)) {
    llvm::sys::fs::remove(*temp);
    return fileError(target, "cannot replace the file", ec);
  }
  if (std::error_code ec = syncDirectory(target)) return fileError(target, "cannot flush its directory", ec);
  return llvm::Error::success();
}

} // namespace

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text) {
  // lstat: an output path that is a symbolic link gets replaced, never written through (-o must not
  // reach a file the link points at); a regular file keeps its mode and owner.
  struct stat st;
  bool existing = ::lstat(path.str().c_str(), &st) == 0 && S_ISREG(st.st_mode);
  return replaceThroughTemp(path, text, existing ? &st : nullptr, nullptr);
}

llvm::Error rewriteFileInPlace(llvm::StringRef path, llvm::StringRef readText, llvm::StringRef text) {
  llvm::SmallString<256> target; // through symbolic links: the file the user's name stands for
  if (std::error_code ec = llvm::sys::fs::real_path(path, target)) return fileError(path, "cannot open the file", ec);
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) return fileError(path, "cannot open the file", lastError());
  auto unchanged = [&]() -> llvm::Error {
    auto now = llvm::MemoryBuffer::getFile(target, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!now)
      return llvm::createStringError(now.getError(), path + ": error: conflict: the file was removed since it "
                                                            "was read; not written");
    if ((*now)->getBuffer() != readText)
      return llvm::createStringError(std::make_error_code(std::errc::operation_canceled),
                                     path + ": error: conflict: the file changed on disk since it was read; "
                                            "not written (run again on the new text)");
    return llvm::Error::success();
  };
  if (st.st_nlink <= 1) return replaceThroughTemp(target, text, &st, unchanged);

  // Several names share this inode: a rename would split them, so the inode itself is rewritten, with
  // its old text saved beside it until the new text is on disk.
  if (llvm::Error err = unchanged()) return err;
  auto backup = writeSibling(target, target + ".orig-%%%%%%", readText, &st);
  if (!backup) return backup.takeError();
  if (std::error_code ec = syncDirectory(target)) return fileError(path, "cannot flush its directory", ec);
  int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return fileError(path, "cannot open the file for writing (its old text is in " + *backup + ")", lastError());
  std::error_code ec = writeAllAndSync(fd, text);
  if (::close(fd) != 0 && !ec) ec = lastError();
  if (ec) return fileError(path, "cannot write the file (its old text is in " + *backup + ")", ec);
  llvm::sys::fs::remove(*backup);
  (void)syncDirectory(target);
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
