#include "Agent/Config.h"

#include "FakeServer.h"

#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace accelopt::agent;

namespace {

std::string errorOf(llvm::Expected<AgentConfig> c) {
  if (c) return "";
  return llvm::toString(c.takeError());
}

TEST(AgentConfig, DefaultsWhenEmpty) {
  auto c = parseAgentConfig("{}");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->planner.baseUrl, "https://api.openai.com/v1");
  EXPECT_EQ(c->executor.apiKeyEnv, "OPENAI_API_KEY");
  EXPECT_FALSE(c->summarizer.jsonSchema);
  EXPECT_EQ(c->maxConcurrency, 4u);
  EXPECT_EQ(c->maxRetries, 4u);
  EXPECT_EQ(c->fixerRetries, 2u);
}

TEST(AgentConfig, PerRoleSettingsOverDefaults) {
  auto c = parseAgentConfig(R"({
    // comments are allowed
    "defaults": {"base_url": "http://127.0.0.1:8000/v1/", "model": "m-default", "api_key_env": "",
                 "price_per_million_input": 1.5},
    "planner": {"model": "big", "temperature": 1.0, "max_tokens": 8000, "json_schema": true,
                "price_per_million_output": 6, "timeout_s": 300, "connect_timeout_s": 3},
    "executor": {"temperature": 0.2},
    "summarizer": {"base_url": "https://other.example/v1", "api_key_env": "OTHER_KEY"},
    "max_concurrency": 8, "max_retries": 2, "fixer_retries": 3,
    "backoff_initial_s": 0.5, "backoff_max_s": 10, "prompt_dir": "/tmp/p"})");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->planner.baseUrl, "http://127.0.0.1:8000/v1"); // trailing slash dropped
  EXPECT_EQ(c->planner.model, "big");
  EXPECT_EQ(c->executor.model, "m-default");
  EXPECT_EQ(c->planner.apiKeyEnv, "");
  EXPECT_EQ(c->summarizer.apiKeyEnv, "OTHER_KEY");
  EXPECT_EQ(c->summarizer.baseUrl, "https://other.example/v1");
  EXPECT_DOUBLE_EQ(c->planner.temperature, 1.0);
  EXPECT_DOUBLE_EQ(c->executor.temperature, 0.2);
  EXPECT_EQ(c->planner.maxTokens, 8000);
  EXPECT_TRUE(c->planner.jsonSchema);
  EXPECT_DOUBLE_EQ(c->executor.pricePerMillionInput, 1.5);
  EXPECT_DOUBLE_EQ(c->planner.pricePerMillionOutput, 6);
  EXPECT_DOUBLE_EQ(c->planner.timeoutS, 300);
  EXPECT_DOUBLE_EQ(c->planner.connectTimeoutS, 3);
  EXPECT_EQ(c->maxConcurrency, 8u);
  EXPECT_EQ(c->maxRetries, 2u);
  EXPECT_EQ(c->fixerRetries, 3u);
  EXPECT_DOUBLE_EQ(c->backoffInitialS, 0.5);
  EXPECT_EQ(c->promptDir, "/tmp/p");
  // The effective config round-trips.
  auto again = parseAgentConfig(toJson(*c).dump());
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(toJson(*again), toJson(*c));
}

TEST(AgentConfig, ClearErrors) {
  EXPECT_NE(errorOf(parseAgentConfig("{", "a.json")).find("a.json: invalid JSON"), std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig("[]", "a.json")).find("a.json: expected a JSON object"), std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"planer": {}})", "a.json")).find("a.json: planer: unknown key"),
            std::string::npos);
  EXPECT_NE(
      errorOf(parseAgentConfig(R"({"planner": {"modle": "x"}})", "a.json")).find("a.json: planner.modle: unknown key"),
      std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"executor": {"temperature": "hot"}})"))
                .find("executor.temperature: expected a number, got \"hot\""),
            std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"executor": {"temperature": 7}})")).find("out of range"), std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"max_concurrency": 0})")).find("max_concurrency: 0 is out of range"),
            std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"max_retries": 1.5})")).find("expected an integer"), std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"planner": {"json_schema": 1}})")).find("expected true or false"),
            std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"planner": 3})")).find("planner: expected an object"), std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"planner": {"api_key": "sk-123"}})")).find("do not belong"),
            std::string::npos);
  EXPECT_NE(errorOf(parseAgentConfig(R"({"backoff_initial_s": 5, "backoff_max_s": 1})")).find("backoff_max_s"),
            std::string::npos);
}

TEST(AgentConfig, LoadsFilesAndResolvesPromptDir) {
  EXPECT_NE(
      errorOf(loadAgentConfig("/nonexistent/agent.json")).find("cannot read agent config '/nonexistent/agent.json'"),
      std::string::npos);
  std::string path = accelopt::agent::test::tempPath("agent-config", "json");
  std::ofstream(path) << R"({"prompt_dir": "my-prompts", "planner": {"model": "x"}})";
  auto c = loadAgentConfig(path);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->promptDir, (llvm::sys::path::parent_path(path) + "/my-prompts").str());
  llvm::sys::fs::remove(path);
}

TEST(AgentConfig, RoleNames) {
  EXPECT_EQ(roleName(Role::Planner), "planner");
  EXPECT_EQ(roleName(Role::Executor), "executor");
  EXPECT_EQ(roleName(Role::Summarizer), "summarizer");
}

} // namespace
