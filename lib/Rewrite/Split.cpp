// split: `for i in R(N)` -> `for io in R(N // f): for ii in R(f):` with every use
// of `i` in the body replaced by `(io * f + ii)`. Always legal when f divides N.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

class Split final : public Op {
public:
  llvm::StringRef name() const override { return "split"; }
  llvm::StringRef summary() const override {
    return "split a loop into an outer and an inner loop (the factor divides the trip count)";
  }
  std::vector<std::string> fields() const override { return {"loop", "factor"}; }

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, name(), fields());
    auto loop = p.loop("loop");
    auto factor = p.integer("factor");
    if (!p.ok()) return p.error();
    const Loop &l = k.loops[*loop];
    std::string ids = "L" + std::to_string(*loop);
    llvm::StringRef text = k.source->text();
    uint32_t anchor = l.iterRange.begin;
    int64_t f = *factor;
    if (f < 2) return badInput(name(), "factor must be at least 2 (got " + std::to_string(f) + ")");
    if (!l.tripCount.isKnown())
      return refuse(name(), ids, anchor,
                    "the trip count of " + loopLabel(k, *loop) + " is unknown; give input shapes (--inputs or --case)");
    int64_t trip = *l.tripCount.value;
    if (trip % f != 0 || f >= trip)
      return refuse(name(), ids, anchor,
                    llvm::formatv("factor {0} does not divide the trip count {1} of {2} into at least two parts", f,
                                  trip, loopLabel(k, *loop))
                        .str());
    const syntax::Expr *call = iterCall(l);
    const syntax::Expr *stop = singleStopArg(l);
    if (!call || !stop)
      return refuse(name(), ids, anchor, "split handles loops of the form 'for i in <kind>(N)' (one argument)");
    const syntax::Stmt *st = l.syntax;
    if (st->targets.size() != 1 || st->targets[0]->kind != syntax::ExprKind::Name)
      return refuse(name(), ids, anchor, "the loop target is not a single name");
    std::string unit = bodyIndentUnit(k, l);
    if (!l.syntax->orelse.empty()) return refuse(name(), ids, anchor, "the loop has an else clause");
    if (unit.empty()) return refuse(name(), ids, anchor, "the loop body is on the header line");
    for (const syntax::Stmt *b : st->body)
      if (hasMultilineString(b, text))
        return refuse(name(), ids, anchor, "the loop body has a multi-line string (re-indenting would change it)");
    // The induction variable must not be rebound inside the body.
    for (int s : stmtsIn(k, *loop))
      for (auto &d : k.stmts[s].defines)
        if (d == l.iv)
          return refuse(name(), ids, anchor, "S" + std::to_string(s) + " rebinds the induction variable '" + l.iv + "'");
    for (int inner : loopsIn(k, *loop))
      if (k.loops[inner].iv == l.iv)
        return refuse(name(), ids, anchor, "inner loop L" + std::to_string(inner) + " reuses the induction variable '" + l.iv + "'");

    auto taken = identifiersIn(text);
    std::string outer = freshName(taken, l.iv + "o");
    taken.insert(outer);
    std::string inner = freshName(taken, l.iv + "i");

    EditList edits;
    // Outer header: new target and trip count.
    edits.replace(st->targets[0]->range.begin, st->targets[0]->range.end - st->targets[0]->range.begin, outer);
    std::string stopText = k.source->slice(stop->range).str();
    std::string newStop;
    if (stop->kind == syntax::ExprKind::Int) newStop = std::to_string(stop->intValue / f);
    else if (stop->kind == syntax::ExprKind::Name || stop->kind == syntax::ExprKind::Attribute ||
             stop->kind == syntax::ExprKind::Call || stop->kind == syntax::ExprKind::Subscript ||
             (stop->kind == syntax::ExprKind::BinOp && (stop->name == "//" || stop->name == "*")))
      newStop = stopText + " // " + std::to_string(f);
    else newStop = "(" + stopText + ") // " + std::to_string(f);
    if (stop->kind == syntax::ExprKind::Int && stop->intValue != trip)
      return refuse(name(), ids, anchor, "the literal trip count disagrees with the analysis");
    edits.replace(stop->range.begin, stop->range.end - stop->range.begin, newStop);
    // Inner header on its own line after the outer header.
    std::string headerIndent = indentAt(text, l.range.begin);
    std::string callee = k.source->slice(call->base->range).str();
    uint32_t bodyStart = nextLineBegin(text, l.headerRange.end);
    edits.insert(bodyStart,
                 headerIndent + unit + "for " + inner + " in " + callee + "(" + std::to_string(f) + "):\n");
    // Re-indent the body one level.
    for (uint32_t ls : nonBlankLineStarts(text, bodyStart, l.range.end)) edits.insert(ls, unit);
    // i -> (io * f + ii)
    std::string subst = "(" + outer + " * " + std::to_string(f) + " + " + inner + ")";
    for (const syntax::Stmt *b : st->body)
      for (const syntax::Expr *e : namesIn(b, l.iv)) edits.replace(e->range.begin, e->range.end - e->range.begin, subst);
    return applied(name(), ids, k, edits,
                   llvm::formatv("split {0} by {1} into {2} (trip {3}) and {4} (trip {1})", loopLabel(k, *loop), f,
                                 outer, trip / f, inner)
                       .str(),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Loop &l : k.loops) {
      if (!l.tripCount.isKnown()) continue;
      int64_t trip = *l.tripCount.value;
      for (int64_t f = 2; f < trip && f <= 4096; ++f)
        if (trip % f == 0) out.push_back({{"op", "split"}, {"loop", "L" + std::to_string(l.id)}, {"factor", f}});
    }
    return out;
  }
};

} // namespace

const Op &splitOp() {
  static Split op;
  return op;
}

} // namespace accelopt::rewrite
