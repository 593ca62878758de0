// A compact Python AST for the subset NKI kernels are written in, built from
// tree-sitter's concrete syntax tree. Nodes keep byte ranges into the source so
// rewrites can edit text minimally and diagnostics can point at it.
#pragma once

#include "Syntax/SourceBuffer.h"
#include "Syntax/TreeSitter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Allocator.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace accelopt::syntax {

enum class ExprKind : uint8_t {
  Name,
  Int,
  Float,
  Str,
  Bool,
  None,
  Ellipsis,
  Attribute, // base.name
  Call,      // base(elts..., keywords...)
  Subscript, // base[elts...] (one element per comma-separated index)
  Slice,     // elts = {lower, upper, step}, each may be null
  Tuple,
  List,
  Dict,
  BinOp,    // elts = {lhs, rhs}, name = operator ("+", "//", "@", ...)
  UnaryOp,  // base = operand, name = "-", "+", "~", "not"
  BoolOp,   // elts = operands, name = "and" | "or"
  Compare,  // elts = operands, ops = operators ("<", "==", "is not", "in", ...)
  IfExp,    // elts = {test, body, orelse}
  Starred,  // *base
  Lambda,   // not evaluated; kept for diagnostics
  ListComp, // [base for elts[0] in elts[1]] (one `for` clause, no `if`)
  Unsupported,
};

struct Expr;

struct Keyword {
  std::string name; // empty for **kwargs
  const Expr *value = nullptr;
  ByteRange range;
};

struct Expr {
  ExprKind kind = ExprKind::Unsupported;
  ByteRange range;
  std::string name; // Name id, Attribute attr, operator spelling
  std::string str;  // Str value (decoded); for f-strings the literal parts are in `parts`
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  bool isFString = false;
  const Expr *base = nullptr;
  std::vector<const Expr *> elts;
  std::vector<Keyword> keywords;
  std::vector<std::string> ops;   // Compare operators
  std::vector<std::string> parts; // f-string literal pieces: parts[0] elts[0] parts[1] ...

  const Expr *keyword(std::string_view kw) const {
    for (const auto &k : keywords)
      if (k.name == kw) return k.value;
    return nullptr;
  }
  /// "nl.affine_range" for Attribute chains of Names, "" otherwise.
  std::string dottedName() const;
};

enum class StmtKind : uint8_t {
  Expr,
  Assign,
  AugAssign,
  AnnAssign,
  For,
  While,
  If,
  Return,
  Assert,
  Pass,
  Break,
  Continue,
  FunctionDef,
  Import,
  ImportFrom,
  Other,
};

struct Param {
  std::string name;
  const Expr *defaultValue = nullptr;
  ByteRange range;
  bool isVarArgs = false; // *args / **kwargs
};

struct Stmt {
  StmtKind kind = StmtKind::Other;
  ByteRange range;
  std::vector<const Expr *> targets; // Assign: a = b = v -> {a, b}; AugAssign/For: {target}
  const Expr *value = nullptr;       // Assign value, Expr, Return, For iter, If/While test, Assert test
  const Expr *msg = nullptr;         // Assert message
  std::string op;                    // AugAssign operator without '=' ("+", "-", ...)
  std::vector<const Stmt *> body;
  std::vector<const Stmt *> orelse; // else / elif (an elif is a nested If)
  ByteRange bodyRange;              // the block of `body`
  ByteRange headerRange;            // compound statements: from the keyword to the ':'
  std::string name;                 // FunctionDef name; ImportFrom module
  std::vector<Param> params;
  std::vector<const Expr *> decorators;
  std::vector<std::pair<std::string, std::string>> imports; // (name, alias or "")
  const Stmt *parent = nullptr;                             // enclosing compound statement, null at module level
};

struct ParseError {
  uint32_t offset = 0;
  std::string message;
};

/// A parsed file: owns the source and every node.
/// Replaces `length` bytes at `offset` of an old text by `text`.
struct TextEdit {
  uint32_t offset = 0;
  uint32_t length = 0;
  std::string text;
};

class Module {
public:
  /// Parses `source`. Syntax errors are collected in errors() (never thrown);
  /// the statements that parsed are still available.
  static std::unique_ptr<Module> parse(std::unique_ptr<SourceBuffer> source);
  /// Parses `source`, which is `previous`'s text after `edits` (sorted, not
  /// overlapping, offsets into the previous text), reusing the unchanged parts of
  /// previous's syntax tree: a rewrite touches a few lines of a kernel, and a
  /// full parse dominated the cost of checking a candidate. Falls back to a full
  /// parse when the edits do not describe the new text.
  static std::unique_ptr<Module> reparse(const Module &previous, std::unique_ptr<SourceBuffer> source,
                                         llvm::ArrayRef<TextEdit> edits);

  const SourceBuffer &source() const { return *Source; }
  const std::vector<const Stmt *> &body() const { return Body; }
  const std::vector<ParseError> &errors() const { return Errors; }
  /// Every FunctionDef at module level and nested.
  std::vector<const Stmt *> functions() const;
  llvm::StringRef text(ByteRange r) const { return Source->slice(r); }
  llvm::StringRef text(const Expr *e) const { return Source->slice(e->range); }

  Expr *newExpr() { return new (Exprs.Allocate()) Expr(); }
  Stmt *newStmt() { return new (Stmts.Allocate()) Stmt(); }

private:
  friend class Converter;
  static std::unique_ptr<Module> build(std::unique_ptr<SourceBuffer> source, const TSTree *oldTree);

  std::unique_ptr<SourceBuffer> Source;
  TreePtr Tree; // kept for incremental reparsing
  // Slab allocation: a kernel has thousands of nodes and a deque of these large
  // structs mallocs a block per node or two (the destructor runs every node's).
  llvm::SpecificBumpPtrAllocator<Expr> Exprs;
  llvm::SpecificBumpPtrAllocator<Stmt> Stmts;
  std::vector<const Stmt *> Body;
  std::vector<ParseError> Errors;
};

/// Visits statements depth-first in source order.
template <typename F> void forEachStmt(const std::vector<const Stmt *> &stmts, F &&fn) {
  for (const Stmt *s : stmts) {
    fn(s);
    forEachStmt(s->body, fn);
    forEachStmt(s->orelse, fn);
  }
}

} // namespace accelopt::syntax
