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

class Unroll final : public LoopFactorOp {
public:
  Unroll()
      : LoopFactorOp(
            {"unroll",
             "replicate a loop body factor times (factor == trip count unrolls fully)",
             {{"loop", FieldKind::Loop, "the loop to unroll"},
              {"factor", FieldKind::Integer, "the number of copies of the body, 2..64, dividing the trip count"}}},
            MaxCopies) {}

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    return divisorInstances(k, name(), 8, /*belowTrip=*/false);
  }

private:
  OpResult applyFactor(const Kernel &k, int loop, int64_t f, int64_t trip, const std::string &ids,
                       uint32_t anchor) const override {
    const Loop &l = k.loops[loop];
    llvm::StringRef text = k.source->text();
    if (trip % f != 0)
      return refuse(
          name(), ids, anchor,
          llvm::formatv("factor {0} does not divide the trip count {1} of {2}", f, trip, loopLabel(k, loop)).str());
    bool full = f == trip;
    CountedLoop header = countedLoop(k, loop, name());
    if (!header.refusal.empty()) return refuse(name(), ids, anchor, header.refusal);
    if (!startsLine(text, l.range.begin) || !endsLine(text, l.range.end))
      return refuse(name(), ids, anchor, "the loop shares its lines with other code");
    if (bodyHasMultilineString(l, text)) return refuse(name(), ids, anchor, "the loop body has a multi-line string");
    if (auto why = ivRebindingReason(k, loop)) return refuse(name(), ids, anchor, *why);

    const std::string &unit = header.bodyUnit;
    uint32_t bodyStart = nextLineBegin(text, l.headerRange.end);
    uint32_t bodyEnd = nextLineBegin(text, l.range.end);
    std::vector<const syntax::Expr *> uses = namesInBody(l, l.iv);
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
      divideHeader(edits, k, l, header.stop, outer, f);
      edits.replace(bodyStart, bodyEnd - bodyStart, copies);
    }
    return applied(name(), ids, k, edits,
                   full ? llvm::formatv("unroll {0} fully ({1} copies)", loopLabel(k, loop), f).str()
                        : llvm::formatv("unroll {0} by {1} into {2} (trip {3}) with {1} body copies",
                                        loopLabel(k, loop), f, outer, trip / f)
                              .str(),
                   anchor);
  }
};

} // namespace

const Op &unrollOp() {
  static Unroll op;
  return op;
}

} // namespace accelopt::rewrite
