#include "NKI/FrontEnd.h"
#include "NKI/OpTable.h"

#include <gtest/gtest.h>

using namespace accelopt;
using namespace accelopt::nki;

namespace {

KernelFile build(std::string text, const char *inputs) {
  auto specs = parseInputSpecs(inputs);
  EXPECT_TRUE(bool(specs));
  static InputSpecs keep;
  keep = *specs;
  FrontEndOptions opts;
  opts.inputs = &keep;
  auto src = syntax::SourceBuffer::fromText("k.py", std::move(text));
  auto file = buildKernelFile(std::move(*src), opts);
  if (!file) ADD_FAILURE() << llvm::toString(file.takeError());
  return std::move(*file);
}

const char *Header = "import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n"
                     "import neuronxcc.nki.isa as nisa\n";

TEST(InputSpecs, ParsesArraysAndScalars) {
  auto specs = parseInputSpecs("a=f32[32,128,40,128], b=bfloat16[40,128], eps=0.001, c=f16[4]~uniform(0,1)");
  ASSERT_TRUE(bool(specs)) << llvm::toString(specs.takeError());
  ASSERT_EQ(specs->size(), 4u);
  EXPECT_EQ((*specs)[0].shape, (std::vector<int64_t>{32, 128, 40, 128}));
  EXPECT_EQ((*specs)[1].dtype, DType::BFloat16);
  EXPECT_TRUE((*specs)[2].isScalar);
  EXPECT_DOUBLE_EQ((*specs)[2].scalar, 0.001);
  EXPECT_EQ((*specs)[3].init, "uniform(0,1)");
  EXPECT_EQ(formatInputSpecs(*specs).substr(0, 22), "a=float32[32,128,40,12");
  EXPECT_FALSE(bool(parseInputSpecs("a=f32[1,0]")));
  llvm::consumeError(parseInputSpecs("a=f32[1,0]").takeError());
  auto dup = parseInputSpecs("a=f32[1],a=f32[2]");
  ASSERT_FALSE(bool(dup));
  EXPECT_NE(llvm::toString(dup.takeError()).find("given twice"), std::string::npos);
}

TEST(OpTable, CoversNkiBenchCalls) {
  for (const char *name : {"nl.load",
                           "nl.store",
                           "nl.ndarray",
                           "nl.zeros",
                           "nl.full",
                           "nl.copy",
                           "nisa.nc_matmul",
                           "nl.matmul",
                           "nisa.activation",
                           "nisa.tensor_tensor",
                           "nisa.tensor_scalar",
                           "nisa.tensor_reduce",
                           "nisa.tensor_tensor_scan",
                           "nisa.reciprocal",
                           "nisa.memset",
                           "nl.loop_reduce",
                           "nl.shared_constant",
                           "nl.multiply",
                           "nl.add",
                           "nl.subtract",
                           "nl.exp",
                           "nl.square",
                           "nl.rsqrt",
                           "nl.sum",
                           "nl.max",
                           "nl.maximum",
                           "nisa.iota",
                           "nisa.nc_transpose"})
    EXPECT_NE(lookupOp(name), nullptr) << name;
  const OpInfo *mm = lookupOp("nisa.nc_matmul");
  EXPECT_EQ(mm->engine, Engine::Tensor);
  EXPECT_EQ(mm->param("moving")->maxFree, 512);
  EXPECT_EQ(mm->param("stationary")->maxFree, 128);
  EXPECT_EQ(mm->result, Buffer::PSUM);
  EXPECT_EQ(canonicalModule("neuronxcc.nki.isa"), "nisa");
  EXPECT_TRUE(isFunctionValue("np.multiply"));
  EXPECT_EQ(lookupConstant("nl.tile_size.pmax")->value, 128);
}

TEST(FrontEnd, TracedKernelLoopsTensorsAccesses) {
  std::string text = std::string(Header) +
                     "@nki.jit\n"
                     "def kernel(v1):\n"
                     "    v2 = nl.ndarray((128, 1024), dtype=np.float32, buffer=nl.shared_hbm)\n"
                     "    v4 = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)\n"
                     "    for i0 in nl.affine_range(2):\n"
                     "        v4[i0, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.load(v1[nl.arange(128)[:, "
                     "None], 512 * i0 + nl.arange(512)[None, :]])\n"
                     "        ' end loop i0 '\n"
                     "    for i1 in range(0, 1024, 512):\n"
                     "        nl.store(v2[nl.arange(128)[:, None], i1 + nl.arange(512)[None, :]], value=v4[i1 // 512, "
                     "nl.arange(128)[:, None], nl.arange(512)[None, :]])\n"
                     "    return v2\n";
  KernelFile f = build(text, "v1=f32[128,1024]");
  ASSERT_EQ(f.kernels.size(), 1u);
  const Kernel &k = f.kernels[0];
  ASSERT_EQ(k.loops.size(), 2u);
  EXPECT_EQ(k.loops[0].kind, LoopKind::Affine);
  EXPECT_EQ(*k.loops[0].tripCount.value, 2);
  EXPECT_EQ(k.loops[1].kind, LoopKind::PyRange);
  EXPECT_EQ(k.loops[1].runsAs, LoopKind::Sequential); // 0.1 makes `range` a sequential_range
  EXPECT_EQ(k.loops[0].runsAs, LoopKind::Affine);
  EXPECT_EQ(*k.loops[1].tripCount.value, 2);
  ASSERT_EQ(k.stmts.size(), 5u); // the string marker has no id
  const Statement &load = k.stmts[2];
  EXPECT_EQ(load.callee, "nl.load");
  ASSERT_EQ(load.writes.size(), 1u);
  ASSERT_EQ(load.reads.size(), 1u);
  const Access &src = load.reads[0];
  EXPECT_TRUE(src.usesAdvanced);
  EXPECT_EQ(src.tileShape, (std::vector<int64_t>{128, 512}));
  // v1[arange(128), 512*i0 + arange(512)]: dim 1 base = 512 * n(L0).
  EXPECT_EQ(src.dims[1].base.coeff(0), 512);
  const Access &dst = load.writes[0];
  EXPECT_EQ(dst.dims[0].base.coeff(0), 1);
  const Tensor &v4 = k.tensors[dst.tensor];
  EXPECT_EQ(v4.parDim, 1);
  EXPECT_EQ(v4.blockDims(), 1);
  EXPECT_EQ(*v4.bytesPerPartition(), 2048);
  EXPECT_EQ(*v4.totalBytesPerPartition(), 4096);
  EXPECT_TRUE(k.tensors[k.stmts[0].definesTensor].isOutput);
  EXPECT_EQ(k.resolve("i1")->index, 1);
  EXPECT_TRUE(k.resolve("L1")->isLoop);
  EXPECT_FALSE(k.resolve("S99"));
}

TEST(FrontEnd, TraceTimePythonAndTiles) {
  std::string text = std::string(Header) + "TILE = 128\n"
                                           "@nki.jit\n"
                                           "def kernel(x, eps):\n"
                                           "  M, N = x.shape\n"
                                           "  assert M % TILE == 0, f'M={M}'\n"
                                           "  n_tiles = M // nl.tile_size.pmax\n"
                                           "  out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)\n"
                                           "  for i in nl.affine_range(n_tiles):\n"
                                           "    t = nl.load(x[i * TILE:(i + 1) * TILE, 0:N])\n"
                                           "    s = nl.sum(t, axis=[1])\n"
                                           "    r = nl.multiply(t, s)\n"
                                           "    acc = nl.zeros((TILE, 512), nl.float32, buffer=nl.psum)\n"
                                           "    nl.store(out[i * TILE:(i + 1) * TILE, 0:N], value=r)\n"
                                           "  return out\n";
  KernelFile f = build(text, "x=bf16[512,256],eps=1e-5");
  const Kernel &k = f.kernels[0];
  EXPECT_TRUE(k.diagnostics.empty()) << k.diagnostics[0].message;
  ASSERT_EQ(k.loops.size(), 1u);
  EXPECT_EQ(*k.loops[0].tripCount.value, 4);
  const Tensor *t = nullptr, *s = nullptr, *acc = nullptr;
  for (auto &x : k.tensors) {
    if (x.name == "t") t = &x;
    if (x.name == "s") s = &x;
    if (x.name == "acc") acc = &x;
  }
  ASSERT_TRUE(t && s && acc);
  EXPECT_EQ(t->dtype, DType::BFloat16);
  EXPECT_EQ(*t->shape[1].value, 256);
  EXPECT_EQ(*s->shape[1].value, 1);
  EXPECT_EQ(acc->buffer, Buffer::PSUM);
  EXPECT_EQ(acc->scope, 0);

  KernelFile bad = build(text, "x=bf16[500,256],eps=1e-5");
  ASSERT_FALSE(bad.kernels[0].diagnostics.empty());
  EXPECT_EQ(bad.kernels[0].diagnostics[0].rule, "assert");
  EXPECT_NE(bad.kernels[0].diagnostics[0].message.find("M=500"), std::string::npos);
}

} // namespace
