// fuse: merge two adjacent sibling loops with equal trip counts into one; the
// second loop's induction variable is renamed to the first's. Legal when no
// dependence goes from a later iteration of the first loop to an earlier
// iteration of the second.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

/// Names a loop body reads before binding them itself.
std::set<std::string> freeUses(const Kernel &k, int loop) {
  std::set<std::string> bound{k.loops[loop].iv}, out;
  for (int l : loopsIn(k, loop)) bound.insert(k.loops[l].iv);
  for (int s : stmtsIn(k, loop)) {
    for (auto &u : k.stmts[s].uses)
      if (!bound.count(u)) out.insert(u);
    for (auto &d : boundNames(k.stmts[s])) bound.insert(d);
  }
  return out;
}

std::set<std::string> definedIn(const Kernel &k, int loop) {
  std::set<std::string> out;
  for (int s : stmtsIn(k, loop))
    for (auto &d : boundNames(k.stmts[s])) out.insert(d);
  for (int l : loopsIn(k, loop)) out.insert(k.loops[l].iv);
  return out;
}

class Fuse final : public Op {
public:
  Fuse()
      : Op({"fuse",
            "merge two adjacent loops with equal trip counts (no dependence from a later iteration of the first "
            "to an earlier one of the second)",
            {{"first", FieldKind::Loop, "a loop"},
             {"second", FieldKind::Loop, "the loop that directly follows it in the same block"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto first = p.loop("first");
    auto second = p.loop("second");
    if (!p.ok()) return p.error();
    const Loop &a = k.loops[*first], &b = k.loops[*second];
    llvm::StringRef text = k.source->text();
    std::string ids = llvm::formatv("L{0} L{1}", *first, *second).str();
    uint32_t anchor = b.headerRange.begin;
    if (!directlyFollows(k, NodeRef{true, *first}, NodeRef{true, *second}))
      return refuse(name(), ids, anchor,
                    llvm::formatv("{0} does not directly follow {1} in the same block", loopLabel(k, *second),
                                  loopLabel(k, *first))
                        .str());
    if (a.kind != b.kind)
      return refuse(
          name(), ids, anchor,
          llvm::formatv("the loops are of different kinds ({0} and {1})", loopKindName(a.kind), loopKindName(b.kind))
              .str());
    const syntax::Expr *ca = iterCall(a), *cb = iterCall(b);
    bool sameIter = ca && cb && oneLineText(k, ca) == oneLineText(k, cb);
    bool sameTrip = a.tripCount.isKnown() && b.tripCount.isKnown() && *a.tripCount.value == *b.tripCount.value &&
                    singleStopArg(a) && singleStopArg(b);
    if (!sameIter && !sameTrip)
      return refuse(name(), ids, anchor,
                    llvm::formatv("the trip counts differ or are unknown ({0} and {1})", loopLabel(k, *first),
                                  loopLabel(k, *second))
                        .str());
    std::string unitA = bodyIndentUnit(k, a), unitB = bodyIndentUnit(k, b);
    if (!a.syntax->orelse.empty() || !b.syntax->orelse.empty())
      return refuse(name(), ids, anchor, "a loop has an else clause");
    if (unitA.empty() || unitB.empty()) return refuse(name(), ids, anchor, "a loop body is on its header line");
    if (indentAt(text, a.range.begin) != indentAt(text, b.range.begin))
      return refuse(name(), ids, anchor, "the loops are indented differently");
    if (b.syntax->targets.size() != 1 || b.syntax->targets[0]->kind != syntax::ExprKind::Name ||
        a.syntax->targets.size() != 1 || a.syntax->targets[0]->kind != syntax::ExprKind::Name)
      return refuse(name(), ids, anchor, "a loop target is not a single name");
    if (bodyHasMultilineString(b, text))
      return refuse(name(), ids, anchor, "the second loop has a multi-line string (re-indenting would change it)");
    if (k.source->slice(b.headerRange).contains('\n'))
      return refuse(name(), ids, anchor, "the header of the second loop spans several lines");

    // Python names flowing between the bodies.
    auto defA = definedIn(k, *first), defB = definedIn(k, *second);
    auto freeA = freeUses(k, *first), freeB = freeUses(k, *second);
    for (auto &n : freeB)
      if (defA.count(n) && n != a.iv)
        return refuse(name(), ids, anchor,
                      llvm::formatv("{0} reads '{1}', which {2} binds; after fusion it would see the value of the "
                                    "same iteration instead of the last one",
                                    loopLabel(k, *second), n, loopLabel(k, *first))
                          .str());
    for (auto &n : freeA)
      if (defB.count(n))
        return refuse(
            name(), ids, anchor,
            llvm::formatv("{0} reads '{1}', which {2} binds", loopLabel(k, *first), n, loopLabel(k, *second)).str());
    if (a.iv != b.iv && (defB.count(a.iv) > 0 || !namesInBody(b, a.iv).empty()))
      return refuse(name(), ids, anchor,
                    llvm::formatv("{0} already uses the name '{1}'; renaming its induction variable would capture it",
                                  loopLabel(k, *second), a.iv)
                        .str());

    // Dependences: instance of the first loop at iteration n1, of the second at n2;
    // fusion reorders exactly the pairs with n1 > n2.
    std::vector<DirConstraint> dirs = laterIterationDirs(k, *first);
    for (int s1 : stmtsIn(k, *first))
      for (int s2 : stmtsIn(k, *second))
        if (auto c = firstConflict(k, s1, s2, *first, *second, dirs, {*second, *first}))
          return refuse(name(), ids, anchor,
                        llvm::formatv("fusion would reverse a dependence: {0} may touch the same elements in a later "
                                      "iteration of {1} than of {2}",
                                      describeConflict(k, *c), loopLabel(k, *first), loopLabel(k, *second))
                            .str(),
                        conflictNotes(k, *c));

    EditList edits;
    // Drop the second header line; move its body to the first body's indentation.
    uint32_t headerLine = lineBegin(text, b.range.begin);
    if (!startsLine(text, b.range.begin) || !endsLine(text, b.headerRange.end))
      return refuse(name(), ids, anchor, "the second loop header shares its line with other code");
    uint32_t bodyStart = nextLineBegin(text, b.headerRange.end);
    // Blank lines and comments between the loops go away with the header: keep
    // them only if they are not blank (comments stay, re-indented into the body).
    uint32_t gapStart = nextLineBegin(text, a.range.end);
    for (uint32_t ls : nonBlankLineStarts(text, gapStart, headerLine)) edits.insert(ls, unitA);
    edits.remove(headerLine, bodyStart);
    for (uint32_t ls : nonBlankLineStarts(text, bodyStart, b.range.end)) {
      if (unitB != unitA) {
        size_t n = 0;
        while (n < unitB.size() && ls + n < text.size() && text[ls + n] == unitB[n]) ++n;
        edits.replace(ls, n, unitA);
      }
    }
    if (a.iv != b.iv)
      for (const syntax::Expr *e : namesInBody(b, b.iv)) edits.replace(e->range, a.iv);
    return applied(name(), ids, k, edits,
                   llvm::formatv("fuse {0} and {1}", loopLabel(k, *first), loopLabel(k, *second)).str(), anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (auto [x, y] : adjacentNodes(k))
      if (x.isLoop && y.isLoop)
        out.push_back(
            {{"op", "fuse"}, {"first", "L" + std::to_string(x.index)}, {"second", "L" + std::to_string(y.index)}});
    return out;
  }

private:
  static std::string oneLineText(const Kernel &k, const syntax::Expr *e) {
    std::string out;
    for (char c : k.source->slice(e->range))
      if (c != ' ' && c != '\n' && c != '\t' && c != '\r') out += c;
    return out;
  }
};

} // namespace

const Op &fuseOp() {
  static Fuse op;
  return op;
}

} // namespace accelopt::rewrite
