// Single-instruction costs against the NKI.md §3.5 formulas.
#include "PerfTestUtil.h"

#include "Perf/TimingModel.h"

using namespace accelopt;
using namespace accelopt::perf;
using namespace accelopt::perf::testing;

namespace {

using nki::Engine;

class Cost : public ::testing::Test {
protected:
  HardwareDesc Trn1 = target("trn1");
  HardwareDesc Trn2 = target("trn2");

  double cycles(const Instruction &inst, bool readsPsum = false) const {
    return computeCycles(Trn1, inst, *resolveEngine(Trn1, inst), readsPsum);
  }
};

TEST_F(Cost, ElementwiseFormulas) {
  // max(MIN_II, N) on ScalarE, MIN_II = 64.
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::Activation, Engine::Scalar, 512)), 512);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::Activation, Engine::Scalar, 16)), 64);
  // tensor_tensor: 2N from SBUF, N with a PSUM input.
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::TensorTensor, Engine::Vector, 512)), 1024);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::TensorTensor, Engine::Vector, 512), true), 512);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::TensorTensor, Engine::Vector, 8)), 64);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::TensorScalar, Engine::Vector, 512)), 512);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::TensorTensorScan, Engine::Vector, 512)), 1024);
  // reciprocal on VectorE: the calibrated cycles per element (documented 8N,
  // which over-predicts, NKI.md §3.7), with the MIN_II floor.
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::Reciprocal, Engine::Vector, 512)),
                   Trn1.cost(OpKind::Reciprocal).cyclesPerElement * 512);
  EXPECT_LT(Trn1.cost(OpKind::Reciprocal).cyclesPerElement, 8);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::Reciprocal, Engine::Vector, 4)), 64);
  // tensor_reduce has no MIN_II floor; the bf16 add/max fast path halves it.
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::TensorReduce, Engine::Vector, 32)), 32);
  Instruction reduce = compute(OpKind::TensorReduce, Engine::Vector, 512);
  reduce.flags = FastPath;
  EXPECT_DOUBLE_EQ(cycles(reduce), 256);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::Iota, Engine::GpSimd, 100)), 250);
  EXPECT_DOUBLE_EQ(cycles(compute(OpKind::Memset, Engine::Vector, 1)), 64);
  // A reduce result read out costs one more MIN_II.
  Instruction readout = compute(OpKind::Activation, Engine::Scalar, 512);
  readout.flags = ReduceReadout;
  EXPECT_DOUBLE_EQ(cycles(readout), 576);
}

TEST_F(Cost, DefaultEngineComesFromTheTarget) {
  Instruction copy = compute(OpKind::TensorCopy, Engine::Unknown, 512);
  EXPECT_EQ(*resolveEngine(Trn1, copy), ComputeEngine::Scalar);
  Instruction onSync = compute(OpKind::TensorCopy, Engine::Sync, 512);
  EXPECT_FALSE(resolveEngine(Trn1, onSync).has_value());
}

TEST_F(Cost, DurationAddsStaticOverheadAtTheEngineClock) {
  Instruction act = compute(OpKind::Activation, Engine::Scalar, 512);
  EXPECT_NEAR(computeDurationNs(Trn1, act, ComputeEngine::Scalar, false), (512 + 100) / 1.4, 1e-9);
  Instruction mm = matmul(128, 128, 512);
  EXPECT_NEAR(computeDurationNs(Trn1, mm, ComputeEngine::Tensor, false), 4 * (512 + 64) / 2.8, 1e-9);
}

TEST_F(Cost, MatmulFormula) {
  // max(min(64, N_stationary), N_moving) + the pass overhead (MM_INIT_LATENCY on trn1), x4 passes for fp32.
  const double P = Trn1.matmul.passOverheadCycles;
  EXPECT_DOUBLE_EQ(P, 64);
  EXPECT_DOUBLE_EQ(cycles(matmul(128, 128, 512)), 4 * (512 + P));
  EXPECT_DOUBLE_EQ(cycles(matmul(128, 128, 512, nki::DType::BFloat16)), 512 + P);
  EXPECT_DOUBLE_EQ(cycles(matmul(128, 128, 32)), 4 * (64 + P));
  EXPECT_DOUBLE_EQ(cycles(matmul(128, 16, 16)), 4 * (16 + P));
  EXPECT_DOUBLE_EQ(cycles(matmul(128, 16, 48, nki::DType::BFloat16)), 48 + P);
  // A fp32 PF-transpose with an identity moving operand: the onezero hint
  // doubles fp32 speed on NC-v2; NC-v3 also has its transpose mode.
  Instruction transpose = matmul(128, 128, 128);
  transpose.flags = IsTranspose | OneZeroOperand;
  EXPECT_DOUBLE_EQ(cycles(transpose), 2 * (128 + P));
  Instruction plainTranspose = matmul(128, 128, 128);
  plainTranspose.flags = IsTranspose;
  EXPECT_DOUBLE_EQ(cycles(plainTranspose), 4 * (128 + P));
  // trn2 declares no pass overhead.
  EXPECT_DOUBLE_EQ(computeCycles(Trn2, plainTranspose, ComputeEngine::Tensor, false), 2 * 128);
  // nc_transpose on TensorE: max(P, min(64, F)) (x4 fp32).
  Instruction nc = compute(OpKind::Transpose, Engine::Tensor, 32, 128);
  nc.inputDType = nki::DType::BFloat16;
  EXPECT_DOUBLE_EQ(cycles(nc), 128 + P);
  Instruction vectorTranspose = compute(OpKind::Transpose, Engine::Vector, 32, 32);
  EXPECT_DOUBLE_EQ(cycles(vectorTranspose), 64);
}

TEST_F(Cost, DmaEfficiencyGrowsWithBytesPerPartition) {
  double previousEfficiency = 0, previousBandwidth = 0;
  for (uint32_t bpp = 32; bpp <= 64 * 1024; bpp *= 2) {
    double efficiency = Trn1.dma.efficiency(bpp);
    EXPECT_GT(efficiency, previousEfficiency) << bpp;
    previousEfficiency = efficiency;
    // The same 4 MiB moved in descriptors of `bpp` bytes.
    uint64_t bytes = 4u << 20;
    double ns = isolatedDmaNs(Trn1, bytes, bpp, 128, true);
    double bandwidth = bytes / ns;
    EXPECT_GT(bandwidth, previousBandwidth) << bpp;
    previousBandwidth = bandwidth;
  }
  // NKI.md §3.4: < 256 B per partition is overhead-bound, >= 2-4 KiB saturates.
  EXPECT_LT(Trn1.dma.efficiency(128), 0.5);
  EXPECT_GE(Trn1.dma.efficiency(2048), 0.85);
  EXPECT_GE(Trn1.dma.efficiency(4096), 0.9);
}

TEST_F(Cost, DmaStripesOverQueuesAndRespectsHbm) {
  // 128 x 4 KiB: striped over 16 queues of the target's rate at 94 % efficiency,
  // after the fixed latency.
  uint64_t bytes = 128 * 4096;
  double rate = Trn1.dma.queueBytesPerNs;
  double expected = 1300 + bytes / 16.0 / (rate * Trn1.dma.efficiency(4096));
  EXPECT_NEAR(isolatedDmaNs(Trn1, bytes, 4096, 128, true), expected, 1e-6);
  // One partition uses one queue.
  EXPECT_NEAR(isolatedDmaNs(Trn1, 4096, 4096, 1, true), 1300 + 4096 / (rate * Trn1.dma.efficiency(4096)), 1e-6);
  // A slow HBM caps the transfer.
  HardwareDesc slow = Trn1;
  slow.dma.hbmBytesPerNs = 10;
  EXPECT_NEAR(isolatedDmaNs(slow, bytes, 4096, 128, true), 1300 + bytes / 10.0, 1e-6);
  EXPECT_NEAR(isolatedDmaNs(slow, bytes, 4096, 128, false), expected, 1e-6);
}

} // namespace
