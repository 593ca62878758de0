// Throughput of the timing model on a synthetic stream shaped like the
// NKIBench matmul kernel (kernels/matmul_M4096_N12288_K5120_0.py): per N
// block, 40 rhs loads; per (N block, M tile), 5 lhs loads, 40 PF-transposes
// with their PSUM->SBUF copies, 2 x 40 accumulating fp32 matmuls, 2 copies
// and a store. `mTiles` = 32 is the real kernel (65k instructions); 256 gives
// 368,640 TensorE instructions, 517k in all. The Time column is the time to
// simulate one stream.
#include "Perf/Profile.h"
#include "Perf/TimingModel.h"

#include <benchmark/benchmark.h>

using namespace accelopt;
using namespace accelopt::perf;

namespace {

/// `columnTiles` 512-column matmul tiles per N block: 2 is the real kernel; 4 doubles
/// the rhs tiles so the 40 live ones (320 KiB per partition) overflow SBUF.
Trace matmulShapedStream(uint32_t mTiles, uint32_t columnTiles) {
  const uint32_t nBlocks = 12288 / (512 * columnTiles), kOuter = 5, kInner = 8;
  const uint32_t tile = 128 * 4, row = columnTiles * 512 * 4; // bytes per partition
  Trace trace;
  trace.reserve(size_t(nBlocks) * (40 + mTiles * (88 + 41 * columnTiles)),
                size_t(nBlocks) * (80 + mTiles * (260 + 164 * columnTiles)));
  TensorId lhsHbm = trace.addTensor({nki::Buffer::SharedHBM, 1, 1, uint64_t(mTiles) * 128 * 5120 * 4, "v1"});
  TensorId rhsHbm = trace.addTensor({nki::Buffer::SharedHBM, 1, 1, uint64_t(5120) * 12288 * 4, "v2"});
  TensorId outHbm = trace.addTensor({nki::Buffer::SharedHBM, 1, 1, uint64_t(mTiles) * 128 * 12288 * 4, "v3"});
  TensorId identityHbm = trace.addTensor({nki::Buffer::SharedHBM, 1, 1, 128 * tile, "identity_const"});
  TensorId identity = trace.addTensor({nki::Buffer::SBUF, 1, 128, tile, "identity"});
  TensorId rhs = trace.addTensor({nki::Buffer::SBUF, nBlocks * kOuter * kInner, 128, row, "rhs"});
  TensorId lhs = trace.addTensor({nki::Buffer::SBUF, nBlocks * mTiles * kOuter, 128, kInner * tile, "lhs"});
  TensorId transposedPsum =
      trace.addTensor({nki::Buffer::PSUM, nBlocks * mTiles * kOuter * kInner, 128, tile, "t_psum"});
  TensorId transposed = trace.addTensor({nki::Buffer::SBUF, nBlocks * mTiles * kOuter, 128, kInner * tile, "lhsT"});
  TensorId acc = trace.addTensor({nki::Buffer::PSUM, nBlocks * mTiles * columnTiles, 128, 2048, "acc"});
  TensorId result = trace.addTensor({nki::Buffer::SBUF, mTiles * nBlocks, 128, row, "res"});

  auto load = [&](TensorId dst, uint32_t block, uint32_t bytesPerPartition, TensorId src, uint64_t offset) {
    Instruction inst;
    inst.op = OpKind::Load;
    inst.partitions = 128;
    inst.bytesPerPartition = bytesPerPartition;
    inst.bytes = uint64_t(128) * bytesPerPartition;
    trace.addInstruction(inst, {{src, 0, offset, offset + inst.bytes}}, {{dst, block, 0, bytesPerPartition}});
  };
  auto copy = [&](Region from, Region to) {
    Instruction inst;
    inst.op = OpKind::TensorCopy;
    inst.freeElems = static_cast<uint32_t>((from.end - from.begin) / 4);
    trace.addInstruction(inst, {from}, {to});
  };

  load(identity, 0, tile, identityHbm, 0);
  trace.enterLoop(LoopKind::Affine, 0);
  for (uint32_t n = 0; n < nBlocks; ++n) {
    if (n) trace.nextIteration(LoopKind::Affine, 0);
    for (uint32_t k = 0; k < kOuter * kInner; ++k)
      load(rhs, n * kOuter * kInner + k, row, rhsHbm, (uint64_t(k) * 128 * 12288 + n * row / 4) * 4);
    for (uint32_t m = 0; m < mTiles; ++m) {
      uint32_t nm = n * mTiles + m;
      for (uint32_t ko = 0; ko < kOuter; ++ko) {
        load(lhs, nm * kOuter + ko, kInner * tile, lhsHbm, (uint64_t(m) * 40 + ko * 8) * 128 * tile);
        for (uint32_t ki = 0; ki < kInner; ++ki) {
          Instruction transpose;
          transpose.op = OpKind::NcMatmul;
          transpose.engine = nki::Engine::Tensor;
          transpose.flags = IsTranspose | OneZeroOperand;
          transpose.freeElems = 128;
          transpose.stationaryFreeElems = 128;
          uint32_t t = (nm * kOuter + ko) * kInner + ki;
          trace.addInstruction(transpose, {{lhs, nm * kOuter + ko, ki * tile, (ki + 1) * tile}, {identity, 0, 0, tile}},
                               {{transposedPsum, t, 0, tile}});
          copy({transposedPsum, t, 0, tile}, {transposed, nm * kOuter + ko, ki * tile, (ki + 1) * tile});
        }
      }
      for (uint32_t column = 0; column < columnTiles; ++column) {
        for (uint32_t ko = 0; ko < kOuter; ++ko)
          for (uint32_t ki = 0; ki < kInner; ++ki) {
            Instruction mm;
            mm.op = OpKind::NcMatmul;
            mm.engine = nki::Engine::Tensor;
            mm.freeElems = 512;
            mm.stationaryFreeElems = 128;
            uint32_t rhsBlock = n * kOuter * kInner + ko * kInner + ki;
            trace.addInstruction(mm,
                                 {{transposed, nm * kOuter + ko, ki * tile, (ki + 1) * tile},
                                  {rhs, rhsBlock, column * 2048u, column * 2048u + 2048},
                                  {acc, nm * columnTiles + column, 0, 2048}},
                                 {{acc, nm * columnTiles + column, 0, 2048}});
          }
        copy({acc, nm * columnTiles + column, 0, 2048},
             {result, m * nBlocks + n, column * 2048u, column * 2048u + 2048});
      }
      Instruction store;
      store.op = OpKind::Store;
      store.partitions = 128;
      store.bytesPerPartition = row;
      store.bytes = 128 * row;
      uint64_t offset = (uint64_t(m) * 128 * 12288 + n * row / 4) * 4;
      trace.addInstruction(store, {{result, m * nBlocks + n, 0, row}}, {{outHbm, 0, offset, offset + 128 * row}});
    }
  }
  trace.exitLoop(LoopKind::Affine, 0);
  return trace;
}

void BM_SimulateMatmulShapedStream(benchmark::State &state) {
  Trace trace = matmulShapedStream(static_cast<uint32_t>(state.range(0)), static_cast<uint32_t>(state.range(1)));
  auto hw = loadTarget("trn1");
  if (!hw) {
    state.SkipWithError(llvm::toString(hw.takeError()).c_str());
    return;
  }
  TimingModel model(*hw);
  double latencyMs = 0, spillBytes = 0;
  for (auto _ : state) {
    auto result = model.simulate(trace);
    if (!result) {
      state.SkipWithError(llvm::toString(result.takeError()).c_str());
      return;
    }
    latencyMs = result->makespanMs();
    spillBytes = double(result->spillSaveBytes + result->spillReloadBytes);
    benchmark::DoNotOptimize(latencyMs);
  }
  double instructions = double(trace.instructions().size());
  state.SetItemsProcessed(int64_t(state.iterations() * instructions));
  state.counters["instructions"] = instructions;
  state.counters["simulated_latency_ms"] = latencyMs;
  state.counters["spill_bytes"] = spillBytes;
}
BENCHMARK(BM_SimulateMatmulShapedStream)
    ->ArgNames({"mTiles", "columnTiles"})
    ->Args({32, 2})
    ->Args({256, 2})
    ->Args({256, 4})
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
