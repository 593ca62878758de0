#include "Syntax/PyAST.h"

#include "Syntax/TreeSitter.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>

namespace accelopt::syntax {

std::string Expr::dottedName() const {
  if (kind == ExprKind::Name) return name;
  if (kind == ExprKind::Attribute && base) {
    std::string prefix = base->dottedName();
    if (!prefix.empty()) return prefix + "." + name;
  }
  return {};
}

std::vector<const Stmt *> Module::functions() const {
  std::vector<const Stmt *> out;
  forEachStmt(Body, [&](const Stmt *s) {
    if (s->kind == StmtKind::FunctionDef) out.push_back(s);
  });
  return out;
}

namespace {

bool is(TSNode n, const char *type) { return std::strcmp(ts_node_type(n), type) == 0; }

/// The grammar's field ids by name, looked up once: the language's own lookup
/// compares every field name, and the converter asks for fields at every node.
TSFieldId fieldId(llvm::StringRef name) {
  static const llvm::StringMap<TSFieldId> ids = [] {
    llvm::StringMap<TSFieldId> out;
    const TSLanguage *python = tree_sitter_python();
    for (TSFieldId id = 1; id <= ts_language_field_count(python); ++id)
      if (const char *n = ts_language_field_name_for_id(python, id)) out[n] = id;
    return out;
  }();
  return ids.lookup(name); // 0 = no such field: the lookup yields a null node
}

/// A string literal as a template argument, so each field name is looked up once.
template <size_t N> struct FieldName {
  char chars[N];
  constexpr FieldName(const char (&s)[N]) { std::copy_n(s, N, chars); }
};

template <FieldName Name> TSNode field(TSNode n) {
  static const TSFieldId id = fieldId(Name.chars);
  return ts_node_child_by_field_id(n, id);
}

using NodeList = llvm::SmallVector<TSNode, 8>;

/// Visits the children of `n` with one cursor per thread, reset for each walk:
/// a new cursor mallocs its stack, and the converter walks every node.
template <typename F> void forEachChild(TSNode n, F &&visit) {
  struct ReusedCursor {
    TSTreeCursor cursor;
    bool live = false;
    ~ReusedCursor() {
      if (live) ts_tree_cursor_delete(&cursor);
    }
  };
  thread_local ReusedCursor reused;
  if (!reused.live) {
    reused.cursor = ts_tree_cursor_new(n);
    reused.live = true;
  } else {
    ts_tree_cursor_reset(&reused.cursor, n);
  }
  // The visitor only collects nodes; it never walks (which would reset the cursor).
  if (!ts_tree_cursor_goto_first_child(&reused.cursor)) return;
  do visit(reused.cursor);
  while (ts_tree_cursor_goto_next_sibling(&reused.cursor));
}

/// Named children, skipping comments (tree-sitter puts them anywhere); a cursor
/// walk, as ts_node_named_child(n, i) rescans the children before i.
NodeList namedChildren(TSNode n) {
  NodeList out;
  forEachChild(n, [&](TSTreeCursor &cursor) {
    TSNode c = ts_tree_cursor_current_node(&cursor);
    if (ts_node_is_named(c) && !is(c, "comment")) out.push_back(c);
  });
  return out;
}

/// Children carrying field `name` (subscript indices, comparison operators).
NodeList fieldChildren(TSNode n, const char *name) {
  NodeList out;
  TSFieldId id = fieldId(name);
  forEachChild(n, [&](TSTreeCursor &cursor) {
    if (id && ts_tree_cursor_current_field_id(&cursor) == id) out.push_back(ts_tree_cursor_current_node(&cursor));
  });
  return out;
}

std::string decodeEscapes(llvm::StringRef raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c != '\\' || i + 1 == raw.size()) {
      out += c;
      continue;
    }
    char e = raw[++i];
    switch (e) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case '0': out += '\0'; break;
    case '\\': out += '\\'; break;
    case '\'': out += '\''; break;
    case '"': out += '"'; break;
    case '\n': break; // line continuation
    default:
      out += '\\';
      out += e;
      break;
    }
  }
  return out;
}

} // namespace

class Converter {
public:
  explicit Converter(Module &m) : M(m), Text(m.Source->text()) {}

  void run(TSNode root) {
    collectErrors(root);
    if (!M.Errors.empty())
      explainDeepIndentation();
    else
      checkIndentation();
    for (TSNode c : namedChildren(root)) convertStmtInto(c, M.Body, nullptr);
  }

  /// tree-sitter accepts indentation CPython rejects (an indented line that opens no block, a dedent to
  /// no enclosing level): a `replace` wrote such code and every check passed (reliability report D8).
  /// Walks the logical lines as CPython's tokenizer does: brackets, strings and backslashes continue
  /// a line; comments and blank lines do not count.
  void checkIndentation() {
    llvm::SmallVector<size_t, 32> levels = {0};
    int brackets = 0;
    char quote = 0; // the open string's quote character
    bool tripleQuote = false;
    bool continued = false;  // the logical line goes on (backslash, bracket or string)
    bool opensBlock = false; // the last logical line ended with ':'
    size_t i = 0;
    while (i < Text.size()) {
      size_t lineEnd = Text.find('\n', i);
      if (lineEnd == llvm::StringRef::npos) lineEnd = Text.size();
      llvm::StringRef line = Text.slice(i, lineEnd).rtrim('\r');
      size_t indent = line.find_first_not_of(" \t");
      bool blank = indent == llvm::StringRef::npos || line[indent] == '#';
      if (!continued && !blank) {
        if (indent > levels.back()) {
          if (!opensBlock) return indentationError(i + indent, "unexpected indent");
          levels.push_back(indent);
        } else {
          if (opensBlock) return indentationError(i + indent, "expected an indented block");
          while (indent < levels.back()) levels.pop_back();
          if (indent != levels.back())
            return indentationError(i + indent, "unindent does not match any outer indentation level");
        }
      }
      if (!blank || continued) {
        char last = 0;
        bool backslash = false;
        for (size_t k = continued ? 0 : indent; k < line.size(); ++k) {
          char c = line[k];
          backslash = false;
          if (quote) {
            if (c == '\\') {
              ++k;
              backslash = k >= line.size();
              continue;
            }
            if (c == quote && (!tripleQuote || line.substr(k).startswith(std::string(3, quote)))) {
              k += tripleQuote ? 2 : 0;
              quote = 0;
              last = c;
            }
            continue;
          }
          if (c == '#') break;
          if (c == '\'' || c == '"') {
            tripleQuote = line.substr(k).startswith(std::string(3, c));
            quote = c;
            k += tripleQuote ? 2 : 0;
            continue;
          }
          if (c == '\\' && k + 1 == line.size()) {
            backslash = true;
            break;
          }
          if (c == '(' || c == '[' || c == '{')
            ++brackets;
          else if ((c == ')' || c == ']' || c == '}') && brackets > 0)
            --brackets;
          if (c != ' ' && c != '\t') last = c;
        }
        if (quote && !tripleQuote && !backslash) quote = 0; // an unterminated string: tree-sitter reports it
        continued = backslash || brackets > 0 || quote;
        if (!continued) opensBlock = last == ':';
      }
      i = lineEnd + 1;
    }
  }

  void indentationError(size_t offset, const char *what) {
    M.Errors.push_back({static_cast<uint32_t>(offset),
                        std::string("invalid indentation: ") + what + " (Python would raise IndentationError)"});
  }

  /// tree-sitter's Python scanner keeps at most a few hundred indentation levels and then fails on the
  /// whole file, far from the cause: name the line where the blocks nest too deep instead.
  void explainDeepIndentation() {
    llvm::SmallVector<size_t, 64> indents = {0};
    size_t lineStart = 0;
    while (lineStart < Text.size()) {
      size_t end = Text.find('\n', lineStart);
      if (end == llvm::StringRef::npos) end = Text.size();
      llvm::StringRef line = Text.slice(lineStart, end);
      size_t indent = line.find_first_not_of(" \t");
      if (indent != llvm::StringRef::npos && line[indent] != '#') {
        while (indents.size() > 1 && indent < indents.back()) indents.pop_back();
        if (indent > indents.back()) indents.push_back(indent);
        if (indents.size() > MaxNesting / 2) {
          // tree-sitter's errors are then artefacts (`1:1: invalid syntax near 'import ...'`): drop them.
          M.Errors.clear();
          M.Errors.push_back({static_cast<uint32_t>(lineStart + indent),
                              llvm::formatv("blocks nested more than {0} levels deep; accelopt's parser refuses deeper "
                                            "nesting",
                                            MaxNesting / 2)
                                  .str()});
          return;
        }
      }
      lineStart = end + 1;
    }
  }

private:
  Module &M;
  llvm::StringRef Text;
  /// The converter, the front end and the interpreter each recurse once per level of nesting, so deeper
  /// code is refused here (10,000 nested parentheses overflowed the stack). No kernel comes near it;
  /// CPython itself refuses 200 nested parentheses.
  static constexpr unsigned MaxNesting = 400;
  unsigned Depth = 0;
  bool TooDeepReported = false;

  /// Counts one level of nesting; false (and one error for the file) past MaxNesting.
  class NestingLevel {
  public:
    NestingLevel(Converter &c, TSNode n) : C(c) {
      if (++C.Depth <= MaxNesting || C.TooDeepReported) return;
      C.TooDeepReported = true;
      C.M.Errors.push_back(
          {ts_node_start_byte(n), llvm::formatv("code nested more than {0} levels deep (parentheses, "
                                                "operators or blocks); accelopt refuses deeper nesting",
                                                MaxNesting)
                                      .str()});
    }
    ~NestingLevel() { --C.Depth; }
    bool tooDeep() const { return C.Depth > MaxNesting; }

  private:
    Converter &C;
  };

  ByteRange rangeOf(TSNode n) const { return {ts_node_start_byte(n), ts_node_end_byte(n)}; }
  llvm::StringRef textOf(TSNode n) const { return Text.slice(ts_node_start_byte(n), ts_node_end_byte(n)); }

  void collectErrors(TSNode n) {
    if (!ts_node_has_error(n)) return;
    if (is(n, "ERROR")) {
      // Point at the first token tree-sitter could not place.
      TSNode first = ts_node_child_count(n) ? ts_node_child(n, 0) : n;
      std::string tok = textOf(first).take_front(20).str();
      for (char &c : tok)
        if (c == '\n') c = ' ';
      M.Errors.push_back(
          {ts_node_start_byte(first), tok.empty() ? "invalid syntax" : "invalid syntax near '" + tok + "'"});
      return;
    }
    if (ts_node_is_missing(n)) {
      M.Errors.push_back(
          {ts_node_start_byte(n), llvm::formatv("invalid syntax: expected '{0}'", ts_node_type(n)).str()});
      return;
    }
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) collectErrors(ts_node_child(n, i));
  }

  Expr *expr(ExprKind kind, TSNode n) {
    Expr *e = M.newExpr();
    e->kind = kind;
    e->range = rangeOf(n);
    return e;
  }

  const Expr *convertExpr(TSNode n) {
    if (ts_node_is_null(n)) return nullptr;
    NestingLevel level(*this, n);
    if (level.tooDeep()) return expr(ExprKind::Unsupported, n);
    const char *type = ts_node_type(n);
    auto t = llvm::StringRef(type);
    if (t == "identifier" || t == "keyword_identifier") {
      Expr *e = expr(ExprKind::Name, n);
      e->name = textOf(n).str();
      return e;
    }
    if (t == "integer") {
      Expr *e = expr(ExprKind::Int, n);
      std::string digits;
      for (char c : textOf(n))
        if (c != '_') digits += c;
      llvm::StringRef d(digits);
      unsigned radix = 10;
      if (d.startswith_insensitive("0x"))
        radix = 16, d = d.drop_front(2);
      else if (d.startswith_insensitive("0o"))
        radix = 8, d = d.drop_front(2);
      else if (d.startswith_insensitive("0b"))
        radix = 2, d = d.drop_front(2);
      if (d.endswith_insensitive("l")) d = d.drop_back();
      long long v = 0;
      if (d.getAsInteger(radix, v)) {
        // Python ints are unbounded; a trace-time value past 64 bits would wrap or turn into a float.
        M.Errors.push_back({ts_node_start_byte(n), "integer literal does not fit in 64 bits; accelopt's trace-time "
                                                   "integers are limited to [-2**63, 2**63)"});
        e->kind = ExprKind::Unsupported;
      } else {
        e->intValue = v;
      }
      return e;
    }
    if (t == "float") {
      Expr *e = expr(ExprKind::Float, n);
      std::string digits;
      for (char c : textOf(n))
        if (c != '_') digits += c;
      e->floatValue = std::strtod(digits.c_str(), nullptr);
      return e;
    }
    if (t == "true" || t == "false") {
      Expr *e = expr(ExprKind::Bool, n);
      e->boolValue = t == "true";
      return e;
    }
    if (t == "none") return expr(ExprKind::None, n);
    if (t == "ellipsis") return expr(ExprKind::Ellipsis, n);
    if (t == "string") return convertString(n);
    if (t == "concatenated_string") {
      Expr *e = expr(ExprKind::Str, n);
      for (TSNode part : namedChildren(n)) {
        const Expr *p = convertString(part);
        e->str += p->str;
        e->isFString |= p->isFString;
      }
      return e;
    }
    if (t == "parenthesized_expression") {
      auto kids = namedChildren(n);
      return kids.empty() ? expr(ExprKind::Tuple, n) : convertExpr(kids[0]);
    }
    if (t == "attribute") {
      Expr *e = expr(ExprKind::Attribute, n);
      e->base = convertExpr(field<"object">(n));
      e->name = textOf(field<"attribute">(n)).str();
      return e;
    }
    if (t == "call") {
      Expr *e = expr(ExprKind::Call, n);
      e->base = convertExpr(field<"function">(n));
      TSNode args = field<"arguments">(n);
      if (!ts_node_is_null(args) && is(args, "argument_list")) {
        for (TSNode a : namedChildren(args)) {
          if (is(a, "keyword_argument")) {
            e->keywords.push_back({textOf(field<"name">(a)).str(), convertExpr(field<"value">(a)), rangeOf(a)});
          } else if (is(a, "dictionary_splat")) {
            auto kids = namedChildren(a);
            e->keywords.push_back({"", kids.empty() ? nullptr : convertExpr(kids[0]), rangeOf(a)});
          } else {
            e->elts.push_back(convertExpr(a));
          }
        }
      } else if (!ts_node_is_null(args)) {
        e->elts.push_back(convertExpr(args)); // generator expression argument
      }
      return e;
    }
    if (t == "subscript") {
      Expr *e = expr(ExprKind::Subscript, n);
      e->base = convertExpr(field<"value">(n));
      for (TSNode s : fieldChildren(n, "subscript")) e->elts.push_back(convertExpr(s));
      return e;
    }
    if (t == "slice") {
      Expr *e = expr(ExprKind::Slice, n);
      e->elts = {nullptr, nullptr, nullptr};
      int part = 0;
      uint32_t count = ts_node_child_count(n);
      for (uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_child(n, i);
        if (!ts_node_is_named(c)) {
          if (textOf(c) == ":") ++part;
          continue;
        }
        if (is(c, "comment") || part > 2) continue;
        e->elts[part] = convertExpr(c);
      }
      return e;
    }
    if (t == "tuple" || t == "expression_list" || t == "pattern_list" || t == "tuple_pattern") {
      Expr *e = expr(ExprKind::Tuple, n);
      for (TSNode c : namedChildren(n)) e->elts.push_back(convertExpr(c));
      return e;
    }
    if (t == "list" || t == "list_pattern") {
      Expr *e = expr(ExprKind::List, n);
      for (TSNode c : namedChildren(n)) e->elts.push_back(convertExpr(c));
      return e;
    }
    if (t == "dictionary") {
      Expr *e = expr(ExprKind::Dict, n);
      for (TSNode c : namedChildren(n))
        if (is(c, "pair")) {
          e->elts.push_back(convertExpr(field<"key">(c)));
          e->elts.push_back(convertExpr(field<"value">(c)));
        }
      return e;
    }
    if (t == "binary_operator") {
      Expr *e = expr(ExprKind::BinOp, n);
      e->elts = {convertExpr(field<"left">(n)), convertExpr(field<"right">(n))};
      e->name = textOf(field<"operator">(n)).str();
      return e;
    }
    if (t == "unary_operator") {
      Expr *e = expr(ExprKind::UnaryOp, n);
      e->base = convertExpr(field<"argument">(n));
      e->name = textOf(field<"operator">(n)).str();
      return e;
    }
    if (t == "not_operator") {
      Expr *e = expr(ExprKind::UnaryOp, n);
      e->base = convertExpr(field<"argument">(n));
      e->name = "not";
      return e;
    }
    if (t == "boolean_operator") {
      Expr *e = expr(ExprKind::BoolOp, n);
      e->elts = {convertExpr(field<"left">(n)), convertExpr(field<"right">(n))};
      e->name = textOf(field<"operator">(n)).str();
      return e;
    }
    if (t == "comparison_operator") {
      Expr *e = expr(ExprKind::Compare, n);
      for (TSNode c : namedChildren(n)) e->elts.push_back(convertExpr(c));
      for (TSNode op : fieldChildren(n, "operators")) {
        // "not in" / "is not" may span whitespace; normalise it.
        llvm::SmallVector<llvm::StringRef, 2> words;
        textOf(op).split(words, ' ', -1, false);
        std::string norm;
        for (auto w : words) norm += (norm.empty() ? "" : " ") + w.trim().str();
        e->ops.push_back(norm);
      }
      return e;
    }
    if (t == "conditional_expression") {
      Expr *e = expr(ExprKind::IfExp, n);
      auto kids = namedChildren(n); // body if test else orelse
      if (kids.size() == 3) e->elts = {convertExpr(kids[1]), convertExpr(kids[0]), convertExpr(kids[2])};
      return e;
    }
    if (t == "list_splat" || t == "list_splat_pattern") {
      Expr *e = expr(ExprKind::Starred, n);
      auto kids = namedChildren(n);
      e->base = kids.empty() ? nullptr : convertExpr(kids[0]);
      return e;
    }
    if (t == "lambda") return expr(ExprKind::Lambda, n);
    if (t == "list_comprehension") {
      // One `for` clause without `if`: `[f(i) for i in range(n)]`; anything else stays unsupported.
      auto kids = namedChildren(n);
      if (kids.size() == 2 && is(kids[1], "for_in_clause")) {
        TSNode left = field<"left">(kids[1]), right = field<"right">(kids[1]);
        if (!ts_node_is_null(left) && !ts_node_is_null(right)) {
          Expr *e = expr(ExprKind::ListComp, n);
          e->base = convertExpr(kids[0]);
          e->elts = {convertExpr(left), convertExpr(right)};
          return e;
        }
      }
    }
    Expr *e = expr(ExprKind::Unsupported, n);
    e->name = type;
    return e;
  }

  const Expr *convertString(TSNode n) {
    Expr *e = expr(ExprKind::Str, n);
    if (!is(n, "string")) return e;
    std::string current;
    bool raw = false;
    for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      if (is(c, "string_start")) {
        llvm::StringRef prefix = textOf(c).take_while([](char ch) { return ch != '\'' && ch != '"'; });
        e->isFString = prefix.contains_insensitive("f");
        raw = prefix.contains_insensitive("r");
      } else if (is(c, "string_content")) {
        current += raw ? textOf(c).str() : decodeEscapes(textOf(c));
      } else if (is(c, "interpolation")) {
        e->parts.push_back(current);
        e->str += current;
        current.clear();
        e->elts.push_back(convertExpr(field<"expression">(c)));
      }
    }
    e->str += current;
    e->parts.push_back(current);
    return e;
  }

  Stmt *stmt(StmtKind kind, TSNode n, const Stmt *parent) {
    Stmt *s = M.newStmt();
    s->kind = kind;
    s->range = rangeOf(n);
    s->parent = parent;
    return s;
  }

  void convertBlock(TSNode block, std::vector<const Stmt *> &out, ByteRange &range, const Stmt *parent) {
    if (ts_node_is_null(block)) return;
    range = rangeOf(block);
    for (TSNode c : namedChildren(block)) convertStmtInto(c, out, parent);
  }

  /// The header ends at the ':' that opens the block (comments after it excluded).
  void setHeader(Stmt *s, TSNode n, TSNode body) {
    uint32_t end = ts_node_is_null(body) ? ts_node_end_byte(n) : ts_node_start_byte(body);
    for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      if (!ts_node_is_named(c) && textOf(c) == ":" && ts_node_end_byte(c) <= end) end = ts_node_end_byte(c);
    }
    s->headerRange = {ts_node_start_byte(n), end};
  }

  void convertStmtInto(TSNode n, std::vector<const Stmt *> &out, const Stmt *parent) {
    NestingLevel level(*this, n);
    if (level.tooDeep()) return;
    auto t = llvm::StringRef(ts_node_type(n));
    if (t == "comment" || t == "ERROR") return;
    if (t == "expression_statement") {
      auto kids = namedChildren(n);
      if (kids.size() == 1 && is(kids[0], "assignment")) {
        out.push_back(convertAssignment(kids[0], n, parent));
      } else if (kids.size() == 1 && is(kids[0], "augmented_assignment")) {
        Stmt *s = stmt(StmtKind::AugAssign, n, parent);
        s->targets = {convertExpr(field<"left">(kids[0]))};
        s->value = convertExpr(field<"right">(kids[0]));
        llvm::StringRef op = textOf(field<"operator">(kids[0]));
        s->op = op.drop_back().str();
        out.push_back(s);
      } else {
        Stmt *s = stmt(StmtKind::Expr, n, parent);
        if (kids.size() == 1)
          s->value = convertExpr(kids[0]);
        else {
          Expr *tuple = expr(ExprKind::Tuple, n);
          for (TSNode k : kids) tuple->elts.push_back(convertExpr(k));
          s->value = tuple;
        }
        out.push_back(s);
      }
      return;
    }
    if (t == "decorated_definition") {
      TSNode def = field<"definition">(n);
      std::vector<const Expr *> decorators;
      for (TSNode c : namedChildren(n))
        if (is(c, "decorator")) {
          auto kids = namedChildren(c);
          if (!kids.empty()) decorators.push_back(convertExpr(kids[0]));
        }
      size_t before = out.size();
      convertStmtInto(def, out, parent);
      if (out.size() > before) {
        auto *s = const_cast<Stmt *>(out.back());
        s->decorators = std::move(decorators);
        s->range = rangeOf(n);
      }
      return;
    }
    if (t == "function_definition") {
      Stmt *s = stmt(StmtKind::FunctionDef, n, parent);
      s->name = textOf(field<"name">(n)).str();
      TSNode params = field<"parameters">(n);
      if (!ts_node_is_null(params))
        for (TSNode p : namedChildren(params)) s->params.push_back(convertParam(p));
      TSNode body = field<"body">(n);
      setHeader(s, n, body);
      convertBlock(body, s->body, s->bodyRange, s);
      out.push_back(s);
      return;
    }
    if (t == "for_statement") {
      Stmt *s = stmt(StmtKind::For, n, parent);
      s->targets = {convertExpr(field<"left">(n))};
      s->value = convertExpr(field<"right">(n));
      TSNode body = field<"body">(n);
      setHeader(s, n, body);
      convertBlock(body, s->body, s->bodyRange, s);
      TSNode alt = field<"alternative">(n);
      if (!ts_node_is_null(alt)) {
        ByteRange ignored;
        convertBlock(field<"body">(alt), s->orelse, ignored, s);
      }
      out.push_back(s);
      return;
    }
    if (t == "while_statement") {
      Stmt *s = stmt(StmtKind::While, n, parent);
      s->value = convertExpr(field<"condition">(n));
      TSNode body = field<"body">(n);
      setHeader(s, n, body);
      convertBlock(body, s->body, s->bodyRange, s);
      out.push_back(s);
      return;
    }
    if (t == "if_statement" || t == "elif_clause") {
      Stmt *s = stmt(StmtKind::If, n, parent);
      s->value = convertExpr(field<"condition">(n));
      TSNode body = field<"consequence">(n);
      setHeader(s, n, body);
      convertBlock(body, s->body, s->bodyRange, s);
      if (t == "if_statement") {
        // elif chains become nested Ifs in orelse; else blocks are plain orelse.
        NodeList alts = fieldChildren(n, "alternative");
        std::vector<const Stmt *> *tail = &s->orelse;
        const Stmt *tailParent = s;
        for (TSNode alt : alts) {
          if (is(alt, "elif_clause")) {
            size_t before = tail->size();
            convertStmtInto(alt, *tail, tailParent);
            auto *nested = const_cast<Stmt *>((*tail)[before]);
            tail = &nested->orelse;
            tailParent = nested;
          } else {
            ByteRange ignored;
            convertBlock(field<"body">(alt), *tail, ignored, tailParent);
          }
        }
      }
      out.push_back(s);
      return;
    }
    if (t == "return_statement") {
      Stmt *s = stmt(StmtKind::Return, n, parent);
      auto kids = namedChildren(n);
      if (!kids.empty()) s->value = convertExpr(kids[0]);
      out.push_back(s);
      return;
    }
    if (t == "assert_statement") {
      Stmt *s = stmt(StmtKind::Assert, n, parent);
      auto kids = namedChildren(n);
      if (!kids.empty()) s->value = convertExpr(kids[0]);
      if (kids.size() > 1) s->msg = convertExpr(kids[1]);
      out.push_back(s);
      return;
    }
    if (t == "pass_statement") {
      out.push_back(stmt(StmtKind::Pass, n, parent));
      return;
    }
    if (t == "break_statement") {
      out.push_back(stmt(StmtKind::Break, n, parent));
      return;
    }
    if (t == "continue_statement") {
      out.push_back(stmt(StmtKind::Continue, n, parent));
      return;
    }
    if (t == "import_statement") {
      Stmt *s = stmt(StmtKind::Import, n, parent);
      for (TSNode c : namedChildren(n)) s->imports.push_back(importName(c));
      out.push_back(s);
      return;
    }
    if (t == "import_from_statement") {
      Stmt *s = stmt(StmtKind::ImportFrom, n, parent);
      s->name = textOf(field<"module_name">(n)).str();
      for (TSNode c : fieldChildren(n, "name")) s->imports.push_back(importName(c));
      for (TSNode c : namedChildren(n))
        if (is(c, "wildcard_import")) s->imports.push_back({"*", ""});
      out.push_back(s);
      return;
    }
    // if __name__ == "__main__" blocks, with, try...: kept opaque. A class stays an Other statement named
    // "class_definition" whose one target is the name it binds and whose body is its block (PyCore reads
    // its attributes and dataclass fields).
    Stmt *s = stmt(StmtKind::Other, n, parent);
    s->name = t.str();
    if (t == "class_definition") {
      TSNode name = field<"name">(n);
      if (!ts_node_is_null(name)) s->targets = {convertExpr(name)};
      TSNode body = field<"body">(n);
      setHeader(s, n, body);
      convertBlock(body, s->body, s->bodyRange, s);
    }
    out.push_back(s);
  }

  std::pair<std::string, std::string> importName(TSNode c) {
    if (is(c, "aliased_import")) return {textOf(field<"name">(c)).str(), textOf(field<"alias">(c)).str()};
    return {textOf(c).str(), ""};
  }

  Param convertParam(TSNode p) {
    Param param;
    param.range = rangeOf(p);
    auto t = llvm::StringRef(ts_node_type(p));
    if (t == "identifier") {
      param.name = textOf(p).str();
    } else if (t == "default_parameter" || t == "typed_default_parameter") {
      param.name = textOf(field<"name">(p)).str();
      param.defaultValue = convertExpr(field<"value">(p));
    } else if (t == "typed_parameter") {
      auto kids = namedChildren(p);
      param.name = kids.empty() ? "" : textOf(kids[0]).str();
    } else {
      param.isVarArgs = true;
      param.name = textOf(p).ltrim("*").str();
    }
    return param;
  }

  Stmt *convertAssignment(TSNode a, TSNode stmtNode, const Stmt *parent) {
    Stmt *s = stmt(StmtKind::Assign, stmtNode, parent);
    TSNode cur = a;
    while (true) {
      s->targets.push_back(convertExpr(field<"left">(cur)));
      TSNode right = field<"right">(cur);
      if (ts_node_is_null(right)) {
        s->kind = StmtKind::AnnAssign; // `x: int` without a value
        break;
      }
      if (is(right, "assignment")) {
        cur = right;
        continue;
      }
      s->value = convertExpr(right);
      // `x: int = 5` keeps its annotation's mark in `op` (a dataclass field, not a plain class attribute).
      if (!ts_node_is_null(field<"type">(cur))) s->op = ":";
      break;
    }
    return s;
  }
};

namespace {

/// One parser per thread: creating a parser allocates its stacks, and the
/// search parses candidates on every worker thread.
llvm::Expected<TSParser *> threadParser() {
  thread_local ParserPtr parser;
  if (!parser) {
    auto made = makePythonParser();
    if (!made) return made.takeError();
    parser = std::move(*made);
  }
  return parser.get();
}

TSPoint pointOf(const SourceBuffer &buf, uint32_t offset) {
  LineCol lc = buf.lineCol(offset);
  return {lc.line - 1, lc.col - 1};
}

/// Where a point ends up after inserting `text` at `start`.
TSPoint pointAfter(TSPoint start, llvm::StringRef text) {
  size_t lastNewline = text.rfind('\n');
  if (lastNewline == llvm::StringRef::npos) return {start.row, start.column + static_cast<uint32_t>(text.size())};
  return {start.row + static_cast<uint32_t>(text.count('\n')), static_cast<uint32_t>(text.size() - lastNewline - 1)};
}

/// True when applying `edits` to `oldText` can give a text of `newSize` bytes.
bool editsDescribe(llvm::StringRef oldText, llvm::ArrayRef<TextEdit> edits, size_t newSize) {
  int64_t size = static_cast<int64_t>(oldText.size());
  uint64_t end = 0;
  for (const TextEdit &e : edits) {
    if (e.offset < end || uint64_t(e.offset) + e.length > oldText.size()) return false;
    end = uint64_t(e.offset) + e.length;
    size += static_cast<int64_t>(e.text.size()) - e.length;
  }
  return size == static_cast<int64_t>(newSize);
}

} // namespace

std::unique_ptr<Module> Module::parse(std::unique_ptr<SourceBuffer> source) {
  return build(std::move(source), nullptr);
}

std::unique_ptr<Module> Module::reparse(const Module &previous, std::unique_ptr<SourceBuffer> source,
                                        llvm::ArrayRef<TextEdit> edits) {
  if (!previous.Tree || !editsDescribe(previous.source().text(), edits, source->text().size()))
    return build(std::move(source), nullptr);
  // ts_tree_copy is cheap and thread-safe; the previous module stays untouched.
  TreePtr edited(ts_tree_copy(previous.Tree.get()));
  llvm::StringRef oldText = previous.source().text();
  // Last edit first: every edit's offsets are then still those of the previous text.
  for (size_t i = edits.size(); i-- > 0;) {
    const TextEdit &edit = edits[i];
    // Start each edit at the last token character before it. An edit that starts
    // where a block starts (a statement inserted first in a loop body) makes
    // tree-sitter re-parse the whole file; one that starts inside the token
    // before it (the ':' of the loop header) re-parses a few lines. The bytes
    // taken in are the same in both texts, so the edit stays exact.
    uint32_t floor = i == 0 ? 0 : edits[i - 1].offset + edits[i - 1].length;
    uint32_t start = edit.offset;
    while (start > floor && llvm::isSpace(oldText[start - 1])) --start;
    if (start > floor) --start;
    llvm::StringRef kept = oldText.slice(start, edit.offset);
    TSInputEdit e;
    e.start_byte = start;
    e.old_end_byte = edit.offset + edit.length;
    e.new_end_byte = edit.offset + static_cast<uint32_t>(edit.text.size());
    e.start_point = pointOf(previous.source(), e.start_byte);
    e.old_end_point = pointOf(previous.source(), e.old_end_byte);
    e.new_end_point = pointAfter(pointAfter(e.start_point, kept), edit.text);
    ts_tree_edit(edited.get(), &e);
  }
  auto module = build(std::move(source), edited.get());
  // Error recovery may differ from a fresh parse; report what a fresh parse reports.
  if (!module->Errors.empty()) return build(std::move(module->Source), nullptr);
  return module;
}

std::unique_ptr<Module> Module::build(std::unique_ptr<SourceBuffer> source, const TSTree *oldTree) {
  auto module = std::make_unique<Module>();
  module->Source = std::move(source);
  auto parser = threadParser();
  if (!parser) {
    module->Errors.push_back({0, llvm::toString(parser.takeError())});
    return module;
  }
  llvm::StringRef text = module->Source->text();
  module->Tree.reset(ts_parser_parse_string(*parser, oldTree, text.data(), static_cast<uint32_t>(text.size())));
  if (!module->Tree) {
    module->Errors.push_back({0, "parser gave up on this file"});
    return module;
  }
  Converter(*module).run(ts_tree_root_node(module->Tree.get()));
  return module;
}

} // namespace accelopt::syntax
