// JSON-RPC 2.0 message framing over byte streams, as LSP uses it on stdio:
// "Content-Length: N\r\n" (other headers ignored), a blank line, N bytes of JSON.
#pragma once

#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace accelopt::lsp {

/// Reads framed messages from a FILE (stdin).
class MessageReader {
public:
  explicit MessageReader(std::FILE *in) : In(in) {}
  /// The next message body; std::nullopt at end of input. A header block
  /// without a usable Content-Length is skipped (reported via takeError).
  std::optional<std::string> read();
  /// The last framing problem since the previous call ("" if none).
  std::string takeError() { return std::exchange(LastError, std::string()); }

private:
  std::FILE *In;
  std::string LastError;
  bool Resync = false; // the last header block had no usable length: find the next one first
  bool readLine(std::string &line);
  /// Consumes input through the next "Content-Length:" (any case); false at end of input.
  bool skipToNextContentLength();
};

/// Writes framed messages to a FILE (stdout); safe to call from several threads.
class MessageWriter {
public:
  explicit MessageWriter(std::FILE *out) : Out(out) {}
  void write(const std::string &body);

private:
  std::FILE *Out;
  std::mutex Lock;
};

/// "Content-Length: <n>\r\n\r\n<body>".
std::string frame(const std::string &body);

} // namespace accelopt::lsp
