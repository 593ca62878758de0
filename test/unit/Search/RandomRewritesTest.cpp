// Property test across rewrites and the interpreter: random sequences of legal
// ops on our small kernels always give kernels that verify and compute the same
// numbers as the original (seeded, so a failure reproduces).
#include "Analysis/Verifier.h"
#include "Interp/Compare.h"
#include "Interp/Interpreter.h"
#include "NKI/InputSources.h"
#include "Rewrite/Rewrite.h"
#include "Search/Search.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace accelopt;

namespace {

std::vector<interp::NDArray> runOn(const std::string &path, const std::string &text, const nki::InputSpecs &inputs,
                                   uint64_t seed, std::string &error) {
  auto src = syntax::SourceBuffer::fromText(path, text);
  nki::FrontEndOptions fe;
  fe.inputs = &inputs;
  auto file = nki::buildKernelFile(std::move(*src), fe);
  if (!file) {
    error = llvm::toString(file.takeError());
    return {};
  }
  if (analysis::hasErrors(analysis::verify(file->kernels.front()))) {
    error = "does not verify";
    return {};
  }
  auto args = interp::makeRandomInputs(inputs, seed);
  auto result = interp::runKernel(*file, file->kernels.front(), std::move(*args));
  if (!result) {
    error = llvm::toString(result.takeError());
    return {};
  }
  return std::move(result->outputs);
}

TEST(RandomRewrites, LegalSequencesKeepTheNumbers) {
  auto suite = nki::loadSuite({ACCELOPT_SOURCE_DIR "/nkibench/manifest.json", ACCELOPT_NKIBENCH_DIR});
  ASSERT_TRUE(bool(suite)) << llvm::toString(suite.takeError());
  std::mt19937_64 rng(20261121);
  int checked = 0, applied = 0;
  for (const auto &c : *suite) {
    if (c.kernelPath.find("/nkibench/kernels/") == std::string::npos ||
        c.kernelPath.find("/upstream/") != std::string::npos)
      continue; // our small suite only: full-size NKIBench is too slow to interpret here
    auto source = syntax::SourceBuffer::fromFile(c.kernelPath);
    ASSERT_TRUE(bool(source));
    std::string original = (*source)->text().str();
    std::string error;
    auto expected = runOn(c.kernelPath, original, c.inputs, 0, error);
    ASSERT_TRUE(error.empty()) << c.name << ": " << error;
    // Half the trials under the sanitizers, where each interpreter run costs about 5x more.
    for (int trial = 0; trial < (ACCELOPT_SANITIZED ? 6 : 12); ++trial) {
      std::string text = original;
      std::vector<nlohmann::json> ops;
      int length = 1 + int(rng() % 3);
      for (int step = 0; step < length; ++step) {
        auto buffer = syntax::SourceBuffer::fromText(c.kernelPath, text);
        rewrite::CandidateOptions opts;
        opts.inputs = &c.inputs;
        auto menu = rewrite::legalOps(**buffer, opts);
        ASSERT_TRUE(bool(menu)) << llvm::toString(menu.takeError());
        if (menu->empty()) break;
        const auto &pick = (*menu)[rng() % menu->size()];
        auto res = rewrite::applyCandidate(**buffer, {pick.op}, opts);
        ASSERT_EQ(res.status, rewrite::Status::Applied) << c.name << ": listed as legal but refused: " << res.message;
        text = res.text;
        ops.push_back(pick.op);
        ++applied;
      }
      auto got = runOn(c.kernelPath, text, c.inputs, 0, error);
      std::string opsText;
      for (auto &op : ops) opsText += rewrite::formatOp(op) + " ";
      ASSERT_TRUE(error.empty()) << c.name << " after " << opsText << ": " << error;
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        auto cmp = interp::compareArrays(got[i], expected[i], {});
        EXPECT_TRUE(cmp.allclose) << c.name << " after " << opsText << ": max |error| " << cmp.maxAbsError;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, ACCELOPT_SANITIZED ? 45 : 90);
  EXPECT_GT(applied, checked);
}

// substitute and set_engine change which instructions compute a value, so each of their legal
// instances (and the instances legal after one of them) is checked on every small suite kernel.
TEST(RandomRewrites, ElementwiseSubstitutionsKeepTheNumbers) {
  auto suite = nki::loadSuite({ACCELOPT_SOURCE_DIR "/nkibench/manifest.json", ACCELOPT_NKIBENCH_DIR});
  ASSERT_TRUE(bool(suite)) << llvm::toString(suite.takeError());
  std::map<std::string, int> appliedByOp;
  for (const auto &c : *suite) {
    if (c.kernelPath.find("/nkibench/kernels/") == std::string::npos ||
        c.kernelPath.find("/upstream/") != std::string::npos)
      continue;
    auto source = syntax::SourceBuffer::fromFile(c.kernelPath);
    ASSERT_TRUE(bool(source));
    std::string error;
    auto expected = runOn(c.kernelPath, (*source)->text().str(), c.inputs, 0, error);
    ASSERT_TRUE(error.empty()) << c.name << ": " << error;
    rewrite::CandidateOptions opts;
    opts.inputs = &c.inputs;
    // Breadth-first over sequences of these ops, up to two deep (one under the sanitizers: the second level
    // is nine tenths of the interpreter runs).
    std::vector<std::pair<std::string, std::vector<nlohmann::json>>> frontier = {{(*source)->text().str(), {}}};
    for (int depth = 0; depth < (ACCELOPT_SANITIZED ? 1 : 2); ++depth) {
      std::vector<std::pair<std::string, std::vector<nlohmann::json>>> next;
      for (auto &[text, ops] : frontier) {
        auto buffer = syntax::SourceBuffer::fromText(c.kernelPath, text);
        auto menu = rewrite::legalOps(**buffer, opts);
        ASSERT_TRUE(bool(menu)) << llvm::toString(menu.takeError());
        for (const auto &m : *menu) {
          std::string kind = m.op.value("op", "");
          if (kind != "substitute" && kind != "set_engine") continue;
          auto res = rewrite::applyCandidate(**buffer, {m.op}, opts);
          ASSERT_EQ(res.status, rewrite::Status::Applied) << c.name << ": listed as legal but refused: " << res.message;
          std::vector<nlohmann::json> seq = ops;
          seq.push_back(m.op);
          std::string opsText;
          for (auto &op : seq) opsText += rewrite::formatOp(op) + " ";
          auto got = runOn(c.kernelPath, res.text, c.inputs, 0, error);
          ASSERT_TRUE(error.empty()) << c.name << " after " << opsText << ": " << error;
          ASSERT_EQ(got.size(), expected.size());
          for (size_t i = 0; i < got.size(); ++i) {
            auto cmp = interp::compareArrays(got[i], expected[i], {});
            EXPECT_TRUE(cmp.allclose) << c.name << " after " << opsText << ": max |error| " << cmp.maxAbsError;
          }
          ++appliedByOp[kind];
          next.push_back({res.text, seq});
        }
      }
      frontier = std::move(next);
    }
  }
  // The small silu kernel alone offers sigmoid, silu (after sigmoid) and reciprocal moves.
  EXPECT_GE(appliedByOp["substitute"], 2);
  EXPECT_GE(appliedByOp["set_engine"], 1);
}

struct TestKernel {
  const char *file;
  const char *inputs;
};

/// Applies every legal instance of the ops named `kinds` on test/Rewrite/Inputs kernels, alone and
/// followed by a random legal op, and checks the numbers against the original; counts per op.
std::map<std::string, int> checkEveryInstance(llvm::ArrayRef<TestKernel> kernels, const std::set<std::string> &kinds,
                                              uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, int> checked;
  for (const TestKernel &kc : kernels) {
    std::string path = std::string(ACCELOPT_SOURCE_DIR) + "/test/Rewrite/Inputs/" + kc.file;
    auto inputs = nki::parseInputSpecs(kc.inputs);
    EXPECT_TRUE(bool(inputs)) << llvm::toString(inputs.takeError());
    if (!inputs) continue;
    auto source = syntax::SourceBuffer::fromFile(path);
    EXPECT_TRUE(bool(source));
    if (!source) continue;
    std::string original = (*source)->text().str(), error;
    auto expected = runOn(path, original, *inputs, 0, error);
    EXPECT_TRUE(error.empty()) << kc.file << ": " << error;
    if (!error.empty()) continue;
    rewrite::CandidateOptions opts;
    opts.inputs = &*inputs;
    auto menu = rewrite::legalOps(**source, opts);
    EXPECT_TRUE(bool(menu)) << llvm::toString(menu.takeError());
    if (!menu) continue;
    for (const auto &pick : *menu) {
      std::string name = pick.op["op"].get<std::string>();
      if (!kinds.count(name)) continue;
      for (bool followUp : {false, true}) {
        auto res = rewrite::applyCandidate(**source, {pick.op}, opts);
        EXPECT_EQ(res.status, rewrite::Status::Applied) << kc.file << ": " << res.message;
        if (res.status != rewrite::Status::Applied) continue;
        std::string text = res.text, opsText = rewrite::formatOp(pick.op);
        if (followUp) {
          auto buffer = syntax::SourceBuffer::fromText(path, text);
          auto next = rewrite::legalOps(**buffer, opts);
          EXPECT_TRUE(bool(next)) << llvm::toString(next.takeError());
          if (!next || next->empty()) continue;
          const auto &second = (*next)[rng() % next->size()];
          auto res2 = rewrite::applyCandidate(**buffer, {second.op}, opts);
          EXPECT_EQ(res2.status, rewrite::Status::Applied) << kc.file << ": " << res2.message;
          if (res2.status != rewrite::Status::Applied) continue;
          text = res2.text;
          opsText += " " + rewrite::formatOp(second.op);
        }
        auto got = runOn(path, text, *inputs, 0, error);
        EXPECT_TRUE(error.empty()) << kc.file << " after " << opsText << ": " << error;
        EXPECT_EQ(got.size(), expected.size());
        for (size_t i = 0; i < got.size() && i < expected.size(); ++i) {
          auto cmp = interp::compareArrays(got[i], expected[i], {});
          EXPECT_TRUE(cmp.allclose) << kc.file << " after " << opsText << ": max |error| " << cmp.maxAbsError;
        }
        ++checked[name];
      }
    }
  }
  return checked;
}

// compute_at and hoist_transpose have few sites in the small suite; on the kernels written
// for them every legal instance, alone and followed by a random legal op, keeps the numbers.
TEST(RandomRewrites, ComputeAtAndHoistTransposeKeepTheNumbers) {
  auto checked =
      checkEveryInstance({{"phases.py", "x=f32[512,512]"}, {"matmul_implicit.py", "x=f32[256,256],w=f32[256,1024]"}},
                         {"compute_at", "hoist_transpose"}, 20261125);
  EXPECT_GE(checked["compute_at"], 2);
  EXPECT_GE(checked["hoist_transpose"], 2);
}

// cse_load and forward_load: every legal instance on the kernel written for them, alone and
// followed by a random legal op.
TEST(RandomRewrites, LoadReuseKeepsTheNumbers) {
  auto checked = checkEveryInstance({{"loads.py", "x=f32[256,1024]"}}, {"cse_load", "forward_load"}, 20261125);
  EXPECT_GE(checked["cse_load"], 4);
  EXPECT_GE(checked["forward_load"], 2);
}

} // namespace
