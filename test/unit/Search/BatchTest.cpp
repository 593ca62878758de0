// The pure parts of `batch`: gitignore globs and rules, kernel file discovery,
// shipped pattern files, and mapping offsets back through edits.
#include "Search/Batch.h"

#include "Syntax/SourceBuffer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace accelopt;
using search::globMatch;

namespace {

TEST(BatchGlob, StarStaysInOneComponent) {
  EXPECT_TRUE(globMatch("*.py", "kernel.py"));
  EXPECT_FALSE(globMatch("*.py", "dir/kernel.py"));
  EXPECT_TRUE(globMatch("gen_?.py", "gen_1.py"));
  EXPECT_FALSE(globMatch("gen_?.py", "gen_12.py"));
  EXPECT_TRUE(globMatch("[a-c]x", "bx"));
  EXPECT_FALSE(globMatch("[!a-c]x", "bx"));
  EXPECT_TRUE(globMatch("\\*lit", "*lit"));
  EXPECT_FALSE(globMatch("\\*lit", "alit"));
}

TEST(BatchGlob, DoubleStarCrossesDirectories) {
  EXPECT_TRUE(globMatch("**/gen.py", "gen.py"));
  EXPECT_TRUE(globMatch("**/gen.py", "a/b/gen.py"));
  EXPECT_TRUE(globMatch("build/**", "build/x/y.py"));
  EXPECT_FALSE(globMatch("build/**", "src/x.py"));
}

TEST(BatchIgnore, RulesAreScopedToTheirDirectory) {
  search::IgnoreRules rules;
  rules.add("tree", "# comment\n*_old.py\n/top.py\ncache/\n!keep_old.py\n");
  rules.add("tree/sub", "local.py\n");
  EXPECT_TRUE(rules.ignored("tree/a_old.py", false));
  EXPECT_TRUE(rules.ignored("tree/sub/b_old.py", false)); // unanchored: any depth
  EXPECT_FALSE(rules.ignored("tree/keep_old.py", false)); // re-included
  EXPECT_TRUE(rules.ignored("tree/top.py", false));
  EXPECT_FALSE(rules.ignored("tree/sub/top.py", false)); // anchored to tree/
  EXPECT_TRUE(rules.ignored("tree/cache", true));
  EXPECT_FALSE(rules.ignored("tree/cache", false)); // directory-only rule
  EXPECT_TRUE(rules.ignored("tree/sub/local.py", false));
  EXPECT_FALSE(rules.ignored("tree/local.py", false)); // the rule lives in tree/sub
  EXPECT_FALSE(rules.ignored("other/a_old.py", false));
}

class BatchFiles : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("accelopt-batch", Root)); }
  void TearDown() override { llvm::sys::fs::remove_directories(Root); }
  std::string write(llvm::StringRef rel, llvm::StringRef text) {
    llvm::SmallString<256> path(Root);
    llvm::sys::path::append(path, rel);
    EXPECT_FALSE(llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)));
    EXPECT_FALSE(bool(syntax::writeFileAtomically(path, text)));
    return path.str().str();
  }
  llvm::SmallString<256> Root;
};

TEST_F(BatchFiles, FindsKernelsRespectingGitignore) {
  const char *kernel = "@nki.jit\ndef k(x):\n  return x\n";
  std::string a = write("a.py", kernel);
  std::string b = write("sub/b.py", kernel);
  write("plain.py", "print(1)\n");
  write("ignored_old.py", kernel);
  write("gen/c.py", kernel);
  write(".hidden/d.py", kernel);
  write("notes.txt", kernel);
  write(".gitignore", "*_old.py\ngen/\n");
  auto files = search::findKernelFiles({Root.str().str()});
  ASSERT_TRUE(bool(files)) << llvm::toString(files.takeError());
  EXPECT_EQ(*files, (std::vector<std::string>{a, b}));

  // A file named explicitly is kept even when ignored.
  std::string ignored = Root.str().str() + "/ignored_old.py";
  auto explicitFile = search::findKernelFiles({ignored});
  ASSERT_TRUE(bool(explicitFile));
  EXPECT_EQ(*explicitFile, std::vector<std::string>{ignored});

  auto missing = search::findKernelFiles({Root.str().str() + "/nope"});
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("nope: error:"), std::string::npos);
}

TEST_F(BatchFiles, PatternFilesAreValidated) {
  std::string good = write("p.json", R"({"description": "d", "ops": [{"op": "set_loop_kind", "loop": "<l>",
      "kind": "affine_range"}], "vars": [{"name": "<l>", "step": 0, "role": {"kind": "loop",
      "loop_kind": "sequential"}}]})");
  auto p = search::loadPatternFile(good);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_EQ(p->name, "p");
  EXPECT_EQ(p->description, "d");
  EXPECT_EQ(p->diagnosticName(), "accelopt-set_loop_kind");

  std::string undeclared = write("u.json", R"({"ops": [{"op": "hoist", "stmt": "<s>", "out_of": "<l>"}]})");
  auto u = search::loadPatternFile(undeclared);
  ASSERT_FALSE(bool(u));
  EXPECT_NE(llvm::toString(u.takeError()).find("undeclared placeholder"), std::string::npos);

  std::string bad = write("b.json", "{");
  auto b = search::loadPatternFile(bad);
  ASSERT_FALSE(bool(b));
  EXPECT_NE(llvm::toString(b.takeError()).find("invalid JSON"), std::string::npos);
}

TEST(BatchPatterns, ShippedPatternsLoad) {
  std::vector<std::string> dirs = {std::string(ACCELOPT_SOURCE_DIR) + "/rewrites/patterns"};
  auto all = search::listPatterns(dirs);
  ASSERT_TRUE(bool(all)) << llvm::toString(all.takeError());
  std::vector<std::string> names;
  for (const auto &p : *all) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty()) << p.name;
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "hoist-invariant-load"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "shrink-spilled-buffer"), names.end());
  auto hoist = search::findPattern(dirs, "hoist-invariant-load");
  ASSERT_TRUE(bool(hoist));
  EXPECT_EQ(hoist->diagnosticName(), "accelopt-hoist");
  auto unknown = search::findPattern(dirs, "no-such-pattern");
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("hoist-invariant-load"), std::string::npos);
}

TEST(BatchOffsets, MapBackThroughEdits) {
  clang::tooling::Replacements edits;
  // "abcdef" -> insert "XY" at 1, replace "de" (3..5) by "Z": "aXYbcZf".
  ASSERT_FALSE(bool(edits.add(clang::tooling::Replacement("f", 1, 0, "XY"))));
  ASSERT_FALSE(bool(edits.add(clang::tooling::Replacement("f", 3, 2, "Z"))));
  EXPECT_EQ(search::originalOffset(edits, 0), 0u); // a
  EXPECT_EQ(search::originalOffset(edits, 1), 1u); // inside the insertion
  EXPECT_EQ(search::originalOffset(edits, 3), 1u); // b
  EXPECT_EQ(search::originalOffset(edits, 4), 2u); // c
  EXPECT_EQ(search::originalOffset(edits, 5), 3u); // Z -> start of "de"
  EXPECT_EQ(search::originalOffset(edits, 6), 5u); // f
}

} // namespace
