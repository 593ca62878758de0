#include "Interp/TileOps.h"
#include "Interp/Random.h"
#include "Interp/Uninit.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

using namespace accelopt::interp;
using accelopt::nki::DType;

namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

#define EXPECT_OK(expr)                                                                                                \
  do {                                                                                                                 \
    if (llvm::Error err_ = (expr)) ADD_FAILURE() << llvm::toString(std::move(err_));                                   \
  } while (0)

std::string errorOf(llvm::Error err) { return err ? llvm::toString(std::move(err)) : std::string("<success>"); }

/// A (rows x cols) tile view over `values`.
NDArray makeArray(int64_t rows, int64_t cols, std::vector<float> values) {
  return llvm::cantFail(NDArray::fromValues({rows, cols}, DType::Float32, values));
}

NDArray randomArray(int64_t rows, int64_t cols, uint64_t seed) {
  NDArray array = llvm::cantFail(NDArray::allocate({rows, cols}));
  Random(seed).fillNormal(array.values(), 0.0f, 1.0f);
  return array;
}

NDArray zeros(int64_t rows, int64_t cols) { return llvm::cantFail(NDArray::full({rows, cols}, DType::Float32, 0.0f)); }

std::vector<float> rowOf(ConstTile tile, int64_t r) { return {tile.row(r), tile.row(r) + tile.cols}; }

} // namespace

// --- matmul ---------------------------------------------------------------------------

TEST(Matmul, MatchesNaiveReferenceOnStridedTiles) {
  constexpr int64_t K = 96, M = 40, N = 70;
  // Each operand is a window of a wider array, so every leading dimension differs.
  NDArray stationaryBase = randomArray(K, M + 9, 1);
  NDArray movingBase = randomArray(K + 3, N + 17, 2);
  NDArray outBase = zeros(M, N + 5);
  ConstTile stationary{stationaryBase.data() + 4, K, M, M + 9};
  ConstTile moving{movingBase.data() + 3 * (N + 17) + 11, K, N, N + 17};
  Tile out{outBase.data() + 2, M, N, N + 5};
  EXPECT_OK(matmul(out, stationary, moving, /*accumulate=*/false));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double expected = 0.0, magnitude = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        double term = double(stationary.at(k, m)) * double(moving.at(k, n));
        expected += term;
        magnitude += std::fabs(term);
      }
      ASSERT_NEAR(out.at(m, n), expected, 1e-6 * magnitude + 1e-30) << m << "," << n;
    }
  // The columns outside the output window are untouched.
  EXPECT_EQ(outBase.at({0, 0}), 0.0f);
  EXPECT_EQ(outBase.at({0, 1}), 0.0f);
}

TEST(Matmul, AccumulateAddsToTheOutput) {
  NDArray stationary = makeArray(2, 2, {1, 2, 3, 4});    // [K=2, M=2]
  NDArray moving = makeArray(2, 3, {1, 0, 2, 0, 1, -1}); // [K=2, N=3]
  NDArray out = makeArray(2, 3, {10, 20, 30, 40, 50, 60});
  // stationary^T . moving = [[1, 3, -1], [2, 4, 0]]
  EXPECT_OK(matmul(out.asTile(), stationary.asTile(), moving.asTile(), /*accumulate=*/true));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{11, 23, 29}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{42, 54, 60}));
  // Without accumulate the old contents (even NaN or the uninit marker) are ignored.
  out.fill(uninitValue());
  EXPECT_OK(matmul(out.asTile(), stationary.asTile(), moving.asTile(), /*accumulate=*/false));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{1, 3, -1}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{2, 4, 0}));
}

TEST(Matmul, AccumulationGroupOverKTilesEqualsOneBigMatmul) {
  constexpr int64_t kTiles = 5, K = 128, M = 64, N = 96;
  NDArray stationary = randomArray(kTiles * K, M, 3);
  NDArray moving = randomArray(kTiles * K, N, 4);
  NDArray grouped = zeros(M, N), whole = zeros(M, N);
  for (int64_t t = 0; t < kTiles; ++t)
    EXPECT_OK(matmul(grouped.asTile(), ConstTile{stationary.data() + t * K * M, K, M, M},
                     ConstTile{moving.data() + t * K * N, K, N, N}, /*accumulate=*/t > 0));
  EXPECT_OK(matmul(whole.asTile(), stationary.asTile(), moving.asTile(), false));
  for (int64_t i = 0; i < grouped.numel(); ++i) ASSERT_NEAR(grouped.data()[i], whole.data()[i], 1e-4f);
}

TEST(Matmul, ReadingTheUninitMarkerGivesAnOrdinaryNaN) {
  NDArray stationary = makeArray(2, 1, {uninitValue(), 1});
  NDArray moving = makeArray(2, 2, {1, 2, 3, 4});
  NDArray out = zeros(1, 2);
  EXPECT_OK(matmul(out.asTile(), stationary.asTile(), moving.asTile(), false));
  for (float v : out.values()) {
    EXPECT_TRUE(std::isnan(v));
    EXPECT_FALSE(isUninit(v));
  }
  NDArray scanned = zeros(2, 2);
  EXPECT_OK(
      tensorTensorScan(scanned.asTile(), moving.asTile(), moving.asTile(), uninitValue(), AluOp::Maximum, AluOp::Add));
  EXPECT_EQ(firstUninit(scanned.data(), scanned.numel()), std::nullopt);
}

TEST(Matmul, RejectsMismatchedShapes) {
  NDArray a = zeros(4, 3), b = zeros(5, 2), out = zeros(3, 2);
  EXPECT_EQ(errorOf(matmul(out.asTile(), a.asTile(), b.asTile(), false)),
            "nc_matmul: stationary [4, 3] and moving [5, 2] differ in the contraction "
            "(partition) size");
  NDArray c = zeros(4, 2), wrongOut = zeros(2, 2);
  EXPECT_EQ(errorOf(matmul(wrongOut.asTile(), a.asTile(), c.asTile(), false)),
            "nc_matmul: result tile [2, 2] should be [3, 2]");
}

// --- Elementwise ALU ----------------------------------------------------------------------

TEST(AluOps, EveryOperatorOnSampleValues) {
  struct Case {
    AluOp op;
    float a, b, expected;
  };
  const Case cases[] = {
      {AluOp::Add, 1.5f, 2.25f, 3.75f},
      {AluOp::Subtract, 1.5f, 2.25f, -0.75f},
      {AluOp::Multiply, 1.5f, -2.0f, -3.0f},
      {AluOp::Divide, 1.0f, 4.0f, 0.25f},
      {AluOp::Divide, 1.0f, 0.0f, kInfinity},
      {AluOp::Maximum, -1.0f, 2.0f, 2.0f},
      {AluOp::Maximum, 3.0f, 2.0f, 3.0f},
      {AluOp::Minimum, -1.0f, 2.0f, -1.0f},
      {AluOp::Power, 2.0f, 10.0f, 1024.0f},
      {AluOp::Power, 9.0f, 0.5f, 3.0f},
      {AluOp::Equal, 2.0f, 2.0f, 1.0f},
      {AluOp::Equal, 2.0f, 3.0f, 0.0f},
      {AluOp::NotEqual, 2.0f, 3.0f, 1.0f},
      {AluOp::Greater, 3.0f, 2.0f, 1.0f},
      {AluOp::Greater, 2.0f, 2.0f, 0.0f},
      {AluOp::GreaterEqual, 2.0f, 2.0f, 1.0f},
      {AluOp::Less, 2.0f, 2.0f, 0.0f},
      {AluOp::Less, 1.0f, 2.0f, 1.0f},
      {AluOp::LessEqual, 2.0f, 2.0f, 1.0f},
      {AluOp::LogicalAnd, 2.0f, 0.0f, 0.0f},
      {AluOp::LogicalAnd, 2.0f, -1.0f, 1.0f},
      {AluOp::LogicalOr, 0.0f, 0.0f, 0.0f},
      {AluOp::LogicalOr, 0.0f, 0.5f, 1.0f},
      {AluOp::LogicalXor, 3.0f, 0.5f, 0.0f},
      {AluOp::LogicalXor, 3.0f, 0.0f, 1.0f},
      {AluOp::BitwiseAnd, 12.0f, 10.0f, 8.0f},
      {AluOp::BitwiseOr, 12.0f, 10.0f, 14.0f},
      {AluOp::BitwiseXor, 12.0f, 10.0f, 6.0f},
      {AluOp::BitwiseAnd, 12.9f, 10.2f, 8.0f}, // operands truncated to integers
      {AluOp::BitwiseAnd, -1.0f, 255.0f, 255.0f},
      {AluOp::LeftShift, 3.0f, 4.0f, 48.0f},
      {AluOp::LeftShift, 1.0f, 31.0f, -2147483648.0f},
      {AluOp::LeftShift, 1.0f, 32.0f, 0.0f},
      {AluOp::RightShift, 48.0f, 4.0f, 3.0f},
      {AluOp::RightShift, -16.0f, 28.0f, 15.0f}, // logical shift of 0xFFFFFFF0
      {AluOp::RightShift, -16.0f, 0.0f, -16.0f},
  };
  NDArray out = zeros(1, 1);
  for (const Case &c : cases) {
    EXPECT_EQ(applyAlu(c.op, c.a, c.b), c.expected) << name(c.op) << "(" << c.a << ", " << c.b << ")";
    NDArray a = makeArray(1, 1, {c.a});
    EXPECT_OK(applyBinary(c.op, out.asTile(), a.asTile(), c.b));
    EXPECT_EQ(out.data()[0], c.expected) << name(c.op) << " on tiles";
  }
}

TEST(AluOps, NaNHandling) {
  EXPECT_TRUE(std::isnan(applyAlu(AluOp::Maximum, kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(applyAlu(AluOp::Maximum, 1.0f, kNaN)));
  EXPECT_TRUE(std::isnan(applyAlu(AluOp::Minimum, kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(applyAlu(AluOp::Minimum, 1.0f, kNaN)));
  EXPECT_EQ(applyAlu(AluOp::Equal, kNaN, kNaN), 0.0f);
  EXPECT_EQ(applyAlu(AluOp::NotEqual, kNaN, kNaN), 1.0f);
  EXPECT_EQ(applyAlu(AluOp::LogicalAnd, kNaN, 1.0f), 1.0f);
  EXPECT_EQ(applyAlu(AluOp::BitwiseOr, kNaN, 5.0f), 5.0f);
}

TEST(AluOps, NeverProduceTheUninitMarker) {
  NDArray a = makeArray(1, 20, std::vector<float>(20, uninitValue()));
  NDArray out = zeros(1, 20);
  for (int op = 0; op < kAluOpCount; ++op) {
    EXPECT_OK(applyBinary(AluOp(op), out.asTile(), a.asTile(), 1.0f));
    EXPECT_EQ(firstUninit(out.data(), out.numel()), std::nullopt) << name(AluOp(op));
    EXPECT_OK(applyBinary(AluOp(op), out.asTile(), 1.0f, a.asTile()));
    EXPECT_EQ(firstUninit(out.data(), out.numel()), std::nullopt) << name(AluOp(op));
  }
}

TEST(ApplyBinary, BroadcastsColumnsRowsAndScalars) {
  NDArray full = makeArray(2, 3, {1, 2, 3, 4, 5, 6});
  NDArray column = makeArray(2, 1, {10, 20});
  NDArray row = makeArray(1, 3, {100, 200, 300});
  NDArray out = zeros(2, 3);

  EXPECT_OK(applyBinary(AluOp::Add, out.asTile(), full.asTile(), column.asTile()));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{11, 12, 13}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{24, 25, 26}));

  EXPECT_OK(applyBinary(AluOp::Subtract, out.asTile(), row.asTile(), full.asTile()));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{99, 198, 297}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{96, 195, 294}));

  EXPECT_OK(applyBinary(AluOp::Multiply, out.asTile(), column.asTile(), row.asTile()));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{1000, 2000, 3000}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{2000, 4000, 6000}));

  EXPECT_OK(applyBinary(AluOp::Divide, out.asTile(), 12.0f, full.asTile()));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{3, 2.4f, 2}));

  EXPECT_OK(applyBinary(AluOp::Maximum, out.asTile(), column.asTile(), 15.0f));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{15, 15, 15}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{20, 20, 20}));
}

TEST(ApplyBinary, LongRowsAndInPlaceUpdates) {
  // 37 columns: two full 16-element chunks plus a tail.
  NDArray a = randomArray(3, 37, 5), b = randomArray(3, 37, 6);
  NDArray expected = zeros(3, 37);
  for (int64_t i = 0; i < a.numel(); ++i) expected.data()[i] = a.data()[i] * b.data()[i];
  EXPECT_OK(applyBinary(AluOp::Multiply, a.asTile(), a.asTile(), b.asTile()));
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data()[i], expected.data()[i]);
}

TEST(ApplyBinary, RejectsOperandsThatDoNotBroadcast) {
  NDArray a = zeros(2, 3), b = zeros(4, 3), out = zeros(4, 3);
  EXPECT_EQ(errorOf(applyBinary(AluOp::Add, out.asTile(), a.asTile(), b.asTile())),
            "nl.add: first operand tile [2, 3] does not broadcast to the output tile [4, 3]");
  NDArray c = zeros(4, 2);
  EXPECT_EQ(errorOf(applyBinary(AluOp::Multiply, out.asTile(), b.asTile(), c.asTile())),
            "nl.multiply: second operand tile [4, 2] does not broadcast to the output tile [4, 3]");
}

// --- tensor_scalar ----------------------------------------------------------------------------

TEST(TensorScalar, ReverseFlagsSwapOperands) {
  NDArray x = makeArray(2, 2, {1, 2, 4, 8});
  NDArray out = zeros(2, 2);
  EXPECT_OK(tensorScalar(out.asTile(), x.asTile(), {AluOp::Subtract, 10.0f}));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{-9, -8}));
  EXPECT_OK(tensorScalar(out.asTile(), x.asTile(), {AluOp::Subtract, 10.0f, /*reverse=*/true}));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{9, 8}));
  // (x + 1), then 16 / that.
  EXPECT_OK(tensorScalar(out.asTile(), x.asTile(), {AluOp::Add, 1.0f, true},
                         ScalarStep{AluOp::Divide, 16.0f, /*reverse=*/true}));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{8, 16.0f / 3}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{3.2f, 16.0f / 9}));
  // Non-reversed second step: (x * 2) / 4.
  EXPECT_OK(tensorScalar(out.asTile(), x.asTile(), {AluOp::Multiply, 2.0f}, ScalarStep{AluOp::Divide, 4.0f}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{2, 4}));
}

TEST(TensorScalar, PerPartitionOperandsAndTheNegatedRowMaxIdiom) {
  NDArray x = makeArray(3, 2, {1, -2, 5, 6, -kInfinity, -7});
  NDArray perRow = makeArray(3, 1, {2, 3, 4});
  NDArray out = zeros(3, 2);
  EXPECT_OK(tensorScalar(out.asTile(), x.asTile(), {AluOp::Multiply, perRow.asTile()}));
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{15, 18}));
  // -max(x, -FLT_MAX): NKIBench's exp bias for softmax.
  EXPECT_OK(
      tensorScalar(out.asTile(), x.asTile(), {AluOp::Maximum, -3.4028235e38f}, ScalarStep{AluOp::Multiply, -1.0f}));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{-1, 2}));
  EXPECT_EQ(rowOf(out.asTile(), 2), (std::vector<float>{3.4028235e38f, 7}));
}

TEST(TensorScalar, ChecksShapes) {
  NDArray x = zeros(3, 2), out = zeros(3, 2), wrong = zeros(2, 1), wide = zeros(3, 2);
  EXPECT_EQ(errorOf(tensorScalar(out.asTile(), x.asTile(), {AluOp::Add, wrong.asTile()})),
            "tensor_scalar: operand0 tile [2, 1] should be a scalar or [3, 1]");
  EXPECT_EQ(errorOf(tensorScalar(out.asTile(), x.asTile(), {AluOp::Add, 1.0f}, ScalarStep{AluOp::Add, wide.asTile()})),
            "tensor_scalar: operand1 tile [3, 2] should be a scalar or [3, 1]");
  NDArray small = zeros(3, 1);
  EXPECT_EQ(errorOf(tensorScalar(out.asTile(), small.asTile(), {AluOp::Add, 1.0f})),
            "tensor_scalar: data tile [3, 1] differs from the output tile [3, 2]");
}

// --- activation -------------------------------------------------------------------------------

TEST(Activation, EveryFunctionAgainstReferenceValues) {
  struct Case {
    ActFunc func;
    double (*reference)(double);
  };
  // Captureless lambdas only, so they convert to function pointers.
  static const Case cases[] = {
      {ActFunc::Copy, [](double x) { return x; }},
      {ActFunc::Square, [](double x) { return x * x; }},
      {ActFunc::Sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {ActFunc::Relu, [](double x) { return x > 0 ? x : 0.0; }},
      {ActFunc::Gelu, [](double x) { return x * 0.5 * (1.0 + std::erf(x / std::numbers::sqrt2)); }},
      {ActFunc::GeluDx,
       [](double x) {
         return 0.5 * (1.0 + std::erf(x / std::numbers::sqrt2)) +
                x * std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi);
       }},
      {ActFunc::GeluApproxTanh,
       [](double x) {
         return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
       }},
      {ActFunc::GeluApproxSigmoid, [](double x) { return x / (1.0 + std::exp(-1.702 * x)); }},
      {ActFunc::Silu, [](double x) { return x / (1.0 + std::exp(-x)); }},
      {ActFunc::SiluDx,
       [](double x) {
         double s = 1.0 / (1.0 + std::exp(-x));
         return s * (1 + x * (1 - s));
       }},
      {ActFunc::Tanh, [](double x) { return std::tanh(x); }},
      {ActFunc::Softplus, [](double x) { return std::log1p(std::exp(x)); }},
      {ActFunc::Mish, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }},
      {ActFunc::Erf, [](double x) { return std::erf(x); }},
      {ActFunc::ErfDx, [](double x) { return 2 / std::sqrt(std::numbers::pi) * std::exp(-x * x); }},
      {ActFunc::Exp, [](double x) { return std::exp(x); }},
      {ActFunc::Log, [](double x) { return std::log(x); }},
      {ActFunc::Sin, [](double x) { return std::sin(x); }},
      {ActFunc::Arctan, [](double x) { return std::atan(x); }},
      {ActFunc::Sqrt, [](double x) { return std::sqrt(x); }},
      {ActFunc::Rsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {ActFunc::Reciprocal, [](double x) { return 1 / x; }},
      {ActFunc::Sign, [](double x) { return double((x > 0) - (x < 0)); }},
      {ActFunc::Abs, [](double x) { return std::fabs(x); }},
      {ActFunc::Cos, [](double x) { return std::cos(x); }},
      {ActFunc::Tan, [](double x) { return std::tan(x); }},
      {ActFunc::Floor, [](double x) { return std::floor(x); }},
      {ActFunc::Ceil, [](double x) { return std::ceil(x); }},
      {ActFunc::Trunc, [](double x) { return std::trunc(x); }},
  };
  static_assert(std::size(cases) == kActFuncCount, "every activation function is tested");
  // Inside every function's valid range (log/sqrt/rsqrt need positive inputs).
  const std::vector<float> inputs{0.125f, 0.5f, 1.0f, 1.75f, 2.5f, 3.0f, 0.01f, 1e-3f};
  const std::vector<float> signedInputs{-3.0f, -1.0f, -0.25f, 0.0f, 0.25f, 1.0f, 3.0f, 10.0f};
  for (const Case &c : cases) {
    bool positiveOnly =
        c.func == ActFunc::Log || c.func == ActFunc::Sqrt || c.func == ActFunc::Rsqrt || c.func == ActFunc::Reciprocal;
    const std::vector<float> &xs = positiveOnly ? inputs : signedInputs;
    NDArray data = makeArray(1, int64_t(xs.size()), xs);
    NDArray out = zeros(1, int64_t(xs.size()));
    EXPECT_OK(activation(out.asTile(), c.func, data.asTile()));
    for (size_t i = 0; i < xs.size(); ++i) {
      double expected = c.reference(xs[i]);
      // fp32 libm functions and short compositions of them: within a few ulp.
      EXPECT_NEAR(out.data()[i], expected, 1e-6 * std::fabs(expected) + 1e-7) << name(c.func) << "(" << xs[i] << ")";
      EXPECT_EQ(out.data()[i], applyActivation(c.func, xs[i])) << name(c.func);
    }
  }
  // A few textbook values, exact in fp32.
  EXPECT_EQ(applyActivation(ActFunc::Sigmoid, 0.0f), 0.5f);
  EXPECT_EQ(applyActivation(ActFunc::Gelu, 0.0f), 0.0f);
  EXPECT_EQ(applyActivation(ActFunc::Exp, 0.0f), 1.0f);
  EXPECT_EQ(applyActivation(ActFunc::Sqrt, 16.0f), 4.0f);
  EXPECT_EQ(applyActivation(ActFunc::Rsqrt, 0.25f), 2.0f);
  EXPECT_EQ(applyActivation(ActFunc::Sign, -0.0f), 0.0f);
  EXPECT_EQ(applyActivation(ActFunc::Relu, -0.0f), 0.0f);
  EXPECT_FLOAT_EQ(applyActivation(ActFunc::Gelu, 1.0f), 0.8413447460685429f);
  EXPECT_FLOAT_EQ(applyActivation(ActFunc::Softplus, 0.0f), float(std::numbers::ln2));
  // Large arguments stay finite where the function is.
  EXPECT_EQ(applyActivation(ActFunc::Softplus, 100.0f), 100.0f);
  EXPECT_EQ(applyActivation(ActFunc::Sigmoid, -200.0f), 0.0f);
  EXPECT_EQ(applyActivation(ActFunc::Mish, 100.0f), 100.0f);
}

TEST(Activation, ScalesThenAddsBiasThenAppliesTheFunction) {
  NDArray x = makeArray(2, 3, {0, 1, 2, 3, 4, 5});
  NDArray scale = makeArray(2, 1, {2, -1});
  NDArray bias = makeArray(2, 1, {1, 0.5f});
  NDArray out = zeros(2, 3);
  EXPECT_OK(activation(out.asTile(), ActFunc::Square, x.asTile(), scale.asTile(), bias.asTile()));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{1, 9, 25}));              // (2x + 1)^2
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{6.25f, 12.25f, 20.25f})); // (-x + .5)^2
  // The silu idiom: exp(-x + 0) with a constant scale and a zero bias column.
  NDArray zeroBias = zeros(2, 1);
  EXPECT_OK(activation(out.asTile(), ActFunc::Exp, x.asTile(), -1.0f, zeroBias.asTile()));
  EXPECT_EQ(out.at({1, 0}), std::exp(-3.0f));
}

TEST(Activation, NoBiasKeepsNegativeZeroAndQuietsTheMarker) {
  NDArray x = makeArray(1, 2, {-0.0f, uninitValue()});
  NDArray out = zeros(1, 2);
  EXPECT_OK(activation(out.asTile(), ActFunc::Copy, x.asTile()));
  EXPECT_EQ(std::bit_cast<uint32_t>(out.data()[0]), 0x80000000u);
  EXPECT_TRUE(std::isnan(out.data()[1]));
  EXPECT_FALSE(isUninit(out.data()[1]));
}

TEST(Activation, FusedAddReduceSumsEachOutputRow) {
  NDArray x = makeArray(2, 20, std::vector<float>(40, 0.5f));
  x.at({1, 19}) = 4.0f;
  NDArray out = zeros(2, 20), sums = zeros(2, 1);
  EXPECT_OK(activation(out.asTile(), ActFunc::Square, x.asTile(), 2.0f, PerPartition::noBias(), sums.asTile()));
  EXPECT_EQ(sums.at({0, 0}), 20.0f);
  EXPECT_EQ(sums.at({1, 0}), 19.0f + 64.0f);
  NDArray wrongSums = zeros(3, 1);
  EXPECT_EQ(
      errorOf(activation(out.asTile(), ActFunc::Copy, x.asTile(), 1.0f, PerPartition::noBias(), wrongSums.asTile())),
      "activation: result tile [3, 1] should be [2, 1]");
}

// --- tensor_reduce ------------------------------------------------------------------------------

TEST(TensorReduce, ArithmeticReductionsAlongTheFreeAxis) {
  // 19 columns: exercises the 8-lane body and the tail.
  std::vector<float> values;
  for (int r = 0; r < 2; ++r)
    for (int c = 1; c <= 19; ++c) values.push_back(r == 0 ? float(c) : float(-c));
  NDArray x = makeArray(2, 19, values);
  NDArray out = zeros(2, 1);
  EXPECT_OK(tensorReduce(out.asTile(), AluOp::Add, x.asTile()));
  EXPECT_EQ(out.at({0, 0}), 190.0f);
  EXPECT_EQ(out.at({1, 0}), -190.0f);
  EXPECT_OK(tensorReduce(out.asTile(), AluOp::Maximum, x.asTile(), /*negate=*/true));
  EXPECT_EQ(out.at({0, 0}), -19.0f);
  EXPECT_EQ(out.at({1, 0}), 1.0f);
  EXPECT_OK(tensorReduce(out.asTile(), AluOp::Minimum, x.asTile()));
  EXPECT_EQ(out.at({0, 0}), 1.0f);
  EXPECT_EQ(out.at({1, 0}), -19.0f);
  NDArray small = makeArray(1, 4, {10, 1, 2, 3});
  NDArray one = zeros(1, 1);
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::Subtract, small.asTile()));
  EXPECT_EQ(one.data()[0], 4.0f); // 10 - 1 - 2 - 3
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::Multiply, small.asTile()));
  EXPECT_EQ(one.data()[0], 60.0f);
}

TEST(TensorReduce, LogicalAndBitwiseReductions) {
  NDArray x = makeArray(1, 3, {7, 5, 12});
  NDArray one = zeros(1, 1);
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::BitwiseAnd, x.asTile()));
  EXPECT_EQ(one.data()[0], 4.0f);
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::BitwiseOr, x.asTile()));
  EXPECT_EQ(one.data()[0], 15.0f);
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::BitwiseXor, x.asTile()));
  EXPECT_EQ(one.data()[0], 14.0f);
  NDArray flags = makeArray(1, 3, {1, 0, 2});
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::LogicalAnd, flags.asTile()));
  EXPECT_EQ(one.data()[0], 0.0f);
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::LogicalOr, flags.asTile()));
  EXPECT_EQ(one.data()[0], 1.0f);
  EXPECT_OK(tensorReduce(one.asTile(), AluOp::LogicalXor, flags.asTile()));
  EXPECT_EQ(one.data()[0], 0.0f);
}

TEST(TensorReduce, PropagatesNaNAndNeverYieldsTheMarker) {
  NDArray x = makeArray(1, 20, std::vector<float>(20, 1.0f));
  x.at({0, 13}) = kNaN;
  NDArray one = zeros(1, 1);
  for (AluOp op : {AluOp::Add, AluOp::Maximum, AluOp::Minimum, AluOp::Multiply}) {
    EXPECT_OK(tensorReduce(one.asTile(), op, x.asTile()));
    EXPECT_TRUE(std::isnan(one.data()[0])) << name(op);
  }
  NDArray marker = makeArray(1, 1, {uninitValue()});
  for (AluOp op : {AluOp::Add, AluOp::Maximum, AluOp::Minimum, AluOp::Multiply, AluOp::Subtract}) {
    EXPECT_OK(tensorReduce(one.asTile(), op, marker.asTile()));
    EXPECT_TRUE(std::isnan(one.data()[0])) << name(op);
    EXPECT_FALSE(isUninit(one.data()[0])) << name(op);
  }
}

TEST(TensorReduce, RejectsNonReductionOperatorsAndBadShapes) {
  NDArray x = zeros(2, 4), out = zeros(2, 1), wrong = zeros(2, 2);
  EXPECT_EQ(errorOf(tensorReduce(out.asTile(), AluOp::Divide, x.asTile())),
            "tensor_reduce: nl.divide is not a reduction operator");
  EXPECT_EQ(errorOf(tensorReduce(wrong.asTile(), AluOp::Add, x.asTile())),
            "tensor_reduce: result tile [2, 2] should be [2, 1]");
  NDArray empty = llvm::cantFail(NDArray::allocate({2, 0}));
  EXPECT_EQ(errorOf(tensorReduce(out.asTile(), AluOp::Add, empty.asTile())),
            "tensor_reduce: cannot reduce the empty free axis of tile [2, 0]");
}

// --- tensor_tensor_scan --------------------------------------------------------------------------

TEST(TensorTensorScan, LinearRecurrenceWithPerPartitionInitialValue) {
  constexpr int64_t P = 4, F = 33;
  NDArray a = randomArray(P, F, 7), b = randomArray(P, F, 8);
  NDArray initial = makeArray(P, 1, {0.5f, -1.0f, 2.0f, 0.0f});
  NDArray out = zeros(P, F);
  EXPECT_OK(tensorTensorScan(out.asTile(), a.asTile(), b.asTile(), initial.asTile(), AluOp::Multiply, AluOp::Add));
  for (int64_t p = 0; p < P; ++p) {
    float h = initial.at({p, 0});
    for (int64_t i = 0; i < F; ++i) {
      h = a.at({p, i}) * h + b.at({p, i}); // mamba: h_t = dA_t * h_{t-1} + dBu_t
      ASSERT_EQ(out.at({p, i}), h) << p << "," << i;
    }
  }
}

TEST(TensorTensorScan, ReverseFlagsSwapEachOperatorsOperands) {
  NDArray d0 = makeArray(1, 3, {10, 20, 30});
  NDArray d1 = makeArray(1, 3, {1, 2, 3});
  NDArray out = zeros(1, 3);
  // r_i = (d0_i - r_{i-1}) - d1_i, r_{-1} = 4
  EXPECT_OK(tensorTensorScan(out.asTile(), d0.asTile(), d1.asTile(), 4.0f, AluOp::Subtract, AluOp::Subtract));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{5, 13, 14}));
  // r_i = (r_{i-1} - d0_i) - d1_i
  EXPECT_OK(tensorTensorScan(out.asTile(), d0.asTile(), d1.asTile(), 4.0f, AluOp::Subtract, AluOp::Subtract,
                             /*reverse0=*/true));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{-7, -29, -62}));
  // r_i = d1_i / (d0_i + r_{i-1})
  EXPECT_OK(tensorTensorScan(out.asTile(), d0.asTile(), d1.asTile(), 0.0f, AluOp::Add, AluOp::Divide, false,
                             /*reverse1=*/true));
  float r0 = 1.0f / 10.0f, r1 = 2.0f / (20.0f + r0), r2 = 3.0f / (30.0f + r1);
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{r0, r1, r2}));
  // Running maximum from -inf.
  NDArray zero = zeros(1, 3);
  NDArray values = makeArray(1, 3, {2, -1, 5});
  EXPECT_OK(tensorTensorScan(out.asTile(), values.asTile(), zero.asTile(), -kInfinity, AluOp::Maximum, AluOp::Add));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{2, 2, 5}));
}

TEST(TensorTensorScan, RejectsNonArithmeticOperators) {
  NDArray x = zeros(2, 3), out = zeros(2, 3);
  EXPECT_EQ(errorOf(tensorTensorScan(out.asTile(), x.asTile(), x.asTile(), 0.0f, AluOp::Multiply, AluOp::BitwiseAnd)),
            "tensor_tensor_scan: operators must be add, subtract, multiply, divide, maximum or "
            "minimum, got nl.multiply and nl.bitwise_and");
  NDArray wrongInitial = zeros(3, 1);
  EXPECT_EQ(errorOf(tensorTensorScan(out.asTile(), x.asTile(), x.asTile(), wrongInitial.asTile(), AluOp::Multiply,
                                     AluOp::Add)),
            "tensor_tensor_scan: initial tile [3, 1] should be a scalar or [2, 1]");
}

// --- Data movement and fills --------------------------------------------------------------------

TEST(Transpose, SwapsPartitionAndFreeAxesExactly) {
  NDArray in = randomArray(128, 128, 9);
  in.at({5, 77}) = uninitValue();
  NDArray out = zeros(128, 128);
  EXPECT_OK(transpose(out.asTile(), in.asTile()));
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t c = 0; c < 128; ++c)
      ASSERT_EQ(std::bit_cast<uint32_t>(out.at({c, r})), std::bit_cast<uint32_t>(in.at({r, c})));
  EXPECT_TRUE(isUninit(out.at({77, 5})));

  NDArray base = makeArray(3, 6, {1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0, 0, 7, 8, 9, 0, 0, 0});
  NDArray small = zeros(3, 3);
  EXPECT_OK(transpose(small.asTile(), ConstTile{base.data(), 3, 3, 6}));
  EXPECT_EQ(rowOf(small.asTile(), 0), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(rowOf(small.asTile(), 2), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ(errorOf(transpose(small.asTile(), ConstTile{base.data(), 2, 3, 6})),
            "nc_transpose: result tile [3, 3] should be [3, 2]");
}

TEST(CopyAndFills, CopyReciprocalMemsetIota) {
  NDArray in = makeArray(2, 2, {1, 2, 4, uninitValue()});
  NDArray out = zeros(2, 2);
  EXPECT_OK(copy(out.asTile(), in.asTile()));
  EXPECT_TRUE(isUninit(out.at({1, 1})));
  EXPECT_OK(reciprocal(out.asTile(), in.asTile()));
  EXPECT_EQ(rowOf(out.asTile(), 0), (std::vector<float>{1, 0.5f}));
  EXPECT_EQ(out.at({1, 0}), 0.25f);
  EXPECT_FALSE(isUninit(out.at({1, 1})));

  memset(out.asTile(), 3.5f);
  EXPECT_EQ(rowOf(out.asTile(), 1), (std::vector<float>{3.5f, 3.5f}));

  NDArray grid = zeros(3, 4);
  iota(grid.asTile(), 5, 100, 2);
  EXPECT_EQ(rowOf(grid.asTile(), 0), (std::vector<float>{5, 7, 9, 11}));
  EXPECT_EQ(rowOf(grid.asTile(), 2), (std::vector<float>{205, 207, 209, 211}));
  NDArray wrap = zeros(1, 2);
  iota(wrap.asTile(), 2147483647, 0, 1); // int32 arithmetic wraps
  EXPECT_EQ(rowOf(wrap.asTile(), 0), (std::vector<float>{2147483647.0f, -2147483648.0f}));

  NDArray wrong = zeros(2, 3);
  EXPECT_EQ(errorOf(copy(wrong.asTile(), in.asTile())),
            "tensor_copy: source tile [2, 2] differs from the output tile [2, 3]");
}

// --- Names ------------------------------------------------------------------------------------

TEST(OperatorNames, CanonicalNamesRoundTrip) {
  for (int i = 0; i < kAluOpCount; ++i) {
    std::string_view spelled = name(AluOp(i));
    EXPECT_TRUE(spelled.starts_with("nl.")) << spelled;
    EXPECT_EQ(aluOpFromName(spelled), AluOp(i)) << spelled;
  }
  for (int i = 0; i < kActFuncCount; ++i) {
    std::string_view spelled = name(ActFunc(i));
    EXPECT_TRUE(spelled.starts_with("nl.")) << spelled;
    EXPECT_EQ(actFuncFromName(spelled), ActFunc(i)) << spelled;
  }
  EXPECT_EQ(name(AluOp::Add), "nl.add");
  EXPECT_EQ(name(AluOp::Maximum), "nl.maximum");
  EXPECT_EQ(name(ActFunc::Exp), "nl.exp");
  EXPECT_EQ(name(ActFunc::GeluApproxTanh), "nl.gelu_apprx_tanh");
}

TEST(OperatorNames, KernelSpellings) {
  EXPECT_EQ(aluOpFromName("nl.add"), AluOp::Add);
  EXPECT_EQ(aluOpFromName("np.add"), AluOp::Add);
  EXPECT_EQ(aluOpFromName("numpy.add"), AluOp::Add);
  EXPECT_EQ(aluOpFromName("nki.language.multiply"), AluOp::Multiply);
  EXPECT_EQ(aluOpFromName("neuronxcc.nki.language.subtract"), AluOp::Subtract);
  EXPECT_EQ(aluOpFromName("np.multiply"), AluOp::Multiply);
  EXPECT_EQ(aluOpFromName("np.max"), AluOp::Maximum);
  EXPECT_EQ(aluOpFromName("nl.max"), AluOp::Maximum);
  EXPECT_EQ(aluOpFromName("np.amin"), AluOp::Minimum);
  EXPECT_EQ(aluOpFromName("np.true_divide"), AluOp::Divide);
  EXPECT_EQ(aluOpFromName("maximum"), AluOp::Maximum);
  EXPECT_EQ(aluOpFromName("nl.true_divide"), std::nullopt);
  EXPECT_EQ(aluOpFromName("nl.exp"), std::nullopt);
  EXPECT_EQ(aluOpFromName("np.addd"), std::nullopt);
  EXPECT_EQ(aluOpFromName(""), std::nullopt);

  EXPECT_EQ(actFuncFromName("nl.exp"), ActFunc::Exp);
  EXPECT_EQ(actFuncFromName("np.exp"), ActFunc::Exp);
  EXPECT_EQ(actFuncFromName("nl.sqrt"), ActFunc::Sqrt);
  EXPECT_EQ(actFuncFromName("nl.rsqrt"), ActFunc::Rsqrt);
  EXPECT_EQ(actFuncFromName("nl.square"), ActFunc::Square);
  EXPECT_EQ(actFuncFromName("nl.copy"), ActFunc::Copy);
  EXPECT_EQ(actFuncFromName("nl.identity"), ActFunc::Copy);
  EXPECT_EQ(actFuncFromName("nl.reciprocal"), ActFunc::Reciprocal);
  EXPECT_EQ(actFuncFromName("np.absolute"), ActFunc::Abs);
  EXPECT_EQ(actFuncFromName("nl.gelu_apprx_sigmoid"), ActFunc::GeluApproxSigmoid);
  EXPECT_EQ(actFuncFromName("np.rsqrt"), std::nullopt); // not a numpy function
  EXPECT_EQ(actFuncFromName("np.gelu"), std::nullopt);
  EXPECT_EQ(actFuncFromName("nl.add"), std::nullopt);
}
