// Every instance of every op on the kernels of our suite: refusals and bad
// input never crash, and every legal op applies (run under the sanitizers).
#include "Rewrite/Rewrite.h"

#include "NKI/InputSources.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace accelopt;
using namespace accelopt::rewrite;

namespace {

class SuiteOps : public ::testing::TestWithParam<const char *> {};

TEST_P(SuiteOps, EveryLegalOpApplies) {
  nki::SuiteLocation where;
  where.manifestPath = std::string(ACCELOPT_SOURCE_DIR) + "/nkibench/manifest.json";
  auto c = nki::findCase(where, GetParam());
  if (!c) {
    std::string msg = llvm::toString(c.takeError());
    GTEST_SKIP() << msg;
  }
  auto src = syntax::SourceBuffer::fromFile(c->kernelPath);
  ASSERT_TRUE(bool(src));
  CandidateOptions opts{&c->inputs, ""};
  auto legal = legalOps(**src, opts);
  ASSERT_TRUE(bool(legal));
  for (auto &l : *legal) {
    auto res = applyCandidate(**src, {l.op}, opts);
    EXPECT_EQ(res.status, Status::Applied) << formatOp(l.op) << "\n" << res.message;
    // The merged edits reproduce the text.
    auto merged = clang::tooling::applyAllReplacements((*src)->text(), res.edits);
    ASSERT_TRUE(bool(merged));
    EXPECT_EQ(*merged, res.text);
  }
  // Nonsense ids and parameters are bad input, never a crash.
  for (const char *bad :
       {R"({"op":"split","loop":"L999","factor":2})", R"({"op":"hoist","stmt":"L0","out_of":"S0"})",
        R"({"op":"fuse","first":"L0","second":"L0"})", R"({"op":"interchange","outer":"L0","inner":"L0"})",
        R"({"op":"fission","loop":"L0","at":"S0"})", R"({"op":"unroll","loop":"L0","factor":-3})",
        R"({"op":"sink","stmt":"S0","into":"L0"})", R"({"op":"set_loop_kind","loop":"L0","kind":7})"}) {
    auto ops = parseOps(bad);
    ASSERT_TRUE(bool(ops));
    auto res = applyCandidate(**src, *ops, opts);
    EXPECT_NE(res.status, Status::Applied) << bad;
    EXPECT_EQ(res.text, (*src)->text().str());
  }
}

INSTANTIATE_TEST_SUITE_P(Suite, SuiteOps,
                         ::testing::Values("matmul_K512_M256_N1024", "silu_M256_N2048", "softmax_M256_N512",
                                           "rmsnorm_M256_N512", "layernorm_M256_N512", "transpose_M256_N384",
                                           "fused_elementwise_M320_N512", "mamba_C256_M1024_S4",
                                           "add_rmsnorm_matmul_K256_M256_N1024", "hoist_load_before",
                                           "fuse_loops_before", "spill_buffer_before", "affine_loop_before",
                                           "dma_size_before"));

} // namespace
