// The chat client against a real HTTP server on 127.0.0.1 (fake_openai.py).
#include "Agent/ChatClient.h"

#include "FakeServer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

using namespace accelopt::agent;
using namespace accelopt::agent::test;
using nlohmann::json;

namespace {

const char *KeyVar = "ACCELOPT_UNIT_TEST_KEY";
const char *Key = "sk-unittest-0123456789abcdefSECRET";

struct ClientTest : ::testing::Test {
  void SetUp() override { ::setenv(KeyVar, Key, 1); }
  void TearDown() override { ::unsetenv(KeyVar); }

  EndpointConfig endpoint(const FakeServer &server) {
    EndpointConfig e;
    e.baseUrl = server.baseUrl();
    e.model = "test-model";
    e.apiKeyEnv = KeyVar;
    e.temperature = 0.25;
    e.maxTokens = 321;
    e.pricePerMillionInput = 2.0;
    e.pricePerMillionOutput = 8.0;
    e.timeoutS = 5;
    e.connectTimeoutS = 2;
    return e;
  }
  static RetryPolicy fastRetry(unsigned maxRetries = 3) {
    RetryPolicy r;
    r.maxRetries = maxRetries;
    r.initialS = 0.05;
    r.maxS = 0.2;
    return r;
  }
  static ChatRequest hello() {
    ChatRequest r;
    r.messages = {{"system", "be brief"}, {"user", "say hi"}};
    r.tag = "test";
    return r;
  }
};

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST_F(ClientTest, GoodAnswerHeadersBodyUsageAndRedactedTranscript) {
  FakeServer server(json::array({answer("hi there", 1000, 250)}));
  std::string transcriptPath = tempPath("agent-transcript", "jsonl");
  auto transcript = Transcript::open(transcriptPath, Redactor({KeyVar}));
  ASSERT_TRUE(bool(transcript)) << llvm::toString(transcript.takeError());
  UsageLedger ledger;
  ChatClient client(Role::Planner, endpoint(server), fastRetry(), nullptr, transcript->get(), &ledger);

  auto resp = client.complete(hello());
  ASSERT_TRUE(bool(resp)) << llvm::toString(resp.takeError());
  EXPECT_EQ(resp->content, "hi there");
  EXPECT_EQ(resp->finishReason, "stop");
  EXPECT_EQ(resp->attempts, 1u);
  EXPECT_EQ(resp->usage.promptTokens, 1000u);
  EXPECT_EQ(resp->usage.completionTokens, 250u);
  EXPECT_DOUBLE_EQ(resp->usage.dollars, (1000 * 2.0 + 250 * 8.0) / 1e6);

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(reqs[0]["headers"]["authorization"], std::string("Bearer ") + Key);
  EXPECT_EQ(reqs[0]["headers"]["content-type"], "application/json");
  const json &body = reqs[0]["body"];
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.25);
  EXPECT_EQ(body["max_tokens"], 321);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][1]["content"], "say hi");
  EXPECT_FALSE(body.contains("response_format"));

  Usage planner = ledger.role(Role::Planner);
  EXPECT_EQ(planner.requests, 1u);
  EXPECT_EQ(planner.totalTokens(), 1250u);
  EXPECT_EQ(ledger.role(Role::Executor).requests, 0u);
  EXPECT_DOUBLE_EQ(ledger.total().dollars, 0.004);

  std::string log = readFile(transcriptPath);
  EXPECT_NE(log.find("\"event\":\"request\""), std::string::npos);
  EXPECT_NE(log.find("hi there"), std::string::npos);
  EXPECT_EQ(log.find(Key), std::string::npos) << log;
  EXPECT_EQ(log.find("0123456789abcdef"), std::string::npos);
  llvm::sys::fs::remove(transcriptPath);
}

// Reliability report D12: text the endpoint sends back (here, the key itself) never leaves the
// client unredacted, so it cannot reach the memory, a report or a kernel.
TEST_F(ClientTest, AnswerTextIsRedactedWhereItEntersTheProgram) {
  FakeServer server(json::array({answer(std::string("the key is ") + Key + " and Bearer abc.def", 10, 5)}));
  ChatClient client(Role::Executor, endpoint(server), fastRetry(), nullptr, nullptr, nullptr);
  auto resp = client.complete(hello());
  ASSERT_TRUE(bool(resp)) << llvm::toString(resp.takeError());
  EXPECT_EQ(resp->content, "the key is [REDACTED] and Bearer [REDACTED]");
  EXPECT_EQ(resp->content.find("0123456789abcdef"), std::string::npos);
}

TEST_F(ClientTest, JsonSchemaSentOnlyWhenTheEndpointSupportsIt) {
  FakeServer server(json::array({answer("{}"), answer("{}")}));
  ChatRequest req = hello();
  req.schema = json{{"type", "object"}};
  req.schemaName = "plans";
  EndpointConfig e = endpoint(server);
  e.jsonSchema = true;
  ASSERT_TRUE(bool(ChatClient(Role::Planner, e, fastRetry(), nullptr, nullptr, nullptr).complete(req)));
  e.jsonSchema = false;
  ASSERT_TRUE(bool(ChatClient(Role::Planner, e, fastRetry(), nullptr, nullptr, nullptr).complete(req)));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0]["body"]["response_format"]["type"], "json_schema");
  EXPECT_EQ(reqs[0]["body"]["response_format"]["json_schema"]["name"], "plans");
  EXPECT_EQ(reqs[0]["body"]["response_format"]["json_schema"]["schema"], req.schema);
  EXPECT_FALSE(reqs[1]["body"].contains("response_format"));
}

TEST_F(ClientTest, RateLimitedThenSuccessHonoursRetryAfter) {
  json limited = {{"status", 429}, {"retry_after", "1"}, {"body", {{"error", {{"message", "rate limited"}}}}}};
  FakeServer server(json::array({limited, answer("ok")}));
  UsageLedger ledger;
  ChatClient client(Role::Executor, endpoint(server), fastRetry(), nullptr, nullptr, &ledger);
  auto start = std::chrono::steady_clock::now();
  auto resp = client.complete(hello());
  double took = secondsSince(start);
  ASSERT_TRUE(bool(resp)) << llvm::toString(resp.takeError());
  EXPECT_EQ(resp->content, "ok");
  EXPECT_EQ(resp->attempts, 2u);
  ASSERT_EQ(resp->backoffsS.size(), 1u);
  EXPECT_DOUBLE_EQ(resp->backoffsS[0], 1.0); // Retry-After, not the 0.05 s policy
  EXPECT_GE(took, 0.95);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_GE(reqs[1]["time"].get<double>() - reqs[0]["time"].get<double>(), 0.95);
  EXPECT_EQ(ledger.role(Role::Executor).retries, 1u);
  EXPECT_EQ(ledger.role(Role::Executor).requests, 2u);
}

TEST_F(ClientTest, RateLimitedWithoutRetryAfterBacksOffExponentially) {
  json limited = {{"status", 429}, {"body", {{"error", {{"message", "rate limited"}}}}}};
  FakeServer server(json::array({limited, limited, answer("ok")}));
  RetryPolicy r = fastRetry();
  r.initialS = 0.1;
  r.maxS = 1.0;
  ChatClient client(Role::Executor, endpoint(server), r, nullptr, nullptr, nullptr);
  auto resp = client.complete(hello());
  ASSERT_TRUE(bool(resp)) << llvm::toString(resp.takeError());
  ASSERT_EQ(resp->backoffsS.size(), 2u);
  // initial * 2^attempt, times a jitter factor in [0.5, 1].
  EXPECT_GE(resp->backoffsS[0], 0.05);
  EXPECT_LE(resp->backoffsS[0], 0.1);
  EXPECT_GE(resp->backoffsS[1], 0.1);
  EXPECT_LE(resp->backoffsS[1], 0.2);
}

TEST_F(ClientTest, TimeoutIsRetried) {
  json slow = answer("too late");
  slow["delay"] = 3.0;
  FakeServer server(json::array({slow, answer("in time")}));
  EndpointConfig e = endpoint(server);
  e.timeoutS = 0.5;
  ChatClient client(Role::Summarizer, e, fastRetry(), nullptr, nullptr, nullptr);
  auto start = std::chrono::steady_clock::now();
  auto resp = client.complete(hello());
  double took = secondsSince(start);
  ASSERT_TRUE(bool(resp)) << llvm::toString(resp.takeError());
  EXPECT_EQ(resp->content, "in time");
  EXPECT_EQ(resp->attempts, 2u);
  EXPECT_GE(took, 0.45);
  EXPECT_LT(took, 2.5);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(ClientTest, ServerErrorStormExhaustsRetries) {
  json failure = {{"status", 500}, {"body", {{"error", {{"message", "upstream exploded"}}}}}};
  FakeServer server(json::array({failure, failure, failure, failure, answer("never reached")}));
  UsageLedger ledger;
  ChatClient client(Role::Planner, endpoint(server), fastRetry(3), nullptr, nullptr, &ledger);
  auto resp = client.complete(hello());
  ASSERT_FALSE(bool(resp));
  std::string msg = llvm::toString(resp.takeError());
  EXPECT_NE(msg.find("planner: POST " + server.baseUrl() + "/chat/completions failed after 4 attempts"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("retries exhausted"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HTTP 500: upstream exploded"), std::string::npos) << msg;
  EXPECT_EQ(server.requests().size(), 4u);
  EXPECT_EQ(ledger.role(Role::Planner).failedCalls, 1u);
  EXPECT_EQ(ledger.role(Role::Planner).requests, 4u);
}

TEST_F(ClientTest, ClientErrorIsNotRetriedAndKeyIsRedacted) {
  // A server that echoes the key back in its error must not leak it.
  json denied = {{"status", 401}, {"body", {{"error", {{"message", std::string("bad key ") + Key}}}}}};
  FakeServer server(json::array({denied, answer("unused")}));
  std::string transcriptPath = tempPath("agent-transcript", "jsonl");
  auto transcript = Transcript::open(transcriptPath, Redactor({KeyVar}));
  ASSERT_TRUE(bool(transcript));
  ChatClient client(Role::Planner, endpoint(server), fastRetry(), nullptr, transcript->get(), nullptr);
  auto resp = client.complete(hello());
  ASSERT_FALSE(bool(resp));
  std::string msg = llvm::toString(resp.takeError());
  EXPECT_NE(msg.find("failed after 1 attempt: HTTP 401: bad key [REDACTED]"), std::string::npos) << msg;
  EXPECT_EQ(msg.find(Key), std::string::npos);
  EXPECT_EQ(server.requests().size(), 1u);
  std::string log = readFile(transcriptPath);
  EXPECT_NE(log.find("bad key [REDACTED]"), std::string::npos) << log;
  EXPECT_EQ(log.find(Key), std::string::npos) << log;
  llvm::sys::fs::remove(transcriptPath);
}

TEST_F(ClientTest, ConnectionRefusedIsRetriedThenReported) {
  EndpointConfig e;
  e.baseUrl = "http://127.0.0.1:1/v1"; // nothing listens on port 1
  e.apiKeyEnv = "";
  e.connectTimeoutS = 1;
  ChatClient client(Role::Planner, e, fastRetry(2), nullptr, nullptr, nullptr);
  auto resp = client.complete(hello());
  ASSERT_FALSE(bool(resp));
  std::string msg = llvm::toString(resp.takeError());
  EXPECT_NE(msg.find("failed after 3 attempts (retries exhausted)"), std::string::npos) << msg;
}

TEST_F(ClientTest, ConcurrencyLimitIsShared) {
  json slow = answer("ok");
  slow["delay"] = 0.3;
  FakeServer server(json::array({slow, slow, slow, slow}));
  auto limit = std::make_shared<Semaphore>(2);
  ChatClient a(Role::Planner, endpoint(server), fastRetry(), limit, nullptr, nullptr);
  ChatClient b(Role::Executor, endpoint(server), fastRetry(), limit, nullptr, nullptr);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      if (auto r = (i % 2 ? a : b).complete(hello()))
        ++ok;
      else
        llvm::consumeError(r.takeError());
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(limit->peak(), 2u);
  EXPECT_GE(secondsSince(start), 0.55); // two waves of 0.3 s
}

TEST_F(ClientTest, DryRunSendsNothing) {
  std::string transcriptPath = tempPath("agent-transcript", "jsonl");
  auto transcript = Transcript::open(transcriptPath, Redactor({KeyVar}));
  ASSERT_TRUE(bool(transcript));
  EndpointConfig e;
  e.baseUrl = "http://127.0.0.1:1/v1";
  ChatClient client(Role::Planner, e, fastRetry(), nullptr, transcript->get(), nullptr, /*dryRun=*/true);
  auto resp = client.complete(hello());
  ASSERT_TRUE(bool(resp));
  EXPECT_TRUE(resp->dryRun);
  EXPECT_EQ(resp->attempts, 0u);
  std::string log = readFile(transcriptPath);
  EXPECT_NE(log.find("\"event\":\"dry_run\""), std::string::npos);
  EXPECT_NE(log.find("say hi"), std::string::npos);
  llvm::sys::fs::remove(transcriptPath);
}

TEST(RetryAfter, Parses) {
  EXPECT_EQ(parseRetryAfter("3"), 3.0);
  EXPECT_EQ(parseRetryAfter(" 0.5 "), 0.5);
  EXPECT_FALSE(parseRetryAfter(""));
  EXPECT_FALSE(parseRetryAfter("soon"));
  auto past = parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT");
  ASSERT_TRUE(past.has_value());
  EXPECT_EQ(*past, 0.0);
}

TEST(Redactor, MasksKeysAndBearerTokens) {
  ::setenv("ACCELOPT_REDACT_TEST", "abcd-secret-value", 1);
  Redactor r({"ACCELOPT_REDACT_TEST"});
  EXPECT_EQ(r("key=abcd-secret-value!"), "key=[REDACTED]!");
  EXPECT_EQ(r("Authorization: Bearer xyz.123"), "Authorization: Bearer [REDACTED]");
  EXPECT_EQ(r("sk-proj-ABCDEFGHIJKLMNOPQRST and sk-x"), "[REDACTED] and sk-x");
  ::unsetenv("ACCELOPT_REDACT_TEST");
}

TEST(Semaphore, BoundsConcurrency) {
  Semaphore s(3);
  std::atomic<int> inside{0}, worst{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      Semaphore::Guard g(s);
      int now = ++inside;
      int prev = worst.load();
      while (now > prev && !worst.compare_exchange_weak(prev, now)) {}
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      --inside;
    });
  for (auto &t : threads) t.join();
  EXPECT_LE(worst.load(), 3);
  EXPECT_EQ(s.peak(), 3u);
}

} // namespace
