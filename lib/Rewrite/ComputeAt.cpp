// compute_at: move a consumer loop nest into a loop of the nest that produces its
// input, so each consumer iteration runs right after the producer iteration that
// wrote what it reads (phase fusion: the intermediate stays on chip instead of
// spilling). A composite op: the engine applies it as fission (of each loop between
// the nest's top and the producer loop that has code before it), interchange
// (lifting the producer loop to the top), then fuse with the consumer; each step
// checks its own legality with the one dependence analysis, so compute_at is legal
// exactly when that sequence is, in one op whose intermediate states are never scored.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

std::string loopId(int loop) { return "L" + std::to_string(loop); }

class ComputeAt final : public CompositeOp {
public:
  ComputeAt()
      : CompositeOp(
            {"compute_at",
             "move a consumer loop into a producer loop of the nest before it (fission, interchange, then fuse; "
             "legal when each consumer iteration reads only what the matching producer iteration wrote)",
             {{"consumer", FieldKind::Loop, "the consumer loop, directly after the producer's nest"},
              {"at", FieldKind::Loop,
               "the producer loop inside that nest, with the consumer's trip count, the last node of each loop "
               "around it"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    std::vector<nlohmann::json> unused;
    return plan(k, j, unused);
  }

  std::vector<nlohmann::json> steps(const Kernel &k, const nlohmann::json &j) const override {
    std::vector<nlohmann::json> out;
    plan(k, j, out);
    return out;
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (auto [nest, consumer] : adjacentNodes(k)) {
      if (!nest.isLoop || !consumer.isLoop) continue;
      const Loop &c = k.loops[consumer.index];
      if (!c.tripCount.isKnown()) continue;
      for (int inner : loopsIn(k, nest.index)) {
        const Loop &l = k.loops[inner];
        if (inner != nest.index && l.tripCount.isKnown() && *l.tripCount.value == *c.tripCount.value)
          out.push_back({{"op", "compute_at"}, {"consumer", loopId(consumer.index)}, {"at", loopId(inner)}});
      }
    }
    return out;
  }

private:
  /// The refusal, or Applied with the steps in `steps`.
  OpResult plan(const Kernel &k, const nlohmann::json &j, std::vector<nlohmann::json> &steps) const {
    Params p(k, j, spec());
    auto consumer = p.loop("consumer");
    auto at = p.loop("at");
    if (!p.ok()) return p.error();
    const Loop &c = k.loops[*consumer], &producer = k.loops[*at];
    std::string ids = llvm::formatv("L{0} L{1}", *consumer, *at).str();
    Refuser refuse(name(), ids, c.headerRange.begin);

    // The loops from the top of the producer's nest (a sibling of the consumer) down to the producer.
    if (k.encloses(*consumer, NodeRef{true, *at}))
      return refuse(llvm::formatv("{0} is inside the consumer {1}", loopLabel(k, *at), loopLabel(k, *consumer)).str());
    if (producer.parent == c.parent)
      return refuse(llvm::formatv("{0} and {1} are in the same block (fuse merges sibling loops)", loopLabel(k, *at),
                                  loopLabel(k, *consumer))
                        .str());
    std::vector<int> chain; // outermost first, the producer excluded
    for (int l = producer.parent; l != -1; l = k.loops[l].parent) {
      chain.insert(chain.begin(), l);
      if (k.loops[l].parent == c.parent) break;
    }
    if (chain.empty() || k.loops[chain.front()].parent != c.parent)
      return refuse(
          llvm::formatv("{0} is not inside a loop of the block of {1}", loopLabel(k, *at), loopLabel(k, *consumer))
              .str());
    int top = chain.front();
    if (!directlyFollows(k, NodeRef{true, top}, NodeRef{true, *consumer}))
      return refuse(llvm::formatv("{0} does not directly follow {1}, the nest of {2}", loopLabel(k, *consumer),
                                  loopLabel(k, top), loopLabel(k, *at))
                        .str());
    if (producer.tripCount.isKnown() && c.tripCount.isKnown() && *producer.tripCount.value != *c.tripCount.value)
      return refuse(
          llvm::formatv("the trip counts differ ({0} and {1})", loopLabel(k, *at), loopLabel(k, *consumer)).str());

    // Code after the producer in a loop around it would run after the consumer: refused.
    std::vector<bool> codeBefore(chain.size());
    for (size_t level = 0; level < chain.size(); ++level) {
      NodeRef child{true, level + 1 < chain.size() ? chain[level + 1] : *at};
      const std::vector<NodeRef> &body = k.loops[chain[level]].body;
      if (body.empty() || !(body.back() == child))
        return refuse(llvm::formatv("L{0} is not the last statement or loop of {1}; the code after it would run "
                                    "after the consumer",
                                    child.index, loopLabel(k, chain[level]))
                          .str());
      codeBefore[level] = !(body.front() == child);
    }

    // The steps, with the ids each will see: a fission inserts the copy's header just before the
    // producer's, which takes the producer's id (later loops shift by one); an interchange swaps two
    // headers, so the producer's header takes the outer loop's id.
    steps.clear();
    int producerId = *at, consumerId = *consumer;
    bool fissionedBelow = false;
    for (size_t level = chain.size(); level-- > 0;) {
      int outer = chain[level];
      if (codeBefore[level] || fissionedBelow) {
        steps.push_back({{"op", "fission"}, {"loop", loopId(outer)}, {"at", loopId(producerId)}});
        steps.push_back({{"op", "interchange"}, {"outer", loopId(producerId)}, {"inner", loopId(producerId + 1)}});
        ++consumerId;
        fissionedBelow = true;
      } else {
        steps.push_back({{"op", "interchange"}, {"outer", loopId(outer)}, {"inner", loopId(producerId)}});
        producerId = outer;
        fissionedBelow = false;
      }
    }
    steps.push_back({{"op", "fuse"}, {"first", loopId(producerId)}, {"second", loopId(consumerId)}});

    OpResult r;
    r.status = Status::Applied;
    r.anchor = c.headerRange.begin;
    r.description = llvm::formatv("compute_at {0} at {1}", loopLabel(k, *consumer), loopLabel(k, *at)).str();
    r.refusal.op = name().str();
    r.refusal.ids = ids;
    r.refusal.offset = r.anchor;
    return r;
  }
};

} // namespace

const Op &computeAtOp() {
  static ComputeAt op;
  return op;
}

} // namespace accelopt::rewrite
