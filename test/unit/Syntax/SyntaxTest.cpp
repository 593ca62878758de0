#include "Syntax/PyAST.h"
#include "Syntax/SourceBuffer.h"

#include <gtest/gtest.h>

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
  ASSERT_EQ(ifs->orelse.size(), 1u);  // the elif
  EXPECT_EQ(ifs->orelse[0]->kind, StmtKind::If);
  EXPECT_EQ(ifs->orelse[0]->orelse.size(), 1u);  // its else
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
