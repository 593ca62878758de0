// Unit tests of the rewrite engine: atomic candidates, merged edits, bad input,
// the edit list, the direction dependence test and the unified diff.
#include "Rewrite/OpSupport.h"
#include "Rewrite/Rewrite.h"

#include "NKI/FrontEnd.h"

#include <gtest/gtest.h>

using namespace accelopt;
using namespace accelopt::rewrite;

namespace {

const char *Matmul = R"(import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def kernel(lhsT, rhs):
  result = nl.ndarray((256, 512), dtype=np.float32, buffer=nl.shared_hbm)
  for m in nl.affine_range(2):
    res_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(4):
      # a comment that must survive
      a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
      b = nl.load(rhs[k * 128:(k + 1) * 128, 0:512])
      res_psum += nisa.nc_matmul(a, b)
    res_sb = nl.copy(res_psum, dtype=np.float32)
    nl.store(result[m * 128:(m + 1) * 128, 0:512], value=res_sb)
  return result
)";

nki::InputSpecs specs() {
  auto s = nki::parseInputSpecs("lhsT=f32[512,256],rhs=f32[512,512]");
  EXPECT_TRUE(bool(s));
  return s ? *s : nki::InputSpecs{};
}

std::unique_ptr<syntax::SourceBuffer> source(const char *text = Matmul) {
  auto b = syntax::SourceBuffer::fromText("/tmp/k.py", text);
  EXPECT_TRUE(bool(b));
  return std::move(*b);
}

std::vector<nlohmann::json> ops(const char *text) {
  auto o = parseOps(text);
  EXPECT_TRUE(bool(o)) << (o ? "" : llvm::toString(o.takeError()));
  return o ? *o : std::vector<nlohmann::json>{};
}

TEST(Engine, AppliesASequenceResolvingIdsInTheNewIR) {
  auto in = specs();
  auto src = source();
  auto res = applyCandidate(*src, ops(R"([{"op":"split","loop":"L1","factor":2},
                                    {"op":"set_loop_kind","loop":"L2","kind":"sequential_range"}])"),
                            {&in, ""});
  ASSERT_EQ(res.status, Status::Applied) << res.message;
  EXPECT_NE(res.text.find("for ko in nl.affine_range(2):\n      for ki in nl.sequential_range(2):"), std::string::npos)
      << res.text;
  EXPECT_NE(res.text.find("        # a comment that must survive"), std::string::npos);
  ASSERT_EQ(res.descriptions.size(), 2u);
  // The merged edits are relative to the original text.
  auto merged = clang::tooling::applyAllReplacements(src->text(), res.edits);
  ASSERT_TRUE(bool(merged));
  EXPECT_EQ(*merged, res.text);
}

TEST(Engine, SecondOpRefusedLeavesTextUnchanged) {
  auto in = specs();
  auto src = source();
  // Op 1 is legal; op 2 hoists the PSUM accumulator, which the loop modifies.
  auto res = applyCandidate(*src, ops(R"([{"op":"split","loop":"L1","factor":2},
                                    {"op":"hoist","stmt":"S1","out_of":"L0"}])"),
                            {&in, ""});
  EXPECT_EQ(res.status, Status::Refused);
  EXPECT_EQ(res.failedOp, 1u);
  EXPECT_EQ(res.text, src->text().str());
  EXPECT_TRUE(res.edits.empty());
  EXPECT_EQ(res.refusal.op, "hoist");
  EXPECT_EQ(res.refusal.ids, "S1 L0");
  EXPECT_NE(res.message.find("/tmp/k.py:11:5: error: hoist S1 L0 refused:"), std::string::npos) << res.message;
  EXPECT_NE(res.message.find("[accelopt-hoist]"), std::string::npos);
  EXPECT_NE(res.message.find("op 2 of the candidate"), std::string::npos);
}

TEST(Engine, BadInputIsNotARefusal) {
  auto in = specs();
  auto src = source();
  auto res = applyCandidate(*src, ops(R"([{"op":"split","loop":"L1","factor":2}, {"op":"nope"}])"), {&in, ""});
  EXPECT_EQ(res.status, Status::BadInput);
  EXPECT_EQ(res.failedOp, 1u);
  EXPECT_EQ(res.text, src->text().str());
  EXPECT_NE(res.message.find("unknown op 'nope'"), std::string::npos);

  res = applyCandidate(*src, ops(R"({"op":"split","loop":"S3","factor":2})"), {&in, ""});
  EXPECT_EQ(res.status, Status::BadInput);
  EXPECT_NE(res.message.find("'S3' (field 'loop') is not a loop"), std::string::npos) << res.message;

  EXPECT_FALSE(bool(parseOps("{")));
  EXPECT_FALSE(bool(parseOps("[1, 2]")));
  EXPECT_FALSE(bool(parseOps("\"split\"")));
}

TEST(Engine, LegalOpsAllApply) {
  auto in = specs();
  auto src = source();
  auto legal = legalOps(*src, {&in, ""});
  ASSERT_TRUE(bool(legal));
  ASSERT_FALSE(legal->empty());
  bool sawSplit = false;
  for (auto &l : *legal) {
    auto res = applyCandidate(*src, {l.op}, {&in, ""});
    EXPECT_EQ(res.status, Status::Applied) << formatOp(l.op) << "\n" << res.message;
    sawSplit |= l.op["op"] == "split";
  }
  EXPECT_TRUE(sawSplit);
  EXPECT_EQ(formatOp(nlohmann::json{{"factor", 2}, {"loop", "L1"}, {"op", "split"}}),
            R"({"op":"split","loop":"L1","factor":2})");
}

TEST(EditList, MergesInsertionsAndRejectsOverlaps) {
  EditList e;
  e.insert(4, "a");
  e.replace(4, 2, "XY");
  e.insert(4, "b");
  auto r = e.build("f.py");
  ASSERT_TRUE(bool(r));
  auto out = clang::tooling::applyAllReplacements("0123456789", *r);
  ASSERT_TRUE(bool(out));
  EXPECT_EQ(*out, "0123abXY6789");

  EditList bad;
  bad.replace(2, 4, "x");
  bad.replace(3, 1, "y");
  auto err = bad.build("f.py");
  EXPECT_FALSE(bool(err));
  llvm::consumeError(err.takeError());
}

TEST(Dependence, DirectionsSeparateShiftedAccesses) {
  // buf[i + 1, j] = f(buf[i, j + 1]): distance (1, -1).
  const char *text = R"(import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=np.float32, buffer=nl.shared_hbm)
  buf = nl.ndarray((4, 5, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  for i in nl.sequential_range(3):
    for j in nl.sequential_range(4):
      buf[i + 1, j, nl.arange(128)[:, None], nl.arange(512)[None, :]] = nl.exp(buf[i, j + 1, nl.arange(128)[:, None], nl.arange(512)[None, :]])
  nl.store(out[0:128, 0:512], value=buf[3, 0, 0:128, 0:512])
  return out
)";
  auto s = nki::parseInputSpecs("x=f32[128,512]");
  ASSERT_TRUE(bool(s));
  nki::FrontEndOptions fo;
  fo.inputs = &*s;
  auto file = nki::buildKernelFile(source(text), fo);
  ASSERT_TRUE(bool(file));
  const nki::Kernel &k = file->kernels.front();
  const nki::Statement &st = k.stmts[2];
  ASSERT_EQ(st.writes.size(), 1u);
  const nki::Access *w = &st.writes[0], *r = nullptr;
  for (auto &a : st.reads)
    if (a.tensor == w->tensor) r = &a;
  ASSERT_TRUE(r);
  // write at (i1, j1) meets read at (i2, j2) with i1 + 1 = i2, j1 = j2 + 1: d_i = -1, d_j = +1.
  EXPECT_TRUE(mayOverlapDir(k, *w, *r, {{0, Dir::Neg}, {1, Dir::Pos}}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Pos}, {1, Dir::Neg}}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Eq}}));
  EXPECT_FALSE(mayOverlapDir(k, *w, *r, {{0, Dir::Neg}, {1, Dir::Eq}}));
  EXPECT_TRUE(mayOverlapDir(k, *w, *r, {}));
}

TEST(Diff, UnifiedHunks) {
  std::string a = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n";
  std::string b = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
  EXPECT_EQ(unifiedDiff(a, b, "x.py", "x.py"),
            "--- x.py\n+++ x.py\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n@@ -11,3 +11,4 @@\n k\n l\n m\n+n\n");
  // Changes at most 6 unchanged lines apart share one hunk (as GNU diff -u).
  std::string c = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nK\nl\nm\n";
  EXPECT_EQ(unifiedDiff(a, c, "x.py", "x.py"),
            "--- x.py\n+++ x.py\n@@ -1,13 +1,13 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n h\n i\n j\n-k\n+K\n l\n m\n");
  EXPECT_EQ(unifiedDiff(a, a, "x", "x"), "");
}

} // namespace
