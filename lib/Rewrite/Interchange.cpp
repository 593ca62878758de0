// interchange: swap the headers of a perfect two-loop nest. Legal when no
// dependence has direction (<, >): an earlier outer iteration and a later inner one.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

class Interchange final : public Op {
public:
  Interchange()
      : Op({"interchange",
            "swap the two loops of a perfect nest (no dependence with direction (<,>))",
            {{"outer", FieldKind::Loop, "the outer loop"},
             {"inner", FieldKind::Loop, "the loop directly inside it"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto outer = p.loop("outer");
    auto inner = p.loop("inner");
    if (!p.ok()) return p.error();
    const Loop &lo = k.loops[*outer], &li = k.loops[*inner];
    std::string ids = llvm::formatv("L{0} L{1}", *outer, *inner).str();
    uint32_t anchor = lo.headerRange.begin;
    if (li.parent != *outer)
      return refuse(name(), ids, anchor,
                    llvm::formatv("{0} is not directly inside {1}", loopLabel(k, *inner), loopLabel(k, *outer)).str());
    if (!lo.syntax || !li.syntax || !lo.syntax->orelse.empty() || !li.syntax->orelse.empty())
      return refuse(name(), ids, anchor, "a loop has an else clause");
    if (lo.body.size() != 1)
      return refuse(name(), ids, anchor,
                    llvm::formatv("not a perfect nest: {0} has {1} statements/loops besides {2}", loopLabel(k, *outer),
                                  lo.body.size() - 1, loopLabel(k, *inner))
                        .str());
    const syntax::Expr *iter = li.syntax ? li.syntax->value : nullptr;
    if (!iter) return refuse(name(), ids, anchor, "the inner loop has no iterator expression");
    bool dependsOnOuter = false;
    forEachExpr(iter, [&](const syntax::Expr *e) {
      if (e->kind == syntax::ExprKind::Name && e->name == lo.iv) dependsOnOuter = true;
    });
    if (dependsOnOuter)
      return refuse(
          name(), ids, anchor,
          llvm::formatv("the bounds of {0} use '{1}' (not a rectangular nest)", loopLabel(k, *inner), lo.iv).str());
    if (k.source->slice(lo.headerRange).contains('\n') || k.source->slice(li.headerRange).contains('\n'))
      return refuse(name(), ids, anchor, "a loop header spans several lines");

    if (auto c = carriedName(k, *inner)) {
      const Statement &s = k.stmts[c->first];
      return refuse(name(), ids, anchor,
                    llvm::formatv("S{0} at {1} carries '{2}' from one iteration to the next; reordering the "
                                  "iterations would change its values",
                                  s.id, where(k, s.range.begin), c->second)
                        .str(),
                    {{s.range.begin, s.range.end, "'" + c->second + "' read here"}});
    }
    std::vector<DirConstraint> dirs = laterIterationDirs(k, *outer);
    dirs.push_back({*inner, Dir::Neg});
    auto crossed = [&](const Access &w, const Access &a) {
      for (bool flip : {false, true}) {
        dirs[dirs.size() - 2].dir = flip ? Dir::Neg : Dir::Pos;
        dirs.back().dir = flip ? Dir::Pos : Dir::Neg;
        if (mayOverlapDir(k, w, a, dirs)) return true;
      }
      return false;
    };
    if (auto c = firstWriteConflict(k, stmtsIn(k, *inner), *inner, crossed))
      return refuse(name(), ids, anchor,
                    llvm::formatv("dependence with direction (<,>) between {0} and {1}: {2} may touch the same "
                                  "elements with an earlier '{3}' and a later '{4}' iteration",
                                  loopLabel(k, *outer), loopLabel(k, *inner), describeConflict(k, *c), lo.iv, li.iv)
                        .str(),
                    conflictNotes(k, *c));

    EditList edits;
    edits.replace(lo.headerRange.begin, lo.headerRange.end - lo.headerRange.begin,
                  k.source->slice(li.headerRange).str());
    edits.replace(li.headerRange.begin, li.headerRange.end - li.headerRange.begin,
                  k.source->slice(lo.headerRange).str());
    return applied(name(), ids, k, edits,
                   llvm::formatv("interchange {0} with {1}", loopLabel(k, *outer), loopLabel(k, *inner)).str(), anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Loop &l : k.loops)
      if (l.body.size() == 1 && l.body[0].isLoop)
        out.push_back({{"op", "interchange"},
                       {"outer", "L" + std::to_string(l.id)},
                       {"inner", "L" + std::to_string(l.body[0].index)}});
    return out;
  }
};

} // namespace

const Op &interchangeOp() {
  static Interchange op;
  return op;
}

} // namespace accelopt::rewrite
