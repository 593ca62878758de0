// Trace mode from the kernel IR: instruction counts, regions, loop markers
// and DMA descriptor sizes of small kernels.
#include "Perf/TraceBuilder.h"

#include "NKI/FrontEnd.h"
#include "Perf/Bench.h"
#include "Perf/TimingModel.h"
#include "PerfTestUtil.h"

#include "Syntax/SourceBuffer.h"

#include <gtest/gtest.h>

namespace accelopt::perf {
namespace {

const char *kHeader = R"(import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

)";

struct Built {
  nki::KernelFile file;
  Trace trace;
};

/// Parses `body` (a kernel) with `inputs` and builds its trace.
llvm::Expected<Built> build(const std::string &body, const std::string &inputs) {
  auto specs = nki::parseInputSpecs(inputs);
  if (!specs) return specs.takeError();
  auto source = syntax::SourceBuffer::fromText("test.py", kHeader + body);
  if (!source) return source.takeError();
  nki::FrontEndOptions opts;
  opts.inputs = &*specs;
  auto file = nki::buildKernelFile(std::move(*source), opts);
  if (!file) return file.takeError();
  auto trace = buildTrace(file->kernels.front());
  if (!trace) return trace.takeError();
  return Built{std::move(*file), std::move(*trace)};
}

Built mustBuild(const std::string &body, const std::string &inputs) {
  auto b = build(body, inputs);
  if (!b) {
    ADD_FAILURE() << llvm::toString(b.takeError());
    return {};
  }
  return std::move(*b);
}

const TensorInfo &tensorNamed(const Trace &t, llvm::StringRef name) {
  for (const TensorInfo &info : t.tensors())
    if (info.name == name) return info;
  static TensorInfo none;
  ADD_FAILURE() << "no tensor " << name.str();
  return none;
}

const char *kExpKernel = R"(@nki.jit
def kernel(x):
  out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for m in nl.affine_range(2):
    t = nl.load(x[m * 128:(m + 1) * 128, 0:512])
    e = nisa.activation(op=nl.exp, data=t)
    nl.store(out[m * 128:(m + 1) * 128, 0:512], value=e)
  return out
)";

TEST(TraceBuilder, InstructionsPerStatementInstance) {
  Built b = mustBuild(kExpKernel, "x=f32[256,512]");
  auto insts = b.trace.instructions();
  ASSERT_EQ(insts.size(), 6u);
  const OpKind expected[] = {OpKind::Load, OpKind::Activation, OpKind::Store};
  for (size_t i = 0; i < insts.size(); ++i) {
    EXPECT_EQ(insts[i].op, expected[i % 3]) << i;
    EXPECT_GE(insts[i].stmt, 0);
    EXPECT_GT(insts[i].line, 0);
  }
  EXPECT_EQ(insts[1].engine, nki::Engine::Scalar);
  EXPECT_EQ(insts[1].partitions, 128);
  EXPECT_EQ(insts[1].freeElems, 512u);
  // The three statements keep their ids across iterations.
  EXPECT_EQ(insts[0].stmt, insts[3].stmt);
  EXPECT_NE(insts[0].stmt, insts[1].stmt);
}

TEST(TraceBuilder, RegionsFollowTheAffineAccesses) {
  Built b = mustBuild(kExpKernel, "x=f32[256,512]");
  const Trace &t = b.trace;
  const Instruction &load1 = t.instructions()[3];
  ASSERT_EQ(t.reads(load1).size(), 1u);
  ASSERT_EQ(t.writes(load1).size(), 1u);
  // HBM: rows 128..255 of a [256, 512] fp32 tensor, as linear bytes.
  Region src = t.reads(load1)[0];
  EXPECT_EQ(t.tensors()[src.tensor].name, "x");
  EXPECT_EQ(src.begin, 128u * 512 * 4);
  EXPECT_EQ(src.end, 256u * 512 * 4);
  // The tile made inside the loop has a buffer per iteration: block 1 now.
  Region dst = t.writes(load1)[0];
  const TensorInfo &tile = t.tensors()[dst.tensor];
  EXPECT_EQ(tile.buffer, nki::Buffer::SBUF);
  EXPECT_EQ(tile.numBlocks, 2u);
  EXPECT_EQ(tile.bytesPerPartition, 2048u);
  EXPECT_EQ(dst.block, 1u);
  EXPECT_EQ(dst.begin, 0u);
  EXPECT_EQ(dst.end, 2048u);
  // The activation reads what the load wrote.
  const Instruction &act1 = t.instructions()[4];
  EXPECT_EQ(t.reads(act1)[0].tensor, dst.tensor);
  EXPECT_EQ(t.reads(act1)[0].block, 1u);
  // The store writes rows 128..255 of out.
  Region out = t.writes(t.instructions()[5])[0];
  EXPECT_EQ(t.tensors()[out.tensor].name, "out");
  EXPECT_EQ(out.begin, 128u * 512 * 4);
  EXPECT_EQ(out.end, 256u * 512 * 4);
}

TEST(TraceBuilder, LoopMarkers) {
  Built b = mustBuild(kExpKernel, "x=f32[256,512]");
  auto markers = b.trace.markers();
  ASSERT_EQ(markers.size(), 3u);
  EXPECT_EQ(markers[0].event, LoopEvent::Enter);
  EXPECT_EQ(markers[0].beforeInstruction, 0u);
  EXPECT_EQ(markers[1].event, LoopEvent::NextIteration);
  EXPECT_EQ(markers[1].beforeInstruction, 3u);
  EXPECT_EQ(markers[2].event, LoopEvent::Exit);
  EXPECT_EQ(markers[2].beforeInstruction, 6u);
  for (const LoopMarker &m : markers) {
    EXPECT_EQ(m.kind, LoopKind::Affine);
    EXPECT_EQ(m.loopId, 0);
  }
}

TEST(TraceBuilder, SequentialAndPythonRangeLoopsShareOneBuffer) {
  std::string body = R"(@nki.jit
def kernel(x):
  out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for m in range(2):
    for k in nl.sequential_range(2):
      t = nl.load(x[m * 128:(m + 1) * 128, k * 256:(k + 1) * 256])
      nl.store(out[m * 128:(m + 1) * 128, k * 256:(k + 1) * 256], value=t)
  return out
)";
  Built b = mustBuild(body, "x=f32[256,512]");
  EXPECT_EQ(b.trace.instructions().size(), 8u);
  for (const LoopMarker &m : b.trace.markers()) EXPECT_EQ(m.kind, LoopKind::Sequential);
  // Enter + next + exit for the outer loop, and per outer iteration for the inner one.
  EXPECT_EQ(b.trace.markers().size(), 3u + 2 * 3u);
  EXPECT_EQ(tensorNamed(b.trace, "t").numBlocks, 1u);
}

TEST(TraceBuilder, DmaBytesPerPartitionIsTheContiguousRun) {
  std::string body = R"(@nki.jit
def kernel(x):
  out = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.shared_hbm)
  rows = nl.load(x[0:128, 0:512])
  column = nl.load(x[0:128, 3])
  pair = nl.load(x[0:128, 8:10])
  nl.store(out[0:128, 0:4], value=rows[0:128, 0:4])
  return out
)";
  Built b = mustBuild(body, "x=f32[128,512]");
  auto insts = b.trace.instructions();
  ASSERT_EQ(insts.size(), 4u);
  // Whole rows: one 2 KiB descriptor per partition.
  EXPECT_EQ(insts[0].bytes, 128u * 512 * 4);
  EXPECT_EQ(insts[0].bytesPerPartition, 2048u);
  // One element per partition: 4-byte descriptors.
  EXPECT_EQ(insts[1].bytes, 128u * 4);
  EXPECT_EQ(insts[1].bytesPerPartition, 4u);
  EXPECT_EQ(insts[2].bytesPerPartition, 8u);
  // The store's HBM side: rows of 4 elements of a [128, 4] tensor.
  EXPECT_EQ(insts[3].op, OpKind::Store);
  EXPECT_EQ(insts[3].bytesPerPartition, 16u);
}

TEST(TraceBuilder, NlMatmulAddsATransposeAndItsEviction) {
  std::string body = R"(@nki.jit
def kernel(x, w):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  xt = nl.load(x[0:128, 0:128])
  wt = nl.load(w[0:128, 0:512])
  r = nl.matmul(xt, wt)
  rt = nisa.nc_matmul(xt, wt)
  s = nl.copy(r)
  nl.store(out[0:128, 0:512], value=s)
  return out
)";
  Built b = mustBuild(body, "x=f32[128,128],w=f32[128,512]");
  std::vector<OpKind> ops;
  for (const Instruction &i : b.trace.instructions()) ops.push_back(i.op);
  std::vector<OpKind> expected = {OpKind::Load,     OpKind::Load,     OpKind::Transpose,  OpKind::TensorCopy,
                                  OpKind::NcMatmul, OpKind::NcMatmul, OpKind::TensorCopy, OpKind::Store};
  EXPECT_EQ(ops, expected);
  const Instruction &mm = b.trace.instructions()[5];
  EXPECT_EQ(mm.partitions, 128);
  EXPECT_EQ(mm.stationaryFreeElems, 128u);
  EXPECT_EQ(mm.freeElems, 512u);
  EXPECT_EQ(b.trace.tensors()[b.trace.writes(mm)[0].tensor].buffer, nki::Buffer::PSUM);
}

TEST(TraceBuilder, AccumulationIntoSbufIsAVectorAdd) {
  std::string body = R"(@nki.jit
def kernel(x):
  out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
  acc = nl.zeros((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
  for k in nl.affine_range(4):
    t = nl.load(x[0:128, k * 128:(k + 1) * 128])
    acc[0:128, 0:1] += nl.sum(t, axis=[1], keepdims=True)
  nl.store(out[0:128, 0:1], value=acc)
  return out
)";
  Built b = mustBuild(body, "x=f32[128,512]");
  std::vector<OpKind> ops;
  for (const Instruction &i : b.trace.instructions()) ops.push_back(i.op);
  ASSERT_EQ(ops.size(), 1u + 4 * 3u + 1u);
  EXPECT_EQ(ops[0], OpKind::Memset);
  EXPECT_EQ(ops[1], OpKind::Load);
  EXPECT_EQ(ops[2], OpKind::TensorReduce);
  EXPECT_EQ(ops[3], OpKind::TensorTensor);
  EXPECT_EQ(ops.back(), OpKind::Store);
  // The add reads and writes the accumulator.
  const Instruction &add = b.trace.instructions()[3];
  EXPECT_EQ(b.trace.writes(add)[0].tensor, b.trace.reads(add)[1].tensor);
}

TEST(TraceBuilder, UnknownShapesAreAnError) {
  auto source = syntax::SourceBuffer::fromText("test.py", std::string(kHeader) + kExpKernel);
  ASSERT_TRUE(bool(source));
  auto file = nki::buildKernelFile(std::move(*source), {});
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  auto trace = buildTrace(file->kernels.front());
  ASSERT_FALSE(bool(trace));
  EXPECT_NE(llvm::toString(trace.takeError()).find("needs input shapes"), std::string::npos);
}

TEST(TraceBuilder, TraceSimulatesAndFeedsTheProfile) {
  Built b = mustBuild(kExpKernel, "x=f32[256,512]");
  TimingModel model(testing::target("trn1"));
  auto r = model.simulate(b.trace);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_GT(r->makespanNs, 0);
  EXPECT_EQ(r->hbmReadBytes, 256u * 512 * 4);
  EXPECT_EQ(r->hbmWriteBytes, 256u * 512 * 4);
  ASSERT_FALSE(r->statements.empty());
  Profile p = summarize(*r, model.hardware());
  EXPECT_EQ(p.backend, "sim-trn1");
}

TEST(TraceBuilder, InstructionLimit) {
  auto source = syntax::SourceBuffer::fromText("test.py", std::string(kHeader) + kExpKernel);
  ASSERT_TRUE(bool(source));
  auto specs = nki::parseInputSpecs("x=f32[256,512]");
  ASSERT_TRUE(bool(specs));
  nki::FrontEndOptions opts;
  opts.inputs = &*specs;
  auto file = nki::buildKernelFile(std::move(*source), opts);
  ASSERT_TRUE(bool(file));
  TraceBuildOptions small;
  small.maxInstructions = 5;
  auto trace = buildTrace(file->kernels.front(), small);
  ASSERT_FALSE(bool(trace));
  llvm::consumeError(trace.takeError());
}

TEST(Bench, SummaryAndRenderings) {
  std::vector<BenchRow> rows(3);
  rows[0].name = "a";
  rows[0].estimatedMs = 1.1;
  rows[0].measuredMs = 1.0;
  rows[1].name = "b,c";
  rows[1].estimatedMs = 2.0;
  rows[1].measuredMs = 2.5;
  rows[2].name = "broken";
  rows[2].error = "no shapes";
  BenchSummary s = summarizeBench(rows);
  EXPECT_EQ(s.profiled, 2u);
  EXPECT_EQ(s.failed, 1u);
  ASSERT_TRUE(s.medianAbsError.has_value());
  EXPECT_NEAR(*s.medianAbsError, 0.15, 1e-12);
  EXPECT_NEAR(*s.maxAbsError, 0.2, 1e-12);
  EXPECT_NEAR(*s.geomeanEstimatedMs, std::sqrt(1.1 * 2.0), 1e-12);
  std::string table = renderBenchTable(rows, s, "sim-trn1");
  EXPECT_NE(table.find("est ms (sim-trn1)"), std::string::npos);
  EXPECT_NE(table.find("measured ms"), std::string::npos);
  std::string csv = renderBenchCsv(rows, "sim-trn1");
  EXPECT_EQ(csv.rfind("case,problem,backend,", 0), 0u);
  EXPECT_NE(csv.find("\"b,c\""), std::string::npos);
  std::string svg = renderBenchSvg(rows, "sim-trn1");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

} // namespace
} // namespace accelopt::perf
