// The timing model on small synthetic streams.
#include "PerfTestUtil.h"

#include "Perf/Profile.h"
#include "Perf/TimingModel.h"

using namespace accelopt;
using namespace accelopt::perf;
using namespace accelopt::perf::testing;

namespace {

using nki::Engine;

SimulationResult simulate(const HardwareDesc &hw, const Trace &trace) {
  TimingModel model(hw);
  auto result = model.simulate(trace);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  return std::move(*result);
}

class Timing : public ::testing::Test {
protected:
  HardwareDesc Trn1 = target("trn1");

  double duration(const Instruction &inst, bool readsPsum = false) const {
    return computeDurationNs(Trn1, inst, *resolveEngine(Trn1, inst), readsPsum);
  }
};

TEST_F(Timing, IndependentInstructionsOnDifferentEnginesOverlap) {
  Trace trace;
  TensorId a = sbuf(trace, 1, 2048), b = sbuf(trace, 1, 2048);
  Instruction act = compute(OpKind::Activation, Engine::Scalar, 512);
  Instruction fill = compute(OpKind::Memset, Engine::Vector, 512);
  trace.addInstruction(act, {}, {whole(trace, a)});
  trace.addInstruction(fill, {}, {whole(trace, b)});
  SimulationResult r = simulate(Trn1, trace);
  EXPECT_NEAR(r.makespanNs, std::max(duration(act), duration(fill)), 1e-9);
}

TEST_F(Timing, DependentInstructionsSerialise) {
  Trace trace;
  TensorId a = sbuf(trace, 1, 2048), b = sbuf(trace, 1, 2048);
  Instruction act = compute(OpKind::Activation, Engine::Scalar, 512);
  Instruction scale = compute(OpKind::TensorScalar, Engine::Vector, 512);
  trace.addInstruction(act, {}, {whole(trace, a)});
  trace.addInstruction(scale, {whole(trace, a)}, {whole(trace, b)}); // reads what act wrote
  SimulationResult r = simulate(Trn1, trace);
  EXPECT_NEAR(r.makespanNs, duration(act) + duration(scale), 1e-9);
}

TEST_F(Timing, WriteAfterReadWaitsForTheReader) {
  Trace trace;
  TensorId a = sbuf(trace, 1, 2048), b = sbuf(trace, 1, 2048);
  Instruction slowRead = compute(OpKind::Reciprocal, Engine::Vector, 512);
  Instruction overwrite = compute(OpKind::Activation, Engine::Scalar, 512);
  trace.addInstruction(slowRead, {whole(trace, a)}, {whole(trace, b)});
  trace.addInstruction(overwrite, {}, {whole(trace, a)});
  SimulationResult r = simulate(Trn1, trace);
  EXPECT_NEAR(r.makespanNs, duration(slowRead) + duration(overwrite), 1e-9);
}

TEST_F(Timing, DisjointBytesOfOneBlockDoNotDepend) {
  Trace trace;
  TensorId a = sbuf(trace, 1, 4096), b = sbuf(trace, 1, 4096);
  Instruction left = compute(OpKind::Activation, Engine::Scalar, 512);
  Instruction right = compute(OpKind::TensorScalar, Engine::Vector, 512);
  trace.addInstruction(left, {}, {{a, 0, 0, 2048}});
  trace.addInstruction(right, {{a, 0, 2048, 4096}}, {{b, 0, 0, 2048}});
  SimulationResult r = simulate(Trn1, trace);
  EXPECT_NEAR(r.makespanNs, std::max(duration(left), duration(right)), 1e-9);
}

TEST_F(Timing, OneEngineRunsInOrder) {
  Trace trace;
  TensorId a = sbuf(trace, 2, 2048);
  Instruction act = compute(OpKind::Activation, Engine::Scalar, 512);
  trace.addInstruction(act, {}, {whole(trace, a, 0)});
  trace.addInstruction(act, {}, {whole(trace, a, 1)});
  SimulationResult r = simulate(Trn1, trace);
  EXPECT_NEAR(r.makespanNs, 2 * duration(act), 1e-9);
  EXPECT_EQ(r.engineInstructions[unsigned(ComputeEngine::Scalar)], 2u);
}

/// load x_i -> exp -> store y_i, `iterations` times, in a loop of `kind`.
Trace pipelinableLoop(LoopKind kind, unsigned iterations) {
  Trace trace;
  const uint32_t bpp = 4096; // 128 x 1024 fp32 tiles
  TensorId in = hbm(trace, uint64_t(iterations) * 128 * bpp, "x");
  TensorId out = hbm(trace, uint64_t(iterations) * 128 * bpp, "y");
  TensorId x = sbuf(trace, iterations, bpp, "x_sb");
  TensorId y = sbuf(trace, iterations, bpp, "y_sb");
  trace.enterLoop(kind, 0);
  for (unsigned i = 0; i < iterations; ++i) {
    if (i) trace.nextIteration(kind, 0);
    uint64_t offset = uint64_t(i) * 128 * bpp;
    trace.addInstruction(dma(OpKind::Load, 128, bpp), {{in, 0, offset, offset + 128 * bpp}}, {whole(trace, x, i)});
    trace.addInstruction(compute(OpKind::Activation, Engine::Scalar, 1024), {whole(trace, x, i)}, {whole(trace, y, i)});
    trace.addInstruction(dma(OpKind::Store, 128, bpp), {whole(trace, y, i)}, {{out, 0, offset, offset + 128 * bpp}});
  }
  trace.exitLoop(kind, 0);
  return trace;
}

TEST_F(Timing, SequentialIterationsDoNotOverlap) {
  // With the barrier (scheduler.sequential_barrier) every iteration waits for
  // everything before it.
  HardwareDesc barrier = Trn1;
  barrier.scheduler.sequentialBarrier = true;
  SimulationResult affine = simulate(barrier, pipelinableLoop(LoopKind::Affine, 8));
  SimulationResult sequential = simulate(barrier, pipelinableLoop(LoopKind::Sequential, 8));
  SimulationResult single = simulate(barrier, pipelinableLoop(LoopKind::Sequential, 1));
  // Each sequential iteration pays the whole load -> compute -> store chain.
  EXPECT_NEAR(sequential.makespanNs, 8 * single.makespanNs, 1e-6 * sequential.makespanNs);
  EXPECT_LT(affine.makespanNs, 0.6 * sequential.makespanNs);
  // A static loop is unrolled: it overlaps like an affine one.
  SimulationResult unrolled = simulate(barrier, pipelinableLoop(LoopKind::Static, 8));
  EXPECT_DOUBLE_EQ(unrolled.makespanNs, affine.makespanNs);
}

TEST_F(Timing, SequentialIterationsWithoutBarrierStillDoNotPrefetch) {
  // trn1 as calibrated: no barrier, but the next iteration's load is issued
  // only after this iteration's engine work, so the loop is slower than an
  // affine one and faster than a fully serialised one.
  ASSERT_FALSE(Trn1.scheduler.sequentialBarrier);
  HardwareDesc barrier = Trn1;
  barrier.scheduler.sequentialBarrier = true;
  SimulationResult affine = simulate(Trn1, pipelinableLoop(LoopKind::Affine, 8));
  SimulationResult sequential = simulate(Trn1, pipelinableLoop(LoopKind::Sequential, 8));
  SimulationResult serial = simulate(barrier, pipelinableLoop(LoopKind::Sequential, 8));
  EXPECT_LT(affine.makespanNs, sequential.makespanNs);
  EXPECT_LT(sequential.makespanNs, serial.makespanNs);
}

TEST_F(Timing, EngineAgnosticOpsGoWhereTheyFinishFirst) {
  // Two independent tensor_scalar ops with engine=unknown: the second one
  // runs on ScalarE while VectorE is busy with the first.
  ASSERT_FALSE(Trn1.cost(OpKind::TensorScalar).alternativeEngines.empty());
  Trace trace;
  TensorId a = sbuf(trace, 2, 4096);
  Instruction ts = compute(OpKind::TensorScalar, Engine::Unknown, 1024);
  trace.addInstruction(ts, {}, {whole(trace, a, 0)});
  trace.addInstruction(ts, {}, {whole(trace, a, 1)});
  HardwareDesc twoBuffers = Trn1; // a's two blocks in one buffer would order the ops
  twoBuffers.scheduler.singleBufferEngineTiles = false;
  SimulationResult r = simulate(twoBuffers, trace);
  EXPECT_EQ(r.engineInstructions[unsigned(ComputeEngine::Vector)] +
                r.engineInstructions[unsigned(ComputeEngine::Scalar)],
            2u);
  EXPECT_EQ(r.engineInstructions[unsigned(ComputeEngine::Scalar)], 1u);
  EXPECT_EQ(r.engineInstructions[unsigned(ComputeEngine::Vector)], 1u);
}

TEST_F(Timing, IdleSlotsAreFilledByLaterIndependentWork) {
  // ScalarE: a long activation that waits for a load, then an independent
  // short one. With fill_idle_slots the short one runs while the first waits.
  Trace trace;
  TensorId in = hbm(trace, 128 * 4096, "x");
  TensorId x = sbuf(trace, 1, 4096);
  TensorId y = sbuf(trace, 2, 4096);
  trace.addInstruction(dma(OpKind::Load, 128, 4096), {{in, 0, 0, 128 * 4096}}, {whole(trace, x, 0)});
  trace.addInstruction(compute(OpKind::Activation, Engine::Scalar, 1024), {whole(trace, x, 0)}, {whole(trace, y, 0)});
  trace.addInstruction(compute(OpKind::Activation, Engine::Scalar, 64), {}, {whole(trace, y, 1)});
  HardwareDesc twoBuffers = Trn1; // y's two blocks in one buffer would order the activations
  twoBuffers.scheduler.singleBufferEngineTiles = false;
  HardwareDesc inOrder = twoBuffers;
  inOrder.scheduler.fillIdleSlots = false;
  ASSERT_TRUE(Trn1.scheduler.fillIdleSlots);
  SimulationResult filled = simulate(twoBuffers, trace);
  SimulationResult strict = simulate(inOrder, trace);
  EXPECT_LT(filled.makespanNs, strict.makespanNs);
}

TEST_F(Timing, DmaBytesAreCounted) {
  SimulationResult r = simulate(Trn1, pipelinableLoop(LoopKind::Affine, 4));
  EXPECT_EQ(r.hbmReadBytes, 4u * 128 * 4096);
  EXPECT_EQ(r.hbmWriteBytes, 4u * 128 * 4096);
  // DMAs count all their bytes, engines the bytes per partition they touch.
  EXPECT_EQ(r.sbufWriteBytes, 4u * 128 * 4096 + 4u * 4096);
  EXPECT_EQ(r.sbufReadBytes, 4u * 128 * 4096 + 4u * 4096);
  EXPECT_EQ(r.dmaTransfers, 8u);
  EXPECT_EQ(r.spillSaveBytes + r.spillReloadBytes, 0u);
}

TEST_F(Timing, HbmRoundTripOrdersTheLoadAfterTheStore) {
  // A tile stored to HBM scratch and loaded back (a traced kernel's explicit
  // spill) cannot be loaded before the store has landed.
  auto build = [](bool sameScratch) {
    Trace trace;
    const uint32_t bpp = 4096;
    TensorId scratch = trace.addTensor({nki::Buffer::PrivateHBM, 1, 1, 2 * 128 * bpp, "_spill"});
    TensorId t = sbuf(trace, 2, bpp);
    trace.addInstruction(compute(OpKind::Memset, Engine::Vector, 1024), {}, {whole(trace, t, 0)});
    trace.addInstruction(dma(OpKind::Store, 128, bpp), {whole(trace, t, 0)}, {{scratch, 0, 0, 128 * bpp}});
    uint64_t from = sameScratch ? 0 : 128 * bpp;
    trace.addInstruction(dma(OpKind::Load, 128, bpp), {{scratch, 0, from, from + 128 * bpp}}, {whole(trace, t, 1)});
    return trace;
  };
  SimulationResult roundTrip = simulate(Trn1, build(true));
  SimulationResult independent = simulate(Trn1, build(false));
  double dmaNs = isolatedDmaNs(Trn1, 128 * 4096, 4096, 128, true);
  double memset = duration(compute(OpKind::Memset, Engine::Vector, 1024));
  // The round trip is store, then load, each with its fixed latency.
  EXPECT_NEAR(roundTrip.makespanNs, memset + 2 * dmaNs, 1e-6);
  // Unrelated, the load runs first and the store shares the queues after it.
  EXPECT_LT(independent.makespanNs, roundTrip.makespanNs - Trn1.dma.fixedLatencyNs);
}

TEST_F(Timing, HbmTilesSideBySideInRowsAreDisjoint) {
  // Scratch [128 rows, 2 tiles]: tile c is the run [c * bpp, (c + 1) * bpp) of every row. The
  // ranges from first to last byte of the two tiles overlap; their runs do not.
  auto build = [](uint32_t loadedColumn, bool runs) {
    Trace trace;
    const uint32_t bpp = 4096, pitch = 2 * bpp;
    TensorId scratch = trace.addTensor({nki::Buffer::PrivateHBM, 1, 1, 128 * uint64_t(pitch), "_scratch"});
    TensorId t = sbuf(trace, 2, bpp);
    auto column = [&](uint32_t c) {
      Region r{scratch, 0, c * bpp, 127 * uint64_t(pitch) + (c + 1) * bpp};
      if (runs) {
        r.run = bpp;
        r.pitch = pitch;
      }
      return r;
    };
    trace.addInstruction(compute(OpKind::Memset, Engine::Vector, 1024), {}, {whole(trace, t, 0)});
    trace.addInstruction(dma(OpKind::Store, 128, bpp), {whole(trace, t, 0)}, {column(0)});
    trace.addInstruction(dma(OpKind::Load, 128, bpp), {column(loadedColumn)}, {whole(trace, t, 1)});
    return trace;
  };
  SimulationResult roundTrip = simulate(Trn1, build(0, true));
  SimulationResult beside = simulate(Trn1, build(1, true));
  SimulationResult hull = simulate(Trn1, build(1, false));
  EXPECT_NEAR(roundTrip.makespanNs, hull.makespanNs, 1e-6);
  EXPECT_LT(beside.makespanNs, roundTrip.makespanNs - Trn1.dma.fixedLatencyNs);

  Trace malformed;
  TensorId scratch = malformed.addTensor({nki::Buffer::PrivateHBM, 1, 1, 1 << 20, "_scratch"});
  TensorId t = sbuf(malformed, 1, 4096);
  Region r{scratch, 0, 0, 1 << 19};
  r.run = 8192;
  r.pitch = 4096; // a run longer than the row
  malformed.addInstruction(dma(OpKind::Load, 128, 4096), {r}, {whole(malformed, t, 0)});
  TimingModel model(Trn1);
  auto result = model.simulate(malformed);
  ASSERT_FALSE(bool(result));
  EXPECT_NE(llvm::toString(result.takeError()).find("region outside tensor 0"), std::string::npos);
}

/// `blocks` SBUF tiles of 8 KiB per partition written by memsets and stored.
/// `allLiveAtOnce`: every tile is written before the first store (working set
/// = all tiles); otherwise each tile is stored right after it is written.
Trace workingSet(unsigned blocks, bool allLiveAtOnce) {
  Trace trace;
  const uint32_t bpp = 8192;
  TensorId t = sbuf(trace, blocks, bpp, "tiles");
  TensorId out = hbm(trace, uint64_t(blocks) * 128 * bpp, "out");
  auto write = [&](unsigned i) {
    trace.addInstruction(compute(OpKind::Memset, Engine::Vector, bpp / 4), {}, {whole(trace, t, i)});
  };
  auto store = [&](unsigned i) {
    uint64_t offset = uint64_t(i) * 128 * bpp;
    trace.addInstruction(dma(OpKind::Store, 128, bpp), {whole(trace, t, i)}, {{out, 0, offset, offset + 128 * bpp}});
  };
  for (unsigned i = 0; i < blocks; ++i) {
    write(i);
    if (!allLiveAtOnce) store(i);
  }
  if (allLiveAtOnce)
    for (unsigned i = 0; i < blocks; ++i) store(i);
  return trace;
}

TEST_F(Timing, OversubscribedSbufSpills) {
  // 64 x 8 KiB = 512 KiB per partition live at once: far above 192 KiB.
  SimulationResult big = simulate(Trn1, workingSet(64, true));
  SimulationResult small = simulate(Trn1, workingSet(64, false));
  EXPECT_EQ(big.peakLiveSbufBytesPerPartition, 64u * 8192);
  EXPECT_EQ(small.peakLiveSbufBytesPerPartition, 8192u);
  EXPECT_GT(big.spillSaveBytes, 0u);
  EXPECT_GT(big.spillReloadBytes, 0u);
  // Every block saved is reloaded exactly once; as many 8 KiB blocks as the
  // usable SBUF holds (192 KiB less the compiler's reserve) stay resident.
  uint64_t fit = Trn1.memory.sbufUsableBytesPerPartition() / 8192;
  EXPECT_EQ(big.spillSaveBytes, big.spillReloadBytes);
  EXPECT_EQ(big.spillSaveBytes, (64u - fit) * 128 * 8192);
  EXPECT_EQ(small.spillSaveBytes + small.spillReloadBytes, 0u);
  EXPECT_GT(big.makespanNs, 1.5 * small.makespanNs);
  // Spill traffic goes through HBM and shows in the profile.
  Profile p = summarize(big, Trn1);
  EXPECT_EQ(p.spillSaveBytes, double(big.spillSaveBytes));
  EXPECT_EQ(p.hbmWriteBytes, double(64u * 128 * 8192 + big.spillSaveBytes));
}

TEST_F(Timing, LoadedInputsAreLoadedAgainNotSpilled) {
  // 40 tiles of 8 KiB loaded from a read-only input, then all read again:
  // evicted tiles are dropped and re-loaded from the input (HBM reads, no
  // spill traffic). With sink_loads_that_do_not_fit (trn1) the loads are sunk
  // to the one reader of each tile: the input is read once.
  Trace trace;
  const uint32_t bpp = 8192, n = 40;
  TensorId in = hbm(trace, uint64_t(n) * 128 * bpp, "in");
  TensorId t = sbuf(trace, n, bpp, "tiles");
  TensorId out = sbuf(trace, 1, 4, "sum");
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t offset = uint64_t(i) * 128 * bpp;
    trace.addInstruction(dma(OpKind::Load, 128, bpp), {{in, 0, offset, offset + 128 * bpp}}, {whole(trace, t, i)});
  }
  for (uint32_t i = 0; i < n; ++i)
    trace.addInstruction(compute(OpKind::TensorReduce, Engine::Vector, bpp / 4), {whole(trace, t, i)},
                         {whole(trace, out)});
  HardwareDesc kept = Trn1;
  kept.scheduler.sinkLoadsThatDoNotFit = false;
  SimulationResult r = simulate(kept, trace);
  EXPECT_EQ(r.spillSaveBytes + r.spillReloadBytes, 0u);
  EXPECT_GT(r.hbmReadBytes, uint64_t(n) * 128 * bpp);
  ASSERT_TRUE(Trn1.scheduler.sinkLoadsThatDoNotFit);
  SimulationResult sunk = simulate(Trn1, trace);
  EXPECT_EQ(sunk.spillSaveBytes + sunk.spillReloadBytes, 0u);
  EXPECT_EQ(sunk.hbmReadBytes, uint64_t(n) * 128 * bpp);
  EXPECT_EQ(sunk.peakLiveSbufBytesPerPartition, 4u); // only the sum stays
  EXPECT_LT(sunk.dmaTransfers, 2 * n + 1);
}

TEST_F(Timing, WorkingSetThatFitsDoesNotSpill) {
  SimulationResult r = simulate(Trn1, workingSet(20, true)); // 160 KiB
  EXPECT_EQ(r.spillSaveBytes + r.spillReloadBytes, 0u);
}

TEST_F(Timing, PsumBanksLimitOutstandingAccumulators) {
  // Nine 2 KiB accumulators live at once need nine of the eight banks.
  auto build = [](bool evictEach) {
    Trace trace;
    TensorId lhs = sbuf(trace, 1, 512), rhs = sbuf(trace, 1, 2048);
    TensorId acc = psum(trace, 9, 2048);
    TensorId res = sbuf(trace, 9, 2048);
    trace.addInstruction(compute(OpKind::Memset, Engine::Vector, 128), {}, {whole(trace, lhs)});
    trace.addInstruction(compute(OpKind::Memset, Engine::Vector, 512), {}, {whole(trace, rhs)});
    auto copy = [&](unsigned i) {
      trace.addInstruction(compute(OpKind::TensorCopy, Engine::Unknown, 512), {whole(trace, acc, i)},
                           {whole(trace, res, i)});
    };
    for (unsigned i = 0; i < 9; ++i) {
      trace.addInstruction(matmul(128, 128, 512), {whole(trace, lhs), whole(trace, rhs)}, {whole(trace, acc, i)});
      if (evictEach) copy(i);
    }
    if (!evictEach)
      for (unsigned i = 0; i < 9; ++i) copy(i);
    return trace;
  };
  EXPECT_EQ(simulate(Trn1, build(false)).psumOverflows, 1u);
  EXPECT_EQ(simulate(Trn1, build(true)).psumOverflows, 0u);
}

TEST_F(Timing, HardwareFlopsFollowTheProfilerConvention) {
  Trace trace;
  TensorId st = sbuf(trace, 1, 512), mv = sbuf(trace, 1, 2048), id = sbuf(trace, 1, 512);
  TensorId acc = psum(trace, 2, 2048);
  trace.addInstruction(compute(OpKind::Memset, Engine::Vector, 128), {}, {whole(trace, st)});
  trace.addInstruction(compute(OpKind::Memset, Engine::Vector, 512), {}, {whole(trace, mv)});
  trace.addInstruction(compute(OpKind::Memset, Engine::Vector, 128), {}, {whole(trace, id)});
  // fp32 128 x 128 x 512 matmul: 4 FLOPs per MAC.
  trace.addInstruction(matmul(128, 128, 512), {whole(trace, st), whole(trace, mv)}, {whole(trace, acc, 0)});
  // fp32 PF-transpose of a 128 x 128 tile: an identity matmul, padding counted.
  Instruction transpose = matmul(128, 128, 128);
  transpose.flags = IsTranspose | OneZeroOperand;
  trace.addInstruction(transpose, {whole(trace, st), whole(trace, id)}, {{acc, 1, 0, 512}});
  // bf16: 2 FLOPs per MAC.
  trace.addInstruction(matmul(128, 128, 512, nki::DType::BFloat16), {whole(trace, st), whole(trace, mv)},
                       {whole(trace, acc, 0)});
  SimulationResult r = simulate(Trn1, trace);
  double mm = 128.0 * 128 * 512, tr = 128.0 * 128 * 128;
  EXPECT_DOUBLE_EQ(r.hardwareFlops, 4 * mm + 4 * tr + 2 * mm);
  EXPECT_DOUBLE_EQ(r.transposeFlops, 4 * tr);
  // fp32 TensorE accesses count twice, in bytes per partition (NKI.md §5).
  EXPECT_EQ(r.psumWriteBytes, 2u * 2048 + 2u * 512 + 2048u);
  Profile p = summarize(r, Trn1);
  EXPECT_NEAR(p.hfuEstimatedPercent, r.hardwareFlops / (Trn1.tensorPeakFlopsPerSecond() * r.makespanNs * 1e-9), 1e-12);
}

TEST_F(Timing, StatementsAreAttributed) {
  Trace trace;
  TensorId a = sbuf(trace, 2, 2048);
  Instruction cheap = compute(OpKind::Activation, Engine::Scalar, 512);
  cheap.stmt = 3;
  cheap.line = 30;
  Instruction costly = compute(OpKind::Reciprocal, Engine::Vector, 512);
  costly.stmt = 7;
  costly.line = 70;
  trace.addInstruction(cheap, {}, {whole(trace, a, 0)});
  trace.addInstruction(costly, {}, {whole(trace, a, 1)});
  trace.addInstruction(cheap, {}, {whole(trace, a, 0)});
  SimulationResult r = simulate(Trn1, trace);
  ASSERT_EQ(r.statements.size(), 2u);
  EXPECT_EQ(r.statements[0].stmt, 7);
  EXPECT_EQ(r.statements[0].line, 70);
  EXPECT_EQ(r.statements[1].stmt, 3);
  EXPECT_EQ(r.statements[1].instructions, 2u);
  EXPECT_NEAR(r.statements[1].engineNs, 2 * duration(cheap), 1e-9);
}

TEST_F(Timing, MalformedStreamsAreRejected) {
  Trace trace;
  TensorId a = sbuf(trace, 1, 2048);
  trace.addInstruction(compute(OpKind::Activation, Engine::Scalar, 512), {}, {{a, 3, 0, 2048}});
  TimingModel model(Trn1);
  auto r = model.simulate(trace);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("instruction 0: region outside tensor 0"), std::string::npos);

  Trace undeclared;
  undeclared.addInstruction(compute(OpKind::Activation, Engine::Scalar, 512), {}, {{5, 0, 0, 4}});
  r = model.simulate(undeclared);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("never declared"), std::string::npos);

  Trace onSync;
  TensorId b = sbuf(onSync, 1, 2048);
  onSync.addInstruction(compute(OpKind::TensorCopy, Engine::Sync, 512), {}, {whole(onSync, b)});
  r = model.simulate(onSync);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("without an instruction queue"), std::string::npos);
}

TEST_F(Timing, ModelIsReusableAcrossStreams) {
  TimingModel model(Trn1);
  auto first = model.simulate(pipelinableLoop(LoopKind::Affine, 8));
  auto other = model.simulate(workingSet(64, true));
  auto again = model.simulate(pipelinableLoop(LoopKind::Affine, 8));
  ASSERT_TRUE(first && other && again);
  EXPECT_DOUBLE_EQ(first->makespanNs, again->makespanNs);
  TimingModel moved = std::move(model);
  auto afterMove = moved.simulate(pipelinableLoop(LoopKind::Affine, 8));
  ASSERT_TRUE(bool(afterMove));
  EXPECT_DOUBLE_EQ(afterMove->makespanNs, first->makespanNs);
}

TEST_F(Timing, Trn2IsATarget) {
  HardwareDesc trn2 = target("trn2");
  SimulationResult r = simulate(trn2, pipelinableLoop(LoopKind::Affine, 8));
  EXPECT_GT(r.makespanNs, 0);
  EXPECT_EQ(summarize(r, trn2).backend, "sim-trn2");
}

} // namespace
