#include "Agent/Config.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>

namespace accelopt::agent {

llvm::StringRef roleName(Role role) {
  switch (role) {
  case Role::Planner: return "planner";
  case Role::Executor: return "executor";
  case Role::Summarizer: return "summarizer";
  }
  return "?";
}

EndpointConfig &AgentConfig::endpoint(Role role) {
  switch (role) {
  case Role::Planner: return planner;
  case Role::Executor: return executor;
  case Role::Summarizer: break;
  }
  return summarizer;
}

const EndpointConfig &AgentConfig::endpoint(Role role) const { return const_cast<AgentConfig *>(this)->endpoint(role); }

namespace {

using nlohmann::json;

struct Reader {
  llvm::StringRef origin;

  llvm::Error fail(const std::string &where, const std::string &what) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s: %s", origin.str().c_str(), where.c_str(),
                                   what.c_str());
  }

  llvm::Error string(const json &v, const std::string &where, std::string &out) const {
    if (!v.is_string()) return fail(where, "expected a string, got " + v.dump());
    out = v.get<std::string>();
    return llvm::Error::success();
  }
  llvm::Error number(const json &v, const std::string &where, double &out, double lo, double hi) const {
    if (!v.is_number()) return fail(where, "expected a number, got " + v.dump());
    double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi)
      return fail(where, llvm::formatv("{0} is out of range [{1}, {2}]", v.dump(), lo, hi).str());
    out = d;
    return llvm::Error::success();
  }
  template <typename Int>
  llvm::Error integer(const json &v, const std::string &where, Int &out, int64_t lo, int64_t hi) const {
    if (!v.is_number_integer()) return fail(where, "expected an integer, got " + v.dump());
    int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) return fail(where, llvm::formatv("{0} is out of range [{1}, {2}]", i, lo, hi).str());
    out = static_cast<Int>(i);
    return llvm::Error::success();
  }
  llvm::Error boolean(const json &v, const std::string &where, bool &out) const {
    if (!v.is_boolean()) return fail(where, "expected true or false, got " + v.dump());
    out = v.get<bool>();
    return llvm::Error::success();
  }

  llvm::Error endpoint(const json &obj, const std::string &where, EndpointConfig &e) const {
    if (!obj.is_object()) return fail(where, "expected an object with the endpoint settings");
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const std::string &key = it.key();
      const json &v = it.value();
      std::string at = where + "." + key;
      llvm::Error err = llvm::Error::success();
      if (key == "base_url") {
        err = string(v, at, e.baseUrl);
        if (!err && e.baseUrl.empty()) err = fail(at, "must not be empty");
        while (!err && !e.baseUrl.empty() && e.baseUrl.back() == '/') e.baseUrl.pop_back();
      } else if (key == "model") {
        err = string(v, at, e.model);
        if (!err && e.model.empty()) err = fail(at, "must not be empty");
      } else if (key == "api_key_env") {
        err = string(v, at, e.apiKeyEnv);
      } else if (key == "api_key") {
        err = fail(at, "API keys do not belong in the configuration; put the key in an environment variable "
                       "and name it with \"api_key_env\"");
      } else if (key == "temperature") {
        err = number(v, at, e.temperature, 0, 2);
      } else if (key == "max_tokens") {
        err = integer(v, at, e.maxTokens, 1, 10'000'000);
      } else if (key == "price_per_million_input") {
        err = number(v, at, e.pricePerMillionInput, 0, 1e6);
      } else if (key == "price_per_million_output") {
        err = number(v, at, e.pricePerMillionOutput, 0, 1e6);
      } else if (key == "json_schema") {
        err = boolean(v, at, e.jsonSchema);
      } else if (key == "timeout_s") {
        err = number(v, at, e.timeoutS, 0.001, 86400);
      } else if (key == "connect_timeout_s") {
        err = number(v, at, e.connectTimeoutS, 0.001, 86400);
      } else {
        err = fail(at, "unknown key (known: base_url, model, api_key_env, temperature, max_tokens, "
                       "price_per_million_input, price_per_million_output, json_schema, timeout_s, "
                       "connect_timeout_s)");
      }
      if (err) return err;
    }
    return llvm::Error::success();
  }
};

} // namespace

llvm::Expected<AgentConfig> parseAgentConfig(llvm::StringRef text, llvm::StringRef origin) {
  Reader r{origin};
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (root.is_discarded()) {
    // Parse again with exceptions for the position of the error.
    try {
      json again = json::parse(text.begin(), text.end(), nullptr, true, true);
      (void)again;
    } catch (const json::exception &e) {
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: invalid JSON: %s", origin.str().c_str(),
                                     e.what());
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: invalid JSON", origin.str().c_str());
  }
  if (!root.is_object())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: expected a JSON object with \"planner\", \"executor\" and \"summarizer\"",
                                   origin.str().c_str());

  AgentConfig cfg;
  if (auto it = root.find("defaults"); it != root.end())
    for (Role role : AllRoles)
      if (auto err = r.endpoint(*it, "defaults", cfg.endpoint(role))) return err;

  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string &key = it.key();
    const json &v = it.value();
    llvm::Error err = llvm::Error::success();
    if (key == "defaults") {
      continue;
    } else if (key == "planner") {
      err = r.endpoint(v, key, cfg.planner);
    } else if (key == "executor") {
      err = r.endpoint(v, key, cfg.executor);
    } else if (key == "summarizer") {
      err = r.endpoint(v, key, cfg.summarizer);
    } else if (key == "max_concurrency") {
      err = r.integer(v, key, cfg.maxConcurrency, 1, 1024);
    } else if (key == "max_retries") {
      err = r.integer(v, key, cfg.maxRetries, 0, 100);
    } else if (key == "fixer_retries") {
      err = r.integer(v, key, cfg.fixerRetries, 0, 100);
    } else if (key == "backoff_initial_s") {
      err = r.number(v, key, cfg.backoffInitialS, 0, 3600);
    } else if (key == "backoff_max_s") {
      err = r.number(v, key, cfg.backoffMaxS, 0, 3600);
    } else if (key == "prompt_dir") {
      err = r.string(v, key, cfg.promptDir);
    } else {
      err = r.fail(key, "unknown key (known: defaults, planner, executor, summarizer, max_concurrency, "
                        "max_retries, fixer_retries, backoff_initial_s, backoff_max_s, prompt_dir)");
    }
    if (err) return err;
  }
  if (cfg.backoffMaxS < cfg.backoffInitialS)
    return r.fail("backoff_max_s", "must not be smaller than backoff_initial_s");
  return cfg;
}

llvm::Expected<AgentConfig> loadAgentConfig(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(buf.getError(), "cannot read agent config '%s': %s", path.str().c_str(),
                                   buf.getError().message().c_str());
  auto cfg = parseAgentConfig((*buf)->getBuffer(), path);
  if (cfg && !cfg->promptDir.empty() && llvm::sys::path::is_relative(cfg->promptDir)) {
    llvm::SmallString<256> dir = llvm::sys::path::parent_path(path);
    llvm::sys::path::append(dir, cfg->promptDir);
    cfg->promptDir = std::string(dir);
  }
  return cfg;
}

static nlohmann::json endpointJson(const EndpointConfig &e) {
  return {{"base_url", e.baseUrl},
          {"model", e.model},
          {"api_key_env", e.apiKeyEnv},
          {"temperature", e.temperature},
          {"max_tokens", e.maxTokens},
          {"price_per_million_input", e.pricePerMillionInput},
          {"price_per_million_output", e.pricePerMillionOutput},
          {"json_schema", e.jsonSchema},
          {"timeout_s", e.timeoutS},
          {"connect_timeout_s", e.connectTimeoutS}};
}

nlohmann::json toJson(const AgentConfig &c) {
  nlohmann::json j;
  for (Role role : AllRoles) j[roleName(role).str()] = endpointJson(c.endpoint(role));
  j["max_concurrency"] = c.maxConcurrency;
  j["max_retries"] = c.maxRetries;
  j["fixer_retries"] = c.fixerRetries;
  j["backoff_initial_s"] = c.backoffInitialS;
  j["backoff_max_s"] = c.backoffMaxS;
  j["prompt_dir"] = c.promptDir;
  return j;
}

} // namespace accelopt::agent
