#include "Syntax/PyAST.h"
#include "Syntax/SourceBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace accelopt::syntax;

namespace {

std::unique_ptr<Module> parse(std::string text) {
  auto src = SourceBuffer::fromText("t.py", std::move(text));
  EXPECT_TRUE(bool(src));
  return Module::parse(std::move(*src));
}

TEST(SourceBuffer, LineColumnRoundTrip) {
  SourceBuffer b("f.py", "ab\ncde\n\nx");
  EXPECT_EQ(b.lineCount(), 4u);
  EXPECT_EQ(b.lineCol(0).line, 1u);
  EXPECT_EQ(b.lineCol(4).line, 2u);
  EXPECT_EQ(b.lineCol(4).col, 2u);
  EXPECT_EQ(b.offsetOf({2, 2}), 4u);
  EXPECT_EQ(b.lineText(2), "cde");
  EXPECT_EQ(b.lineText(3), "");
  EXPECT_EQ(b.location(8), "f.py:4:1");
}

TEST(SourceBuffer, RejectsInvalidUtf8AndNul) {
  auto bad = SourceBuffer::fromText("f.py", std::string("ok\n\xC3\x28", 5));
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "f.py:2:1: error: file is not valid UTF-8");
  auto nul = SourceBuffer::fromText("f.py", std::string("a\0b", 3));
  ASSERT_FALSE(bool(nul));
  EXPECT_NE(llvm::toString(nul.takeError()).find("NUL byte"), std::string::npos);
  EXPECT_TRUE(bool(SourceBuffer::fromText("f.py", "x = 'é'\n")));
}

TEST(PyAST, StatementsAndRanges) {
  auto m = parse("import neuronxcc.nki.language as nl\n"
                 "@nki.jit\n"
                 "def k(a, b=2, *rest):\n"
                 "  x, y = a.shape  # comment\n"
                 "  for i in nl.affine_range(4):\n"
                 "    t[i, 0:128] += f(x, op=nl.exp)\n"
                 "  if x > 1:\n    pass\n  elif y:\n    z = 1\n  else:\n    z = 2\n"
                 "  return t\n");
  ASSERT_TRUE(m->errors().empty());
  auto fns = m->functions();
  ASSERT_EQ(fns.size(), 1u);
  const Stmt *fn = fns[0];
  EXPECT_EQ(fn->name, "k");
  ASSERT_EQ(fn->params.size(), 3u);
  EXPECT_EQ(fn->params[1].defaultValue->intValue, 2);
  EXPECT_TRUE(fn->params[2].isVarArgs);
  ASSERT_EQ(fn->decorators.size(), 1u);
  EXPECT_EQ(fn->decorators[0]->dottedName(), "nki.jit");
  ASSERT_EQ(fn->body.size(), 4u);
  EXPECT_EQ(fn->body[0]->kind, StmtKind::Assign);
  EXPECT_EQ(fn->body[0]->targets[0]->kind, ExprKind::Tuple);
  const Stmt *loop = fn->body[1];
  ASSERT_EQ(loop->kind, StmtKind::For);
  EXPECT_EQ(m->text(loop->headerRange), "for i in nl.affine_range(4):");
  const Stmt *acc = loop->body[0];
  EXPECT_EQ(acc->kind, StmtKind::AugAssign);
  EXPECT_EQ(acc->op, "+");
  const Expr *sub = acc->targets[0];
  ASSERT_EQ(sub->kind, ExprKind::Subscript);
  ASSERT_EQ(sub->elts.size(), 2u);
  EXPECT_EQ(sub->elts[1]->kind, ExprKind::Slice);
  EXPECT_EQ(sub->elts[1]->elts[1]->intValue, 128);
  const Expr *call = acc->value;
  EXPECT_EQ(call->kind, ExprKind::Call);
  ASSERT_NE(call->keyword("op"), nullptr);
  EXPECT_EQ(call->keyword("op")->dottedName(), "nl.exp");
  const Stmt *ifs = fn->body[2];
  ASSERT_EQ(ifs->kind, StmtKind::If);
  ASSERT_EQ(ifs->orelse.size(), 1u); // the elif
  EXPECT_EQ(ifs->orelse[0]->kind, StmtKind::If);
  EXPECT_EQ(ifs->orelse[0]->orelse.size(), 1u); // its else
}

TEST(PyAST, ExpressionsAndLiterals) {
  auto m = parse("x = -3 + 0x10 * 2 // 4\ny = 'a\\tb'\nz = f'{x} is {y}'\nw = a if b else c\n"
                 "v = 1 < 2 <= 3 not in q\nu = 1e-5\n");
  ASSERT_TRUE(m->errors().empty());
  auto &b = m->body();
  EXPECT_EQ(b[0]->value->kind, ExprKind::BinOp);
  EXPECT_EQ(b[1]->value->str, "a\tb");
  EXPECT_TRUE(b[2]->value->isFString);
  EXPECT_EQ(b[2]->value->elts.size(), 2u);
  EXPECT_EQ(b[2]->value->parts.size(), 3u);
  EXPECT_EQ(b[3]->value->kind, ExprKind::IfExp);
  ASSERT_EQ(b[4]->value->ops.size(), 3u);
  EXPECT_EQ(b[4]->value->ops[2], "not in");
  EXPECT_DOUBLE_EQ(b[5]->value->floatValue, 1e-5);
}

TEST(PyAST, SyntaxErrorsHaveLocations) {
  auto m = parse("def f(:\n  return 1\n");
  ASSERT_FALSE(m->errors().empty());
  EXPECT_EQ(m->source().lineCol(m->errors()[0].offset).line, 1u);
}

} // namespace

namespace {

/// Everything the converter produces, as text: kinds, ranges, names, nesting.
void dumpExpr(const Expr *e, std::string &out) {
  if (!e) {
    out += "_";
    return;
  }
  out += "(" + std::to_string(int(e->kind)) + "@" + std::to_string(e->range.begin) + "-" +
         std::to_string(e->range.end) + " " + e->name + "|" + e->str + "|" + std::to_string(e->intValue);
  dumpExpr(e->base, out);
  for (const Expr *x : e->elts) dumpExpr(x, out);
  for (const Keyword &k : e->keywords) {
    out += " " + k.name + "=";
    dumpExpr(k.value, out);
  }
  for (const std::string &op : e->ops) out += " " + op;
  out += ")";
}

std::string dump(const Module &m) {
  std::string out;
  for (const ParseError &err : m.errors()) out += "error@" + std::to_string(err.offset) + " " + err.message + "\n";
  forEachStmt(m.body(), [&](const Stmt *s) {
    out += std::to_string(int(s->kind)) + "@" + std::to_string(s->range.begin) + "-" + std::to_string(s->range.end) +
           " h" + std::to_string(s->headerRange.end) + " b" + std::to_string(s->bodyRange.begin) + "-" +
           std::to_string(s->bodyRange.end) + " " + s->name + s->op + " parent" +
           (s->parent ? std::to_string(s->parent->range.begin) : "-") + ":";
    for (const Expr *t : s->targets) dumpExpr(t, out);
    dumpExpr(s->value, out);
    for (const Expr *d : s->decorators) dumpExpr(d, out);
    out += "\n";
  });
  return out;
}

const char *ReparseKernel = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a, b):
    out = nl.ndarray((4, nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(4):  # rows
        x = nl.load(a[i * 128:(i + 1) * 128, 0:512])
        for j in nl.sequential_range(2):
            y = nl.exp(x) if j else nl.tanh(x)
            acc += nl.multiply(y, 2.0)
        nl.store(out[i, nl.arange(128)[:, None], nl.arange(512)[None, :]], value=acc)
    ' end loop i '
    return out
)";

} // namespace

// Incremental re-parsing reuses the previous syntax tree; the module it builds
// must be exactly what a fresh parse builds, for valid and broken edits alike.
TEST(PyAST, ReparseEqualsFreshParse) {
  std::string base = ReparseKernel;
  auto previous = parse(base);
  ASSERT_TRUE(previous->errors().empty());
  const std::vector<std::string> inserts = {"z", "        w = nl.add(x, x)\n", "(", "", "1, 2", "\n", "    ", "#c\n"};
  std::mt19937 rng(7);
  int valid = 0; // rounds whose text still parses: the reused-tree path
  for (int round = 0; round < 1000; ++round) {
    // One to three non-overlapping edits, sorted by offset.
    std::vector<TextEdit> edits;
    uint32_t from = 0;
    int count = 1 + int(rng() % 3);
    for (int e = 0; e < count && from < base.size(); ++e) {
      uint32_t offset = from + uint32_t(rng() % ((base.size() - from) / (count - e) + 1));
      if (offset > base.size()) break;
      uint32_t length = std::min<uint32_t>(uint32_t(rng() % 12), uint32_t(base.size()) - offset);
      edits.push_back({offset, length, inserts[rng() % inserts.size()]});
      from = offset + length + 1;
    }
    std::string text;
    uint32_t at = 0;
    for (const TextEdit &e : edits) {
      text += base.substr(at, e.offset - at) + e.text;
      at = e.offset + e.length;
    }
    text += base.substr(at);
    auto buf = SourceBuffer::fromText("t.py", text);
    ASSERT_TRUE(bool(buf));
    auto incremental = Module::reparse(*previous, std::move(*buf), edits);
    auto fresh = parse(text);
    ASSERT_EQ(dump(*incremental), dump(*fresh)) << "round " << round << " text:\n" << text;
    valid += fresh->errors().empty();
  }
  EXPECT_GT(valid, 100);
}

TEST(PyAST, ReparseWithEditsThatDoNotFitFallsBackToFullParse) {
  auto previous = parse(ReparseKernel);
  std::string text = std::string(ReparseKernel) + "x = 1\n";
  auto buf = SourceBuffer::fromText("t.py", text);
  ASSERT_TRUE(bool(buf));
  // The edit list claims nothing changed: sizes disagree, so the tree is not reused.
  auto m = Module::reparse(*previous, std::move(*buf), {});
  EXPECT_EQ(dump(*m), dump(*parse(text)));
}
