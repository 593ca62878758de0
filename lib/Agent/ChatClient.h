// OpenAI-compatible chat client over libcurl: POST {base_url}/chat/completions.
//
// Retries 429, 5xx, timeouts and connection errors with exponential backoff and
// jitter (Retry-After wins when the server sends it); a counting semaphore,
// shared by all roles, bounds the requests in flight; token usage and dollars go
// to a UsageLedger, every attempt to the Transcript. The API key is read from
// the environment at each attempt, sent as `Authorization: Bearer`, and never
// stored, logged or put in an error message.
#pragma once

#include "Agent/Config.h"
#include "Agent/Usage.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace accelopt::agent {

/// Counting semaphore with a little instrumentation (peak in-flight count).
class Semaphore {
public:
  explicit Semaphore(unsigned count) : Capacity(count ? count : 1), Free(Capacity) {}
  void acquire();
  void release();
  unsigned capacity() const { return Capacity; }
  unsigned peak() const;

  /// RAII holder.
  class Guard {
  public:
    explicit Guard(Semaphore &s) : S(s) { S.acquire(); }
    ~Guard() { S.release(); }
    Guard(const Guard &) = delete;
    Guard &operator=(const Guard &) = delete;

  private:
    Semaphore &S;
  };

private:
  unsigned Capacity;
  unsigned Free;
  unsigned Peak = 0;
  mutable std::mutex Mutex;
  std::condition_variable Cv;
};

struct ChatMessage {
  std::string role; ///< "system", "user", "assistant"
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  /// JSON schema of the wanted answer; sent as `response_format` only when the
  /// endpoint has json_schema = true (must then describe an object).
  std::optional<nlohmann::json> schema;
  std::string schemaName = "answer";
  std::string tag; ///< free text naming the call in the transcript ("plan", "realise 2/3 try 1")
};

struct ChatResponse {
  std::string content;      ///< choices[0].message.content
  std::string finishReason; ///< choices[0].finish_reason
  Usage usage;              ///< this call only (all attempts)
  unsigned attempts = 0;
  std::vector<double> backoffsS; ///< the waits between attempts, in order
  bool dryRun = false;           ///< nothing was sent; content is empty
};

struct RetryPolicy {
  unsigned maxRetries = 4;
  double initialS = 1.0;
  double maxS = 30.0;
  /// Waits are initial * 2^attempt, capped at max, times a random factor in
  /// [1 - jitter, 1]. A Retry-After header replaces the computed wait (capped
  /// at `retryAfterCapS`).
  double jitter = 0.5;
  double retryAfterCapS = 300.0;
};

class ChatClient {
public:
  /// `limit`, `transcript` and `ledger` may be null (no limit / no log / no accounting).
  ChatClient(Role role, EndpointConfig endpoint, RetryPolicy retry, std::shared_ptr<Semaphore> limit,
             Transcript *transcript, UsageLedger *ledger, bool dryRun = false);

  /// One chat completion, with retries. The error names the role, the URL, the
  /// number of attempts and the last status or curl error (keys redacted).
  llvm::Expected<ChatResponse> complete(const ChatRequest &request) const;

  /// The request body that complete() would send (no key in it).
  nlohmann::json requestBody(const ChatRequest &request) const;

  Role role() const { return ClientRole; }
  const EndpointConfig &endpoint() const { return Endpoint; }
  bool dryRun() const { return DryRun; }
  std::string url() const { return Endpoint.baseUrl + "/chat/completions"; }

private:
  double backoffFor(unsigned attempt) const;

  Role ClientRole;
  EndpointConfig Endpoint;
  RetryPolicy Retry;
  std::shared_ptr<Semaphore> Limit;
  Transcript *TranscriptLog;
  UsageLedger *Ledger;
  bool DryRun;
  Redactor SecretRedactor;
  mutable std::mutex RngMutex;
  mutable std::mt19937_64 Rng;
};

/// Parses a Retry-After value (delta seconds or an HTTP date) into seconds
/// from now; nullopt when it is neither.
std::optional<double> parseRetryAfter(llvm::StringRef value);

} // namespace accelopt::agent
