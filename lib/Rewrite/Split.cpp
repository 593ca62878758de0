// split: `for i in R(N)` -> `for io in R(N // f): for ii in R(f):` with every use
// of `i` in the body replaced by `(io * f + ii)`. Always legal when f divides N.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

class Split final : public LoopFactorOp {
public:
  Split()
      : LoopFactorOp({"split",
                      "split a loop into an outer and an inner loop (the factor divides the trip count)",
                      {{"loop", FieldKind::Loop, "the loop to split"},
                       {"factor", FieldKind::Integer, "the inner loop's trip count, at least 2"}}}) {}

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    return divisorInstances(k, name(), 4096, /*belowTrip=*/true);
  }

private:
  OpResult applyFactor(const Kernel &k, int loop, int64_t f, int64_t trip, const std::string &ids,
                       uint32_t anchor) const override {
    const Loop &l = k.loops[loop];
    llvm::StringRef text = k.source->text();
    if (trip % f != 0 || f >= trip)
      return refuse(name(), ids, anchor,
                    llvm::formatv("factor {0} does not divide the trip count {1} of {2} into at least two parts", f,
                                  trip, loopLabel(k, loop))
                        .str());
    CountedLoop header = countedLoop(k, loop, name());
    if (!header.refusal.empty()) return refuse(name(), ids, anchor, header.refusal);
    if (bodyHasMultilineString(l, text))
      return refuse(name(), ids, anchor, "the loop body has a multi-line string (re-indenting would change it)");
    if (auto why = ivRebindingReason(k, loop)) return refuse(name(), ids, anchor, *why);
    const syntax::Expr *stop = header.stop;
    if (stop->kind == syntax::ExprKind::Int && stop->intValue != trip)
      return refuse(name(), ids, anchor, "the literal trip count disagrees with the analysis");

    auto taken = identifiersIn(text);
    std::string outer = freshName(taken, l.iv + "o");
    taken.insert(outer);
    std::string inner = freshName(taken, l.iv + "i");

    EditList edits;
    divideHeader(edits, k, l, stop, outer, f);
    // Inner header on its own line after the outer header.
    std::string unit = header.bodyUnit;
    std::string headerIndent = indentAt(text, l.range.begin);
    std::string callee = k.source->slice(header.call->base->range).str();
    uint32_t bodyStart = nextLineBegin(text, l.headerRange.end);
    edits.insert(bodyStart, headerIndent + unit + "for " + inner + " in " + callee + "(" + std::to_string(f) + "):\n");
    // Re-indent the body one level.
    for (uint32_t ls : nonBlankLineStarts(text, bodyStart, l.range.end)) edits.insert(ls, unit);
    // i -> (io * f + ii)
    std::string subst = "(" + outer + " * " + std::to_string(f) + " + " + inner + ")";
    for (const syntax::Expr *e : namesInBody(l, l.iv)) edits.replace(e->range, subst);
    return applied(name(), ids, k, edits,
                   llvm::formatv("split {0} by {1} into {2} (trip {3}) and {4} (trip {1})", loopLabel(k, loop), f,
                                 outer, trip / f, inner)
                       .str(),
                   anchor);
  }
};

} // namespace

const Op &splitOp() {
  static Split op;
  return op;
}

} // namespace accelopt::rewrite
