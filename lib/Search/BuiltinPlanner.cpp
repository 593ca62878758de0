// The built-in planner: reads the profile and the kernel structure, weighs the
// kinds of rewrite that address what it sees, and realises each plan with
// seeded random picks from the legal-op menu. Memory patterns come first.
#include "Search/Search.h"

#include "Rewrite/Rewrite.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <random>

namespace accelopt::search {

namespace {

struct Weighted {
  std::string op;
  double weight;
  std::string why;
};

class BuiltinPlanner : public Planner {
public:
  BuiltinPlanner(const nki::InputSpecs *inputs, SuggestionSource patterns)
      : Inputs(inputs), Patterns(std::move(patterns)) {}

  std::vector<Plan> propose(const Candidate &parent, const nki::KernelFile &file, int plans, int samples,
                            uint64_t seed) override {
    std::vector<Plan> out;
    if (file.kernels.empty()) return out;
    const nki::Kernel &k = file.kernels.front();
    // The menu of legal single ops on this candidate.
    rewrite::CandidateOptions opts;
    opts.inputs = Inputs;
    opts.kernelName = k.name;
    auto menu = rewrite::legalOps(file.source(), opts);
    if (!menu) {
      llvm::consumeError(menu.takeError());
      return out;
    }
    std::map<std::string, std::vector<const rewrite::LegalOp *>> byKind;
    for (const auto &m : *menu) byKind[m.op.value("op", "")].push_back(&m);
    std::mt19937_64 rng(seed);

    // 1. Patterns that worked before on structurally similar kernels.
    if (Patterns)
      for (auto &suggestion : Patterns(k)) {
        if (int(out.size()) >= plans) break;
        Plan p;
        p.description = suggestion.label;
        p.patternId = suggestion.patternId;
        p.realisations.push_back(suggestion.ops);
        out.push_back(std::move(p));
      }

    // 2. Profile-guided kinds of rewrite, weighted.
    std::vector<Weighted> kinds = weigh(parent, k, byKind);
    while (int(out.size()) < plans && !kinds.empty()) {
      double total = 0;
      for (auto &w : kinds) total += w.weight;
      double pick = std::uniform_real_distribution<double>(0, total)(rng);
      size_t chosen = 0;
      for (; chosen + 1 < kinds.size() && pick > kinds[chosen].weight; ++chosen) pick -= kinds[chosen].weight;
      Weighted w = kinds[chosen];
      kinds.erase(kinds.begin() + chosen);
      auto &options = byKind[w.op];
      Plan p;
      p.description = w.op + ": " + w.why;
      std::vector<const rewrite::LegalOp *> pool = options;
      std::shuffle(pool.begin(), pool.end(), rng);
      for (int s = 0; s < samples && s < int(pool.size()); ++s) p.realisations.push_back({pool[s]->op});
      if (!p.realisations.empty()) out.push_back(std::move(p));
    }
    return out;
  }

private:
  const nki::InputSpecs *Inputs;
  SuggestionSource Patterns;

  static std::vector<Weighted> weigh(const Candidate &parent, const nki::Kernel &k,
                                     const std::map<std::string, std::vector<const rewrite::LegalOp *>> &byKind) {
    const perf::Profile *p = parent.profile ? &*parent.profile : nullptr;
    bool spills = p && p->spillSaveBytes > 0;
    bool sequential = false;
    for (const auto &l : k.loops) sequential |= l.kind == nki::LoopKind::Sequential || l.kind == nki::LoopKind::PyRange;
    double busiest = p ? std::max({p->vectorEngineActiveTimePercent, p->scalarEngineActiveTimePercent,
                                   p->gpsimdEngineActiveTimePercent, p->hfuEstimatedPercent})
                       : 0;
    bool lowOverlap = p && busiest < 0.5;
    std::vector<Weighted> out;
    auto add = [&](const char *op, double w, const char *why) {
      auto it = byKind.find(op);
      if (it != byKind.end() && !it->second.empty()) out.push_back({op, w, why});
    };
    add("hoist", 4, "move loop-invariant loads and work out of loops");
    add("set_loop_kind", sequential ? 4 : 1, sequential ? "let independent iterations overlap" : "change loop kind");
    add("shrink_buffer", spills ? 6 : 1, spills ? "the profile spills: drop block dimensions" : "reduce SBUF use");
    add("fission", spills ? 3 : 1, spills ? "split a loop so fewer tiles are live at once" : "split a loop");
    add("fuse", lowOverlap ? 3 : 1.5, "keep intermediates on chip, overlap engines");
    // compute_at is only on the menu for a producer nest followed by a consumer loop.
    add("compute_at", spills ? 6 : 1,
        spills ? "the profile spills: run the consumer nest inside its producer's loop" : "phase fusion");
    bool transposeHeavy = p && p->transposeFlops > 0.05 * p->hardwareFlops && p->transposeFlops > 0;
    add("hoist_transpose", transposeHeavy ? 6 : 1,
        transposeHeavy ? "transposes above 5% of PE flops: transpose loop-invariant operands once"
                       : "transpose a loop-invariant matmul operand once");
    add("interchange", lowOverlap ? 2 : 1, "reorder the nest for reuse and overlap");
    add("sink", 1, "move work next to its use");
    add("split", 1, "tile a loop");
    add("unroll", 0.5, "unroll a short loop");
    add("expand_buffer", 0.5, "give parallel iterations private buffers");
    return out;
  }
};

} // namespace

std::unique_ptr<Planner> makeBuiltinPlanner(const nki::InputSpecs *inputs, SuggestionSource patterns) {
  return std::make_unique<BuiltinPlanner>(inputs, std::move(patterns));
}

} // namespace accelopt::search
