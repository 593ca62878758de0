// Language features on an analysed document: rewrite code actions resolved into
// TextEdits whose UTF-16 ranges reproduce the rewrite engine's result, quick
// fixes that remove their diagnostics, the optimization memory's preferred
// action, hover and inlay hints on non-ASCII lines.
#include "LSP/Features.h"

#include "Memory/Store.h"
#include "Rewrite/Rewrite.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace accelopt;
using namespace accelopt::lsp;

namespace {

// Comments with characters outside ASCII (2-, 3- and 4-byte UTF-8) inside the loop.
const char *Kernel = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(2):  # é € 😀
    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])  # 😀😀 load
    nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)  # ü
  return out
)";

std::shared_ptr<Analysis> analyse(const std::string &text, InputResolver &inputs,
                                  const std::string &shapes = "x=f32[256,512]") {
  Config config;
  config.suiteCases = false;
  config.inputs["k.py"] = shapes;
  auto a = std::make_shared<Analysis>("file:///tmp/k.py", "/tmp/k.py", 1, text);
  a->build(config, inputs, nullptr);
  return a;
}

/// The diagnostics of `a` with code `rule`.
std::vector<json> findings(const Analysis &a, const std::string &rule) {
  std::vector<json> out;
  for (const json &d : a.diagnostics())
    if (d.value("code", "") == rule) out.push_back(d);
  return out;
}

std::string readSourceFile(const std::string &relative) {
  auto buffer = llvm::MemoryBuffer::getFile(std::string(ACCELOPT_SOURCE_DIR) + "/" + relative);
  if (!buffer) {
    ADD_FAILURE() << relative << ": " << buffer.getError().message();
    return "";
  }
  return (*buffer)->getBuffer().str();
}

/// Applies a WorkspaceEdit's TextEdits (all relative to `text`) from last to first.
std::string applyEdits(std::string text, const json &edits) {
  std::vector<json> sorted(edits.begin(), edits.end());
  std::sort(sorted.begin(), sorted.end(), [](const json &a, const json &b) {
    auto key = [](const json &e) {
      return std::make_pair(e["range"]["start"]["line"].get<int>(), e["range"]["start"]["character"].get<int>());
    };
    return key(a) > key(b);
  });
  for (const json &e : sorted) {
    json change = {{"range", e["range"]}, {"text", e["newText"]}};
    if (auto err = applyContentChange(text, change)) ADD_FAILURE() << llvm::toString(std::move(err));
  }
  return text;
}

TEST(Features, ResolvedEditsReproduceTheRewriteEngine) {
  InputResolver inputs;
  auto a = analyse(Kernel, inputs);
  ASSERT_TRUE(a->ok());
  uint32_t header = a->index().offset({7, 4});
  json actions = codeActions(*a, header, {});
  ASSERT_FALSE(actions.empty());
  int resolved = 0;
  for (const json &action : actions) {
    if (action.contains("disabled")) {
      EXPECT_FALSE(action["disabled"]["reason"].get<std::string>().empty());
      continue;
    }
    EXPECT_TRUE(llvm::StringRef(action["kind"].get<std::string>()).startswith("refactor.rewrite.accelopt."));
    EXPECT_FALSE(action.contains("edit")) << "edits are computed on resolve";
    json full = resolveCodeAction(*a, action);
    ASSERT_TRUE(full.contains("edit")) << full.dump();
    const json &edits = full["edit"]["changes"]["file:///tmp/k.py"];
    std::string viaLsp = applyEdits(Kernel, edits);

    auto source = syntax::SourceBuffer::fromText("/tmp/k.py", Kernel);
    ASSERT_TRUE(bool(source));
    nki::InputSpecs specs = *nki::parseInputSpecs("x=f32[256,512]");
    rewrite::CandidateOptions opts;
    opts.inputs = &specs;
    rewrite::CandidateResult direct = rewrite::applyCandidate(**source, {action["data"]["op"]}, opts);
    ASSERT_EQ(direct.status, rewrite::Status::Applied);
    EXPECT_EQ(viaLsp, direct.text) << action["title"];
    ++resolved;
  }
  EXPECT_GE(resolved, 2) << "set_loop_kind and unroll apply to this loop";
}

TEST(Features, CodeActionsFilterByKind) {
  InputResolver inputs;
  auto a = analyse(Kernel, inputs);
  json only = codeActions(*a, a->index().offset({7, 4}), {"refactor.rewrite.accelopt.unroll"});
  ASSERT_FALSE(only.empty());
  for (const json &action : only) EXPECT_EQ(action["kind"], "refactor.rewrite.accelopt.unroll");
  EXPECT_TRUE(codeActions(*a, a->index().offset({7, 4}), {"quickfix"}).empty());
  EXPECT_FALSE(codeActions(*a, a->index().offset({7, 4}), {"refactor"}).empty());
  EXPECT_TRUE(codeActions(*a, a->index().offset({0, 0}), {}).empty()) << "outside any kernel";
}

TEST(Features, HintsAndHoverAfterNonAsciiText) {
  InputResolver inputs;
  auto a = analyse(Kernel, inputs);
  json hints = inlayHints(*a, 0, static_cast<uint32_t>(a->text().size()));
  ASSERT_EQ(hints.size(), 2u) << hints.dump();
  EXPECT_EQ(hints[0]["label"], "trip 2");
  EXPECT_EQ(hints[0]["position"], json({{"line", 7}, {"character", 30}}));
  EXPECT_EQ(hints[1]["label"], ": [128, 512] float32");
  EXPECT_EQ(hints[1]["position"], json({{"line", 8}, {"character", 5}}));

  // `value=t` on line 9 comes before the comment; `t` is at UTF-16 column 54.
  json h = hover(*a, a->index().offset({9, 54}), nullptr);
  ASSERT_TRUE(h.is_object()) << a->text();
  EXPECT_NE(h["contents"]["value"].get<std::string>().find("**t**"), std::string::npos);
  EXPECT_EQ(h["range"]["start"], json({{"line", 9}, {"character", 54}}));

  // Hover on the comment after the emoji: nothing.
  EXPECT_TRUE(hover(*a, a->index().offset({8, 53}), nullptr).is_null());
}

TEST(Features, CodeLensNeedsShapesOrSaysSo) {
  InputResolver inputs;
  Config config;
  config.suiteCases = false;
  Analysis a("file:///tmp/k.py", "/tmp/k.py", 1, Kernel);
  a.build(config, inputs, nullptr);
  json lenses = codeLenses(a, nullptr);
  ASSERT_EQ(lenses.size(), 1u);
  EXPECT_EQ(lenses[0]["range"]["start"], json({{"line", 5}, {"character", 0}}));
  auto hw = perf::loadTarget("trn1");
  ASSERT_TRUE(bool(hw));
  json resolved = resolveCodeLens(a, lenses[0], &*hw);
  EXPECT_EQ(resolved["command"]["title"], "sim-trn1: needs input shapes (accelopt `inputs` setting)");

  auto withShapes = analyse(Kernel, inputs);
  resolved = resolveCodeLens(*withShapes, codeLenses(*withShapes, &*hw)[0], &*hw);
  std::string title = resolved["command"]["title"];
  EXPECT_TRUE(llvm::StringRef(title).startswith("sim-trn1: ")) << title;
  EXPECT_TRUE(llvm::StringRef(title).endswith(" ms")) << title << " (no roofline for this file)";
  EXPECT_EQ(resolved["command"]["command"], "accelopt.profile");
}

// Every iteration stores to the same rows of `out`.
const char *AffineDepKernel = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(4):  # é 😀
    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
    nl.store(out[0:128, 0:512], value=t)
  return out
)";

/// Applies the single quick fix offered for `rule` and re-analyses.
void expectQuickFixResolves(const std::string &text, const std::string &shapes, const std::string &rule,
                            const std::string &opName) {
  InputResolver inputs;
  auto a = analyse(text, inputs, shapes);
  std::vector<json> diags = findings(*a, rule);
  ASSERT_EQ(diags.size(), 1u) << a->diagnostics().dump();
  json fixes = quickFixes(*a, json(diags));
  ASSERT_EQ(fixes.size(), 1u) << fixes.dump();
  const json &fix = fixes[0];
  EXPECT_EQ(fix["kind"], "quickfix");
  EXPECT_EQ(fix["isPreferred"], true);
  EXPECT_EQ(fix["diagnostics"], json(diags));
  EXPECT_EQ(fix["data"]["op"]["op"], opName);
  std::string fixed = applyEdits(text, fix["edit"]["changes"]["file:///tmp/k.py"]);
  EXPECT_NE(fixed, text);
  auto after = analyse(fixed, inputs, shapes);
  ASSERT_TRUE(after->ok()) << fixed;
  EXPECT_TRUE(findings(*after, rule).empty()) << after->diagnostics().dump() << "\n" << fixed;
  EXPECT_TRUE(quickFixes(*after, json(diags)).empty()) << "the old diagnostic is stale";
}

TEST(Features, QuickFixAffineOutputDepRunsTheLoopInOrder) {
  expectQuickFixResolves(AffineDepKernel, "x=f32[512,512]", "affine-output-dep", "set_loop_kind");
}

TEST(Features, QuickFixSbufCapacityShrinksABuffer) {
  expectQuickFixResolves(readSourceFile("test/LSP/Inputs/sbuf_capacity.py"), "x=f32[64,128,1024]", "sbuf-capacity",
                         "shrink_buffer");
}

TEST(Features, QuickFixesIgnoreForeignStaleAndMalformedDiagnostics) {
  InputResolver inputs;
  auto a = analyse(AffineDepKernel, inputs, "x=f32[512,512]");
  json diag = findings(*a, "affine-output-dep").at(0);
  json foreign = diag;
  foreign["source"] = "pyright";
  json moved = diag;
  moved["range"]["start"]["line"] = 3;
  json unfixable = diag;
  unfixable["code"] = "partition-dim";
  json junk = json::array({1, "x", nullptr, json::object(), json({{"code", 7}}), json({{"code", "affine-output-dep"}}),
                           json({{"code", "affine-output-dep"}, {"range", "bad"}}), foreign, moved, unfixable});
  EXPECT_TRUE(quickFixes(*a, junk).empty()) << quickFixes(*a, junk).dump();
  EXPECT_TRUE(quickFixes(*a, json("not a list")).empty());
  // The same finding twice gives one fix carrying both.
  json twice = quickFixes(*a, json::array({diag, diag}));
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_EQ(twice[0]["diagnostics"].size(), 2u);
}

TEST(Features, MemoryActionOffersTheRememberedPatternAtItsLoop) {
  auto store = memory::Store::open(":memory:");
  ASSERT_TRUE(bool(store)) << llvm::toString(store.takeError());
  auto imported = (*store)->importFromFile(std::string(ACCELOPT_SOURCE_DIR) + "/test/LSP/Inputs/memory.json");
  ASSERT_TRUE(bool(imported)) << llvm::toString(imported.takeError());

  InputResolver inputs;
  std::string text = readSourceFile("nkibench/kernels/silu_M256_N2048.py");
  auto a = analyse(text, inputs, "x=f32[128,2,2048]");
  ASSERT_TRUE(a->ok());
  // "for h in nl.affine_range(2):" is L2, the innermost loop the pattern unrolls.
  auto action = memoryAction(*a, a->index().offset({42, 6}), **store);
  ASSERT_TRUE(bool(action)) << llvm::toString(action.takeError());
  ASSERT_TRUE(action->is_object()) << action->dump();
  EXPECT_EQ((*action)["kind"], MemoryKind);
  EXPECT_EQ((*action)["isPreferred"], true);
  EXPECT_EQ((*action)["data"]["ops"], json::parse(R"([{"op": "unroll", "loop": "L2", "factor": 2}])"));
  EXPECT_EQ((*action)["title"], "Remembered pattern p1 (win rate 67%): unroll L2 (h, trip 2) fully (2 copies)");

  // Its edit is the rewrite engine's result; resolve (with data.ops) agrees.
  std::string viaLsp = applyEdits(text, (*action)["edit"]["changes"]["file:///tmp/k.py"]);
  json again = *action;
  again.erase("edit");
  json resolved = resolveCodeAction(*a, again);
  ASSERT_TRUE(resolved.contains("edit")) << resolved.dump();
  EXPECT_EQ(applyEdits(text, resolved["edit"]["changes"]["file:///tmp/k.py"]), viaLsp);

  // The outer loop L0 and a statement outside the loops: the pattern does not touch them.
  auto outer = memoryAction(*a, a->index().offset({37, 2}), **store);
  ASSERT_TRUE(bool(outer));
  EXPECT_TRUE(outer->is_null()) << outer->dump();
  auto memset = memoryAction(*a, a->index().offset({35, 4}), **store);
  ASSERT_TRUE(bool(memset));
  EXPECT_TRUE(memset->is_null());
}

} // namespace
