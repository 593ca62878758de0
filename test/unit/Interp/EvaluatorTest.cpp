// The interpreter on small kernels with hand-computed expected values.
#include "Interp/Evaluator/Values.h"
#include "Interp/Interpreter.h"

#include <gtest/gtest.h>

using namespace accelopt;
using namespace accelopt::interp;

namespace {

struct Ran {
  llvm::Expected<RunResult> result = llvm::createStringError(llvm::inconvertibleErrorCode(), "not run");
  std::string error;
};

/// Runs `body` as the kernel `k(x)` on x = arange(rows*cols) reshaped.
Ran run(const std::string &body, int64_t rows, int64_t cols, RunOptions opts = {}) {
  static nki::KernelFile file; // outputs are copied, but keep the source alive across calls
  std::string text = "import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n"
                     "import neuronxcc.nki.isa as nisa\n" +
                     body;
  auto src = syntax::SourceBuffer::fromText("k.py", text);
  auto f = nki::buildKernelFile(std::move(*src), {});
  Ran r;
  if (!f) {
    r.error = llvm::toString(f.takeError());
    return r;
  }
  file = std::move(*f);
  std::vector<float> values(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) values[i] = float(i);
  KernelArg x;
  x.name = "x";
  x.array = std::move(*NDArray::fromValues({rows, cols}, nki::DType::Float32, values));
  std::vector<KernelArg> args;
  args.push_back(std::move(x));
  r.result = runKernel(file, file.kernels.front(), std::move(args), opts);
  if (!r.result) r.error = llvm::toString(r.result.takeError());
  return r;
}

TEST(Interpreter, TracePythonHelpersAndAdvancedIndexing) {
  Ran r = run(R"(
def double(t):
  return nl.multiply(t, 2.0)

@nki.jit
def k(x):
  P, F = x.shape
  out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
  i_p, i_f = nl.arange(P)[:, None], nl.arange(F)[None, :]
  halves = [F // 2 * j for j in range(2)] if False else (0, F // 2)
  for h in nl.affine_range(2):
    t = nl.load(x[i_p, h * (F // 2) + nl.arange(F // 2)[None, :]])
    nl.store(out[i_p, h * (F // 2) + nl.arange(F // 2)[None, :]], value=double(t))
  assert P == 4, f"P={P}"
  return out
)",
              4, 8);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const NDArray &out = r.result->outputs.at(0);
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{4, 8}));
  for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(out.data()[i], 2.0f * i);
}

TEST(Interpreter, PsumAccumulationAndMatmul) {
  // out = x.T @ x for x [4, 3] (K=4 partitions, M=N=3).
  Ran r = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((3, 3), dtype=x.dtype, buffer=nl.shared_hbm)
  acc = nl.zeros((3, 3), nl.float32, buffer=nl.psum)
  for kk in nl.affine_range(2):
    t = nl.load(x[kk * 2:(kk + 1) * 2, 0:3])
    acc += nisa.nc_matmul(t, t)
  nl.store(out[0:3, 0:3], value=nl.copy(acc))
  return out
)",
              4, 3);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const float *o = r.result->outputs[0].data();
  // x = [[0,1,2],[3,4,5],[6,7,8],[9,10,11]]; (x.T @ x)[0][0] = 0+9+36+81 = 126, [1][2] = 2+20+56+110 = 188
  EXPECT_EQ(o[0], 126.0f);
  EXPECT_EQ(o[1 * 3 + 2], 188.0f);
  EXPECT_EQ(o[2 * 3 + 1], 188.0f);
  EXPECT_EQ(r.result->stats.matmulFlops, 2.0 * 2 * 3 * 3 * 2);
}

TEST(Interpreter, MaskLimitsWritesAndLoopReduceFirstWrite) {
  Ran r = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4, 1), dtype=x.dtype, buffer=nl.shared_hbm)
  m = nl.ndarray((nl.par_dim(4), 1), dtype=nl.float32, buffer=nl.sbuf)
  for j in nl.affine_range(2):
    t = nl.load(x[nl.arange(4)[:, None], j * 4 + nl.arange(4)[None, :]])
    r = nisa.tensor_reduce(nl.max, data=t, axis=[1])
    m[nl.arange(4)[:, None], 0] = nl.loop_reduce(r, op=np.max, loop_indices=[j])
  z = nl.zeros((4, 1), nl.float32)
  z[nl.arange(4)[:, None], 0] = nl.copy(m, mask=nl.arange(4)[:, None] < 3)
  nl.store(out[0:4, 0:1], value=z)
  return out
)",
              4, 8);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const float *o = r.result->outputs[0].data();
  EXPECT_EQ(o[0], 7.0f); // row max of 0..7
  EXPECT_EQ(o[2], 23.0f);
  EXPECT_EQ(o[3], 0.0f); // masked off: keeps the zero
}

TEST(Interpreter, ReportsRacesUninitializedReadsAndTimeouts) {
  Ran race = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
  for j in nl.affine_range(2):
    nl.store(out[0:4, 0:4], value=nl.load(x[0:4, j * 4:j * 4 + 4]))
  return out
)",
                 4, 8);
  EXPECT_NE(race.error.find("race: two iterations of an affine_range loop"), std::string::npos) << race.error;
  Ran seq = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
  for j in nl.sequential_range(2):
    nl.store(out[0:4, 0:4], value=nl.load(x[0:4, j * 4:j * 4 + 4]))
  return out
)",
                4, 8);
  EXPECT_TRUE(seq.error.empty()) << seq.error;
  // Stamps are released when an outermost affine loop ends: a second loop nest writing the same
  // elements is no race, and a race inside it is still found.
  Ran twoNests = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4, 8), dtype=x.dtype, buffer=nl.shared_hbm)
  for j in nl.affine_range(2):
    nl.store(out[0:4, j * 4:j * 4 + 4], value=nl.load(x[0:4, j * 4:j * 4 + 4]))
  for j in nl.affine_range(2):
    nl.store(out[0:4, j * 4:j * 4 + 4], value=nl.load(x[0:4, 4 - j * 4:8 - j * 4]))
  return out
)",
                     4, 8);
  ASSERT_TRUE(twoNests.error.empty()) << twoNests.error;
  EXPECT_EQ(twoNests.result->outputs[0].data()[0], 4.0f);
  Ran raceInSecondNest = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
  for j in nl.affine_range(1):
    nl.store(out[0:4, 0:4], value=nl.load(x[0:4, 0:4]))
  for j in nl.affine_range(2):
    nl.store(out[0:4, 0:4], value=nl.load(x[0:4, j * 4:j * 4 + 4]))
  return out
)",
                             4, 8);
  EXPECT_NE(raceInSecondNest.error.find("race: two iterations"), std::string::npos) << raceInSecondNest.error;
  Ran uninit = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
  t = nl.ndarray((4, 4), dtype=nl.float32)
  nl.store(out[0:4, 0:4], value=nl.exp(t))
  return out
)",
                   4, 8);
  EXPECT_NE(uninit.error.find("k.py:10:40: error: reads never-written memory of 't'"), std::string::npos)
      << uninit.error;
  RunOptions quick;
  quick.timeoutSeconds = 0.05;
  Ran slow = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4, 4), dtype=x.dtype, buffer=nl.shared_hbm)
  n = 0
  for i in range(100000000):
    n = n + 1
  return out
)",
                 4, 8, quick);
  EXPECT_NE(slow.error.find("timed out after"), std::string::npos) << slow.error;
}

TEST(Interpreter, MemoryCapIsAClearError) {
  uint64_t saved = memoryCap();
  setMemoryCap(1 << 20);
  Ran big = run(R"(
@nki.jit
def k(x):
  out = nl.ndarray((4096, 4096), dtype=x.dtype, buffer=nl.shared_hbm)
  return out
)",
                4, 8);
  setMemoryCap(saved);
  EXPECT_NE(big.error.find("kernel would allocate"), std::string::npos) << big.error;
}

TEST(Interpreter, RandomInputsFollowInitAndSeed) {
  auto specs = *nki::parseInputSpecs("a=f32[64,64]~abs(normal(0,1)),b=f32[4,4]~identity,c=f32[8]~const(3),eps=0.5");
  auto x = makeRandomInputs(specs, 7), y = makeRandomInputs(specs, 7), z = makeRandomInputs(specs, 8);
  ASSERT_TRUE(x && y && z);
  for (float v : (*x)[0].array->values()) EXPECT_GE(v, 0.0f);
  EXPECT_EQ((*x)[0].array->data()[5], (*y)[0].array->data()[5]);
  EXPECT_NE((*x)[0].array->data()[5], (*z)[0].array->data()[5]);
  EXPECT_EQ((*x)[1].array->data()[5], 1.0f);
  EXPECT_EQ((*x)[1].array->data()[1], 0.0f);
  EXPECT_EQ((*x)[2].array->data()[7], 3.0f);
  EXPECT_EQ((*x)[3].scalar, 0.5);
  auto bad = makeRandomInputs(*nki::parseInputSpecs("a=f32[2]~poisson(1)"), 0);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("unknown distribution"), std::string::npos);
}

} // namespace

TEST(Interpreter, RaceStampsAreExactPerElement) {
  // One stamp per block while blocks are written whole, exact stamps where they are written in parts.
  evaluator::RaceStamps st;
  st.reset(200);
  st.setRange(0, 128, 3);
  EXPECT_EQ(st.get(5), 3u);
  EXPECT_EQ(st.get(127), 3u);
  EXPECT_EQ(st.get(128), 0u);
  st.set(70, 5);
  EXPECT_EQ(st.get(70), 5u);
  EXPECT_EQ(st.get(69), 3u);
  EXPECT_EQ(st.get(71), 3u);
  st.setRange(60, 80, 7); // a partial block, a whole one (collapses the exact stamps), a partial one
  EXPECT_EQ(st.get(59), 3u);
  EXPECT_EQ(st.get(60), 7u);
  EXPECT_EQ(st.get(70), 7u);
  EXPECT_EQ(st.get(139), 7u);
  EXPECT_EQ(st.get(140), 0u);
  for (int64_t i = 1; i < 200; i += 3) st.set(i, 9); // strided
  EXPECT_EQ(st.get(199), 9u);
  EXPECT_EQ(st.get(198), 0u);
  EXPECT_EQ(st.get(62), 7u);
  st.release();
  EXPECT_TRUE(st.empty());
}

TEST(Interpreter, RaceStampsSayWhetherARangeHoldsOnlyZeroOrOneSerial) {
  // The scatter's fast check: whole blocks compare one stamp, exact blocks each element of the range.
  evaluator::RaceStamps st;
  st.reset(300);
  EXPECT_TRUE(st.onlyZeroOr(0, 300, 4));
  st.setRange(64, 128, 4);
  EXPECT_TRUE(st.onlyZeroOr(0, 300, 4));
  EXPECT_FALSE(st.onlyZeroOr(0, 300, 5));
  EXPECT_TRUE(st.onlyZeroOr(0, 64, 5));
  st.set(200, 6); // an exact block: only its element 200 differs
  EXPECT_FALSE(st.onlyZeroOr(150, 60, 4));
  EXPECT_TRUE(st.onlyZeroOr(201, 50, 4));
  EXPECT_TRUE(st.onlyZeroOr(192, 8, 4));
  EXPECT_FALSE(st.onlyZeroOr(199, 2, 4));
  EXPECT_TRUE(st.onlyZeroOr(200, 1, 6));
  EXPECT_TRUE(st.onlyZeroOr(10, 0, 9)); // empty range
}
