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
    if (line.size() > 4096) line.erase(0, 2048);  // a garbage header line; keep reading to its end
  }
  return !line.empty();
}

std::optional<std::string> MessageReader::read() {
  for (;;) {
    std::string line;
    std::optional<size_t> length;
    bool sawHeader = false;
    // Header block: lines up to an empty one.
    for (;;) {
      if (!readLine(line)) return std::nullopt;
      if (line.empty()) {
        if (sawHeader) break;
        continue;  // stray blank lines between messages
      }
      sawHeader = true;
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char &ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (name != "content-length") continue;
      const char *v = line.c_str() + colon + 1;
      while (*v == ' ' || *v == '\t') ++v;
      char *endp = nullptr;
      unsigned long long n = std::strtoull(v, &endp, 10);
      if (endp != v) length = static_cast<size_t>(std::min<unsigned long long>(n, std::numeric_limits<size_t>::max()));
    }
    if (!length) {
      LastError = "message header without Content-Length";
      continue;
    }
    if (*length > MaxMessageBytes) {
      LastError = "message of " + std::to_string(*length) + " bytes is too large";
      // Skip its body.
      for (size_t i = 0; i < *length; ++i)
        if (std::fgetc(In) == EOF) return std::nullopt;
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
