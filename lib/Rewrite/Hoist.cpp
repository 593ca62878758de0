// hoist: move a loop-invariant statement out of an enclosing loop, to just
// before that loop.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

std::optional<OpResult> checkMovable(const Kernel &k, int stmt, int loop, llvm::StringRef name, const std::string &ids,
                                     uint32_t anchor) {
  const Statement &s = k.stmts[stmt];
  llvm::StringRef text = k.source->text();
  bool inside = k.encloses(loop, NodeRef{false, stmt});
  if (s.kind == StmtKind::Return || s.kind == StmtKind::Assert || s.kind == StmtKind::Python || !s.syntax ||
      (s.syntax->kind != syntax::StmtKind::Assign && s.syntax->kind != syntax::StmtKind::AnnAssign))
    return refuse(
        name, ids, anchor,
        llvm::formatv("S{0} is not an assignment of a new value ('{1}' statement)", stmt, stmtKindName(s.kind)).str());
  if (!startsLine(text, s.range.begin) || !endsLine(text, s.range.end))
    return refuse(name, ids, anchor, "S" + std::to_string(stmt) + " shares its line with other code");
  if (hasMultilineString(s.syntax, text)) return refuse(name, ids, anchor, "the statement has a multi-line string");
  if (s.defines.empty() || (!s.writes.empty() && s.definesTensor < 0))
    return refuse(name, ids, anchor,
                  "S" + std::to_string(stmt) + " writes into an existing tensor; " + name.str() +
                      " moves only statements that bind a new value");
  for (const Access &w : s.writes)
    if (w.tensor != s.definesTensor)
      return refuse(name, ids, anchor,
                    "S" + std::to_string(stmt) + " writes into '" + tensorName(k, w.tensor) + "'; " + name.str() +
                        " moves only statements that bind a new value");
  int parent = s.parent;
  if (inside && parent == loop && k.loops[parent].body.size() == 1)
    return refuse(name, ids, anchor, "S" + std::to_string(stmt) + " is the only statement of " + loopLabel(k, parent));

  // Loops the statement leaves, and everything they bind.
  std::vector<int> left;
  for (int q = inside ? parent : -1; q >= 0; q = k.loops[q].parent) {
    left.push_back(q);
    if (q == loop) break;
  }
  std::vector<int> inLoop = stmtsIn(k, loop);
  for (int q : left)
    for (auto &u : s.uses)
      if (u == k.loops[q].iv)
        return refuse(name, ids, anchor,
                      q == loop ? llvm::formatv("S{0} is not invariant in {1}: it uses its induction variable '{2}'",
                                                stmt, loopLabel(k, loop), u)
                                      .str()
                                : llvm::formatv("S{0} is not invariant in {1}: it uses '{2}', the induction variable "
                                                "of the enclosed {3}",
                                                stmt, loopLabel(k, loop), u, loopLabel(k, q))
                                      .str(),
                      {{s.range.begin, s.range.end, "S" + std::to_string(stmt) + " uses '" + u + "'"}});
  for (int other : inLoop) {
    if (other == stmt) continue;
    const Statement &o = k.stmts[other];
    for (auto &d : o.defines) {
      if (std::find(s.uses.begin(), s.uses.end(), d) != s.uses.end())
        return refuse(name, ids, anchor,
                      llvm::formatv("S{0} is not invariant in {1}: it uses '{2}', which S{3} at {4} binds inside "
                                    "the loop",
                                    stmt, loopLabel(k, loop), d, other, where(k, o.range.begin))
                          .str(),
                      {{o.range.begin, o.range.end, "'" + d + "' bound here"}});
      if (std::find(s.defines.begin(), s.defines.end(), d) != s.defines.end() && o.kind == StmtKind::Accumulate)
        return refuse(name, ids, anchor,
                      llvm::formatv("the value S{0} creates is modified in the loop by S{1} at {2}; each "
                                    "iteration needs a fresh copy",
                                    stmt, other, where(k, o.range.begin))
                          .str(),
                      {{o.range.begin, o.range.end, "'" + d + "' modified here"}});
      if (std::find(s.defines.begin(), s.defines.end(), d) != s.defines.end())
        return refuse(name, ids, anchor,
                      llvm::formatv("'{0}' is also bound by S{1} at {2} inside {3}", d, other, where(k, o.range.begin),
                                    loopLabel(k, loop))
                          .str(),
                      {{o.range.begin, o.range.end, "'" + d + "' bound here"}});
    }
    // A use of the bound name before the statement would see another value.
    if (inside && o.range.begin < s.range.begin)
      for (auto &u : o.uses)
        if (std::find(s.defines.begin(), s.defines.end(), u) != s.defines.end())
          return refuse(name, ids, anchor,
                        llvm::formatv("S{0} at {1} reads '{2}' before S{3} binds it in the loop body", other,
                                      where(k, o.range.begin), u, stmt)
                            .str(),
                        {{o.range.begin, o.range.end, "'" + u + "' read here"}});
    // Writes in the loop that reach what the statement reads or creates.
    for (const Access &w : o.writes) {
      for (const Access &r : s.reads)
        if (mayOverlapDir(k, w, r, {}))
          return refuse(name, ids, anchor,
                        llvm::formatv("S{0} is not invariant in {1}: {2}", stmt, loopLabel(k, loop),
                                      describeConflict(k, {other, stmt, &w, &r}))
                            .str(),
                        conflictNotes(k, {other, stmt, &w, &r}));
      if (s.definesTensor >= 0 && w.tensor >= 0 && w.tensor == s.definesTensor)
        return refuse(name, ids, anchor,
                      llvm::formatv("the value S{0} creates is modified in the loop by S{1} at {2}; each "
                                    "iteration needs a fresh copy",
                                    stmt, other, where(k, w.range.begin))
                          .str(),
                      {{w.range.begin, w.range.end, "written here"}});
    }
  }
  for (int inner : loopsIn(k, loop))
    if (std::find(s.uses.begin(), s.uses.end(), k.loops[inner].iv) != s.uses.end())
      return refuse(
          name, ids, anchor,
          llvm::formatv("S{0} uses '{1}', the induction variable of {2}", stmt, k.loops[inner].iv, loopLabel(k, inner))
              .str());
  return std::nullopt;
}

namespace {

class Hoist final : public StmtMoveOp {
public:
  Hoist()
      : StmtMoveOp({"hoist",
                    "move a loop-invariant statement out of an enclosing loop (placed before the loop)",
                    {{"stmt", FieldKind::Stmt, "the loop-invariant statement to move"},
                     {"out_of", FieldKind::Loop,
                      "an enclosing loop at any depth (the statement leaves it and every loop between)"}}}) {}

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Statement &s : k.stmts)
      for (int q = s.parent; q >= 0; q = k.loops[q].parent)
        out.push_back({{"op", "hoist"}, {"stmt", "S" + std::to_string(s.id)}, {"out_of", "L" + std::to_string(q)}});
    return out;
  }

private:
  std::optional<std::string> placementRefusal(const Kernel &k, int stmt, int loop) const override {
    if (k.encloses(loop, NodeRef{false, stmt})) return std::nullopt;
    return llvm::formatv("S{0} is not inside {1}", stmt, loopLabel(k, loop)).str();
  }

  OpResult applyMove(const Kernel &k, int stmt, int loop, const std::string &ids, uint32_t anchor) const override {
    const Statement &s = k.stmts[stmt];
    const Loop &l = k.loops[loop];
    llvm::StringRef text = k.source->text();
    // Paste the statement's lines before the loop at its indentation.
    std::string stmtIndent = indentAt(text, s.range.begin), loopIndent = indentAt(text, l.range.begin);
    if (stmtIndent.size() < loopIndent.size() || stmtIndent.compare(0, loopIndent.size(), loopIndent) != 0)
      return refuse(name(), ids, anchor, "inconsistent indentation between the statement and the loop");
    size_t strip = stmtIndent.size() - loopIndent.size();
    EditList edits;
    moveStmtLines(edits, text, s, lineBegin(text, l.range.begin), [&](llvm::StringRef line) {
      size_t n = 0;
      while (n < strip && n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
      return line.drop_front(n).str();
    });
    return applied(name(), ids, k, edits,
                   llvm::formatv("hoist S{0} ({1}) out of {2}", stmt,
                                 s.defines.empty() ? std::string("-") : s.defines.front(), loopLabel(k, loop))
                       .str(),
                   anchor);
  }
};

} // namespace

const Op &hoistOp() {
  static Hoist op;
  return op;
}

} // namespace accelopt::rewrite
