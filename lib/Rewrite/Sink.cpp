// sink: move a loop-invariant statement that directly precedes a loop into the
// loop, as the first statement of its body (the inverse of hoist).
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

class Sink final : public StmtMoveOp {
public:
  Sink()
      : StmtMoveOp({"sink",
                    "move an invariant statement that directly precedes a loop into the loop body",
                    {{"stmt", FieldKind::Stmt, "the statement directly before the loop"},
                     {"into", FieldKind::Loop, "the loop that receives it"}}}) {}

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (auto [x, y] : adjacentNodes(k))
      if (!x.isLoop && y.isLoop)
        out.push_back(
            {{"op", "sink"}, {"stmt", "S" + std::to_string(x.index)}, {"into", "L" + std::to_string(y.index)}});
    return out;
  }

private:
  std::optional<std::string> placementRefusal(const Kernel &k, int stmt, int loop) const override {
    if (directlyFollows(k, NodeRef{false, stmt}, NodeRef{true, loop})) return std::nullopt;
    return llvm::formatv("S{0} does not directly precede {1} in the same block", stmt, loopLabel(k, loop)).str();
  }

  OpResult applyMove(const Kernel &k, int stmt, int loop, const std::string &ids, uint32_t anchor) const override {
    const Statement &s = k.stmts[stmt];
    const Loop &l = k.loops[loop];
    llvm::StringRef text = k.source->text();
    for (auto &u : s.uses)
      if (u == l.iv)
        return refuse(name(), ids, anchor,
                      llvm::formatv("S{0} uses '{1}', which inside {2} would be its induction variable", stmt, u,
                                    loopLabel(k, loop))
                          .str());
    // Run N times instead of once: only when the loop runs at least once, and the
    // bound names are not needed after the loop.
    if (!l.tripCount.isKnown() || *l.tripCount.value < 1)
      return refuse(name(), ids, anchor,
                    "the loop may run zero times (trip count " + l.tripCount.str() + "); give input shapes");
    std::vector<int> inLoop = stmtsIn(k, loop);
    for (const Statement &o : k.stmts) {
      if (o.range.begin <= l.range.begin || std::find(inLoop.begin(), inLoop.end(), o.id) != inLoop.end()) continue;
      for (auto &u : o.uses)
        if (std::find(s.defines.begin(), s.defines.end(), u) != s.defines.end())
          return refuse(name(), ids, anchor,
                        llvm::formatv("S{0} at {1} reads '{2}' after {3}; inside the loop it would not be in scope",
                                      o.id, where(k, o.range.begin), u, loopLabel(k, loop))
                            .str(),
                        {{o.range.begin, o.range.end, "'" + u + "' read here"}});
    }
    std::string unit = bodyIndentUnit(k, l);
    if (unit.empty()) return refuse(name(), ids, anchor, "the loop body is on its header line");
    std::string stmtIndent = indentAt(text, s.range.begin), loopIndent = indentAt(text, l.range.begin);
    if (stmtIndent != loopIndent)
      return refuse(name(), ids, anchor, "inconsistent indentation between the statement and the loop");

    EditList edits;
    moveStmtLines(edits, text, s, nextLineBegin(text, l.headerRange.end),
                  [&](llvm::StringRef line) { return (line.trim().empty() ? "" : unit) + line.str(); });
    return applied(name(), ids, k, edits,
                   llvm::formatv("sink S{0} ({1}) into {2}", stmt, s.defines.front(), loopLabel(k, loop)).str(),
                   anchor);
  }
};

} // namespace

const Op &sinkOp() {
  static Sink op;
  return op;
}

} // namespace accelopt::rewrite
