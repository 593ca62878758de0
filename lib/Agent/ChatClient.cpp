#include "Agent/ChatClient.h"

#include "llvm/Support/FormatVariadic.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace accelopt::agent {

// --- Semaphore ----------------------------------------------------------------

void Semaphore::acquire() {
  std::unique_lock<std::mutex> lock(Mutex);
  Cv.wait(lock, [&] { return Free > 0; });
  --Free;
  Peak = std::max(Peak, Capacity - Free);
}

void Semaphore::release() {
  {
    std::lock_guard<std::mutex> lock(Mutex);
    ++Free;
  }
  Cv.notify_one();
}

unsigned Semaphore::peak() const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Peak;
}

// --- Helpers ------------------------------------------------------------------

namespace {

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t onBody(char *data, size_t size, size_t n, void *user) {
  static_cast<std::string *>(user)->append(data, size * n);
  return size * n;
}

size_t onHeader(char *data, size_t size, size_t n, void *user) {
  llvm::StringRef line(data, size * n);
  auto [name, value] = line.split(':');
  if (name.trim().equals_insensitive("retry-after")) *static_cast<std::string *>(user) = value.trim().str();
  return size * n;
}

bool retryableCurl(CURLcode c) {
  switch (c) {
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_COULDNT_CONNECT:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM: return true;
  default: return false;
  }
}

bool retryableStatus(long status) { return status == 408 || status == 429 || status >= 500; }

std::string snippet(const std::string &body, size_t max = 300) {
  std::string s = body.size() > max ? body.substr(0, max) + "..." : body;
  for (char &c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

/// What one HTTP attempt gave.
struct Attempt {
  CURLcode curl = CURLE_OK;
  std::string curlError;
  long status = 0;
  std::string body;
  std::string retryAfter;
  double seconds = 0;
};

/// The API key is only in this function's locals and in curl's header list,
/// which is wiped before it is freed.
Attempt post(const std::string &url, const std::string &apiKeyEnv, const std::string &payload, double timeoutS,
             double connectTimeoutS) {
  Attempt a;
  CURL *h = curl_easy_init();
  if (!h) {
    a.curl = CURLE_FAILED_INIT;
    a.curlError = "curl_easy_init failed";
    return a;
  }
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist *headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Accept: application/json");
  headers = curl_slist_append(headers, "Expect:");
  if (!apiKeyEnv.empty())
    if (const char *key = std::getenv(apiKeyEnv.c_str()); key && *key) {
      std::string line = std::string("Authorization: Bearer ") + key;
      headers = curl_slist_append(headers, line.c_str());
      std::fill(line.begin(), line.end(), '\0');
    }
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &a.retryAfter);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); // threads: no SIGALRM-based timeouts
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::ceil(timeoutS * 1000)));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::ceil(connectTimeoutS * 1000)));
  curl_easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1"); // a local endpoint never goes through a proxy
  curl_easy_setopt(h, CURLOPT_USERAGENT, "accelopt-agent/0.1");
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); // any encoding curl can decode

  auto start = std::chrono::steady_clock::now();
  a.curl = curl_easy_perform(h);
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (a.curl == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  else
    a.curlError = errbuf[0] ? errbuf : curl_easy_strerror(a.curl);

  for (curl_slist *it = headers; it; it = it->next)
    if (it->data) std::memset(it->data, 0, std::strlen(it->data));
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return a;
}

} // namespace

std::optional<double> parseRetryAfter(llvm::StringRef value) {
  value = value.trim();
  if (value.empty()) return std::nullopt;
  double seconds;
  if (!value.getAsDouble(seconds))
    return std::isfinite(seconds) && seconds >= 0 ? std::optional(seconds) : std::nullopt;
  time_t when = curl_getdate(value.str().c_str(), nullptr);
  if (when < 0) return std::nullopt;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

// --- ChatClient -----------------------------------------------------------------

ChatClient::ChatClient(Role role, EndpointConfig endpoint, RetryPolicy retry, std::shared_ptr<Semaphore> limit,
                       Transcript *transcript, UsageLedger *ledger, bool dryRun)
    : ClientRole(role), Endpoint(std::move(endpoint)), Retry(retry), Limit(std::move(limit)), TranscriptLog(transcript),
      Ledger(ledger), DryRun(dryRun), Rng(std::random_device{}()) {
  if (!Endpoint.apiKeyEnv.empty()) SecretRedactor = Redactor({Endpoint.apiKeyEnv});
  globalInit();
}

nlohmann::json ChatClient::requestBody(const ChatRequest &request) const {
  nlohmann::json messages = nlohmann::json::array();
  for (const ChatMessage &m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  nlohmann::json body = {{"model", Endpoint.model},
                         {"messages", std::move(messages)},
                         {"temperature", Endpoint.temperature},
                         {"max_tokens", Endpoint.maxTokens}};
  if (Endpoint.jsonSchema && request.schema)
    body["response_format"] = {{"type", "json_schema"},
                               {"json_schema", {{"name", request.schemaName}, {"schema", *request.schema}}}};
  return body;
}

double ChatClient::backoffFor(unsigned attempt) const {
  double wait = std::min(Retry.maxS, Retry.initialS * std::pow(2.0, double(attempt)));
  std::lock_guard<std::mutex> lock(RngMutex);
  std::uniform_real_distribution<double> factor(1.0 - std::clamp(Retry.jitter, 0.0, 1.0), 1.0);
  return wait * factor(Rng);
}

llvm::Expected<ChatResponse> ChatClient::complete(const ChatRequest &request) const {
  static std::atomic<uint64_t> nextCall{0};
  uint64_t call = nextCall++;
  const std::string role = roleName(ClientRole).str();
  const std::string target = url();
  nlohmann::json body = requestBody(request);
  auto log = [&](nlohmann::json event) {
    if (TranscriptLog) {
      event["role"] = role;
      event["call"] = call;
      if (!request.tag.empty()) event["tag"] = request.tag;
      TranscriptLog->write(std::move(event));
    }
  };

  ChatResponse out;
  if (DryRun) {
    log({{"event", "dry_run"}, {"url", target}, {"body", body}});
    out.dryRun = true;
    return out;
  }

  const std::string payload = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string lastProblem;
  for (unsigned attempt = 0;; ++attempt) {
    nlohmann::json req = {{"event", "request"}, {"attempt", attempt}, {"url", target}};
    if (attempt == 0) req["body"] = body;
    log(std::move(req));

    Attempt a;
    {
      std::optional<Semaphore::Guard> slot;
      if (Limit) slot.emplace(*Limit);
      a = post(target, Endpoint.apiKeyEnv, payload, Endpoint.timeoutS, Endpoint.connectTimeoutS);
    }
    ++out.attempts;
    out.usage.requests++;
    out.usage.seconds += a.seconds;

    bool retryable = false;
    if (a.curl != CURLE_OK) {
      lastProblem = SecretRedactor(a.curlError);
      if (a.curl == CURLE_OPERATION_TIMEDOUT)
        lastProblem = llvm::formatv("timeout after {0:F1}s ({1})", a.seconds, lastProblem);
      retryable = retryableCurl(a.curl);
      log({{"event", "error"}, {"attempt", attempt}, {"error", lastProblem}, {"seconds", a.seconds}});
    } else {
      nlohmann::json parsed = nlohmann::json::parse(a.body, nullptr, /*allow_exceptions=*/false);
      nlohmann::json ev = {{"event", "response"}, {"attempt", attempt}, {"status", a.status}, {"seconds", a.seconds}};
      if (!parsed.is_discarded())
        ev["body"] = parsed;
      else
        ev["body_text"] = a.body;
      if (!a.retryAfter.empty()) ev["retry_after"] = a.retryAfter;
      log(std::move(ev));

      if (a.status == 200 && parsed.is_object()) {
        if (auto u = parsed.find("usage"); u != parsed.end() && u->is_object()) {
          out.usage.promptTokens += u->value("prompt_tokens", uint64_t(0));
          out.usage.completionTokens += u->value("completion_tokens", uint64_t(0));
        }
        const nlohmann::json *choice = nullptr;
        if (auto c = parsed.find("choices"); c != parsed.end() && c->is_array() && !c->empty()) choice = &(*c)[0];
        const nlohmann::json *message = nullptr;
        if (choice && choice->contains("message") && (*choice)["message"].is_object()) message = &(*choice)["message"];
        if (message && message->contains("content") && (*message)["content"].is_string()) {
          // Endpoint text enters the program here: redacted once, so plans, ops, summaries, the
          // memory, reports and kernels never hold a key the endpoint echoed back.
          out.content = SecretRedactor((*message)["content"].get<std::string>());
          if (choice->contains("finish_reason") && (*choice)["finish_reason"].is_string())
            out.finishReason = SecretRedactor((*choice)["finish_reason"].get<std::string>());
          out.usage.dollars = costOf(Endpoint, out.usage.promptTokens, out.usage.completionTokens);
          out.usage.retries = out.attempts - 1;
          if (Ledger) Ledger->add(ClientRole, out.usage);
          return out;
        }
        std::string why = "the response has no choices[0].message.content";
        if (message && message->contains("refusal") && (*message)["refusal"].is_string())
          why = "the model refused: " + (*message)["refusal"].get<std::string>();
        lastProblem = SecretRedactor(why + ": " + snippet(a.body));
        retryable = false;
      } else if (a.status == 200) {
        lastProblem = SecretRedactor("HTTP 200 with a body that is not a JSON object: " + snippet(a.body));
        retryable = true; // a proxy or a load balancer hiccup
      } else {
        std::string detail = snippet(a.body);
        if (parsed.is_object() && parsed.contains("error")) {
          const nlohmann::json &e = parsed["error"];
          detail = e.is_object() && e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>()
                                                                                      : snippet(e.dump());
        }
        lastProblem = SecretRedactor(llvm::formatv("HTTP {0}: {1}", a.status, detail).str());
        retryable = retryableStatus(a.status);
      }
    }

    if (!retryable || attempt >= Retry.maxRetries) {
      out.usage.retries = out.attempts - 1;
      out.usage.failedCalls = 1;
      out.usage.dollars = costOf(Endpoint, out.usage.promptTokens, out.usage.completionTokens);
      if (Ledger) Ledger->add(ClientRole, out.usage);
      std::string msg =
          llvm::formatv("{0}: POST {1} failed after {2} attempt{3}{4}: {5}", role, target, out.attempts,
                        out.attempts == 1 ? "" : "s", retryable ? " (retries exhausted)" : "", lastProblem)
              .str();
      log({{"event", "gave_up"}, {"error", msg}});
      return llvm::make_error<llvm::StringError>(SecretRedactor(msg), llvm::inconvertibleErrorCode());
    }

    double wait = backoffFor(attempt);
    if (auto ra = parseRetryAfter(a.retryAfter)) wait = std::min(*ra, Retry.retryAfterCapS);
    out.backoffsS.push_back(wait);
    log({{"event", "backoff"}, {"attempt", attempt}, {"wait_s", wait}, {"reason", lastProblem}});
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

} // namespace accelopt::agent
