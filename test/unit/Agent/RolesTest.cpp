// Planner, executor (validation + fixer loop) and summarizer through an
// AgentSession talking to fake_openai.py on 127.0.0.1.
#include "Agent/Roles.h"

#include "FakeServer.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace accelopt::agent;
using namespace accelopt::agent::test;
using nlohmann::json;

namespace {

const char *kRolesKeyVar = "ACCELOPT_ROLES_TEST_KEY";
const char *kRolesKey = "sk-rolestest-ZYXWVUTSRQPONMLKJI";

struct RolesTest : ::testing::Test {
  llvm::SmallString<128> reportDir;

  void SetUp() override {
    ::setenv(kRolesKeyVar, kRolesKey, 1);
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("agent-report", reportDir));
  }
  void TearDown() override {
    ::unsetenv(kRolesKeyVar);
    llvm::sys::fs::remove_directories(reportDir);
  }

  AgentConfig config(const FakeServer &server) {
    AgentConfig c;
    for (Role r : AllRoles) {
      EndpointConfig &e = c.endpoint(r);
      e.baseUrl = server.baseUrl();
      e.model = std::string("model-") + roleName(r).str();
      e.apiKeyEnv = kRolesKeyVar;
      e.timeoutS = 5;
      e.connectTimeoutS = 2;
    }
    c.planner.pricePerMillionInput = 10;
    c.planner.pricePerMillionOutput = 30;
    c.executor.pricePerMillionInput = 1;
    c.executor.pricePerMillionOutput = 2;
    c.summarizer.pricePerMillionInput = 0.5;
    c.summarizer.pricePerMillionOutput = 1.5;
    c.maxRetries = 2;
    c.backoffInitialS = 0.05;
    c.backoffMaxS = 0.2;
    c.fixerRetries = 2;
    return c;
  }

  std::unique_ptr<AgentSession> session(const AgentConfig &c, llvm::raw_ostream *notes = nullptr, bool dry = false) {
    SessionOptions o;
    o.reportDir = std::string(reportDir);
    o.notes = notes;
    o.dryRun = dry;
    auto s = AgentSession::create(c, o);
    if (!s) {
      ADD_FAILURE() << llvm::toString(s.takeError());
      return nullptr;
    }
    return std::move(*s);
  }

  std::string transcript() const { return readFile(Transcript::pathInReportDir(reportDir)); }

  static KernelContext context() {
    KernelContext ctx;
    ctx.listing = "kernel k  (k.py:6)\nL0       9  for i in nl.affine_range(4):    # affine_range, trip 4\n"
                  "S1      10    t = nl.load(a[i])\n";
    ctx.profile = {{"latency", 0.5}, {"backend", "sim-trn1"}};
    ctx.menu = {{{{"op", "split"}, {"loop", "L0"}, {"factor", 2}}, "split L0 (i, trip 4) by 2"}};
    return ctx;
  }

  /// Accepts ops whose names are known and whose ids are L0/S1.
  static llvm::Error validate(const json &ops) {
    for (const json &op : ops) {
      std::string name = op["op"].get<std::string>();
      const auto &kinds = opKinds();
      if (std::find(kinds.begin(), kinds.end(), name) == kinds.end())
        return llvm::make_error<llvm::StringError>("unknown op '" + name + "'", llvm::inconvertibleErrorCode());
      if (op.contains("loop") && op["loop"] != "L0")
        return llvm::make_error<llvm::StringError>("unknown loop id " + op["loop"].dump(),
                                                   llvm::inconvertibleErrorCode());
    }
    return llvm::Error::success();
  }
};

TEST_F(RolesTest, PlanOpsAndSummaryWithAccounting) {
  FakeServer server(json::array({
      answer("Two ideas.\n```json\n{\"plans\": [\"Split L0 by 2 to overlap DMA with compute.\", "
             "\"Make L0 sequential.\", \"A third plan\"]}\n```",
             1000, 200),
      answer("[{\"op\": \"split\", \"loop\": \"L0\", \"factor\": 2}]", 2000, 50),
      answer("  Splitting the outer loop let loads overlap compute.  ", 3000, 100),
  }));
  auto s = session(config(server));
  ASSERT_TRUE(s);

  auto plans = s->planner().propose(context(), 2);
  ASSERT_TRUE(bool(plans)) << llvm::toString(plans.takeError());
  ASSERT_EQ(plans->size(), 2u); // capped at n
  EXPECT_EQ((*plans)[0], "Split L0 by 2 to overlap DMA with compute.");

  auto real = s->executor().realise(context(), (*plans)[0], 1, validate);
  ASSERT_TRUE(bool(real)) << llvm::toString(real.takeError());
  ASSERT_EQ(real->candidates.size(), 1u);
  EXPECT_EQ(real->candidates[0].ops, json::parse(R"([{"op":"split","loop":"L0","factor":2}])"));
  EXPECT_EQ(real->candidates[0].attempts, 1u);
  EXPECT_TRUE(real->dropped.empty());

  auto lesson = s->summarizer().summarize("slow listing", "fast listing", real->candidates[0].ops, 1.4);
  ASSERT_TRUE(bool(lesson)) << llvm::toString(lesson.takeError());
  EXPECT_EQ(*lesson, "Splitting the outer loop let loads overlap compute.");

  // What each role sent.
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0]["body"]["model"], "model-planner");
  EXPECT_NE(messagesText(reqs[0]).find("Propose 2 different"), std::string::npos);
  EXPECT_NE(messagesText(reqs[0]).find("for i in nl.affine_range(4)"), std::string::npos);
  EXPECT_EQ(reqs[1]["body"]["model"], "model-executor");
  EXPECT_NE(messagesText(reqs[1]).find("Split L0 by 2 to overlap DMA with compute."), std::string::npos);
  EXPECT_NE(messagesText(reqs[1]).find("{\"op\":\"split\",\"loop\":\"L0\",\"factor\":2}"), std::string::npos);
  EXPECT_EQ(reqs[2]["body"]["model"], "model-summarizer");
  EXPECT_NE(messagesText(reqs[2]).find("1.40x speedup"), std::string::npos);
  for (const json &r : reqs) EXPECT_EQ(r["headers"]["authorization"], std::string("Bearer ") + kRolesKey);

  // Usage and dollars per role and in total.
  const UsageLedger &u = s->usage();
  EXPECT_EQ(u.role(Role::Planner).promptTokens, 1000u);
  EXPECT_EQ(u.role(Role::Planner).completionTokens, 200u);
  EXPECT_DOUBLE_EQ(u.role(Role::Planner).dollars, (1000 * 10 + 200 * 30) / 1e6);
  EXPECT_DOUBLE_EQ(u.role(Role::Executor).dollars, (2000 * 1 + 50 * 2) / 1e6);
  EXPECT_DOUBLE_EQ(u.role(Role::Summarizer).dollars, (3000 * 0.5 + 100 * 1.5) / 1e6);
  Usage total = u.total();
  EXPECT_EQ(total.requests, 3u);
  EXPECT_EQ(total.promptTokens, 6000u);
  EXPECT_EQ(total.completionTokens, 350u);
  EXPECT_NEAR(total.dollars, 0.016 + 0.0021 + 0.00165, 1e-12);
  json j = u.toJson();
  EXPECT_EQ(j["total"]["total_tokens"], 6350);
  EXPECT_EQ(j["executor"]["requests"], 1);

  ASSERT_FALSE(bool(s->writeUsage()));
  json written = json::parse(readFile(std::string(reportDir) + "/agent-usage.json"));
  EXPECT_EQ(written, j);

  // The transcript has every request and response, and never the key.
  std::string log = transcript();
  EXPECT_NE(log.find("\"event\":\"session\""), std::string::npos);
  EXPECT_NE(log.find("\"event\":\"accepted\""), std::string::npos);
  EXPECT_NE(log.find("Splitting the outer loop"), std::string::npos);
  size_t requests = 0, responses = 0;
  for (size_t p = log.find("\"event\":\"request\""); p != std::string::npos;
       p = log.find("\"event\":\"request\"", p + 1))
    ++requests;
  for (size_t p = log.find("\"event\":\"response\""); p != std::string::npos;
       p = log.find("\"event\":\"response\"", p + 1))
    ++responses;
  EXPECT_EQ(requests, 3u);
  EXPECT_EQ(responses, 3u);
  EXPECT_EQ(log.find(kRolesKey), std::string::npos);
  EXPECT_EQ(log.find("ZYXWVUTSRQPONMLKJI"), std::string::npos);
}

TEST_F(RolesTest, MalformedAnswerIsFixedOnRetry) {
  FakeServer server(json::array({
      answer("Sure! [{\"op\": \"split\", \"loop\": \"L0\", "),
      answer("```json\n[{\"op\": \"split\", \"loop\": \"L0\", \"factor\": 2}]\n```"),
  }));
  auto s = session(config(server));
  ASSERT_TRUE(s);
  auto real = s->executor().realise(context(), "split L0", 1, validate);
  ASSERT_TRUE(bool(real)) << llvm::toString(real.takeError());
  ASSERT_EQ(real->candidates.size(), 1u);
  EXPECT_EQ(real->candidates[0].attempts, 2u);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  // The second request carries the broken answer and why it was refused.
  const json &msgs = reqs[1]["body"]["messages"];
  ASSERT_EQ(msgs.size(), reqs[0]["body"]["messages"].size() + 2);
  EXPECT_EQ(msgs[msgs.size() - 2]["role"], "assistant");
  EXPECT_EQ(msgs[msgs.size() - 2]["content"], "Sure! [{\"op\": \"split\", \"loop\": \"L0\", ");
  EXPECT_NE(msgs.back()["content"].get<std::string>().find("not a usable op list"), std::string::npos);
}

TEST_F(RolesTest, RefusedOpIsRetriedWithTheReasonThenDropped) {
  std::string bad = "[{\"op\": \"vectorize\", \"loop\": \"L0\"}]";
  FakeServer server(json::array({answer(bad), answer(bad), answer(bad), answer("unused")}));
  std::string notes;
  llvm::raw_string_ostream notesOs(notes);
  auto s = session(config(server), &notesOs);
  ASSERT_TRUE(s);
  auto real = s->executor().realise(context(), "vectorize L0", 1, validate);
  ASSERT_TRUE(bool(real)) << llvm::toString(real.takeError());
  EXPECT_TRUE(real->candidates.empty());
  ASSERT_EQ(real->dropped.size(), 1u);
  EXPECT_EQ(real->dropped[0].reasons.size(), 3u); // 1 + R (R = 2)
  EXPECT_EQ(real->dropped[0].reasons[0], "unknown op 'vectorize'");

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(messagesText(reqs[0]).find("unknown op 'vectorize'"), std::string::npos);
  EXPECT_NE(messagesText(reqs[1]).find("did not accept that answer:\n1. unknown op 'vectorize'"), std::string::npos);
  EXPECT_NE(messagesText(reqs[2]).find("unknown op 'vectorize'"), std::string::npos);

  notesOs.flush();
  EXPECT_NE(notes.find("note: executor: sample 1/1 dropped after 3 refused answers; last: unknown op 'vectorize'"),
            std::string::npos)
      << notes;
  std::string log = transcript();
  EXPECT_NE(log.find("\"event\":\"refused\""), std::string::npos);
  EXPECT_NE(log.find("\"event\":\"dropped\""), std::string::npos);
}

TEST_F(RolesTest, SeveralSamplesRunConcurrently) {
  std::string good = "[{\"op\": \"split\", \"loop\": \"L0\", \"factor\": 2}]";
  json slow = answer(good);
  slow["delay"] = 0.3;
  FakeServer server(json::array({slow, slow, slow}));
  AgentConfig c = config(server);
  c.maxConcurrency = 3;
  auto s = session(c);
  ASSERT_TRUE(s);
  auto start = std::chrono::steady_clock::now();
  auto real = s->executor().realise(context(), "split L0", 3, validate);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(bool(real)) << llvm::toString(real.takeError());
  EXPECT_EQ(real->candidates.size(), 3u);
  EXPECT_LT(took, 0.85); // not 3 x 0.3 s in a row
  EXPECT_EQ(s->limit()->peak(), 3u);
}

TEST_F(RolesTest, ExecutorReportsATransportFailure) {
  json failure = {{"status", 503}, {"body", "service unavailable"}};
  FakeServer server(json::array({failure, failure, failure}));
  auto s = session(config(server));
  ASSERT_TRUE(s);
  auto real = s->executor().realise(context(), "split L0", 1, validate);
  ASSERT_FALSE(bool(real));
  std::string msg = llvm::toString(real.takeError());
  EXPECT_NE(msg.find("executor: every sample failed: executor: POST"), std::string::npos) << msg;
  EXPECT_NE(msg.find("failed after 3 attempts (retries exhausted): HTTP 503: service unavailable"), std::string::npos)
      << msg;
  EXPECT_EQ(s->usage().role(Role::Executor).failedCalls, 1u);
}

TEST_F(RolesTest, PlannerFixesAnAnswerWithoutJson) {
  FakeServer server(json::array({answer("I would split the loop."), answer("{\"plans\": [\"split L0\"]}")}));
  auto s = session(config(server));
  ASSERT_TRUE(s);
  auto plans = s->planner().propose(context(), 4);
  ASSERT_TRUE(bool(plans)) << llvm::toString(plans.takeError());
  EXPECT_EQ(*plans, std::vector<std::string>{"split L0"});
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(messagesText(reqs[1]).find("That answer could not be used"), std::string::npos);
}

TEST_F(RolesTest, DryRunRendersAndLogsWithoutSending) {
  AgentConfig c;
  for (Role r : AllRoles) {
    c.endpoint(r).baseUrl = "http://127.0.0.1:1/v1";
    c.endpoint(r).apiKeyEnv = "ACCELOPT_SURELY_UNSET_VARIABLE"; // not needed in a dry run
  }
  auto s = session(c, nullptr, /*dry=*/true);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->dryRun());
  auto plans = s->planner().propose(context(), 2);
  ASSERT_TRUE(bool(plans));
  EXPECT_TRUE(plans->empty());
  auto real = s->executor().realise(context(), "split L0", 2, validate);
  ASSERT_TRUE(bool(real));
  EXPECT_TRUE(real->candidates.empty());
  EXPECT_TRUE(real->dropped.empty());
  auto lesson = s->summarizer().summarize("a", "b", json::array(), 2);
  ASSERT_TRUE(bool(lesson));
  EXPECT_EQ(*lesson, "");
  EXPECT_EQ(s->usage().total().requests, 0u);
  std::string log = transcript();
  size_t n = 0;
  for (size_t p = log.find("\"event\":\"dry_run\""); p != std::string::npos;
       p = log.find("\"event\":\"dry_run\"", p + 1))
    ++n;
  EXPECT_EQ(n, 4u); // planner, 2 executor samples, summarizer
  EXPECT_NE(log.find("Propose 2 different"), std::string::npos);
}

TEST_F(RolesTest, MissingKeyVariableIsAClearError) {
  AgentConfig c;
  c.executor.apiKeyEnv = "ACCELOPT_SURELY_UNSET_VARIABLE";
  c.planner.apiKeyEnv = c.summarizer.apiKeyEnv = "";
  SessionOptions o;
  auto s = AgentSession::create(c, o);
  ASSERT_FALSE(bool(s));
  EXPECT_EQ(llvm::toString(s.takeError()),
            "executor: the API key variable ACCELOPT_SURELY_UNSET_VARIABLE (api_key_env) is not set in the "
            "environment; set it, or set api_key_env to \"\" for an endpoint without a key");
}

} // namespace
