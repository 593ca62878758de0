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
KernelFile kernelOf(const std::string &body, const char *inputs) {
  static InputSpecs specs;
  FrontEndOptions opts;
  if (*inputs) {
    specs = *parseInputSpecs(inputs);
    opts.inputs = &specs;
  }
  std::string text =
      "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n@nki.jit\ndef k(x):\n" + body;
  auto file = buildKernelFile(std::move(*syntax::SourceBuffer::fromText("k.py", text)), opts);
  EXPECT_TRUE(bool(file)) << llvm::toString(file.takeError());
  return std::move(*file);
}

/// The write of statement `s` and its read of the same tensor.
std::pair<const Access *, const Access *> writeAndRead(const Kernel &k, int s) {
  const Statement &st = k.stmts[s];
  const Access *w = st.writes.empty() ? nullptr : &st.writes[0], *r = nullptr;
  for (const Access &a : st.reads)
    if (w && a.tensor == w->tensor) r = &a;
  return {w, r};
}

TEST(Direction, ShiftByOneDependsOnlyOnTheEarlierIteration) {
  // b[i + 1] = exp(b[i]): the write at iteration n meets the read at n + 1 (d = -1).
  KernelFile f = kernelOf("  b = nl.ndarray((5, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.sequential_range(4):\n"
                          "    b[i + 1, 0:128, 0:512] = nl.exp(b[i, 0:128, 0:512])\n"
                          "  return x\n",
                          "x=f32[128,512]");
  const Kernel &k = f.kernels[0];
  auto [w, r] = writeAndRead(k, 1);
  ASSERT_TRUE(w && r);
  EXPECT_TRUE(mayOverlapDir(k, *w, *r, {{0, Dir::Neg}}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Pos}}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Eq}}));
  EXPECT_TRUE(mayOverlapDir(k, *w, *r, {{0, Dir::Any}}));
  // Tested both ways round, two different iterations touch the same block.
  EXPECT_TRUE(mayOverlap(k, *w, 1, *r, 1, InstancePair{{}, 0, 0}));
  EXPECT_FALSE(mayOverlap(k, *w, 1, *r, 1, InstancePair{{}, 0, +1}));
  // The write alone never repeats a block across iterations.
  EXPECT_FALSE(mayOverlapDir(k, *w, *w, laterIterationDirs(k, 0)));
}

TEST(Direction, TheShiftIsOutOfReachOfAShortLoop) {
  // b[i + 4] = exp(b[i]) over 4 iterations: the distance 4 exceeds the last iteration (3).
  KernelFile f = kernelOf("  b = nl.ndarray((8, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.sequential_range(4):\n"
                          "    b[i + 4, 0:128, 0:512] = nl.exp(b[i, 0:128, 0:512])\n"
                          "  return x\n",
                          "x=f32[128,512]");
  const Kernel &k = f.kernels[0];
  auto [w, r] = writeAndRead(k, 1);
  ASSERT_TRUE(w && r);
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Neg}}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Any}}));
}

TEST(Direction, OneIterationLoopsHaveNoSecondIteration) {
  KernelFile f = kernelOf("  b = nl.ndarray((1, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.affine_range(1):\n"
                          "    b[0, 0:128, 0:512] = nl.load(x[0:128, 0:512])\n"
                          "  return b\n",
                          "x=f32[128,512]");
  const Kernel &k = f.kernels[0];
  const Access &w = k.stmts[1].writes[0];
  EXPECT_FALSE(mayOverlapDir(k, w, w, {{0, Dir::Pos}}));
  EXPECT_TRUE(mayOverlapDir(k, w, w, {{0, Dir::Eq}}));
}

TEST(Direction, GcdSeparatesEvenAndOddBlocksOfAnUnknownTripCount) {
  // Without input shapes the trip count is symbolic: bounds say nothing, the GCD still does.
  KernelFile f = kernelOf("  b = nl.ndarray((64, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.affine_range(x.shape[1] // 512):\n"
                          "    b[2 * i, 0:128, 0:512] = nl.exp(b[2 * i + 1, 0:128, 0:512])\n"
                          "  return x\n",
                          "");
  const Kernel &k = f.kernels[0];
  ASSERT_FALSE(tripCount(k, 0));
  auto [w, r] = writeAndRead(k, 1);
  ASSERT_TRUE(w && r);
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Neg}}));
  // The write against itself: only the same iteration.
  EXPECT_TRUE(mayOverlapDir(k, *w, *w, {{0, Dir::Eq}}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *w, laterIterationDirs(k, 0)));
}

TEST(Direction, FuseRenamesTheSecondLoopOntoTheFirst) {
  // Loop 0 writes block i, loop 1 reads block j + 1: fused (j becomes i), the read
  // of iteration n meets the write of iteration n + 1 (d = n_write - n_read = +1).
  KernelFile f = kernelOf("  b = nl.ndarray((5, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.affine_range(4):\n"
                          "    b[i, 0:128, 0:512] = nl.load(x[0:128, 0:512])\n"
                          "  for j in nl.affine_range(4):\n"
                          "    c = nl.exp(b[j + 1, 0:128, 0:512])\n"
                          "  return x\n",
                          "x=f32[128,512]");
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

TEST(Direction, TheVerifierAsksTheSameQuestion) {
  // Every iteration of the affine loop writes the same block: the verifier's
  // affine-output-dep finding is the analysis' "later iteration" overlap.
  KernelFile f = kernelOf("  b = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.affine_range(4):\n"
                          "    b[0, 0:128, 0:512] = nl.load(x[0:128, 0:512])\n"
                          "  return b\n",
                          "x=f32[128,512]");
  const Kernel &k = f.kernels[0];
  const Access &w = k.stmts[1].writes[0];
  EXPECT_TRUE(mayOverlapDir(k, w, w, laterIterationDirs(k, 0)));
  bool reported = false;
  for (const Diagnostic &d : verify(k))
    if (d.rule == "affine-output-dep") reported = true;
  EXPECT_TRUE(reported);
}

TEST(Direction, CarriedNameIsReadBeforeItIsRebound) {
  KernelFile f = kernelOf("  acc = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                          "  for i in nl.sequential_range(4):\n"
                          "    t = nl.load(x[0:128, 0:512])\n"
                          "    acc = nl.add(acc, t)\n"
                          "  return x\n",
                          "x=f32[128,512]");
  const Kernel &k = f.kernels[0];
  auto carried = carriedName(k, 0);
  ASSERT_TRUE(carried);
  EXPECT_EQ(carried->first, 2);
  EXPECT_EQ(carried->second, "acc");
}

} // namespace
