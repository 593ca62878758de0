// The template renderer, the built-in prompts, and a golden dry run of the
// prompts of one search step (test/unit/Agent/golden/dry-run.txt; regenerate
// with ACCELOPT_UPDATE_GOLDEN=1 after an intended change of prompts/*.txt).
#include "Agent/Prompts.h"
#include "NKI/FrontEnd.h"

#include "FakeServer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace accelopt;
using namespace accelopt::agent;
using nlohmann::json;

namespace {

std::string render(llvm::StringRef tmpl, const PromptVars &vars) {
  auto r = renderTemplate(tmpl, vars);
  if (!r) return "ERROR: " + llvm::toString(r.takeError());
  return *r;
}

TEST(Renderer, PlaceholdersAndSections) {
  PromptVars v = {{"a", "1"}, {"empty", ""}, {"blank", "  \n"}};
  EXPECT_EQ(render("x{{a}}y{{ a }}", v), "x1y1");
  EXPECT_EQ(render("[{{#a}}has {{a}}{{/a}}][{{#empty}}no{{/empty}}][{{^blank}}none{{/blank}}]", v), "[has 1][][none]");
  EXPECT_EQ(render("JSON stays: {\"op\": \"split\"}", v), "JSON stays: {\"op\": \"split\"}");
  EXPECT_EQ(render("{{missing}}", v), "ERROR: template: unknown placeholder 'missing'");
  EXPECT_EQ(render("{{a", v), "ERROR: template: '{{' at offset 0 is never closed");
  EXPECT_EQ(render("{{#a}}open", v), "ERROR: template: section 'a' is never closed");
  EXPECT_EQ(render("{{/a}}", v), "ERROR: template: '{{/a}}' closes a section that is not open");
  // Values are not re-rendered (a listing may contain braces).
  EXPECT_EQ(render("{{a}}", {{"a", "{{b}}"}}), "{{b}}");
}

TEST(Renderer, SplitsMessages) {
  auto m = splitMessages("[system]\nyou are\n[user]\nhello\n\nworld\n[assistant]\n[user]\nagain\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].role, "system");
  EXPECT_EQ(m[0].content, "you are");
  EXPECT_EQ(m[1].content, "hello\n\nworld");
  EXPECT_EQ(m[2].role, "user");
  auto plain = splitMessages("just text");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].role, "user");
}

TEST(Prompts, BuiltinTemplatesRenderWithEveryRole) {
  PromptLibrary lib = PromptLibrary::builtin();
  for (const char *name : {"planner", "executor", "executor_retry", "summarizer"})
    EXPECT_TRUE(bool(lib.get(name))) << name;
  KernelContext ctx;
  ctx.listing = "L0  1  for i in nl.affine_range(4):";
  auto p = lib.planner(ctx, 3);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].role, "system");
  EXPECT_NE((*p)[1].content.find("Propose 3 different"), std::string::npos);
  // Optional sections vanish when empty.
  EXPECT_EQ((*p)[1].content.find("numpy reference"), std::string::npos);
  EXPECT_EQ((*p)[1].content.find("Lessons from earlier runs"), std::string::npos);
  EXPECT_NE((*p)[1].content.find("no rewrite is legal"), std::string::npos);
  auto r = lib.executorRetry({"unknown op 'vectorize'", "L9 does not exist"});
  ASSERT_TRUE(bool(r));
  ASSERT_EQ(r->size(), 1u);
  EXPECT_NE((*r)[0].content.find("1. unknown op 'vectorize'\n2. L9 does not exist"), std::string::npos);
}

TEST(Prompts, OverridesFromADirectory) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("agent-prompts", dir));
  std::ofstream(std::string(dir) + "/summarizer.txt") << "Lesson please: {{speedup}}x\n";
  auto lib = PromptLibrary::withOverrides(dir);
  ASSERT_TRUE(bool(lib)) << llvm::toString(lib.takeError());
  auto s = lib->summarizer("a", "b", json::array(), 1.5);
  ASSERT_TRUE(bool(s));
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ((*s)[0].content, "Lesson please: 1.50x");
  EXPECT_TRUE(bool(lib->get("planner"))); // the others stay built in
  std::ofstream(std::string(dir) + "/planner.txt") << "{{lisitng}}";
  auto typo = PromptLibrary::withOverrides(dir);
  ASSERT_TRUE(bool(typo));
  auto p = typo->planner(KernelContext(), 1);
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(llvm::toString(p.takeError()), "prompt 'planner': template: unknown placeholder 'lisitng'");
  llvm::sys::fs::remove_directories(dir);
  auto missing = PromptLibrary::withOverrides("/nonexistent/prompts");
  ASSERT_FALSE(bool(missing));
  llvm::consumeError(missing.takeError());
}

const char *KernelText = R"(import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scale(a):
  out = nl.ndarray((4, 128, 512), dtype=np.float32, buffer=nl.shared_hbm)
  for i in nl.affine_range(4):
    t = nl.load(a[i, nl.arange(128)[:, None], nl.arange(512)[None, :]])
    u = nl.multiply(t, 2.0)
    nl.store(out[i, nl.arange(128)[:, None], nl.arange(512)[None, :]], value=u)
  return out
)";

/// The context of one search step, built from a real kernel listing.
KernelContext exampleContext(std::string &listing) {
  auto specs = nki::parseInputSpecs("a=f32[4,128,512]");
  EXPECT_TRUE(bool(specs));
  nki::FrontEndOptions opts;
  opts.inputs = &*specs;
  auto src = syntax::SourceBuffer::fromText("scale.py", KernelText);
  auto file = nki::buildKernelFile(std::move(*src), opts);
  if (!file) {
    ADD_FAILURE() << llvm::toString(file.takeError());
    return {};
  }
  listing = listingText(file->kernels.at(0));
  KernelContext ctx;
  ctx.listing = listing;
  ctx.profile = {{"latency", 0.0123},
                 {"hbm_read_bytes", 1048576},
                 {"hbm_write_bytes", 1048576},
                 {"vector_engine_active_time_percent", 41.5},
                 {"backend", "sim-trn1"}};
  ctx.problem = "import numpy as np\n\ndef forward(a):\n    return a * 2.0\n";
  ctx.menu = {{{{"op", "split"}, {"loop", "L0"}, {"factor", 2}}, "split L0 (i, trip 4) by 2"},
              {{{"op", "set_loop_kind"}, {"loop", "L0"}, {"kind", "sequential_range"}},
               "make L0 (i, trip 4) a sequential_range"},
              {{{"op", "unroll"}, {"loop", "L0"}, {"factor", 4}}, "unroll L0 (i, trip 4) fully"}};
  ctx.experiences = {{"Moving a loop-invariant load out of the loop removed repeated DMA traffic.",
                      json::parse(R"([{"op":"hoist","stmt":"S3","out_of":"L1"}])"), 1.8},
                     {"Splitting the outer loop let the scheduler overlap loads with compute.",
                      json::parse(R"([{"op":"split","loop":"L0","factor":2}])"), 1.25}};
  return ctx;
}

TEST(Prompts, GoldenDryRun) {
  std::string listing;
  KernelContext ctx = exampleContext(listing);
  ASSERT_FALSE(listing.empty());
  EXPECT_NE(listing.find("L0"), std::string::npos);
  EXPECT_NE(listing.find("S1"), std::string::npos);

  std::string out;
  llvm::raw_string_ostream os(out);
  std::string fast = listing; // a stand-in for the rewritten kernel
  json ops = json::parse(R"([{"op":"split","loop":"L0","factor":2}])");
  ASSERT_FALSE(
      bool(dryRunPrompts(os, PromptLibrary::builtin(), ctx, 4,
                         "Split L0 by 2 so that loads of one half overlap compute of the other.", fast, ops, 1.3456)));
  os.flush();

  std::string golden = ACCELOPT_SOURCE_DIR "/test/unit/Agent/golden/dry-run.txt";
  if (std::getenv("ACCELOPT_UPDATE_GOLDEN")) std::ofstream(golden) << out;
  std::string expected = accelopt::agent::test::readFile(golden);
  EXPECT_EQ(out, expected) << "rendered prompts differ from " << golden << " (ACCELOPT_UPDATE_GOLDEN=1 regenerates it)";

  // The parts each role must see.
  EXPECT_NE(out.find("=== planner: system ==="), std::string::npos);
  EXPECT_NE(out.find("Profile (sim-trn1)"), std::string::npos);
  EXPECT_NE(out.find("- {\"op\":\"split\",\"loop\":\"L0\",\"factor\":2}  split L0 (i, trip 4) by 2"),
            std::string::npos);
  EXPECT_NE(out.find("1. (1.80x speedup) Moving a loop-invariant load"), std::string::npos);
  EXPECT_NE(out.find("def forward(a):"), std::string::npos);
  EXPECT_NE(out.find("=== executor: user ==="), std::string::npos);
  EXPECT_NE(out.find("Split L0 by 2 so that loads"), std::string::npos);
  EXPECT_NE(out.find("=== executor retry: user ==="), std::string::npos);
  EXPECT_NE(out.find("## After (1.35x speedup)"), std::string::npos);
}

} // namespace

namespace {

TEST(Renderer, StandaloneSectionTagsTakeTheirLines) {
  const char *t = "a\n{{#x}}\nX is {{x}}\n{{/x}}\nb\n  {{^x}}\nno x\n  {{/x}}\nc\n";
  EXPECT_EQ(render(t, {{"x", "1"}}), "a\nX is 1\nb\nc\n");
  EXPECT_EQ(render(t, {{"x", ""}}), "a\nb\nno x\nc\n");
}

TEST(Prompts, OpsTextPutsTheOpNameFirst) {
  EXPECT_EQ(opText(json::parse(R"({"factor":2,"loop":"L0","op":"split"})")),
            R"({"op":"split","loop":"L0","factor":2})");
  EXPECT_EQ(opText(json::parse(R"({"zeta":1,"stmt":"S3","op":"hoist","out_of":"L1"})")),
            R"({"op":"hoist","stmt":"S3","out_of":"L1","zeta":1})");
  EXPECT_EQ(opsText(json::parse(R"([{"op":"a"},{"op":"b"}])")), "[{\"op\":\"a\"},\n {\"op\":\"b\"}]");
}

} // namespace

namespace {

TEST(Prompts, NegativePairsAskWhatToAvoid) {
  PromptLibrary lib = PromptLibrary::builtin();
  auto s = lib.summarizer("before", "after", json::parse(R"([{"op":"unroll","loop":"L0","factor":4}])"), 0.8);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  const std::string &user = s->back().content;
  EXPECT_NE(user.find("## After (slower: 0.80x the speed of the version before)"), std::string::npos) << user;
  EXPECT_NE(user.find("why the second version is slower"), std::string::npos);
  EXPECT_EQ(user.find("why the second version is faster"), std::string::npos);
  EXPECT_EQ(renderExperiences({{"Unrolling fully blew the SBUF budget.", json::array(), 0.5}}),
            "1. (slowdown to 0.50x; avoid) Unrolling fully blew the SBUF budget.");
}

} // namespace
