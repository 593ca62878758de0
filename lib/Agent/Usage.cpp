#include "Agent/Usage.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace accelopt::agent {

Usage &Usage::operator+=(const Usage &o) {
  requests += o.requests;
  retries += o.retries;
  failedCalls += o.failedCalls;
  promptTokens += o.promptTokens;
  completionTokens += o.completionTokens;
  dollars += o.dollars;
  seconds += o.seconds;
  return *this;
}

nlohmann::json Usage::toJson() const {
  return {{"requests", requests},
          {"retries", retries},
          {"failed_calls", failedCalls},
          {"prompt_tokens", promptTokens},
          {"completion_tokens", completionTokens},
          {"total_tokens", totalTokens()},
          {"dollars", dollars},
          {"seconds", seconds}};
}

double costOf(const EndpointConfig &e, uint64_t promptTokens, uint64_t completionTokens) {
  return (double(promptTokens) * e.pricePerMillionInput + double(completionTokens) * e.pricePerMillionOutput) / 1e6;
}

void UsageLedger::add(Role role, const Usage &u) {
  std::lock_guard<std::mutex> lock(Mutex);
  Roles[role] += u;
}

Usage UsageLedger::role(Role role) const {
  std::lock_guard<std::mutex> lock(Mutex);
  auto it = Roles.find(role);
  return it == Roles.end() ? Usage() : it->second;
}

Usage UsageLedger::total() const {
  std::lock_guard<std::mutex> lock(Mutex);
  Usage t;
  for (auto &[role, u] : Roles) t += u;
  return t;
}

nlohmann::json UsageLedger::toJson() const {
  nlohmann::json j;
  for (Role r : AllRoles) j[roleName(r).str()] = role(r).toJson();
  j["total"] = total().toJson();
  return j;
}

llvm::Error UsageLedger::writeJson(llvm::StringRef path) const {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec) return llvm::createStringError(ec, "cannot write '%s': %s", path.str().c_str(), ec.message().c_str());
  os << toJson().dump(2) << "\n";
  return llvm::Error::success();
}

Redactor Redactor::forConfig(const AgentConfig &config) {
  std::vector<std::string> vars;
  for (Role r : AllRoles) {
    const std::string &v = config.endpoint(r).apiKeyEnv;
    if (!v.empty() && std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
  }
  return Redactor(std::move(vars));
}

static bool isTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' ||
         c == '/' || c == '=';
}

std::string Redactor::operator()(llvm::StringRef text) const {
  static const std::string Mask = "[REDACTED]";
  std::string s = text.str();
  auto replaceAll = [&](const std::string &secret) {
    if (secret.empty()) return;
    for (size_t pos = s.find(secret); pos != std::string::npos; pos = s.find(secret, pos + Mask.size()))
      s.replace(pos, secret.size(), Mask);
  };
  for (const std::string &var : EnvVars)
    if (const char *value = std::getenv(var.c_str()); value && std::strlen(value) >= 4) replaceAll(value);
  // Token-shaped secrets that did not come from a configured variable.
  auto maskAfter = [&](llvm::StringRef marker, bool keepMarker, size_t minLen) {
    for (size_t pos = s.find(marker.str()); pos != std::string::npos; pos = s.find(marker.str(), pos + 1)) {
      size_t begin = keepMarker ? pos + marker.size() : pos;
      size_t end = pos + marker.size();
      while (end < s.size() && isTokenChar(s[end])) ++end;
      if (end - (pos + marker.size()) < minLen) continue;
      if (llvm::StringRef(s).substr(begin).startswith(Mask)) continue;
      s.replace(begin, end - begin, Mask);
    }
  };
  maskAfter("Bearer ", /*keepMarker=*/true, 1);
  maskAfter("sk-", /*keepMarker=*/false, 16);
  return s;
}

llvm::Expected<std::unique_ptr<Transcript>> Transcript::open(llvm::StringRef path, Redactor redactor) {
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return llvm::createStringError(ec, "cannot create '%s': %s", dir.str().c_str(), ec.message().c_str());
  std::unique_ptr<Transcript> t(new Transcript(path.str(), std::move(redactor)));
  t->Out.open(t->Path, std::ios::out | std::ios::trunc);
  if (!t->Out)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot write transcript '%s'", path.str().c_str());
  return t;
}

std::string Transcript::pathInReportDir(llvm::StringRef reportDir) {
  llvm::SmallString<256> p(reportDir);
  llvm::sys::path::append(p, "agent-transcript.jsonl");
  return std::string(p);
}

static std::string utcNow() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

void Transcript::write(nlohmann::json event) {
  std::lock_guard<std::mutex> lock(Mutex);
  nlohmann::json line = {{"seq", Seq++}, {"time", utcNow()}};
  for (auto it = event.begin(); it != event.end(); ++it) line[it.key()] = it.value();
  Out << SecretRedactor(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) << "\n";
  Out.flush();
}

uint64_t Transcript::lines() const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Seq;
}

} // namespace accelopt::agent
