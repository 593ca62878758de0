#include "Syntax/AstWalks.h"

namespace accelopt::syntax {

void forEachExpr(const Expr *e, const std::function<void(const Expr *)> &fn) {
  if (!e) return;
  fn(e);
  forEachExpr(e->base, fn);
  for (const Expr *x : e->elts) forEachExpr(x, fn);
  for (const auto &kw : e->keywords) forEachExpr(kw.value, fn);
}

void forEachExpr(const Stmt *s, const std::function<void(const Expr *)> &fn) {
  if (!s) return;
  for (const Expr *d : s->decorators) forEachExpr(d, fn);
  for (const auto &p : s->params) forEachExpr(p.defaultValue, fn);
  for (const Expr *t : s->targets) forEachExpr(t, fn);
  forEachExpr(s->value, fn);
  forEachExpr(s->msg, fn);
  for (const Stmt *b : s->body) forEachExpr(b, fn);
  for (const Stmt *b : s->orelse) forEachExpr(b, fn);
}

std::vector<const Expr *> namesIn(const Stmt *s, llvm::StringRef name) {
  std::vector<const Expr *> out;
  forEachExpr(s, [&](const Expr *e) {
    if (e->kind == ExprKind::Name && e->name == name) out.push_back(e);
  });
  return out;
}

bool hasMultilineString(const Stmt *s, llvm::StringRef text) {
  bool found = false;
  forEachExpr(s, [&](const Expr *e) {
    if (e->kind == ExprKind::Str && text.slice(e->range.begin, e->range.end).contains('\n')) found = true;
  });
  return found;
}

} // namespace accelopt::syntax
