#include "Analysis/Dependence.h"
#include "Analysis/Verifier.h"
#include "NKI/FrontEnd.h"

#include <gtest/gtest.h>

using namespace accelopt;
using namespace accelopt::nki;
using namespace accelopt::analysis;

namespace {

KernelFile build(const std::string &body, const char *inputs) {
  static InputSpecs keep;
  keep = *parseInputSpecs(inputs);
  FrontEndOptions opts;
  opts.inputs = &keep;
  std::string text = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n@nki.jit\ndef k(x):\n" + body;
  auto file = buildKernelFile(std::move(*syntax::SourceBuffer::fromText("k.py", text)), opts);
  EXPECT_TRUE(bool(file));
  return std::move(*file);
}

TEST(Dependence, DisjointTilesPerIterationAreIndependent) {
  KernelFile f = build("  b = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                       "  for i in nl.affine_range(4):\n"
                       "    b[i, 0:128, 0:512] = nl.load(x[0:128, 512 * i:512 * i + 512])\n"
                       "  return b\n",
                       "x=f32[128,2048]");
  const Kernel &k = f.kernels[0];
  const Statement &st = k.stmts[1];
  InstancePair pair;
  pair.carrier = 0;
  EXPECT_FALSE(mayOverlap(k, st.writes[0], st.id, st.writes[0], st.id, pair));
  EXPECT_FALSE(mayOverlap(k, st.reads[0], st.id, st.reads[0], st.id, pair));
  // The same iteration touches its own elements.
  InstancePair same;
  same.sameIteration = {0};
  EXPECT_TRUE(mayOverlap(k, st.writes[0], st.id, st.writes[0], st.id, same));
}

TEST(Dependence, OverlappingWindowsDepend) {
  // Windows of 512 advancing by 256 overlap between neighbouring iterations.
  KernelFile f = build("  for i in nl.affine_range(4):\n"
                       "    t = nl.load(x[0:128, 256 * i:256 * i + 512])\n"
                       "  return x\n",
                       "x=f32[128,2048]");
  const Kernel &k = f.kernels[0];
  InstancePair pair;
  pair.carrier = 0;
  const Access &r = k.stmts[0].reads[0];
  EXPECT_TRUE(mayOverlap(k, r, 0, r, 0, pair));
}

TEST(Dependence, GcdProvesStridedAccessesApart) {
  // Even and odd columns never meet.
  KernelFile f = build("  b = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
                       "  i_p = nl.arange(128)[:, None]\n"
                       "  i_f = nl.arange(256)[None, :]\n"
                       "  b[i_p, 2 * i_f] = nl.load(x[i_p, i_f])\n"
                       "  b[i_p, 2 * i_f + 1] = nl.load(x[i_p, i_f])\n"
                       "  return b\n",
                       "x=f32[128,256]");
  const Kernel &k = f.kernels[0];
  const Access &even = k.stmts[3].writes[0], &odd = k.stmts[4].writes[0];
  EXPECT_FALSE(mayOverlap(k, even, 3, odd, 4, InstancePair{}));
  EXPECT_TRUE(mayOverlap(k, even, 3, even, 3, InstancePair{}));
}

TEST(Verifier, RulesAreDocumentedOnce) {
  std::set<std::string> ids;
  for (auto &r : verifierRules()) EXPECT_TRUE(ids.insert(r.id).second) << r.id;
  EXPECT_TRUE(ids.count("affine-output-dep"));
}

} // namespace
