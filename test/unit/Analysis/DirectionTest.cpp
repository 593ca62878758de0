// The dependence analysis answers per-loop direction questions: the ones the
// rewrite ops ask (fuse renames the second loop, interchange crosses two
// directions) and the verifier's (two iterations of one loop, one access).
#include "Analysis/Dependence.h"
#include "Analysis/Verifier.h"
#include "NKI/FrontEnd.h"

#include <gtest/gtest.h>

using namespace accelopt;
using namespace accelopt::nki;
using namespace accelopt::analysis;

namespace {

/// The kernel `def k(x):` + body; `inputs` empty keeps shapes and trip counts symbolic.
KernelFile kernelOf(const std::string &body, const std::string &inputs = "x=f32[128,512]") {
  static InputSpecs specs;
  FrontEndOptions opts;
  if (!inputs.empty()) opts.inputs = &(specs = *parseInputSpecs(inputs));
  auto file = buildKernelFile(
      std::move(*syntax::SourceBuffer::fromText(
          "k.py", "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n@nki.jit\ndef k(x):\n" + body)),
      opts);
  EXPECT_TRUE(bool(file)) << llvm::toString(file.takeError());
  return std::move(*file);
}

/// S1 of a kernel whose SBUF buffer `b` (`blocks` blocks of 128x512) is
/// accessed by `stmt` in the loop `for i in <iterator>:`.
struct BlockLoop {
  KernelFile file;
  const Kernel &k;
  const Access *write = nullptr, *read = nullptr; // S1's write, and its read of the same tensor

  BlockLoop(int blocks, const std::string &iterator, const std::string &stmt,
            const std::string &inputs = "x=f32[128,512]")
      : file(kernelOf("  b = nl.ndarray((" + std::to_string(blocks) +
                          ", nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n  for i in " + iterator +
                          ":\n    " + stmt + "\n  return x\n",
                      inputs)),
        k(file.kernels[0]) {
    const Statement &st = k.stmts[1];
    if (!st.writes.empty()) write = &st.writes[0];
    for (const Access &a : st.reads)
      if (write && a.tensor == write->tensor) read = &a;
  }
};

TEST(Direction, ShiftByOneDependsOnlyOnTheEarlierIteration) {
  // b[i + 1] = exp(b[i]): the write at iteration n meets the read at n + 1 (d = -1).
  BlockLoop t(5, "nl.sequential_range(4)", "b[i + 1, 0:128, 0:512] = nl.exp(b[i, 0:128, 0:512])");
  ASSERT_TRUE(t.write && t.read);
  EXPECT_TRUE(mayOverlapDir(t.k, *t.write, *t.read, {{0, Dir::Neg}}));
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.read, {{0, Dir::Pos}}));
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.read, {{0, Dir::Eq}}));
  EXPECT_TRUE(mayOverlapDir(t.k, *t.write, *t.read, {{0, Dir::Any}}));
  // Tested both ways round, two different iterations touch the same block.
  EXPECT_TRUE(mayOverlap(t.k, *t.write, 1, *t.read, 1, InstancePair{{}, 0, 0}));
  EXPECT_FALSE(mayOverlap(t.k, *t.write, 1, *t.read, 1, InstancePair{{}, 0, +1}));
  // The write alone never repeats a block across iterations.
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.write, laterIterationDirs(t.k, 0)));
}

TEST(Direction, TheShiftIsOutOfReachOfAShortLoop) {
  // b[i + 4] = exp(b[i]) over 4 iterations: the distance 4 exceeds the last iteration (3).
  BlockLoop t(8, "nl.sequential_range(4)", "b[i + 4, 0:128, 0:512] = nl.exp(b[i, 0:128, 0:512])");
  ASSERT_TRUE(t.write && t.read);
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.read, {{0, Dir::Neg}}));
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.read, {{0, Dir::Any}}));
}

TEST(Direction, OneIterationLoopsHaveNoSecondIteration) {
  BlockLoop t(1, "nl.affine_range(1)", "b[0, 0:128, 0:512] = nl.load(x[0:128, 0:512])");
  ASSERT_TRUE(t.write);
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.write, {{0, Dir::Pos}}));
  EXPECT_TRUE(mayOverlapDir(t.k, *t.write, *t.write, {{0, Dir::Eq}}));
}

TEST(Direction, GcdSeparatesEvenAndOddBlocksOfAnUnknownTripCount) {
  // Without input shapes the trip count is symbolic: bounds say nothing, the GCD still does.
  BlockLoop t(64, "nl.affine_range(x.shape[1] // 512)", "b[2 * i, 0:128, 0:512] = nl.exp(b[2 * i + 1, 0:128, 0:512])",
              "");
  ASSERT_FALSE(tripCount(t.k, 0));
  ASSERT_TRUE(t.write && t.read);
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.read, {}));
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.read, {{0, Dir::Neg}}));
  // The write against itself: only the same iteration.
  EXPECT_TRUE(mayOverlapDir(t.k, *t.write, *t.write, {{0, Dir::Eq}}));
  EXPECT_FALSE(mayOverlapDir(t.k, *t.write, *t.write, laterIterationDirs(t.k, 0)));
}

TEST(Direction, TheVerifierAsksTheSameQuestion) {
  // Every iteration of the affine loop writes the same block: the verifier's
  // affine-output-dep finding is the analysis' "later iteration" overlap.
  BlockLoop t(4, "nl.affine_range(4)", "b[0, 0:128, 0:512] = nl.load(x[0:128, 0:512])");
  ASSERT_TRUE(t.write);
  EXPECT_TRUE(mayOverlapDir(t.k, *t.write, *t.write, laterIterationDirs(t.k, 0)));
  bool reported = false;
  for (const Diagnostic &d : verify(t.k))
    if (d.rule == "affine-output-dep") reported = true;
  EXPECT_TRUE(reported);
}

TEST(Direction, FuseRenamesTheSecondLoopOntoTheFirst) {
  // Loop 0 writes block i, loop 1 reads block j + 1: fused (j becomes i), the read
  // of iteration n meets the write of iteration n + 1 (d = n_write - n_read = +1).
  KernelFile f = kernelOf("  b = nl.ndarray((5, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.affine_range(4):\n"
                          "    b[i, 0:128, 0:512] = nl.load(x[0:128, 0:512])\n"
                          "  for j in nl.affine_range(4):\n"
                          "    c = nl.exp(b[j + 1, 0:128, 0:512])\n"
                          "  return x\n");
  const Kernel &k = f.kernels[0];
  const Access &w = k.stmts[1].writes[0];
  const Access &r = k.stmts[2].reads[0];
  ASSERT_EQ(w.tensor, r.tensor);
  EXPECT_TRUE(mayOverlapDir(k, w, r, {{0, Dir::Pos}}, {1, 0}));
  EXPECT_FALSE(mayOverlapDir(k, w, r, {{0, Dir::Eq}}, {1, 0}));
  EXPECT_FALSE(mayOverlapDir(k, w, r, {{0, Dir::Neg}}, {1, 0}));
  auto c = firstConflict(k, 1, 2, 0, 1, laterIterationDirs(k, 0), {1, 0});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->a, &w);
  EXPECT_EQ(c->b, &r);
}

TEST(Direction, CarriedNameIsReadBeforeItIsRebound) {
  KernelFile f = kernelOf("  acc = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.sequential_range(4):\n"
                          "    t = nl.load(x[0:128, 0:512])\n"
                          "    acc = nl.add(acc, t)\n"
                          "  return x\n");
  const Kernel &k = f.kernels[0];
  auto carried = carriedName(k, 0);
  ASSERT_TRUE(carried);
  EXPECT_EQ(carried->first, 2);
  EXPECT_EQ(carried->second, "acc");
}

} // namespace
