// trim_tail: peel the last iteration of `for i in R(N)` into a copy after the loop
// (`for i in R(N - 1)` + the body with i -> N - 1) and simplify the masks of both parts:
// a conjunct of a `mask=` that the interval bounds of its loop counters and aranges prove
// true is dropped, and in the peeled copy a conjunct that keeps a prefix [0, E') of one
// `nl.arange(E)` axis shrinks every arange of that tile axis in the statement to E'. The
// main loop then runs full unmasked tiles and the tail the real, smaller extent.
// Iterations keep their order, and a mask is only removed where it selects every element
// or where the shrunk tile holds exactly the elements it selected: always legal.
#include "Rewrite/IndexForms.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

namespace accelopt::rewrite {

using namespace nki;
using syntax::Expr;
using syntax::ExprKind;

namespace {

using namespace index_forms;

/// The edits that make every tile of statement `s` cover `kept` elements of arange `a`'s axis instead
/// of its extent (a literal extent rewritten, a name bound to an arange replaced by a smaller one), or
/// std::nullopt when the statement's tiles do not all follow that axis through aranges it spells
/// (then the mask stays).
std::optional<std::vector<std::pair<syntax::ByteRange, std::string>>> shrinkSites(const Statement &s, const Expr *call,
                                                                                  const ArangeUse &a, int64_t kept,
                                                                                  const Resolver &r,
                                                                                  const ModuleSpelling &names) {
  if (!s.op || s.definesTensor >= 0 || s.writes.empty()) return std::nullopt;
  const Expr *stationary = slotArg(s, call, Slot::Stationary);
  switch (s.op->shape) {
  case ShapeRule::None:
  case ShapeRule::SameAsInput: break;
  case ShapeRule::MatmulResult:
    // The moving operand's free axis is the result's free axis; the stationary's is not.
    if (a.axis != 1 || s.flag("is_transpose") || !stationary) return std::nullopt;
    break;
  default: return std::nullopt;
  }
  const Expr *mask = call->keyword("mask");
  // Every tile access (but the stationary operand) has exactly one arange on the axis, of the extent.
  size_t irTerms = 0;
  std::set<uint32_t> seen; // an accumulation's destination is both read and written
  for (const auto *list : {&s.reads, &s.writes})
    for (const Access &acc : *list) {
      if ((stationary && within(acc.range, stationary->range)) || !seen.insert(acc.range.begin).second) continue;
      if (!acc.exact) return std::nullopt;
      size_t onAxis = 0;
      for (const IndexDim &d : acc.dims)
        for (const ArangeTerm &t : d.aranges)
          if (t.axis == a.axis) {
            if (t.extent != a.extent) return std::nullopt;
            ++onAxis;
          }
      if (onAxis != 1) return std::nullopt;
      ++irTerms;
    }
  std::vector<std::pair<syntax::ByteRange, std::string>> sites;
  bool other = false;
  std::string smaller =
      names.spell("nl.arange") + "(" + std::to_string(kept) + ")" + (a.axis == 0 ? "[:, None]" : "[None, :]");
  auto scan = [&](const Expr *root) {
    forEachExpr(root, [&](const Expr *e) {
      if ((mask && within(e->range, mask->range)) || (stationary && within(e->range, stationary->range))) return;
      auto u = r.arange(e);
      if (!u || u->site != e) return;
      if (u->axis != a.axis) return;
      if (u->extent != a.extent) {
        other = true;
        return;
      }
      if (!u->twoDimensional)
        other = true;
      else if (!u->literal || e->kind == ExprKind::Name)
        sites.push_back({e->range, smaller});
      else
        sites.push_back({u->literal->range, std::to_string(kept)});
    });
  };
  scan(call);
  if (s.syntax)
    for (const Expr *t : s.syntax->targets) scan(t);
  if (other || sites.size() != irTerms) return std::nullopt;
  return sites;
}

/// The edits of one part (the main loop or the peeled copy) to the masks of the loop's statements.
struct MaskEdits {
  std::vector<std::pair<syntax::ByteRange, std::string>> edits; // ranges in the original text
  int simplified = 0;
  std::vector<std::string> what;
};

class TrimTail final : public Op {
public:
  TrimTail()
      : Op({"trim_tail",
            "peel the last iteration of a loop whose masks cut a partial tile, and shrink that copy's tiles to the "
            "real extent (the main loop's masks, proven true, are dropped)",
            {{"loop", FieldKind::Loop, "the loop to peel (for i in <kind>(N), N known, at least 2)"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto loop = p.loop("loop");
    if (!p.ok()) return p.error();
    const Loop &l = k.loops[*loop];
    std::string ids = "L" + std::to_string(*loop);
    Refuser no(name(), ids, l.iterRange.begin);
    llvm::StringRef text = k.source->text();
    if (!l.tripCount.isKnown()) return no(unknownTripReason(k, *loop));
    int64_t trip = *l.tripCount.value;
    if (trip < 2) return no(llvm::formatv("{0} has fewer than two iterations", loopLabel(k, *loop)).str());
    CountedLoop header = countedLoop(k, *loop, name());
    if (!header.refusal.empty()) return no(header.refusal);
    if (!startsLine(text, l.range.begin) || !endsLine(text, l.range.end))
      return no("the loop shares its lines with other code");
    if (bodyHasMultilineString(l, text)) return no("the loop body has a multi-line string");
    if (auto why = ivRebindingReason(k, *loop)) return no(*why);
    if (auto why = ivReadAfterLoopReason(k, *loop)) return no(*why);
    const Expr *stop = header.stop;
    if (stop->kind == ExprKind::Int && stop->intValue != trip)
      return no("the literal trip count disagrees with the analysis");

    ModuleSpelling names(k);
    MaskEdits main = maskEdits(k, *loop, {0, trip - 2}, names, /*tail=*/false);
    MaskEdits tail = maskEdits(k, *loop, {trip - 1, trip - 1}, names, /*tail=*/true);
    if (main.simplified + tail.simplified == 0)
      return no(llvm::formatv("no mask in {0} is proven true or cut to a smaller tile by peeling its last iteration",
                              loopLabel(k, *loop))
                    .str());

    EditList edits;
    bool literal = stop->kind == ExprKind::Int;
    std::string stopText = k.source->slice(stop->range).str();
    edits.replace(stop->range, literal ? std::to_string(trip - 1) : "(" + stopText + ") - 1");
    for (auto &[range, with] : main.edits) edits.replace(range, with);

    // The peeled copy: the body with i -> its last value and the tail's mask edits, one level shallower.
    std::string last = literal ? std::to_string(trip - 1) : "(" + stopText + " - 1)";
    uint32_t bodyStart = nextLineBegin(text, l.headerRange.end), bodyEnd = nextLineBegin(text, l.range.end);
    std::vector<std::pair<syntax::ByteRange, std::string>> inner = tail.edits;
    for (const Expr *e : namesInBody(l, l.iv))
      if (llvm::none_of(tail.edits, [&](auto &ed) { return within(e->range, ed.first); }))
        inner.push_back({e->range, last});
    llvm::sort(inner, [](auto &a, auto &b) { return a.first.begin < b.first.begin; });
    std::string body;
    uint32_t pos = bodyStart;
    for (auto &[range, with] : inner) {
      body += text.slice(pos, range.begin).str() + with;
      pos = range.end;
    }
    body += text.slice(pos, bodyEnd).str();
    std::string copy;
    llvm::StringRef rest(body);
    const std::string &unit = header.bodyUnit;
    while (!rest.empty()) {
      auto [line, tailText] = rest.split('\n');
      bool newline = rest.size() > line.size();
      if (line.startswith(unit)) line = line.drop_front(unit.size());
      copy += line.str();
      if (newline) copy += "\n";
      rest = tailText;
    }
    if (copy.empty() || copy.back() != '\n') copy += "\n";
    if (bodyEnd == text.size() && !text.endswith("\n")) copy = "\n" + copy; // the loop ends the file
    edits.insert(bodyEnd, copy);

    std::string summary;
    for (const std::string &w : tail.what) summary += (summary.empty() ? "" : ", ") + w;
    return applied(name(), ids, k, edits,
                   llvm::formatv("trim_tail {0}: main loop trip {1} ({2} masks dropped), last iteration peeled ({3} "
                                 "masks simplified{4}{5})",
                                 loopLabel(k, *loop), trip - 1, main.simplified, tail.simplified,
                                 summary.empty() ? "" : "; ", summary)
                       .str(),
                   l.iterRange.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Loop &l : k.loops) {
      if (!l.tripCount.isKnown() || *l.tripCount.value < 2) continue;
      if (llvm::any_of(stmtsIn(k, l.id), [&](int s) { return k.stmts[s].hasMask; }))
        out.push_back({{"op", "trim_tail"}, {"loop", "L" + std::to_string(l.id)}});
    }
    return out;
  }

private:
  /// The mask edits of the statements of `loop` when its counter runs over `range`.
  static MaskEdits maskEdits(const Kernel &k, int loop, std::pair<int64_t, int64_t> range, const ModuleSpelling &names,
                             bool tail) {
    MaskEdits out;
    const Loop &l = k.loops[loop];
    for (int sid : stmtsIn(k, loop)) {
      const Statement &s = k.stmts[sid];
      if (!s.hasMask || !s.syntax || !s.syntax->value || s.syntax->value->kind != ExprKind::Call) continue;
      const Expr *call = s.syntax->value;
      const Expr *mask = call->keyword("mask");
      if (!mask || mask->kind == ExprKind::None) continue;
      Resolver ctx(k, names, s);
      Ranges ranges;
      for (int p = s.parent; p >= 0; p = k.loops[p].parent) {
        const Loop &e = k.loops[p];
        if (ranges.count(p)) continue;
        if (p == loop) {
          ranges[p] = range;
        } else if (e.tripCount.isKnown() && e.start.isKnown() && e.step.isKnown() && *e.tripCount.value > 0) {
          int64_t first = *e.start.value, lastValue = first + *e.step.value * (*e.tripCount.value - 1);
          ranges[p] = {std::min(first, lastValue), std::max(first, lastValue)};
        }
      }
      std::vector<Conjunct> parts;
      conjuncts(mask, ctx, parts);
      std::vector<const Expr *> kept;
      std::map<int, std::pair<ArangeUse, int64_t>> shrink; // axis -> (arange, kept extent)
      bool changed = false;
      for (const Conjunct &c : parts) {
        if (auto m = minimum(c.f, ranges); m && *m >= 0) {
          changed = true;
          continue;
        }
        if (tail)
          if (auto cut = keptPrefix(c.f, ranges)) {
            auto it = shrink.find(cut->first.axis);
            if (it == shrink.end()) {
              shrink[cut->first.axis] = *cut;
              continue;
            }
            if (it->second.first.extent == cut->first.extent) {
              it->second.second = std::min(it->second.second, cut->second);
              continue;
            }
          }
        kept.push_back(c.expr);
      }
      // Shrink the tiles, or keep the conjuncts that asked for it.
      std::vector<std::pair<syntax::ByteRange, std::string>> sized;
      for (auto &[axis, cut] : shrink) {
        auto sites = shrinkSites(s, call, cut.first, cut.second, ctx, names);
        if (!sites) {
          for (const Conjunct &c : parts)
            if (auto again = keptPrefix(c.f, ranges); again && again->first.axis == axis) kept.push_back(c.expr);
          continue;
        }
        changed = true;
        llvm::append_range(sized, *sites);
        out.what.push_back(llvm::formatv("S{0} axis {1}: {2} -> {3}", sid, axis, cut.first.extent, cut.second).str());
      }
      if (!changed) continue;
      ++out.simplified;
      llvm::sort(kept, [](const Expr *a, const Expr *b) { return a->range.begin < b->range.begin; });
      kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
      std::string newMask;
      for (const Expr *c : kept) {
        std::string t = k.source->slice(c->range).str();
        if (tail) t = substituted(k, c, l.iv, range.first);
        newMask += (newMask.empty() ? "" : " & ") + (kept.size() > 1 ? "(" + t + ")" : t);
      }
      // The whole keyword, so parentheses around the old mask go too.
      auto kw = llvm::find_if(call->keywords, [](const syntax::Keyword &w) { return w.name == "mask"; });
      out.edits.push_back({kw->range, "mask=" + (newMask.empty() ? std::string("None") : newMask)});
      llvm::append_range(out.edits, sized);
    }
    return out;
  }

  /// The text of `e` with the names `iv` replaced by `value`.
  static std::string substituted(const Kernel &k, const Expr *e, const std::string &iv, int64_t value) {
    std::vector<const Expr *> uses;
    forEachExpr(e, [&](const Expr *x) {
      if (x->kind == ExprKind::Name && x->name == iv) uses.push_back(x);
    });
    llvm::sort(uses, [](const Expr *a, const Expr *b) { return a->range.begin < b->range.begin; });
    llvm::StringRef text = k.source->text();
    std::string out;
    uint32_t pos = e->range.begin;
    for (const Expr *u : uses) {
      out += text.slice(pos, u->range.begin).str() + std::to_string(value);
      pos = u->range.end;
    }
    return out + text.slice(pos, e->range.end).str();
  }
};

} // namespace

const Op &trimTailOp() {
  static TrimTail op;
  return op;
}

} // namespace accelopt::rewrite
