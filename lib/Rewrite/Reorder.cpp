// reorder: move a statement or loop nest of a block before or after a sibling, across the nodes
// in between (e.g. a load nest between two loops, so they become adjacent for fuse/compute_at, or
// code after an inner loop, so fission leaves a perfect nest for interchange). Legal when the moved
// node and the crossed ones share no Python name one of them binds, and no pair of their accesses
// (not both reads) may touch a common element in the same iteration of the loops around the block.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

std::string nodeId(NodeRef n) { return (n.isLoop ? "L" : "S") + std::to_string(n.index); }

/// Statements of a node, any depth.
std::vector<int> stmtsOfNode(const Kernel &k, NodeRef n) {
  return n.isLoop ? stmtsIn(k, n.index) : std::vector<int>{n.index};
}

/// The Python names a node binds (statements' new values and loop counters) and reads (statements'
/// uses and loop headers' names).
void namesOfNode(const Kernel &k, NodeRef n, std::set<std::string> &binds, std::set<std::string> &reads) {
  for (int s : stmtsOfNode(k, n)) {
    for (const std::string &d : boundNames(k.stmts[s])) binds.insert(d);
    for (const std::string &d : k.stmts[s].defines) binds.insert(d);
    for (const std::string &u : k.stmts[s].uses) reads.insert(u);
  }
  if (!n.isLoop) return;
  std::vector<int> loops = loopsIn(k, n.index);
  loops.push_back(n.index);
  for (int l : loops) {
    binds.insert(k.loops[l].iv);
    if (k.loops[l].syntax && k.loops[l].syntax->value)
      forEachExpr(k.loops[l].syntax->value, [&](const syntax::Expr *e) {
        if (e->kind == syntax::ExprKind::Name) reads.insert(e->name);
      });
  }
}

/// A statement whose effect the IR does not describe (if, helper calls, return): never moved or crossed.
/// A bare string literal (NKIBench's `' end loop i2 '` markers) has none.
std::optional<int> opaqueStmt(const Kernel &k, NodeRef n) {
  for (int s : stmtsOfNode(k, n)) {
    const Statement &st = k.stmts[s];
    if (st.kind != StmtKind::Python && st.kind != StmtKind::Return) continue;
    if (st.kind == StmtKind::Python && st.uses.empty() && st.defines.empty() && st.reads.empty() && st.writes.empty() &&
        st.callee.empty())
      continue;
    return s;
  }
  return std::nullopt;
}

class Reorder final : public Op {
public:
  Reorder()
      : Op({"reorder",
            "move a statement or loop nest before or after a sibling in the same block, across the nodes in between "
            "(no name or element they share that one of them writes)",
            {{"node", FieldKind::Node, "the statement or loop to move"},
             {"to", FieldKind::Node, "a sibling in the same block"},
             {"where", FieldKind::Choice, "before or after `to`", {"before", "after"}}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto nodeRef = p.string("node");
    auto toRef = p.string("to");
    auto where = p.choice("where");
    if (!p.ok()) return p.error();
    auto node = k.resolve(*nodeRef), to = k.resolve(*toRef);
    if (!node)
      return badInput(name(),
                      "'" + *nodeRef + "' (field 'node') is not a statement or loop of kernel '" + k.name + "'");
    if (!to)
      return badInput(name(), "'" + *toRef + "' (field 'to') is not a statement or loop of kernel '" + k.name + "'");
    bool before = *where == "before";
    llvm::StringRef text = k.source->text();
    std::string ids = nodeId(*node) + " " + nodeId(*to);
    uint32_t anchor = k.rangeOf(*node).begin;
    Refuser refuse(name(), ids, anchor);

    const std::vector<NodeRef> &block = k.siblingsOf(*node);
    auto from = llvm::find(block, *node), target = llvm::find(block, *to);
    if (target == block.end())
      return refuse(llvm::formatv("{0} and {1} are not in the same block", nodeId(*node), nodeId(*to)).str());
    if (*node == *to) return refuse(nodeId(*node) + " cannot move relative to itself");
    // The crossed nodes: [to, node) when moving up, (node, to] when moving down.
    std::vector<NodeRef> crossed;
    if (target < from) {
      if (!before && target + 1 == from)
        return refuse(llvm::formatv("{0} is already after {1}", nodeId(*node), nodeId(*to)).str());
      crossed.assign(before ? target : target + 1, from);
    } else {
      if (before && from + 1 == target)
        return refuse(llvm::formatv("{0} is already before {1}", nodeId(*node), nodeId(*to)).str());
      crossed.assign(from + 1, before ? target : target + 1);
    }

    // Text: every node involved on its own lines.
    syntax::ByteRange moved = k.rangeOf(*node);
    for (NodeRef n : crossed) {
      syntax::ByteRange r = k.rangeOf(n);
      if (!startsLine(text, r.begin) || !endsLine(text, r.end))
        return refuse(nodeId(n) + " shares its lines with other code");
    }
    if (!startsLine(text, moved.begin) || !endsLine(text, moved.end))
      return refuse(nodeId(*node) + " shares its lines with other code");
    if (node->isLoop && (bodyHasMultilineString(k.loops[node->index], text) ||
                         (k.loops[node->index].syntax && !k.loops[node->index].syntax->orelse.empty())))
      return refuse(nodeId(*node) + " has a multi-line string or an else clause");
    if (!node->isLoop && hasMultilineString(k.stmts[node->index].syntax, text))
      return refuse(nodeId(*node) + " has a multi-line string");

    for (NodeRef n : crossed)
      if (n.isLoop && k.loops[n.index].syntax && !k.loops[n.index].syntax->orelse.empty())
        return refuse(nodeId(n) + " has an else clause");
    // Statements whose effects the IR does not describe.
    std::vector<NodeRef> all = crossed;
    all.push_back(*node);
    for (NodeRef n : all)
      if (auto s = opaqueStmt(k, n))
        return refuse(llvm::formatv("S{0} at {1} is a {2} statement, whose effects are not analysed", *s,
                                    nki::where(k, k.stmts[*s].range.begin), stmtKindName(k.stmts[*s].kind))
                          .str());

    // Names: neither side may bind a name the other binds or reads.
    std::set<std::string> movedBinds, movedReads, crossedBinds, crossedReads;
    namesOfNode(k, *node, movedBinds, movedReads);
    for (NodeRef n : crossed) namesOfNode(k, n, crossedBinds, crossedReads);
    auto shared = [](const std::set<std::string> &a, const std::set<std::string> &b) -> std::optional<std::string> {
      for (const std::string &n : a)
        if (b.count(n)) return n;
      return std::nullopt;
    };
    if (auto n = shared(movedBinds, crossedReads))
      return refuse(llvm::formatv("{0} binds '{1}', which the nodes it would cross read", nodeId(*node), *n).str());
    if (auto n = shared(movedReads, crossedBinds))
      return refuse(llvm::formatv("{0} reads '{1}', which the nodes it would cross bind", nodeId(*node), *n).str());
    if (auto n = shared(movedBinds, crossedBinds))
      return refuse(llvm::formatv("{0} and the nodes it would cross both bind '{1}'", nodeId(*node), *n).str());

    // Elements: the loops around the block at the same iteration (the order of different iterations
    // is unchanged), the loops inside the nodes free.
    std::vector<DirConstraint> dirs;
    int parent = k.parentOf(*node);
    if (parent >= 0)
      for (int l : k.loopNest(parent)) dirs.push_back({l, Dir::Eq});
    std::vector<int> movedStmts = stmtsOfNode(k, *node);
    for (NodeRef n : crossed)
      for (int c : stmtsOfNode(k, n))
        for (int m : movedStmts)
          if (auto conflict = firstConflict(k, m, c, -1, -1, dirs))
            return refuse(llvm::formatv("{0} may touch the same elements in one iteration of the loops around "
                                        "the block; reordering would change which runs first",
                                        describeConflict(k, *conflict))
                              .str(),
                          conflictNotes(k, *conflict));

    uint32_t cutBegin = lineBegin(text, moved.begin), cutEnd = nextLineBegin(text, moved.end);
    std::string lines = text.slice(cutBegin, cutEnd).str();
    if (lines.empty() || lines.back() != '\n') return refuse(nodeId(*node) + " ends the file without a newline");
    syntax::ByteRange t = k.rangeOf(*to);
    uint32_t at = before ? lineBegin(text, t.begin) : nextLineBegin(text, t.end);
    if (!before && (at == 0 || text[at - 1] != '\n')) return refuse(nodeId(*to) + " ends the file without a newline");
    EditList edits;
    edits.remove(cutBegin, cutEnd);
    edits.insert(at, lines);
    return applied(
        name(), ids, k, edits,
        llvm::formatv("move {0} {1} {2} across {3} node(s)", nodeId(*node), *where, nodeId(*to), crossed.size()).str(),
        anchor);
  }

  /// Moves across the nearest loop: a node goes before the nearest loop above it and after the
  /// nearest loop below it, across whatever lies between (two adjacent loops swap once).
  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    auto add = [&](NodeRef n, NodeRef to, const char *where) {
      out.push_back({{"op", "reorder"}, {"node", nodeId(n)}, {"to", nodeId(to)}, {"where", where}});
    };
    auto scan = [&](const std::vector<NodeRef> &body) {
      for (size_t i = 0; i < body.size(); ++i) {
        for (size_t j = i; j-- > 0;)
          if (body[j].isLoop) {
            add(body[i], body[j], "before");
            break;
          }
        for (size_t j = i + 1; j < body.size(); ++j)
          if (body[j].isLoop) {
            if (!(body[i].isLoop && j == i + 1)) add(body[i], body[j], "after");
            break;
          }
      }
    };
    scan(k.body);
    for (const Loop &l : k.loops) scan(l.body);
    return out;
  }
};

} // namespace

const Op &reorderOp() {
  static Reorder op;
  return op;
}

} // namespace accelopt::rewrite
