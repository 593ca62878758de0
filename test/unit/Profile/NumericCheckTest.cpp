// The numeric check service: baseline captured once per seed, candidates
// compared against it, one wording for the verdicts.
#include "Profile/NumericCheck.h"

#include "ProfileTestUtil.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace accelopt::profile {
namespace {

struct Fixture {
  nki::InputSpecs specs = testing::abSpecs();
  nki::KernelFile original = testing::mustBuild(testing::elementwiseKernel("subtract"), specs);
};

TEST(NumericCheck, SeedsAreAccelOpts) {
  EXPECT_EQ(accelOptSeed(0), 0u);
  EXPECT_EQ(accelOptSeed(1), 21u);
  EXPECT_EQ(accelOptSeed(2), 42u);
}

TEST(NumericCheck, TheOriginalEqualsItselfOnEverySeed) {
  Fixture f;
  ASSERT_FALSE(f.original.kernels.empty());
  auto baseline = NumericBaseline::capture(f.original, f.original.kernels.front(), f.specs, 3, {});
  ASSERT_TRUE(bool(baseline)) << llvm::toString(baseline.takeError());
  EXPECT_EQ(baseline->seeds(), 3u);
  NumericCheckOptions options;
  std::vector<SeedCheck> checks = baseline->check(f.original, f.original.kernels.front(), options);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[2].seed, 42u);
  for (const SeedCheck &c : checks) EXPECT_TRUE(c.equal());
  EXPECT_EQ(baseline->firstDifference(f.original, f.original.kernels.front(), options), "");
}

TEST(NumericCheck, ADifferentCandidateStopsAtItsFirstSeed) {
  Fixture f;
  nki::KernelFile candidate = testing::mustBuild(testing::elementwiseKernel("add"), f.specs);
  ASSERT_FALSE(candidate.kernels.empty());
  auto baseline = NumericBaseline::capture(f.original, f.original.kernels.front(), f.specs, 2, {});
  ASSERT_TRUE(bool(baseline)) << llvm::toString(baseline.takeError());
  std::vector<SeedCheck> checks = baseline->check(candidate, candidate.kernels.front(), {});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].equal());
  ASSERT_EQ(checks[0].outputs.size(), 1u);
  EXPECT_FALSE(checks[0].outputs[0].vsOriginal.allclose);
  std::string why = checks[0].firstDifference();
  EXPECT_EQ(why.rfind("output 0 differs from the original's (seed 0, max |error| ", 0), 0u) << why;

  // verify's report of the same seed.
  std::string report;
  llvm::raw_string_ostream os(report);
  checks[0].render(os, NumericCheckOptions().tolerance);
  EXPECT_EQ(report.rfind("seed 0: output 0: DIFFERENT; max |error| ", 0), 0u) << report;
  EXPECT_NE(report.find(" of 65536 elements outside atol "), std::string::npos) << report;
}

TEST(NumericCheck, BindingRenamesAndReordersTheInputs) {
  Fixture f;
  // Bound crossed, the candidate computes b - a where the original computed a - b.
  std::string swapped = testing::elementwiseKernel("subtract");
  nki::KernelFile candidate = testing::mustBuild(swapped, f.specs);
  ASSERT_FALSE(candidate.kernels.empty());
  auto args = interp::makeRandomInputs(f.specs, accelOptSeed(1));
  ASSERT_TRUE(bool(args)) << llvm::toString(args.takeError());
  auto baseline = captureSeed(f.original, f.original.kernels.front(), accelOptSeed(1), std::move(*args), {}, {});
  ASSERT_TRUE(bool(baseline)) << llvm::toString(baseline.takeError());
  NumericCheckOptions options;
  options.stopAtFirstDifference = false;
  std::vector<size_t> same = {0, 1}, crossed = {1, 0};
  EXPECT_TRUE(checkSeed(*baseline, candidate, candidate.kernels.front(), options, same).equal());
  SeedCheck c = checkSeed(*baseline, candidate, candidate.kernels.front(), options, crossed);
  EXPECT_FALSE(c.equal());
  EXPECT_EQ(c.seed, 21u);
}

TEST(NumericCheck, AFailingCandidateAndAFailingOriginalAreNamed) {
  Fixture f;
  // Reads a tile of b that is never written: the interpreter refuses it.
  std::string broken = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\n"
                       "def kernel(a, b):\n  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
                       "  t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)\n"
                       "  nl.store(out, value=nl.add(nl.load(a), t))\n  return out\n";
  nki::KernelFile bad = testing::mustBuild(broken, f.specs);
  ASSERT_FALSE(bad.kernels.empty());
  auto baseline = NumericBaseline::capture(f.original, f.original.kernels.front(), f.specs, 2, {});
  ASSERT_TRUE(bool(baseline)) << llvm::toString(baseline.takeError());
  std::vector<SeedCheck> checks = baseline->check(bad, bad.kernels.front(), {});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].outcome, SeedCheck::CandidateFailed);
  std::string why = checks[0].firstDifference();
  EXPECT_EQ(why.rfind("fails on the interpreter: k.py:", 0), 0u) << why;
  EXPECT_NE(why.find("never-written"), std::string::npos) << why;

  auto failing = NumericBaseline::capture(bad, bad.kernels.front(), f.specs, 2, {});
  ASSERT_FALSE(bool(failing));
  llvm::Error err = failing.takeError();
  EXPECT_TRUE(err.isA<OriginalFailedError>());
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("never-written"), std::string::npos) << message;
}

} // namespace
} // namespace accelopt::profile
