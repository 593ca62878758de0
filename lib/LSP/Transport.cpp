#include "LSP/Transport.h"

#include <cctype>
#include <cstdlib>
#include <limits>

namespace accelopt::lsp {

/// Messages larger than this are refused (a kernel source is at most 4 MB; its
/// JSON escaping can double that).
static constexpr size_t MaxMessageBytes = 64u << 20;

bool MessageReader::readLine(std::string &line) {
  line.clear();
  int c;
  while ((c = std::fgetc(In)) != EOF) {
    if (c == '\n') {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return true;
    }
    line.push_back(static_cast<char>(c));
    if (line.size() > 4096) line.erase(0, 2048); // a garbage header line; keep reading to its end
  }
  return !line.empty();
}

namespace {

/// The value of a Content-Length header: decimal digits only ("-5" or "1e3" are not lengths), and small
/// enough to count.
std::optional<size_t> parseLength(const char *v) {
  while (*v == ' ' || *v == '\t') ++v;
  size_t n = 0;
  const char *start = v;
  for (; std::isdigit(static_cast<unsigned char>(*v)); ++v)
    if (__builtin_mul_overflow(n, size_t(10), &n) || __builtin_add_overflow(n, size_t(*v - '0'), &n))
      return std::nullopt;
  while (*v == ' ' || *v == '\t') ++v;
  if (v == start || *v) return std::nullopt;
  return n;
}

} // namespace

bool MessageReader::skipToNextContentLength() {
  static constexpr char Key[] = "content-length:";
  constexpr size_t KeyLength = sizeof(Key) - 1;
  size_t matched = 0;
  int c;
  while ((c = std::fgetc(In)) != EOF) {
    char lower = static_cast<char>(std::tolower(c));
    matched = lower == Key[matched] ? matched + 1 : lower == Key[0] ? 1 : 0;
    if (matched == KeyLength) return true;
  }
  return false;
}

std::optional<std::string> MessageReader::read() {
  for (;;) {
    std::string line;
    std::optional<size_t> length;
    bool sawHeader = false, badLength = false;
    // After a header block whose body cannot be delimited, the stream is re-synchronised on the next
    // Content-Length header: the reader then stands just after its colon.
    if (Resync) {
      Resync = false;
      if (!skipToNextContentLength()) return std::nullopt;
      line = "content-length:";
      std::string rest;
      if (!readLine(rest)) return std::nullopt;
      line += rest;
    }
    // Header block: lines up to an empty one.
    for (bool first = true;; first = false) {
      if (!(first && !line.empty()) && !readLine(line)) return std::nullopt;
      if (line.empty()) {
        if (sawHeader) break;
        continue; // stray blank lines between messages
      }
      sawHeader = true;
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char &ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (name != "content-length") continue;
      length = parseLength(line.c_str() + colon + 1);
      if (!length) {
        badLength = true;
        LastError = "invalid Content-Length '" + line.substr(colon + 1) + "'; skipped to the next message";
      }
    }
    if (!length) {
      if (!badLength) LastError = "message header without Content-Length; skipped to the next message";
      Resync = true;
      continue;
    }
    if (*length > MaxMessageBytes) {
      // Reading a body that large could take the server's memory, or wait forever for bytes that never
      // come; the next header is the next message.
      LastError = "message of " + std::to_string(*length) + " bytes is too large (at most " +
                  std::to_string(MaxMessageBytes) + "); skipped to the next message";
      Resync = true;
      continue;
    }
    std::string body(*length, '\0');
    size_t got = *length ? std::fread(body.data(), 1, *length, In) : 0;
    if (got < *length) return std::nullopt;
    return body;
  }
}

std::string frame(const std::string &body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

void MessageWriter::write(const std::string &body) {
  std::string framed = frame(body);
  std::lock_guard<std::mutex> guard(Lock);
  std::fwrite(framed.data(), 1, framed.size(), Out);
  std::fflush(Out);
}

} // namespace accelopt::lsp
