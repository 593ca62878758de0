#include "Agent/JsonExtract.h"
#include "Agent/Roles.h"

#include <gtest/gtest.h>

using namespace accelopt::agent;
using nlohmann::json;

namespace {

json ok(llvm::StringRef text, JsonShape shape = JsonShape::Any) {
  auto j = extractJson(text, shape);
  if (!j) {
    ADD_FAILURE() << llvm::toString(j.takeError()) << " for: " << text.str();
    return nullptr;
  }
  return *j;
}

std::string bad(llvm::StringRef text, JsonShape shape = JsonShape::Any) {
  auto j = extractJson(text, shape);
  if (j) return "unexpectedly parsed: " + j->dump();
  return llvm::toString(j.takeError());
}

TEST(ExtractJson, WholeTextFencesAndProse) {
  EXPECT_EQ(ok(R"([{"op":"split"}])"), json::parse(R"([{"op":"split"}])"));
  EXPECT_EQ(ok("Here you go:\n```json\n{\"plans\": [\"a\"]}\n```\nGood luck."), json::parse(R"({"plans":["a"]})"));
  EXPECT_EQ(ok("```\n[1, 2]\n```"), json::parse("[1,2]"));
  // A fence with prose first and then a broken one: the first good candidate wins.
  EXPECT_EQ(ok("```json\n{oops\n```\nbut really: {\"a\": 1}"), json::parse(R"({"a":1})"));
  // Brackets inside strings do not unbalance the scan.
  EXPECT_EQ(ok(R"(I think [{"op":"hoist","why":"a ] and a } in text"}] is best)"),
            json::parse(R"([{"op":"hoist","why":"a ] and a } in text"}])"));
  // Prose containing stray brackets before the JSON.
  EXPECT_EQ(ok("Loop [L2] (the {inner} one): {\"ops\": []}"), json::parse(R"({"ops":[]})"));
  // Unterminated fence.
  EXPECT_EQ(ok("```json\n[3]"), json::parse("[3]"));
}

TEST(ExtractJson, ShapeFilter) {
  EXPECT_EQ(ok("x [1] y {\"a\": [2]}", JsonShape::Object), json::parse(R"({"a":[2]})"));
  // The array nested inside an object is not taken on its own.
  EXPECT_NE(bad("{\"a\": [2]}", JsonShape::Array).find("not a JSON array"), std::string::npos);
}

TEST(ExtractJson, Failures) {
  EXPECT_NE(bad("").find("empty"), std::string::npos);
  EXPECT_NE(bad("no json here").find("holds no valid JSON"), std::string::npos);
  EXPECT_NE(bad("[{\"op\": \"split\", ").find("holds no valid JSON"), std::string::npos);
}

TEST(ParseAnswers, Ops) {
  auto a = parseOpsAnswer(R"({"ops": [{"op": "split", "loop": "L1", "factor": 2}]})");
  ASSERT_TRUE(bool(a));
  EXPECT_EQ(a->size(), 1u);
  auto single = parseOpsAnswer(R"(Do this: {"op": "fuse", "first": "L1", "second": "L2"})");
  ASSERT_TRUE(bool(single));
  EXPECT_TRUE(single->is_array());
  auto empty = parseOpsAnswer("[]");
  ASSERT_FALSE(bool(empty));
  EXPECT_NE(llvm::toString(empty.takeError()).find("empty"), std::string::npos);
  auto noOp = parseOpsAnswer(R"([{"loop": "L1"}])");
  ASSERT_FALSE(bool(noOp));
  EXPECT_NE(llvm::toString(noOp.takeError()).find("op 1 has no string field \"op\""), std::string::npos);
}

TEST(ParseAnswers, Plans) {
  auto p = parsePlansAnswer(R"({"plans": ["split L1", {"plan": "fuse L2 and L3"}, "split L1", "  "]})");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(*p, (std::vector<std::string>{"split L1", "fuse L2 and L3"}));
  auto none = parsePlansAnswer(R"({"plans": []})");
  ASSERT_FALSE(bool(none));
  llvm::consumeError(none.takeError());
}

} // namespace
