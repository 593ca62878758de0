#include "Interp/Npy.h"

#include "Interp/DTypeRounding.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace accelopt::interp {

namespace {

static_assert(std::endian::native == std::endian::little, "npy I/O copies little-endian data without byte swapping");

constexpr llvm::StringLiteral kMagic("\x93NUMPY");
// numpy pads the preamble so the data starts on a 64-byte boundary.
constexpr size_t kHeaderAlignment = 64;

/// A numpy element type: kind ('f', 'i', 'u', 'b') and size in bytes.
struct ElementFormat {
  char kind;
  int size;
};

struct Header {
  ElementFormat format{};
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

llvm::Error npyError(llvm::StringRef source, const llvm::Twine &message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), source + ": " + message);
}

/// Parses the Python dict literal of a .npy header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
public:
  HeaderParser(llvm::StringRef text, llvm::StringRef source) : Text(text), Source(source) {}

  llvm::Expected<Header> parse() {
    Header header;
    bool sawDescr = false, sawOrder = false, sawShape = false;
    if (!consume('{')) return malformed("expected '{'");
    while (!consume('}')) {
      llvm::Expected<std::string> key = parseString();
      if (!key) return key.takeError();
      if (!consume(':')) return malformed("expected ':' after '" + *key + "'");
      if (*key == "descr") {
        llvm::Expected<ElementFormat> format = parseDescr();
        if (!format) return format.takeError();
        header.format = *format;
        sawDescr = true;
      } else if (*key == "fortran_order") {
        llvm::Expected<bool> order = parseBool();
        if (!order) return order.takeError();
        header.fortranOrder = *order;
        sawOrder = true;
      } else if (*key == "shape") {
        llvm::Expected<std::vector<int64_t>> shape = parseShape();
        if (!shape) return shape.takeError();
        header.shape = std::move(*shape);
        sawShape = true;
      } else {
        return malformed("unexpected key '" + *key + "'");
      }
      if (!consume(',')) {
        if (!consume('}')) return malformed("expected ',' or '}'");
        break;
      }
    }
    if (!sawDescr || !sawOrder || !sawShape) return malformed("missing 'descr', 'fortran_order' or 'shape'");
    return header;
  }

private:
  void skipSpace() { Text = Text.ltrim(" \t\r\n"); }

  bool consume(char c) {
    skipSpace();
    if (!Text.startswith(llvm::StringRef(&c, 1))) return false;
    Text = Text.drop_front();
    return true;
  }

  llvm::Error malformed(const llvm::Twine &what) { return npyError(Source, "malformed .npy header: " + what); }

  llvm::Expected<std::string> parseString() {
    skipSpace();
    if (Text.empty() || (Text.front() != '\'' && Text.front() != '"')) return malformed("expected a quoted string");
    char quote = Text.front();
    size_t end = Text.find(quote, 1);
    if (end == llvm::StringRef::npos) return malformed("unterminated string");
    std::string value = Text.slice(1, end).str();
    Text = Text.drop_front(end + 1);
    return value;
  }

  llvm::Expected<ElementFormat> parseDescr() {
    skipSpace();
    if (Text.startswith("[")) return npyError(Source, "structured numpy dtypes are not supported");
    llvm::Expected<std::string> descr = parseString();
    if (!descr) return descr.takeError();
    llvm::StringRef text(*descr);
    if (text.size() < 3 || !llvm::StringRef("<>|=").contains(text[0]))
      return npyError(Source, "unsupported numpy dtype '" + text + "'");
    char kind = text[1];
    int size = 0;
    bool known = !text.drop_front(2).getAsInteger(10, size) &&
                 ((kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
                  ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                  (kind == 'b' && size == 1));
    if (!known) return npyError(Source, "unsupported numpy dtype '" + text + "'");
    if (text[0] == '>' && size > 1) return npyError(Source, "big-endian data ('" + text + "') is not supported");
    return ElementFormat{kind, size};
  }

  llvm::Expected<bool> parseBool() {
    skipSpace();
    for (auto [spelling, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (Text.consume_front(spelling)) return value;
    return malformed("expected True or False");
  }

  llvm::Expected<std::vector<int64_t>> parseShape() {
    std::vector<int64_t> shape;
    if (!consume('(')) return malformed("expected '(' to start the shape");
    while (!consume(')')) {
      skipSpace();
      size_t digits = std::min(Text.find_first_not_of("0123456789"), Text.size());
      int64_t dim = 0;
      if (digits == 0 || Text.take_front(digits).getAsInteger(10, dim))
        return malformed("expected a non-negative dimension in the shape");
      Text = Text.drop_front(digits);
      Text.consume_front("L"); // Python 2 long literals in old files
      shape.push_back(dim);
      if (!consume(',')) {
        if (!consume(')')) return malformed("expected ',' or ')' in the shape");
        break;
      }
    }
    return shape;
  }

  llvm::StringRef Text;
  llvm::StringRef Source;
};

nki::DType dtypeFor(ElementFormat format) {
  using nki::DType;
  switch (format.kind) {
  case 'f': return format.size == 2 ? DType::Float16 : DType::Float32;
  case 'b': return DType::Bool;
  case 'i': return format.size == 1 ? DType::Int8 : format.size == 2 ? DType::Int16 : DType::Int32;
  default: return format.size == 1 ? DType::UInt8 : format.size == 2 ? DType::UInt16 : DType::UInt32;
  }
}

template <class T> void decodeAs(const char *bytes, float *out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    out[i] = static_cast<float>(value);
  }
}

void decode(ElementFormat format, const char *bytes, float *out, int64_t count) {
  switch (format.kind) {
  case 'f':
    if (format.size == 4)
      std::memcpy(out, bytes, static_cast<size_t>(count) * sizeof(float));
    else if (format.size == 8)
      decodeAs<double>(bytes, out, count);
    else
      for (int64_t i = 0; i < count; ++i) {
        uint16_t half;
        std::memcpy(&half, bytes + 2 * i, sizeof half);
        out[i] = float16FromBits(half);
      }
    return;
  case 'b':
    for (int64_t i = 0; i < count; ++i) out[i] = bytes[i] != 0 ? 1.0f : 0.0f;
    return;
  case 'i':
    switch (format.size) {
    case 1: return decodeAs<int8_t>(bytes, out, count);
    case 2: return decodeAs<int16_t>(bytes, out, count);
    case 4: return decodeAs<int32_t>(bytes, out, count);
    default: return decodeAs<int64_t>(bytes, out, count);
    }
  default:
    switch (format.size) {
    case 1: return decodeAs<uint8_t>(bytes, out, count);
    case 2: return decodeAs<uint16_t>(bytes, out, count);
    case 4: return decodeAs<uint32_t>(bytes, out, count);
    default: return decodeAs<uint64_t>(bytes, out, count);
    }
  }
}

// --- Writing ------------------------------------------------------------------------

/// What to write for an array: the numpy descr and how to encode one value.
struct Encoding {
  std::string descr;
  int size;
  void (*encode)(float value, char *out);
};

template <class T> void encodeInteger(float value, char *out) {
  T encoded = 0;
  if (value == value) {
    double truncated =
        std::clamp(std::trunc(static_cast<double>(value)), static_cast<double>(std::numeric_limits<T>::min()),
                   static_cast<double>(std::numeric_limits<T>::max()));
    encoded = static_cast<T>(truncated);
  }
  std::memcpy(out, &encoded, sizeof(T));
}

Encoding encodingFor(NpyElementType elementType, nki::DType dtype) {
  using nki::DType;
  Encoding float32{"<f4", 4, [](float v, char *out) { std::memcpy(out, &v, 4); }};
  if (elementType == NpyElementType::Float32) return float32;
  switch (dtype) {
  case DType::Float16:
    return {"<f2", 2, [](float v, char *out) {
              uint16_t bits = float16Bits(v);
              std::memcpy(out, &bits, 2);
            }};
  case DType::Int8: return {"|i1", 1, encodeInteger<int8_t>};
  case DType::UInt8: return {"|u1", 1, encodeInteger<uint8_t>};
  case DType::Int16: return {"<i2", 2, encodeInteger<int16_t>};
  case DType::UInt16: return {"<u2", 2, encodeInteger<uint16_t>};
  case DType::Int32: return {"<i4", 4, encodeInteger<int32_t>};
  case DType::UInt32: return {"<u4", 4, encodeInteger<uint32_t>};
  case DType::Bool: return {"|b1", 1, [](float v, char *out) { *out = v != 0.0f ? 1 : 0; }};
  default: return float32; // float32, and formats numpy lacks (bf16, tf32, fp8)
  }
}

/// Magic, version, header length and the padded header dict.
std::string makePreamble(const std::string &descr, const std::vector<int64_t> &shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : shape) dict += std::to_string(dim) + (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1) dict.resize(dict.size() - 2);
  dict += "), }";
  // Version 1.0 stores the header length in 2 bytes; longer headers need 2.0's 4.
  bool version1 = dict.size() + 1 + kMagic.size() + 4 < 65536;
  size_t lengthBytes = version1 ? 2 : 4;
  size_t unpadded = kMagic.size() + 2 + lengthBytes + dict.size() + 1;
  dict.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  dict += '\n';
  std::string preamble(kMagic.data(), kMagic.size());
  preamble += static_cast<char>(version1 ? 1 : 2);
  preamble += '\0';
  auto length = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < lengthBytes; ++i) preamble += static_cast<char>((length >> (8 * i)) & 0xFF);
  return preamble + dict;
}

void writeData(llvm::raw_ostream &os, const NDArray &array, const Encoding &encoding) {
  std::span<const float> values = array.values();
  if (values.empty()) return;
  if (encoding.descr == "<f4") {
    os.write(reinterpret_cast<const char *>(values.data()), values.size_bytes());
    return;
  }
  constexpr size_t kChunk = 1 << 16;
  std::vector<char> buffer(kChunk * static_cast<size_t>(encoding.size));
  for (size_t start = 0; start < values.size(); start += kChunk) {
    size_t count = std::min(kChunk, values.size() - start);
    for (size_t i = 0; i < count; ++i)
      encoding.encode(values[start + i], buffer.data() + i * static_cast<size_t>(encoding.size));
    os.write(buffer.data(), count * static_cast<size_t>(encoding.size));
  }
}

} // namespace

llvm::Expected<NDArray> parseNpy(llvm::StringRef bytes, llvm::StringRef source) {
  if (!bytes.startswith(kMagic)) return npyError(source, "not a .npy file (missing the \\x93NUMPY magic)");
  if (bytes.size() < kMagic.size() + 4) return npyError(source, "truncated .npy preamble");
  auto major = static_cast<uint8_t>(bytes[kMagic.size()]);
  if (major < 1 || major > 3)
    return npyError(source, "unsupported .npy format version " + llvm::Twine(unsigned(major)));
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t lengthOffset = kMagic.size() + 2;
  if (bytes.size() < lengthOffset + lengthBytes) return npyError(source, "truncated .npy preamble");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(static_cast<uint8_t>(bytes[lengthOffset + i])) << (8 * i);
  size_t dataOffset = lengthOffset + lengthBytes;
  if (headerLength > bytes.size() - dataOffset) return npyError(source, "truncated .npy header");
  llvm::Expected<Header> header = HeaderParser(bytes.substr(dataOffset, headerLength), source).parse();
  if (!header) return header.takeError();
  if (header->fortranOrder)
    return npyError(source, "Fortran-order arrays are not supported; save with "
                            "np.ascontiguousarray first");
  dataOffset += headerLength;

  uint64_t count = 1;
  for (int64_t dim : header->shape)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      return npyError(source, "shape " + formatShape(header->shape) + " overflows");
  uint64_t dataBytes = 0;
  uint64_t available = bytes.size() - dataOffset;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(header->format.size), &dataBytes) || dataBytes > available)
    return npyError(source, "truncated: shape " + formatShape(header->shape) + " needs " + llvm::Twine(dataBytes) +
                                " data bytes, the file has " + llvm::Twine(available));
  if (dataBytes < available)
    return npyError(source, llvm::Twine(available - dataBytes) + " unexpected bytes after the array data");

  nki::DType dtype = dtypeFor(header->format);
  llvm::Expected<NDArray> array = NDArray::allocate(header->shape, dtype);
  if (!array) return array.takeError();
  if (array->numel() > 0) // an empty array has no storage to decode into
    decode(header->format, bytes.data() + dataOffset, array->data(), array->numel());
  // 64-bit integers and f8 may hold values outside the chosen dtype; f4 is already exact.
  if (header->format.size == 8) roundToDType(array->values(), dtype);
  return array;
}

namespace {
const char *fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a special file";
}
} // namespace

llvm::Expected<NDArray> readNpy(llvm::StringRef path) {
  auto cannotRead = [&](std::error_code ec) {
    return llvm::createStringError(ec, "cannot read %s: %s", path.str().c_str(), ec.message().c_str());
  };
  // Opened without blocking and checked on the descriptor: opening a FIFO that no
  // one writes to would wait forever, and reading a device would never end.
  int fd = ::open(path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return cannotRead({errno, std::generic_category()});
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::error_code ec(errno, std::generic_category());
    ::close(fd);
    return cannotRead(ec);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return npyError(path, llvm::Twine("is ") + fileTypeName(st.st_mode) + ", not a regular .npy file");
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getOpenFile(fd, path, static_cast<uint64_t>(st.st_size), /*RequiresNullTerminator=*/false);
  ::close(fd);
  if (!buffer) return cannotRead(buffer.getError());
  return parseNpy((*buffer)->getBuffer(), path);
}

llvm::Error writeNpy(llvm::StringRef path, const NDArray &array, NpyElementType elementType) {
  Encoding encoding = encodingFor(elementType, array.dtype());
  llvm::SmallString<256> tempPath;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp%%%%%%", fd, tempPath))
    return llvm::createStringError(ec, "cannot create a temporary file next to %s: %s", path.str().c_str(),
                                   ec.message().c_str());
  std::error_code writeError;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << makePreamble(encoding.descr, array.shape());
    writeData(os, array, encoding);
    os.close();
    writeError = os.error();
    os.clear_error(); // reported below; an uncleared error would abort in the destructor
  }
  if (!writeError) writeError = llvm::sys::fs::rename(tempPath, path);
  if (writeError) {
    llvm::sys::fs::remove(tempPath);
    return llvm::createStringError(writeError, "cannot write %s: %s", path.str().c_str(), writeError.message().c_str());
  }
  return llvm::Error::success();
}

} // namespace accelopt::interp
