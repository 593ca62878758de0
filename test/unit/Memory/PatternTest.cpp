#include "Memory/Pattern.h"
#include "Memory/Signature.h"

#include "MemoryTestUtil.h"

using namespace accelopt;
using namespace accelopt::memory;
using namespace accelopt::memory::test;
using nlohmann::json;

namespace {

std::vector<json> ops(const char *text) {
  std::vector<json> out;
  for (auto &op : json::parse(text)) out.push_back(op);
  return out;
}

TEST(Signature, SiluShapeWithOpKindsAndBuffers) {
  auto file = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  std::string sig = computeSignature(file.kernels[0]);
  EXPECT_NE(sig.find("nisa.memset(>sbuf) affine{ affine{ nl.load(hbm>sbuf) affine{ nisa.activation(sbuf>sbuf)"),
            std::string::npos)
      << sig;
  EXPECT_NE(sig.find("nl.store(sbuf>hbm) } }"), std::string::npos) << sig;
  EXPECT_EQ(sig.find("kernel"), std::string::npos) << "names never enter a signature";
}

TEST(Signature, RenamedCopyIsIdenticalOthersAreSimilar) {
  auto a = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  auto b = parseKernel("silu2.py", renamedSilu());
  auto c = parseKernel("rms.py", readSource("nkibench/kernels/rmsnorm_M256_N512.py"));
  auto m = parseKernel("mm.py", readSource("nkibench/kernels/matmul_K512_M256_N1024.py"));
  std::string sa = computeSignature(a.kernels[0]), sb = computeSignature(b.kernels[0]);
  std::string sc = computeSignature(c.kernels[0]), sm = computeSignature(m.kernels[0]);
  EXPECT_EQ(sa, sb);
  EXPECT_DOUBLE_EQ(signatureSimilarity(sa, sb), 1.0);
  double ac = signatureSimilarity(sa, sc), am = signatureSimilarity(sa, sm);
  EXPECT_GT(ac, 0.0);
  EXPECT_LT(ac, 1.0);
  EXPECT_LT(am, 1.0);
  EXPECT_DOUBLE_EQ(signatureSimilarity(sa, sc), signatureSimilarity(sc, sa));
  EXPECT_DOUBLE_EQ(signatureSimilarity("", sa), 0.0);
  EXPECT_NEAR(signatureSimilarity("a b c d", "a b x d"), 0.75, 1e-12);
}

TEST(Pattern, GeneraliseReplacesIdsByRoles) {
  auto file = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  const nki::Kernel &k = file.kernels[0];
  auto p = generalisePattern(k, ops(R"([{"op":"fission","loop":"h","at":"S11"}])"));
  ASSERT_TRUE(bool(p)) << errorText(p.takeError());
  ASSERT_EQ(p->ops.size(), 1u);
  EXPECT_EQ(p->ops[0]["loop"], "<innermost affine loop>");
  EXPECT_EQ(p->ops[0]["at"], "<nisa.reciprocal sbuf>sbuf in innermost affine loop>");
  EXPECT_EQ(p->ops[0]["op"], "fission");
  ASSERT_EQ(p->vars.size(), 2u);
  ASSERT_EQ(p->relations.size(), 1u);
  EXPECT_EQ(p->relations[0].rel, "parent");
  EXPECT_EQ(p->signature, computeSignature(k));
  // Literal parameters stay.
  auto split = generalisePattern(k, ops(R"([{"op":"split","loop":"L1","factor":2}])"));
  ASSERT_TRUE(bool(split));
  EXPECT_EQ(split->ops[0]["factor"], 2);
  EXPECT_EQ(split->ops[0]["loop"], "<depth-1 affine loop>");
  // JSON round trip.
  auto back = Pattern::fromJson(p->toJson());
  ASSERT_TRUE(bool(back));
  EXPECT_EQ(back->opsKey(), p->opsKey());
  EXPECT_EQ(back->rolesJson(), p->rolesJson());
}

TEST(Pattern, UnknownIdIsAnError) {
  auto file = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  auto p = generalisePattern(file.kernels[0], ops(R"([{"op":"split","loop":"L9","factor":2}])"));
  ASSERT_FALSE(bool(p));
  EXPECT_NE(errorText(p.takeError()).find("unknown id 'L9'"), std::string::npos);
}

TEST(Pattern, RoundTripOnRenamedCopy) {
  auto a = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  auto b = parseKernel("silu_renamed.py", renamedSilu());
  ASSERT_EQ(b.kernels[0].name, "silu_kernel");
  auto original = ops(R"([{"op":"interchange","outer":"L1","inner":"L2"},
                          {"op":"fission","loop":"L2","at":"S11"},
                          {"op":"unroll","loop":"h","factor":2},
                          {"op":"hoist","stmt":"S8","out_of":"c"}])");
  auto p = generalisePattern(a.kernels[0], original);
  ASSERT_TRUE(bool(p)) << errorText(p.takeError());
  // Ids are canonical (L#/S#) after instantiation, whatever the op used.
  auto expected = ops(R"([{"op":"interchange","outer":"L1","inner":"L2"},
                          {"op":"fission","loop":"L2","at":"S11"},
                          {"op":"unroll","loop":"L2","factor":2},
                          {"op":"hoist","stmt":"S8","out_of":"L1"}])");
  for (auto *file : {&a, &b}) {
    auto inst = instantiatePattern(*p, file->kernels[0]);
    ASSERT_TRUE(bool(inst)) << errorText(inst.takeError());
    ASSERT_FALSE(inst->empty());
    EXPECT_EQ(json((*inst)[0].ops), json(expected)) << json((*inst)[0].ops).dump();
    // Every role matched with all its features.
    EXPECT_EQ((*inst)[0].score, 4 * int(p->vars.size()));
  }
}

TEST(Pattern, RelationsConstrainSites) {
  auto a = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  // The only depth-1 loop with an innermost loop nested directly in it.
  auto p = generalisePattern(a.kernels[0], ops(R"([{"op":"fuse","first":"L1","second":"L2"}])"));
  ASSERT_TRUE(bool(p));
  ASSERT_EQ(p->relations.size(), 1u);
  EXPECT_EQ(p->relations[0].rel, "parent");
  auto inst = instantiatePattern(*p, a.kernels[0]);
  ASSERT_TRUE(bool(inst));
  ASSERT_EQ(inst->size(), 1u);
}

TEST(Pattern, NoSiteNoInstantiation) {
  auto mm = parseKernel("mm.py", readSource("nkibench/kernels/matmul_K512_M256_N1024.py"));
  auto silu = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  // A statement role that silu does not have.
  const nki::Kernel &k = mm.kernels[0];
  int matmul = -1;
  for (const auto &s : k.stmts)
    if (s.callee == "nisa.nc_matmul" || s.callee == "nl.matmul") matmul = s.id;
  ASSERT_GE(matmul, 0);
  ASSERT_GE(k.stmts[size_t(matmul)].parent, 0);
  json op = {{"op", "hoist"},
             {"stmt", "S" + std::to_string(matmul)},
             {"out_of", "L" + std::to_string(k.stmts[size_t(matmul)].parent)}};
  auto p = generalisePattern(k, std::vector<json>{op});
  ASSERT_TRUE(bool(p));
  auto inst = instantiatePattern(*p, silu.kernels[0]);
  ASSERT_TRUE(bool(inst));
  EXPECT_TRUE(inst->empty());
  auto self = instantiatePattern(*p, k);
  ASSERT_TRUE(bool(self));
  ASSERT_FALSE(self->empty());
  EXPECT_EQ((*self)[0].ops[0], op);
}

TEST(Pattern, AdvanceCallbackSeesEachPrefix) {
  auto a = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  auto b = parseKernel("silu_renamed.py", renamedSilu());
  auto p = generalisePattern(a.kernels[0], ops(R"([{"op":"unroll","loop":"L2","factor":2},
                                                 {"op":"split","loop":"L1","factor":2}])"));
  ASSERT_TRUE(bool(p));
  std::vector<size_t> prefixes;
  InstantiateOptions opts;
  opts.advance = [&](llvm::ArrayRef<json> done) -> llvm::Expected<const nki::Kernel *> {
    prefixes.push_back(done.size());
    return &b.kernels[0];
  };
  auto inst = instantiatePattern(*p, b.kernels[0], opts);
  ASSERT_TRUE(bool(inst));
  ASSERT_EQ(inst->size(), 1u);
  EXPECT_EQ(prefixes, std::vector<size_t>{1});
  // A refusing step drops the branch.
  opts.advance = [&](llvm::ArrayRef<json>) -> llvm::Expected<const nki::Kernel *> {
    return makeError(MemoryError::BadInput, "refused");
  };
  inst = instantiatePattern(*p, b.kernels[0], opts);
  ASSERT_TRUE(bool(inst));
  EXPECT_TRUE(inst->empty());
}

TEST(Pattern, StepKernelsForLaterOps) {
  auto a = parseKernel("silu.py", readSource("nkibench/kernels/silu_M256_N2048.py"));
  auto b = parseKernel("silu_renamed.py", renamedSilu());
  std::vector<const nki::Kernel *> steps = {&a.kernels[0], &b.kernels[0]};
  auto p = generalisePattern(steps, ops(R"([{"op":"unroll","loop":"h","factor":2},
                                            {"op":"unroll","loop":"half","factor":2}])"));
  ASSERT_TRUE(bool(p)) << errorText(p.takeError());
  EXPECT_EQ(p->ops[0]["loop"], p->ops[1]["loop"]);
  EXPECT_EQ(p->vars.size(), 2u); // one per step
  std::vector<const nki::Kernel *> wrong = {&a.kernels[0], &b.kernels[0], &a.kernels[0]};
  auto bad = generalisePattern(wrong, ops(R"([{"op":"unroll","loop":"h","factor":2}])"));
  ASSERT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

} // namespace
