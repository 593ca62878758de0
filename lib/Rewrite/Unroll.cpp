// unroll: replicate a loop body `factor` times. Partial: `for i in R(N)` becomes
// `for io in R(N // f)` whose body is f copies with `i` -> `(io * f + c)`. Full
// (factor == trip count): the header goes, the copies (with `i` -> c) take the
// loop's place one level shallower. Iterations keep their order: always legal.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

constexpr int64_t MaxCopies = 64;

class Unroll final : public Op {
public:
  llvm::StringRef name() const override { return "unroll"; }
  llvm::StringRef summary() const override {
    return "replicate a loop body factor times (factor == trip count unrolls fully)";
  }
  std::vector<std::string> fields() const override { return {"loop", "factor"}; }

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, name(), fields());
    auto loop = p.loop("loop");
    auto factor = p.integer("factor");
    if (!p.ok()) return p.error();
    const Loop &l = k.loops[*loop];
    const syntax::Stmt *st = l.syntax;
    std::string ids = "L" + std::to_string(*loop);
    llvm::StringRef text = k.source->text();
    uint32_t anchor = l.iterRange.begin;
    int64_t f = *factor;
    if (f < 2) return badInput(name(), "factor must be at least 2 (got " + std::to_string(f) + ")");
    if (f > MaxCopies) return badInput(name(), "factor " + std::to_string(f) + " is more than " + std::to_string(MaxCopies) + " copies");
    if (!l.tripCount.isKnown())
      return refuse(name(), ids, anchor,
                    "the trip count of " + loopLabel(k, *loop) + " is unknown; give input shapes (--inputs or --case)");
    int64_t trip = *l.tripCount.value;
    if (trip % f != 0)
      return refuse(name(), ids, anchor,
                    llvm::formatv("factor {0} does not divide the trip count {1} of {2}", f, trip, loopLabel(k, *loop))
                        .str());
    bool full = f == trip;
    const syntax::Expr *call = iterCall(l), *stop = singleStopArg(l);
    if (!call || !stop)
      return refuse(name(), ids, anchor, "unroll handles loops of the form 'for i in <kind>(N)' (one argument)");
    if (st->targets.size() != 1 || st->targets[0]->kind != syntax::ExprKind::Name)
      return refuse(name(), ids, anchor, "the loop target is not a single name");
    std::string unit = bodyIndentUnit(k, l);
    if (!st->orelse.empty()) return refuse(name(), ids, anchor, "the loop has an else clause");
    if (unit.empty()) return refuse(name(), ids, anchor, "the loop body is on the header line");
    if (!startsLine(text, l.range.begin) || !endsLine(text, l.range.end))
      return refuse(name(), ids, anchor, "the loop shares its lines with other code");
    for (const syntax::Stmt *b : st->body)
      if (hasMultilineString(b, text))
        return refuse(name(), ids, anchor, "the loop body has a multi-line string");
    for (int s : stmtsIn(k, *loop))
      for (auto &d : k.stmts[s].defines)
        if (d == l.iv)
          return refuse(name(), ids, anchor, "S" + std::to_string(s) + " rebinds the induction variable '" + l.iv + "'");
    for (int inner : loopsIn(k, *loop))
      if (k.loops[inner].iv == l.iv)
        return refuse(name(), ids, anchor,
                      "inner loop L" + std::to_string(inner) + " reuses the induction variable '" + l.iv + "'");

    uint32_t bodyStart = nextLineBegin(text, l.headerRange.end);
    uint32_t bodyEnd = nextLineBegin(text, l.range.end);
    std::vector<const syntax::Expr *> uses;
    for (const syntax::Stmt *b : st->body)
      for (const syntax::Expr *e : namesIn(b, l.iv)) uses.push_back(e);
    std::sort(uses.begin(), uses.end(), [](auto *a, auto *b) { return a->range.begin < b->range.begin; });
    std::string outer;
    if (!full) {
      auto taken = identifiersIn(text);
      outer = freshName(taken, l.iv + "o");
    }
    // One copy of the body with `i` replaced, dedented by one level when full.
    auto copy = [&](int64_t c) {
      std::string value = full ? std::to_string(c)
                               : "(" + outer + " * " + std::to_string(f) + (c ? " + " + std::to_string(c) : "") + ")";
      std::string out;
      size_t u = 0;
      uint32_t pos = bodyStart;
      auto emitLineStart = [&](uint32_t at) {
        if (!full) return at;
        // drop one indentation unit (or what there is of it) at a line start
        uint32_t n = 0;
        while (n < unit.size() && at + n < bodyEnd && text[at + n] == unit[n]) ++n;
        return at + n;
      };
      pos = emitLineStart(pos);
      while (pos < bodyEnd) {
        uint32_t next = u < uses.size() ? uses[u]->range.begin : bodyEnd;
        size_t nl = text.find('\n', pos);
        uint32_t lineEnd = nl == llvm::StringRef::npos ? bodyEnd : std::min<uint32_t>(nl + 1, bodyEnd);
        if (next < lineEnd) {
          out += text.slice(pos, next).str() + value;
          pos = uses[u]->range.end;
          ++u;
          continue;
        }
        out += text.slice(pos, lineEnd).str();
        pos = lineEnd < bodyEnd ? emitLineStart(lineEnd) : lineEnd;
      }
      return out;
    };
    std::string copies;
    for (int64_t c = 0; c < f; ++c) copies += copy(c);
    if (!copies.empty() && copies.back() != '\n') copies += "\n";

    EditList edits;
    if (full) {
      edits.replace(lineBegin(text, l.range.begin), bodyEnd - lineBegin(text, l.range.begin), copies);
    } else {
      edits.replace(st->targets[0]->range.begin, st->targets[0]->range.end - st->targets[0]->range.begin, outer);
      std::string stopText = k.source->slice(stop->range).str();
      std::string newStop = stop->kind == syntax::ExprKind::Int ? std::to_string(stop->intValue / f)
                            : (stop->kind == syntax::ExprKind::Name || stop->kind == syntax::ExprKind::Attribute ||
                               stop->kind == syntax::ExprKind::Call || stop->kind == syntax::ExprKind::Subscript ||
                               (stop->kind == syntax::ExprKind::BinOp && (stop->name == "//" || stop->name == "*")))
                                ? stopText + " // " + std::to_string(f)
                                : "(" + stopText + ") // " + std::to_string(f);
      edits.replace(stop->range.begin, stop->range.end - stop->range.begin, newStop);
      edits.replace(bodyStart, bodyEnd - bodyStart, copies);
    }
    return applied(name(), ids, k, edits,
                   full ? llvm::formatv("unroll {0} fully ({1} copies)", loopLabel(k, *loop), f).str()
                        : llvm::formatv("unroll {0} by {1} into {2} (trip {3}) with {1} body copies", loopLabel(k, *loop), f, outer, trip / f)
                              .str(),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Loop &l : k.loops) {
      if (!l.tripCount.isKnown()) continue;
      int64_t trip = *l.tripCount.value;
      for (int64_t f = 2; f <= trip && f <= 8; ++f)
        if (trip % f == 0) out.push_back({{"op", "unroll"}, {"loop", "L" + std::to_string(l.id)}, {"factor", f}});
    }
    return out;
  }
};

} // namespace

const Op &unrollOp() {
  static Unroll op;
  return op;
}

} // namespace accelopt::rewrite
