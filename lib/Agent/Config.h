// Agent configuration: one JSON file with an endpoint per role (planner,
// executor, summarizer) plus limits shared by all roles.
//
//   {"defaults":   {... any endpoint field, applied to every role first ...},
//    "planner":    {"base_url": "https://api.openai.com/v1", "model": "...",
//                   "api_key_env": "OPENAI_API_KEY", "temperature": 0.7,
//                   "max_tokens": 4096, "price_per_million_input": 2.5,
//                   "price_per_million_output": 10, "json_schema": true,
//                   "timeout_s": 120, "connect_timeout_s": 10},
//    "executor":   {...}, "summarizer": {...},
//    "max_concurrency": 4, "max_retries": 4, "backoff_initial_s": 1,
//    "backoff_max_s": 30, "fixer_retries": 2, "prompt_dir": "prompts/"}
//
// Every field is optional. Unknown keys and wrongly typed values are errors
// that name the file and the key.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <array>
#include <string>

namespace accelopt::agent {

enum class Role { Planner, Executor, Summarizer };
inline constexpr std::array<Role, 3> AllRoles = {Role::Planner, Role::Executor, Role::Summarizer};
/// "planner", "executor", "summarizer".
llvm::StringRef roleName(Role role);

/// One OpenAI-compatible chat endpoint.
struct EndpointConfig {
  std::string baseUrl = "https://api.openai.com/v1"; ///< POST {baseUrl}/chat/completions
  std::string model = "gpt-4o";
  /// Name of the environment variable holding the API key ("" = send no key).
  /// The key itself is never part of the configuration.
  std::string apiKeyEnv = "OPENAI_API_KEY";
  double temperature = 0.7;
  int maxTokens = 4096;
  double pricePerMillionInput = 0;  ///< dollars per 1e6 prompt tokens
  double pricePerMillionOutput = 0; ///< dollars per 1e6 completion tokens
  /// The endpoint accepts `response_format: {type: json_schema}`; otherwise the
  /// JSON is dug out of free text.
  bool jsonSchema = false;
  double timeoutS = 120;       ///< whole request
  double connectTimeoutS = 10; ///< TCP + TLS connect
};

struct AgentConfig {
  EndpointConfig planner, executor, summarizer;
  unsigned maxConcurrency = 4;  ///< requests in flight, all roles together
  unsigned maxRetries = 4;      ///< extra attempts on 429/5xx/timeouts/connection errors
  double backoffInitialS = 1.0; ///< first backoff; doubles per attempt, with jitter
  double backoffMaxS = 30.0;    ///< cap on one backoff (and on Retry-After)
  unsigned fixerRetries = 2;    ///< R: re-asks of the executor after a refused answer
  std::string promptDir;        ///< "" = the templates built into the library

  EndpointConfig &endpoint(Role role);
  const EndpointConfig &endpoint(Role role) const;
};

/// Parses the configuration text; `origin` names it in errors.
llvm::Expected<AgentConfig> parseAgentConfig(llvm::StringRef text, llvm::StringRef origin = "<config>");
/// Reads and parses a configuration file. A relative prompt_dir is resolved
/// against the file's directory.
llvm::Expected<AgentConfig> loadAgentConfig(llvm::StringRef path);
/// The effective configuration (defaults filled in), in the file's format.
nlohmann::json toJson(const AgentConfig &config);

} // namespace accelopt::agent
