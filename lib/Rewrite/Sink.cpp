// sink: move a loop-invariant statement that directly precedes a loop into the
// loop, as the first statement of its body (the inverse of hoist).
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

class Sink final : public Op {
public:
  llvm::StringRef name() const override { return "sink"; }
  llvm::StringRef summary() const override {
    return "move an invariant statement that directly precedes a loop into the loop body";
  }
  std::vector<std::string> fields() const override { return {"stmt", "into"}; }

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, name(), fields());
    auto stmt = p.stmt("stmt");
    auto loop = p.loop("into");
    if (!p.ok()) return p.error();
    const Statement &s = k.stmts[*stmt];
    const Loop &l = k.loops[*loop];
    llvm::StringRef text = k.source->text();
    std::string ids = llvm::formatv("S{0} L{1}", *stmt, *loop).str();
    uint32_t anchor = s.range.begin;
    const auto &sib = k.siblingsOf(NodeRef{false, *stmt});
    auto pos = std::find(sib.begin(), sib.end(), NodeRef{false, *stmt});
    if (pos == sib.end() || pos + 1 == sib.end() || !(*(pos + 1) == NodeRef{true, *loop}))
      return refuse(name(), ids, anchor,
                    llvm::formatv("S{0} does not directly precede {1} in the same block", *stmt, loopLabel(k, *loop))
                        .str());
    if (auto r = checkMovable(k, *stmt, *loop, name(), ids, anchor)) return std::move(*r);
    for (auto &u : s.uses)
      if (u == l.iv)
        return refuse(name(), ids, anchor,
                      llvm::formatv("S{0} uses '{1}', which inside {2} would be its induction variable", *stmt, u,
                                    loopLabel(k, *loop))
                          .str());
    // Run N times instead of once: only when the loop runs at least once, and the
    // bound names are not needed after the loop.
    if (!l.tripCount.isKnown() || *l.tripCount.value < 1)
      return refuse(name(), ids, anchor,
                    "the loop may run zero times (trip count " + l.tripCount.str() + "); give input shapes");
    std::vector<int> inLoop = stmtsIn(k, *loop);
    for (const Statement &o : k.stmts) {
      if (o.range.begin <= l.range.begin || std::find(inLoop.begin(), inLoop.end(), o.id) != inLoop.end()) continue;
      for (auto &u : o.uses)
        if (std::find(s.defines.begin(), s.defines.end(), u) != s.defines.end())
          return refuse(name(), ids, anchor,
                        llvm::formatv("S{0} at {1} reads '{2}' after {3}; inside the loop it would not be in scope",
                                      o.id, where(k, o.range.begin), u, loopLabel(k, *loop))
                            .str(),
                        {{o.range.begin, o.range.end, "'" + u + "' read here"}});
    }
    std::string unit = bodyIndentUnit(k, l);
    if (unit.empty()) return refuse(name(), ids, anchor, "the loop body is on its header line");
    std::string stmtIndent = indentAt(text, s.range.begin), loopIndent = indentAt(text, l.range.begin);
    if (stmtIndent != loopIndent)
      return refuse(name(), ids, anchor, "inconsistent indentation between the statement and the loop");

    uint32_t cutBegin = lineBegin(text, s.range.begin), cutEnd = nextLineBegin(text, s.range.end);
    std::string moved;
    for (uint32_t ls = cutBegin; ls < cutEnd; ls = nextLineBegin(text, ls)) {
      llvm::StringRef line = text.slice(ls, nextLineBegin(text, ls));
      moved += (line.trim().empty() ? "" : unit) + line.str();
    }
    if (moved.empty() || moved.back() != '\n') moved += "\n";
    EditList edits;
    edits.remove(cutBegin, cutEnd);
    edits.insert(nextLineBegin(text, l.headerRange.end), moved);
    return applied(name(), ids, k, edits,
                   llvm::formatv("sink S{0} ({1}) into {2}", *stmt, s.defines.front(), loopLabel(k, *loop)).str(),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    auto scan = [&](const std::vector<NodeRef> &nodes) {
      for (size_t i = 0; i + 1 < nodes.size(); ++i)
        if (!nodes[i].isLoop && nodes[i + 1].isLoop)
          out.push_back({{"op", "sink"}, {"stmt", "S" + std::to_string(nodes[i].index)},
                         {"into", "L" + std::to_string(nodes[i + 1].index)}});
    };
    scan(k.body);
    for (const Loop &l : k.loops) scan(l.body);
    return out;
  }
};

} // namespace

const Op &sinkOp() {
  static Sink op;
  return op;
}

} // namespace accelopt::rewrite
