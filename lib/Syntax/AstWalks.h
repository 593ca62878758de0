// Walks over the expressions of the Python AST (complements forEachStmt in PyAST.h).
#pragma once

#include "Syntax/PyAST.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <vector>

namespace accelopt::syntax {

/// Calls `fn` on `e` and every expression nested in it, parents first.
void forEachExpr(const Expr *e, const std::function<void(const Expr *)> &fn);
/// Calls `fn` on every expression of the statement, its decorators, parameter
/// defaults and nested blocks.
void forEachExpr(const Stmt *s, const std::function<void(const Expr *)> &fn);
/// Name expressions spelled `name` in the statement (and nested blocks).
std::vector<const Expr *> namesIn(const Stmt *s, llvm::StringRef name);
/// A string literal spanning several lines (re-indenting would change it).
bool hasMultilineString(const Stmt *s, llvm::StringRef text);

} // namespace accelopt::syntax
