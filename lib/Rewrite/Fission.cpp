// fission: split a loop's body in two at a statement or inner loop: the part from
// `at` on goes into a second loop with the same header (the inverse of fuse).
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

/// Statements of the nodes [begin, end) of a loop body, any depth.
std::vector<int> stmtsOf(const Kernel &k, const std::vector<NodeRef> &nodes, size_t begin, size_t end) {
  std::vector<int> out;
  for (size_t i = begin; i < end; ++i) {
    if (nodes[i].isLoop) {
      auto inner = stmtsIn(k, nodes[i].index);
      out.insert(out.end(), inner.begin(), inner.end());
    } else {
      out.push_back(nodes[i].index);
    }
  }
  return out;
}

class Fission final : public Op {
public:
  Fission()
      : Op({"fission",
            "split a loop into two loops over the same range at a statement (no dependence from the second part "
            "to a later iteration of the first)",
            {{"loop", FieldKind::Loop, "the loop to split"},
             {"at", FieldKind::Node,
              "where the second loop starts: a statement or loop directly in the body, not the first"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto loop = p.loop("loop");
    auto atRef = p.string("at");
    if (!p.ok()) return p.error();
    auto at = k.resolve(*atRef);
    if (!at)
      return badInput(name(), "'" + *atRef + "' (field 'at') is not a statement or loop of kernel '" + k.name + "'");
    const Loop &l = k.loops[*loop];
    llvm::StringRef text = k.source->text();
    std::string atId = (at->isLoop ? "L" : "S") + std::to_string(at->index);
    std::string ids = llvm::formatv("L{0} {1}", *loop, atId).str();
    uint32_t anchor = k.rangeOf(*at).begin;
    auto pos = std::find(l.body.begin(), l.body.end(), *at);
    if (pos == l.body.end())
      return refuse(name(), ids, anchor, atId + " is not directly in the body of " + loopLabel(k, *loop));
    size_t split = pos - l.body.begin();
    if (split == 0) return refuse(name(), ids, anchor, atId + " is the first statement of " + loopLabel(k, *loop));
    if (!l.syntax->orelse.empty()) return refuse(name(), ids, anchor, "the loop has an else clause");
    if (!startsLine(text, anchor)) return refuse(name(), ids, anchor, atId + " does not start its own line");
    if (k.source->slice(l.headerRange).contains('\n'))
      return refuse(name(), ids, anchor, "the loop header spans several lines");

    std::vector<int> first = stmtsOf(k, l.body, 0, split), second = stmtsOf(k, l.body, split, l.body.size());
    // Names: the second part may not read what the first part binds (it would see the
    // last iteration's value), nor may the first read what the second binds.
    std::set<std::string> bindsFirst, bindsSecond;
    for (int s : first)
      for (auto &d : boundNames(k.stmts[s])) bindsFirst.insert(d);
    for (size_t i = 0; i < split; ++i)
      if (l.body[i].isLoop) {
        bindsFirst.insert(k.loops[l.body[i].index].iv);
        for (int inner : loopsIn(k, l.body[i].index)) bindsFirst.insert(k.loops[inner].iv);
      }
    for (int s : second)
      for (auto &d : boundNames(k.stmts[s])) bindsSecond.insert(d);
    auto nameConflict = [&](const std::vector<int> &readers, const std::set<std::string> &bound,
                            const char *what) -> std::optional<OpResult> {
      std::set<std::string> local;
      for (int s : readers) {
        for (auto &u : k.stmts[s].uses)
          if (bound.count(u) && !local.count(u)) {
            const Statement &st = k.stmts[s];
            return refuse(
                name(), ids, anchor,
                llvm::formatv("S{0} at {1} reads '{2}', which the {3} part binds", s, where(k, st.range.begin), u, what)
                    .str(),
                {{st.range.begin, st.range.end, "'" + u + "' read here"}});
          }
        for (auto &d : boundNames(k.stmts[s])) local.insert(d);
      }
      return std::nullopt;
    };
    if (auto r = nameConflict(second, bindsFirst, "first")) return std::move(*r);
    if (auto r = nameConflict(first, bindsSecond, "second")) return std::move(*r);
    // Names in the header must not be rebound by the first part.
    bool headerRebound = false;
    forEachExpr(l.syntax->value, [&](const syntax::Expr *e) {
      if (e->kind == syntax::ExprKind::Name && bindsFirst.count(e->name)) headerRebound = true;
    });
    if (headerRebound) return refuse(name(), ids, anchor, "the loop bounds use a name the first part binds");

    // Dependences: after fission every instance of the first part runs before every
    // instance of the second; originally the second part of iteration n2 ran before
    // the first part of iterations n1 > n2.
    std::vector<DirConstraint> dirs = laterIterationDirs(k, *loop);
    for (int s1 : first)
      for (int s2 : second)
        if (auto c = firstConflict(k, s1, s2, *loop, *loop, dirs))
          return refuse(name(), ids, anchor,
                        llvm::formatv("fission would reverse a dependence: {0} may touch the same elements with the "
                                      "second part in an earlier iteration of {1} than the first",
                                      describeConflict(k, *c), loopLabel(k, *loop))
                            .str(),
                        conflictNotes(k, *c));

    // The new header goes above the comment lines that lead into `at`.
    uint32_t insertAt = lineBegin(text, anchor);
    uint32_t floor = k.rangeOf(l.body[split - 1]).end;
    while (insertAt > 0) {
      uint32_t prev = lineBegin(text, insertAt - 1);
      if (prev < floor) break;
      llvm::StringRef line = text.slice(prev, insertAt).trim();
      if (!line.startswith("#")) break;
      insertAt = prev;
    }
    EditList edits;
    edits.insert(insertAt, indentAt(text, l.range.begin) + k.source->slice(l.headerRange).str() + "\n");
    return applied(name(), ids, k, edits, llvm::formatv("fission {0} before {1}", loopLabel(k, *loop), atId).str(),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Loop &l : k.loops)
      for (size_t i = 1; i < l.body.size(); ++i)
        out.push_back({{"op", "fission"},
                       {"loop", "L" + std::to_string(l.id)},
                       {"at", (l.body[i].isLoop ? "L" : "S") + std::to_string(l.body[i].index)}});
    return out;
  }
};

} // namespace

const Op &fissionOp() {
  static Fission op;
  return op;
}

} // namespace accelopt::rewrite
