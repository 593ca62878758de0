// Token and dollar accounting per role and per run, the JSONL transcript of
// every request and response, and the redaction of API keys.
#pragma once

#include "Agent/Config.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace accelopt::agent {

/// Counters of one role (or of the whole run).
struct Usage {
  uint64_t requests = 0;     ///< HTTP attempts sent
  uint64_t retries = 0;      ///< attempts after the first of a call
  uint64_t failedCalls = 0;  ///< calls that gave up (all retries exhausted or a hard error)
  uint64_t promptTokens = 0; ///< from the responses' `usage` field
  uint64_t completionTokens = 0;
  double dollars = 0; ///< tokens x the endpoint's prices
  double seconds = 0; ///< wall time spent in HTTP attempts

  uint64_t totalTokens() const { return promptTokens + completionTokens; }
  Usage &operator+=(const Usage &o);
  nlohmann::json toJson() const;
};

/// Dollars for the given token counts at the endpoint's prices.
double costOf(const EndpointConfig &e, uint64_t promptTokens, uint64_t completionTokens);

/// Thread-safe per-role ledger of one run.
class UsageLedger {
public:
  void add(Role role, const Usage &u);
  Usage role(Role role) const;
  Usage total() const;
  /// {"planner": {...}, "executor": {...}, "summarizer": {...}, "total": {...}}
  nlohmann::json toJson() const;
  /// Writes toJson() to `path`.
  llvm::Error writeJson(llvm::StringRef path) const;

private:
  mutable std::mutex Mutex;
  std::map<Role, Usage> Roles;
};

/// Replaces every secret in a text with "[REDACTED]": the current values of the
/// named environment variables (read when redacting, never kept), any
/// `Bearer <token>` and anything shaped like an `sk-...` key.
class Redactor {
public:
  Redactor() = default;
  explicit Redactor(std::vector<std::string> keyEnvVars) : EnvVars(std::move(keyEnvVars)) {}
  static Redactor forConfig(const AgentConfig &config);
  std::string operator()(llvm::StringRef text) const;

private:
  std::vector<std::string> EnvVars;
};

/// Append-only JSONL log of the agent's traffic. Every line passes through the
/// redactor before it is written. Safe to use from several threads.
class Transcript {
public:
  /// Opens (truncating) `path`.
  static llvm::Expected<std::unique_ptr<Transcript>> open(llvm::StringRef path, Redactor redactor);
  /// The transcript of a run goes next to its report: `<reportDir>/agent-transcript.jsonl`.
  static std::string pathInReportDir(llvm::StringRef reportDir);

  /// Adds "seq" and "time" (UTC, ISO 8601) to `event` and writes it as one line.
  void write(nlohmann::json event);
  const std::string &path() const { return Path; }
  uint64_t lines() const;

private:
  Transcript(std::string path, Redactor redactor) : Path(std::move(path)), SecretRedactor(std::move(redactor)) {}
  std::string Path;
  Redactor SecretRedactor;
  mutable std::mutex Mutex;
  std::ofstream Out;
  uint64_t Seq = 0;
};

} // namespace accelopt::agent
