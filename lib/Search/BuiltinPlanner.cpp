// The built-in planner: reads the profile and the kernel structure, weighs the
// kinds of rewrite that address what it sees, and realises each plan with
// seeded random picks from the legal-op menu. Memory patterns come first.
#include "Search/Search.h"

#include "NKI/KernelQueries.h"
#include "Rewrite/Rewrite.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

#include <map>
#include <random>
#include <set>

namespace accelopt::search {

namespace {

/// A signal's verdict on one kernel and profile, with the figures that decided it.
struct Verdict {
  bool seen = false;
  std::string evidence;
};

/// What a signal predicate reads.
struct SignalFacts {
  const perf::Profile *profile; // null when the kernel could not be profiled
  const nki::Kernel &kernel;
};

/// One row of the planner's table: a signal, the kinds of rewrite it proposes, the weight a
/// plan of those kinds gets when the signal shows (and when it does not), and why.
/// A new op kind is one row (or one more name in a row); kinds missing from a kernel's
/// legal-op menu, including ops not implemented yet, are skipped.
struct SignalRow {
  const char *name;
  Verdict (*read)(const SignalFacts &);
  std::vector<const char *> opKinds;
  double weightSeen, weightUnseen;
  const char *why;
};

std::string percent(double fraction) { return llvm::formatv("{0:F1}%", 100 * fraction).str(); }

double busiestEngine(const perf::Profile &p) {
  return std::max({p.vectorEngineActiveTimePercent, p.scalarEngineActiveTimePercent, p.gpsimdEngineActiveTimePercent,
                   p.hfuEstimatedPercent});
}

/// Two loop nests side by side (in the kernel body or one loop's body).
bool hasSiblingNests(const nki::Kernel &k) {
  auto countLoops = [](const std::vector<nki::NodeRef> &body) {
    return llvm::count_if(body, [](const nki::NodeRef &n) { return n.isLoop; });
  };
  if (countLoops(k.body) >= 2) return true;
  return llvm::any_of(k.loops, [&](const nki::Loop &l) { return countLoops(l.body) >= 2; });
}

Verdict spillsAcrossSiblingNests(const SignalFacts &f) {
  double spilled = f.profile ? f.profile->spillSaveBytes : 0;
  bool siblings = hasSiblingNests(f.kernel);
  return {spilled > 0 && siblings,
          llvm::formatv("spill_save_bytes {0:F0}, sibling nests: {1}", spilled, siblings ? "yes" : "no").str()};
}

Verdict spills(const SignalFacts &f) {
  double spilled = f.profile ? f.profile->spillSaveBytes : 0;
  return {spilled > 0, llvm::formatv("spill_save_bytes {0:F0}", spilled).str()};
}

/// HBM bytes every correct kernel reads at least once: its array arguments.
double compulsoryReadBytes(const nki::Kernel &k) {
  double bytes = 0;
  for (const nki::Tensor &t : k.tensors) {
    if (!t.isArgument || !t.shapeKnown || !nki::isHBM(t.buffer)) continue;
    double elements = 1;
    for (const nki::SymInt &d : t.shape) elements *= d.isKnown() ? double(*d.value) : 0;
    bytes += elements * nki::dtypeBytes(t.dtype);
  }
  return bytes;
}

/// A load from HBM whose address does not move with some loop around it: the same bytes are
/// fetched again on every iteration of that loop.
bool hasLoopInvariantLoad(const nki::Kernel &k) {
  for (const nki::Statement &st : k.stmts) {
    if (!st.op || st.op->instr != nki::Instr::Load || st.parent < 0) continue;
    for (const nki::Access &a : st.reads) {
      if (a.tensor < 0 || !nki::isHBM(k.tensors[a.tensor].buffer) || !a.exact) continue;
      for (int loop : k.loopNest(st.parent))
        if (llvm::none_of(a.dims, [&](const nki::IndexDim &d) { return !d.base.known || d.base.coeff(loop) != 0; }))
          return true;
    }
  }
  return false;
}

Verdict hbmReadsAboveCompulsory(const SignalFacts &f) {
  double read = f.profile ? f.profile->hbmReadBytes : 0, compulsory = compulsoryReadBytes(f.kernel);
  bool invariant = hasLoopInvariantLoad(f.kernel);
  // A few percent over compulsory is tile padding, not a second pass over the data.
  bool above = compulsory > 0 && read > 1.05 * compulsory;
  return {above && invariant, llvm::formatv("hbm_read_bytes {0:F0} = {1:F2}x compulsory, loop-invariant load: {2}",
                                            read, compulsory > 0 ? read / compulsory : 0.0, invariant ? "yes" : "no")
                                  .str()};
}

Verdict transposesAbovePeFlops(const SignalFacts &f) {
  double transposes = f.profile ? f.profile->transposeFlops : 0, total = f.profile ? f.profile->hardwareFlops : 0;
  double share = total > 0 ? transposes / total : 0;
  return {share > 0.05, "transpose_flops " + percent(share) + " of hardware_flops"};
}

Verdict busyEngineNextToIdle(const SignalFacts &f) {
  if (!f.profile) return {false, "no profile"};
  const perf::Profile &p = *f.profile;
  double engines[] = {p.vectorEngineActiveTimePercent, p.scalarEngineActiveTimePercent};
  double busy = *std::max_element(std::begin(engines), std::end(engines));
  double idle = *std::min_element(std::begin(engines), std::end(engines));
  // The busy engine is active most of the kernel's time and the other has room for a quarter of
  // that time's work: silu, VectorE 83 %, ScalarE 33 % with the exp -> +1 -> reciprocal chain;
  // adamw, VectorE 94 %, ScalarE 53 % with its reciprocal on VectorE.
  return {busy > 0.5 && busy - idle > 0.25, "vector " + percent(p.vectorEngineActiveTimePercent) + ", scalar " +
                                                percent(p.scalarEngineActiveTimePercent)};
}

/// Bytes one load or store moves, largest over the kernel.
Verdict smallInstructionsAndDmas(const SignalFacts &f) {
  double largest = 0;
  for (const nki::Statement &st : f.kernel.stmts) {
    if (!st.op || (st.op->instr != nki::Instr::Load && st.op->instr != nki::Instr::Store)) continue;
    for (const auto *accesses : {&st.reads, &st.writes})
      for (const nki::Access &a : *accesses) {
        if (a.tensor < 0 || !nki::isHBM(f.kernel.tensors[a.tensor].buffer)) continue;
        double elements = 1;
        for (int64_t e : a.tileShape) elements *= double(e);
        largest = std::max(largest, elements * nki::dtypeBytes(f.kernel.tensors[a.tensor].dtype));
      }
  }
  // Below 64 KiB the fixed cost of a DMA is a large share of its time.
  return {largest > 0 && largest < 64 * 1024, llvm::formatv("largest DMA tile {0:F0} bytes", largest).str()};
}

/// A producer loop and a consumer loop of one block with other nodes between them: fuse and
/// compute_at need them adjacent, which reorder can make them when the nodes between are independent.
Verdict separatedNests(const SignalFacts &f) {
  const nki::Kernel &k = f.kernel;
  size_t separated = 0;
  auto written = [&](int loop) {
    std::set<int> out;
    for (int s : nki::stmtsIn(k, loop))
      for (const nki::Access &a : k.stmts[s].writes) out.insert(nki::storageOf(k, a.tensor));
    return out;
  };
  auto scan = [&](const std::vector<nki::NodeRef> &body) {
    for (size_t a = 0; a < body.size(); ++a) {
      if (!body[a].isLoop) continue;
      std::set<int> produced = written(body[a].index);
      for (size_t b = a + 2; b < body.size(); ++b) {
        if (!body[b].isLoop) continue;
        bool reads = false;
        for (int s : nki::stmtsIn(k, body[b].index))
          for (const nki::Access &r : k.stmts[s].reads) reads |= produced.count(nki::storageOf(k, r.tensor)) > 0;
        separated += reads;
      }
    }
  };
  for (const nki::Loop &l : k.loops) scan(l.body);
  scan(k.body);
  return {separated > 0, llvm::formatv("{0} producer/consumer loop pair(s) with code between", separated).str()};
}

/// Masked statements in loops of known trip count: partial tiles the model charges at full size
/// in every iteration (a masked instruction still moves and computes its whole tile).
Verdict maskedPartialTiles(const SignalFacts &f) {
  size_t n = llvm::count_if(f.kernel.stmts, [&](const nki::Statement &st) {
    return st.hasMask && st.parent >= 0 && f.kernel.loops[st.parent].tripCount.isKnown();
  });
  return {n > 0, llvm::formatv("{0} masked statement(s) in loops", n).str()};
}

/// Scans along a free axis wider than one chunk: a recurrence that chunk_scan can tile with its carry.
Verdict longScans(const SignalFacts &f) {
  int64_t widest = 0;
  for (const nki::Statement &st : f.kernel.stmts)
    if (st.op && st.op->instr == nki::Instr::TensorTensorScan)
      for (const nki::Access &a : st.reads)
        if (a.tileShape.size() == 2) widest = std::max(widest, a.tileShape[1]);
  return {widest > 512, llvm::formatv("widest tensor_tensor_scan {0} columns", widest).str()};
}

Verdict sequentialLoops(const SignalFacts &f) {
  size_t n = llvm::count_if(f.kernel.loops, [](const nki::Loop &l) { return l.runsAs == nki::LoopKind::Sequential; });
  return {n > 0, llvm::formatv("{0} sequential loop(s)", n).str()};
}

Verdict lowEngineOverlap(const SignalFacts &f) {
  double busiest = f.profile ? busiestEngine(*f.profile) : 0;
  return {f.profile && busiest < 0.5, "busiest engine " + percent(busiest)};
}

/// Exploration rows are not signals: they offer their kinds at the same weight on every kernel.
Verdict noSignal(const SignalFacts &) { return {false, "not a signal: offered on every kernel"}; }

const std::vector<SignalRow> &signalTable() {
  static const std::vector<SignalRow> Rows = {
      {"spills-across-sibling-nests",
       spillsAcrossSiblingNests,
       {"compute_at", "fission", "fuse", "interchange"},
       4,
       1,
       "a tile spilled between sibling nests stays on chip once the consumer runs inside the producer's loop"},
      {"separated-producer-consumer-nests",
       separatedNests,
       {"reorder"},
       3,
       0,
       "move the code between a producer nest and its consumer aside, so fuse and compute_at can join them"},
      {"spills", spills, {"shrink_buffer"}, 6, 1, "the profile spills: drop block dimensions so fewer tiles are live"},
      {"hbm-reads-above-compulsory",
       hbmReadsAboveCompulsory,
       {"stage", "cse_load", "hoist"},
       5,
       4,
       "loads re-read the same HBM bytes each iteration: load once outside the loop"},
      {"transposes-above-5%-of-pe-flops",
       transposesAbovePeFlops,
       {"hoist_transpose"},
       4,
       0,
       "transposes recomputed per outer iteration: compute them once"},
      {"busy-engine-next-to-idle",
       busyEngineNextToIdle,
       {"set_engine", "substitute", "forward_load"},
       4,
       0.5,
       "move work from the busy engine to the idle one (an on-chip copy of a loaded tile to the DMA queues)"},
      {"small-instructions-and-dmas",
       smallInstructionsAndDmas,
       {"widen"},
       4,
       0.5,
       "coarser tiles amortise the fixed cost of each instruction and DMA"},
      {"masked-partial-tiles",
       maskedPartialTiles,
       {"trim_tail"},
       4,
       0,
       "a masked last tile runs at full size: peel it, unmask the full tiles and shrink the tail's"},
      {"sequential-loops", sequentialLoops, {"set_loop_kind"}, 4, 1, "let independent iterations overlap"},
      {"long-scans",
       longScans,
       {"chunk_scan"},
       2,
       0,
       "a scan over a long free axis: chunks with the carry in initial= keep its operands' tiles small"},
      {"low-engine-overlap",
       lowEngineOverlap,
       {"fuse", "interchange"},
       3,
       1.5,
       "keep intermediates on chip and overlap engines"},
      {"explore", noSignal, {"sink", "split"}, 1, 1, "move work next to its use, tile a loop"},
      {"explore-rarely",
       noSignal,
       {"unroll", "expand_buffer"},
       0.5,
       0.5,
       "unroll a short loop, give parallel iterations private buffers"},
  };
  return Rows;
}

struct Weighted {
  std::string op;
  double weight;
  std::string why;
  std::string signal; // the signal row that set the weight, when it shows
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
      p.signal = w.signal;
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

  /// One entry per op kind in the menu: the highest weight any row gives it (rows read in
  /// table order, so ties keep the first row's reason).
  static std::vector<Weighted> weigh(const Candidate &parent, const nki::Kernel &k,
                                     const std::map<std::string, std::vector<const rewrite::LegalOp *>> &byKind) {
    SignalFacts facts{parent.profile ? &*parent.profile : nullptr, k};
    std::vector<Weighted> out;
    for (const SignalRow &row : signalTable()) {
      Verdict verdict = row.read(facts);
      double weight = verdict.seen ? row.weightSeen : row.weightUnseen;
      for (const char *op : row.opKinds) {
        auto it = byKind.find(op);
        if (weight <= 0 || it == byKind.end() || it->second.empty()) continue;
        auto known = llvm::find_if(out, [&](const Weighted &w) { return w.op == op; });
        Weighted entry{op, weight, row.why, verdict.seen ? row.name : ""};
        if (known == out.end())
          out.push_back(entry);
        else if (weight > known->weight)
          *known = entry;
      }
    }
    return out;
  }
};

} // namespace

std::vector<SignalReading> readSignals(const perf::Profile *profile, const nki::Kernel &kernel) {
  SignalFacts facts{profile, kernel};
  std::vector<SignalReading> out;
  for (const SignalRow &row : signalTable()) {
    Verdict verdict = row.read(facts);
    SignalReading r;
    r.name = row.name;
    r.seen = verdict.seen;
    r.evidence = verdict.evidence;
    for (const char *op : row.opKinds) r.opKinds.push_back(op);
    r.why = row.why;
    out.push_back(std::move(r));
  }
  return out;
}

std::unique_ptr<Planner> makeBuiltinPlanner(const nki::InputSpecs *inputs, SuggestionSource patterns) {
  return std::make_unique<BuiltinPlanner>(inputs, std::move(patterns));
}

} // namespace accelopt::search
