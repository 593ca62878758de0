#include "Search/Search.h"
#include "Syntax/Errors.h"

#include "Analysis/Verifier.h"
#include "Memory/Hash.h"
#include "Perf/TargetLimits.h"
#include "Profile/NeuronBackend.h"
#include "Profile/NumericCheck.h"
#include "Profile/SimulatorBackend.h"
#include "Rewrite/Rewrite.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <set>

namespace accelopt::search {

std::string normalisedHash(llvm::StringRef text) { return memory::sourceHash(text); }

llvm::ArrayRef<llvm::StringLiteral> structuralOpKinds() {
  static constexpr llvm::StringLiteral Kinds[] = {"fission", "interchange", "fuse", "reorder"};
  return Kinds;
}

llvm::ArrayRef<llvm::StringLiteral> closureFollowUpKinds() {
  static constexpr llvm::StringLiteral Kinds[] = {"widen"};
  return Kinds;
}

llvm::ArrayRef<llvm::StringLiteral> closureMacroKinds() {
  static constexpr llvm::StringLiteral Kinds[] = {"hoist", "shrink_buffer"};
  return Kinds;
}

llvm::ArrayRef<llvm::StringLiteral> signalledStartKinds() {
  static constexpr llvm::StringLiteral Kinds[] = {"set_engine", "substitute"};
  return Kinds;
}

namespace {

bool isStructural(const nlohmann::json &op) {
  std::string kind = op.value("op", "");
  return llvm::is_contained(structuralOpKinds(), kind);
}

/// An op that starts a closure on this kernel: a structural one, or one of a kind in
/// signalledStartKinds() that a signal seen on the original proposes.
bool startsClosure(const nlohmann::json &op, const std::set<std::string> &signalled) {
  std::string kind = op.value("op", "");
  return isStructural(op) || (signalled.count(kind) && llvm::is_contained(signalledStartKinds(), kind));
}

/// A single op a closure may continue with once a move enabled it.
bool isFollowUpKind(llvm::StringRef kind) {
  return llvm::is_contained(structuralOpKinds(), kind) || llvm::is_contained(closureFollowUpKinds(), kind);
}
bool isFollowUp(const nlohmann::json &op) { return isFollowUpKind(op.value("op", "")); }

/// Applications of one macro kind in a closure move, at most (each re-reads the menu of that kind).
constexpr int MacroMaxOps = 16;
/// The share of --budget in which closures are scored (bmm_softmax at full size under load: its
/// closures took the whole 3 minutes and the iteration ended with nothing evaluated, 1.005x).
constexpr double ClosureBudgetShare = 0.5;

/// A legal op named by what it does rather than by ids: loop and statement ids (L3, S12)
/// shift when a nest is split or merged, the induction variables and trip counts in the
/// description do not. An op whose key the previous state's menu lacks was enabled by the
/// last move.
std::string enabledKey(const rewrite::LegalOp &m) {
  const std::string &d = m.description;
  std::string key;
  for (size_t i = 0; i < d.size();) {
    bool wordStart = i == 0 || !std::isalnum(static_cast<unsigned char>(d[i - 1]));
    if (wordStart && (d[i] == 'L' || d[i] == 'S') && i + 1 < d.size() &&
        std::isdigit(static_cast<unsigned char>(d[i + 1]))) {
      size_t j = i + 1;
      while (j < d.size() && std::isdigit(static_cast<unsigned char>(d[j]))) ++j;
      if (j == d.size() || !std::isalnum(static_cast<unsigned char>(d[j]))) {
        i = j;
        continue;
      }
    }
    key += d[i++];
  }
  return m.op.value("op", "") + "|" + key;
}

std::set<std::string> enabledKeys(const std::vector<rewrite::LegalOp> &menu) {
  std::set<std::string> keys;
  for (const auto &m : menu) keys.insert(enabledKey(m));
  return keys;
}

/// A candidate's text as a kernel file, shapes from the search's inputs (evaluator and search loop alike).
llvm::Expected<nki::KernelFile> parseCandidate(const std::string &path, const std::string &text,
                                               const nki::InputSpecs &inputs, const std::string &kernelName) {
  auto src = syntax::SourceBuffer::fromText(path, text);
  if (!src) return src.takeError();
  nki::FrontEndOptions fe;
  fe.inputs = &inputs;
  fe.kernelName = kernelName;
  return nki::buildKernelFile(std::move(*src), fe);
}

const nki::Kernel *selectKernel(const nki::KernelFile &file, const std::string &name) {
  for (const auto &k : file.kernels)
    if (name.empty() || k.name == name) return &k;
  return nullptr;
}

} // namespace

struct CandidateEvaluator::State {
  SearchOptions O;
  nki::InputSpecs Inputs;
  std::string Path;
  std::shared_ptr<const profile::Backend> Backend;
  std::optional<profile::NumericBaseline> Baseline;
  /// The numeric check's bound: O.tolerance widened to the original's narrowest dtype (toleranceFor).
  interp::Tolerance Tolerance;
  /// A backend that runs kernels on a device (--backend neuron): candidates are
  /// checked on the outputs it collects, against the original's outputs there
  /// (DeviceOutputs, one per seed, inputs left in Baseline), as `verify` does.
  const profile::NeuronBackend *Device = nullptr;
  std::vector<profile::SeedBaseline> DeviceOutputs;
  Candidate Original;
  analysis::VerifyOptions Limits; ///< the target's limits (--target), as `check --target` applies them

  bool verifies(const nki::Kernel &k) const { return !analysis::hasErrors(analysis::verify(k, Limits)); }
  /// Why `p` cannot justify a speedup: it leaves out more work than the original's estimate ("" when it can).
  std::string unjustifiedEstimate(const perf::Profile &p) const {
    size_t base = Original.profile ? Original.profile->unmodelled.size() : 0;
    if (p.unmodelled.size() <= base) return "";
    return llvm::formatv("the estimate is a lower bound: {0} statement(s) or sub-expression(s) not modelled (the "
                         "original: {1}), first: line {2}: {3}",
                         p.unmodelled.size(), base, p.unmodelled.front().line, p.unmodelled.front().reason)
        .str();
  }

  llvm::Expected<nki::KernelFile> parse(const std::string &text) const {
    return parseCandidate(Path, text, Inputs, O.kernelName);
  }
  profile::NumericCheckOptions numericOptions() const { return {Tolerance, O.candidateTimeout}; }

  /// Runs `kernel` on the device on the inputs of the baseline's seed `i`.
  llvm::Expected<profile::NeuronMeasurement> measureOnDevice(const nki::Kernel &kernel, size_t i) const {
    auto args = profile::candidateInputs(Baseline->seed(i), kernel);
    if (!args) return args.takeError();
    return Device->measure(kernel, *args);
  }
};

CandidateEvaluator::CandidateEvaluator(std::unique_ptr<State> state) : S(std::move(state)) {}
CandidateEvaluator::~CandidateEvaluator() = default;

const Candidate &CandidateEvaluator::original() const { return S->Original; }

llvm::Expected<std::unique_ptr<CandidateEvaluator>> CandidateEvaluator::create(llvm::StringRef path,
                                                                               llvm::StringRef text,
                                                                               const nki::InputSpecs &inputs,
                                                                               const SearchOptions &options) {
  auto st = std::make_unique<State>();
  st->O = options;
  st->Inputs = inputs;
  st->Path = path.str();
  if (options.backend) {
    st->Backend = options.backend;
  } else {
    auto backend = profile::createBackend("sim", options.target);
    if (!backend) return backend.takeError();
    st->Backend = std::move(*backend);
  }
  auto file = st->parse(text.str());
  if (!file) return file.takeError();
  const nki::Kernel *kernel = selectKernel(*file, options.kernelName);
  if (!kernel) return stringError(path + ": error: no kernel to optimize");
  auto limits = perf::verifyOptions(options.target);
  if (!limits) return limits.takeError();
  st->Limits = *limits;
  if (!st->verifies(*kernel))
    return stringError(path + ": error: the kernel does not verify; run 'accelopt-rewrite check' first");
  Candidate &original = st->Original;
  original.id = 0;
  original.text = text.str();
  original.hash = normalisedHash(text);
  original.status = Candidate::Correct;
  // No numeric seeds: nothing to compare, the device only profiles.
  if (options.numericSeeds > 0) st->Device = dynamic_cast<const profile::NeuronBackend *>(st->Backend.get());
  if (!st->Device) {
    auto profile = st->Backend->profile(*kernel, st->Inputs);
    if (!profile) return profile.takeError();
    original.profile = *profile;
  }
  st->Tolerance = profile::toleranceFor(*kernel, options.tolerance);
  auto baseline =
      profile::NumericBaseline::capture(*file, *kernel, st->Inputs, options.numericSeeds, st->numericOptions().run);
  if (!baseline)
    return llvm::handleErrors(baseline.takeError(), [](const profile::OriginalFailedError &e) {
      return stringError("the original kernel fails on the interpreter: " + e.message());
    });
  st->Baseline = std::move(*baseline);
  if (!st->Device) return std::unique_ptr<CandidateEvaluator>(new CandidateEvaluator(std::move(st)));
  // On the device: the original's outputs on every seed are the reference; its
  // run on the first seed is its profile.
  for (size_t i = 0; i < st->Baseline->seeds(); ++i) {
    auto run = st->measureOnDevice(*kernel, i);
    if (!run) return run.takeError();
    if (i == 0) original.profile = run->profile;
    profile::SeedBaseline outputs;
    outputs.seed = st->Baseline->seed(i).seed;
    outputs.outputs = std::move(run->outputs);
    for (const interp::NDArray &reference : st->Baseline->seed(i).reference) {
      auto copy = reference.clone();
      if (!copy) return copy.takeError();
      outputs.reference.push_back(std::move(*copy));
    }
    st->DeviceOutputs.push_back(std::move(outputs));
  }
  return std::unique_ptr<CandidateEvaluator>(new CandidateEvaluator(std::move(st)));
}

std::optional<double> CandidateEvaluator::estimateLatency(const nki::Kernel &kernel) const {
  if (!S->verifies(kernel)) return std::nullopt;
  auto profile = S->Backend->profile(kernel, S->Inputs);
  if (!profile) {
    llvm::consumeError(profile.takeError());
    return std::nullopt;
  }
  if (!S->unjustifiedEstimate(*profile).empty()) return std::nullopt;
  return profile->latency;
}

void CandidateEvaluator::evaluate(Candidate &c, double cutoff) const {
  auto file = S->parse(c.text);
  if (!file) {
    c.status = Candidate::Invalid;
    c.error = llvm::toString(file.takeError());
    return;
  }
  const nki::Kernel *k = selectKernel(*file, S->O.kernelName);
  if (!k || !S->verifies(*k)) {
    c.status = Candidate::Invalid;
    c.error = "does not verify";
    return;
  }
  if (S->Device) {
    evaluateOnDevice(c, *k, cutoff);
    return;
  }
  // Profile first: it is cheap, and a candidate slower than the whole beam
  // can never be selected, so its numeric check can wait (--check-all).
  auto profile = S->Backend->profile(*k, S->Inputs);
  if (!profile) {
    c.status = Candidate::Invalid;
    c.error = llvm::toString(profile.takeError());
    return;
  }
  c.profile = *profile;
  // A lower bound that drops work the original's estimate counts would show a speedup nobody can justify.
  if (std::string why = S->unjustifiedEstimate(*profile); !why.empty()) {
    c.status = Candidate::Invalid;
    c.error = why;
    return;
  }
  if (!S->O.checkAll && c.latency() >= cutoff) {
    c.status = Candidate::Slower;
    return;
  }
  std::vector<profile::SeedCheck> checks = S->Baseline->check(*file, *k, S->numericOptions());
  if (!checks.empty() && !checks.back().equal()) {
    c.status = checks.back().outcome == profile::SeedCheck::InputsFailed ? Candidate::Invalid : Candidate::Incorrect;
    c.error = checks.back().firstDifference();
    return;
  }
  c.status = Candidate::Correct;
}

void CandidateEvaluator::evaluateOnDevice(Candidate &c, const nki::Kernel &k, double cutoff) const {
  // The profiling run on the first seed also collects the outputs checked for it.
  for (size_t i = 0; i < S->DeviceOutputs.size(); ++i) {
    auto run = S->measureOnDevice(k, i);
    if (!run) {
      c.status = Candidate::Invalid;
      c.error = llvm::toString(run.takeError());
      return;
    }
    if (i == 0) {
      c.profile = run->profile;
      if (!S->O.checkAll && c.latency() >= cutoff) {
        c.status = Candidate::Slower;
        return;
      }
    }
    profile::SeedCheck check = profile::compareOutputs(S->DeviceOutputs[i], run->outputs, S->numericOptions());
    if (!check.equal()) {
      c.status = Candidate::Incorrect;
      c.error = check.firstDifference();
      return;
    }
  }
  c.status = Candidate::Correct;
}

namespace {

class Loop {
public:
  Loop(const SearchOptions &o, Planner &p, SearchObserver *obs, const nki::InputSpecs &inputs, std::string path)
      : O(o), P(p), Obs(obs), Inputs(inputs), Path(std::move(path)) {}

  llvm::Expected<SearchResult> run() {
    auto start = std::chrono::steady_clock::now();
    auto source = syntax::SourceBuffer::fromFile(Path);
    if (!source) return source.takeError();
    auto evaluator = CandidateEvaluator::create(Path, (*source)->text(), Inputs, O);
    if (!evaluator) return evaluator.takeError();
    Evaluator = std::move(*evaluator);
    const Candidate &original = Evaluator->original();
    {
      auto file = parse(original.text);
      if (!file) return file.takeError();
      const nki::Kernel *kernel = selectKernel(*file, O.kernelName);
      if (!kernel) return stringError(Path + ": error: no kernel to optimize");
      Result.signals = readSignals(&*original.profile, *kernel);
    }
    Result.candidates.push_back(original);
    Seen[original.hash] = 0;
    if (Obs) Obs->candidateEvaluated(original);
    std::vector<int> beam = {0};
    int previousBest = 0, stalled = 0;
    for (int it = 1; it <= O.iterations && !budgetSpent(); ++it) {
      std::vector<Candidate> pending = propose(beam, it);
      double cutoff = 0;
      for (int b : beam) cutoff = std::max(cutoff, Result.candidates[b].latency());
      if (auto err = evaluate(pending, cutoff)) return err;
      // Candidates the budget left unevaluated are dropped, never reported as results.
      llvm::erase_if(pending, [](const Candidate &c) { return c.status == Candidate::Pending; });
      IterationRecord rec;
      rec.iteration = it;
      rec.evaluated = pending.size();
      std::vector<int> fresh;
      for (auto &c : pending) {
        c.id = int(Result.candidates.size());
        if (c.status == Candidate::Correct) {
          fresh.push_back(c.id);
          ++rec.correct;
        }
        Seen[c.hash] = c.id;
        Result.candidates.push_back(std::move(c));
        if (Obs) Obs->candidateEvaluated(Result.candidates.back());
        if (Result.candidates.back().parent >= 0)
          P.observe(Result.candidates[Result.candidates.back().parent], Result.candidates.back());
      }
      beam = nextBeam(fresh, beam);
      if (Obs) Obs->beamSelected(it, beam);
      int best = bestCorrect();
      rec.bestId = best;
      rec.bestLatency = Result.candidates[best].latency();
      Result.iterations.push_back(rec);
      stalled = best == previousBest ? stalled + 1 : 0;
      previousBest = best;
      if (Obs)
        Obs->iterationDone(it, Result.candidates[best], Result.candidates.size() - 1,
                           size_t(O.iterations) * O.beam * O.plans * O.samples);
      if (O.stallIterations > 0 && stalled >= O.stallIterations) break;
    }
    Result.bestId = bestCorrect();
    Result.budgetSpent = budgetSpent();
    Result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(Result);
  }

private:
  const SearchOptions &O;
  Planner &P;
  SearchObserver *Obs;
  const nki::InputSpecs &Inputs;
  std::string Path;
  std::unique_ptr<CandidateEvaluator> Evaluator;
  SearchResult Result;
  std::map<std::string, int> Seen;
  std::set<int> ClosuresScored;                   // beam members whose structural closures were scored
  std::map<std::string, double> ClosureEstimates; // closure candidates' model latency, by hash
  std::chrono::steady_clock::time_point Start = std::chrono::steady_clock::now();

  bool budgetSpent(double share = 1) const {
    return O.budgetSeconds > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count() > share * O.budgetSeconds;
  }
  /// Closures are scored only in the first part of the budget: what they find still has to be
  /// checked numerically, and a budget spent on scoring them leaves every candidate unevaluated.
  bool closureBudgetSpent() const { return budgetSpent(ClosureBudgetShare); }

  rewrite::CandidateOptions candidateOptions() const {
    rewrite::CandidateOptions opts;
    opts.inputs = &Inputs;
    opts.kernelName = O.kernelName;
    opts.allowReplace = O.allowReplace;
    return opts;
  }

  /// The model's latency of `text` (no numeric check), or none when it does not verify or profile.
  std::optional<double> estimateLatency(const std::string &text) {
    auto file = parse(text);
    if (!file) {
      llvm::consumeError(file.takeError());
      return std::nullopt;
    }
    const nki::Kernel *k = selectKernel(*file, O.kernelName);
    if (!k) return std::nullopt;
    return Evaluator->estimateLatency(*k);
  }

  struct Closure {
    std::vector<nlohmann::json> ops; // the first move's ops, then the follow-ups' kept
    std::string text;
    double latency = 0;
  };

  std::optional<rewrite::PreparedKernel> prepareText(const std::string &text) {
    auto src = syntax::SourceBuffer::fromText(Path, text);
    if (!src) {
      llvm::consumeError(src.takeError());
      return std::nullopt;
    }
    auto prepared = rewrite::PreparedKernel::prepare(**src, candidateOptions());
    if (!prepared) {
      llvm::consumeError(prepared.takeError());
      return std::nullopt;
    }
    return std::move(*prepared);
  }

  /// A macro move: ops of `kind` applied one after the other, each the first legal instance on
  /// the kernel the previous one produced, until none is legal (or `maxOps`). One application
  /// often enables the next: hoisting an address out of a loop lets the loads that use it
  /// follow, privatising a buffer's blocks lets the loop widen. Not scored; none when nothing
  /// applies.
  std::optional<Closure> macroMove(const rewrite::PreparedKernel &start, llvm::StringRef kind, int maxOps) {
    Closure out;
    std::optional<rewrite::PreparedKernel> current;
    const rewrite::PreparedKernel *at = &start;
    while (int(out.ops.size()) < std::min(maxOps, MacroMaxOps) && !closureBudgetSpent()) {
      auto next = rewrite::firstLegalOp(*at, kind);
      if (!next) break;
      auto applied = rewrite::applyCandidate(*at, {next->op});
      if (applied.status != rewrite::Status::Applied) break;
      out.ops.push_back(next->op);
      out.text = std::move(applied.text);
      current = prepareText(out.text);
      if (!current) break;
      at = &*current;
    }
    if (out.ops.empty()) return std::nullopt;
    return out;
  }

  /// Scores `first` (a move applied to the parent) with up to `steps` greedy follow-up moves:
  /// each time the lowest estimate among the follow-up ops (isFollowUp) the last move enabled
  /// and the macros of the kinds it enabled an instance of, even when slower than the state
  /// before it (that is the valley: fission -> interchange is slower, the fuse after it is not;
  /// an interchange is slower until the loads it made invariant are hoisted). Returns the
  /// fastest state along the way; every state is scored on the model only. `room` bounds the ops.
  std::optional<Closure> scoreClosure(const std::string &parentHash, const std::set<std::string> &parentKeys,
                                      Closure first, int steps, int room) {
    auto latency = estimateLatency(first.text);
    if (!latency || int(first.ops.size()) > room) return std::nullopt;
    ++Result.closures;
    first.latency = *latency;
    Closure best = first;
    std::vector<nlohmann::json> path = first.ops;
    std::string text = std::move(first.text);
    std::set<std::string> pathHashes = {parentHash, normalisedHash(text)};
    std::set<std::string> previousKeys = parentKeys;
    for (int step = 0; step < steps && !closureBudgetSpent(); ++step) {
      auto prepared = prepareText(text);
      if (!prepared) break;
      // Only the kinds a closure moves with: the rest of the menu is never tried here.
      std::vector<rewrite::LegalOp> menu = rewrite::legalOps(*prepared, [](llvm::StringRef kind) {
        return isFollowUpKind(kind) || llvm::is_contained(closureMacroKinds(), kind);
      });
      std::optional<Closure> next;
      auto consider = [&](std::vector<nlohmann::json> ops, std::string movedText) {
        if (int(path.size() + ops.size()) > room || pathHashes.count(normalisedHash(movedText))) return;
        auto movedLatency = estimateLatency(movedText);
        if (movedLatency && (!next || *movedLatency < next->latency))
          next = Closure{std::move(ops), std::move(movedText), *movedLatency};
      };
      std::set<std::string> macroKinds;
      for (const auto &m : menu) {
        if (previousKeys.count(enabledKey(m))) continue;
        std::string kind = m.op.value("op", "");
        if (llvm::is_contained(closureMacroKinds(), kind)) macroKinds.insert(kind);
        if (!isFollowUp(m.op)) continue;
        auto moved = rewrite::applyCandidate(*prepared, {m.op});
        if (moved.status == rewrite::Status::Applied) consider({m.op}, std::move(moved.text));
      }
      for (const std::string &kind : macroKinds)
        if (auto macro = macroMove(*prepared, kind, room - int(path.size())))
          consider(std::move(macro->ops), std::move(macro->text));
      previousKeys = enabledKeys(menu);
      if (!next) break;
      path.insert(path.end(), next->ops.begin(), next->ops.end());
      text = std::move(next->text);
      pathHashes.insert(normalisedHash(text));
      if (next->latency < best.latency) best = Closure{path, text, next->latency};
    }
    return best;
  }

  /// Valley-crossing candidates for `parent`: the best closures of its structural ops that the
  /// model says are strictly faster than the parent, at most `O.plans` of them.
  std::vector<Candidate> closureCandidates(const Candidate &parent, const rewrite::PreparedKernel &prepared, int it) {
    std::vector<Candidate> out;
    int room = O.maxOpsPerCandidate - int(parent.ops.size());
    if (O.closureSteps <= 0 || room < 1 || !ClosuresScored.insert(parent.id).second) return out;
    std::vector<rewrite::LegalOp> menu = rewrite::legalOps(prepared);
    std::set<std::string> keys = enabledKeys(menu);
    std::vector<Closure> found;
    auto score = [&](Closure first) {
      auto closure = scoreClosure(parent.hash, keys, std::move(first), O.closureSteps, room);
      if (closure && strictlyFaster(closure->latency, parent.latency())) found.push_back(std::move(*closure));
    };
    // Kinds a seen signal proposes start first (spills across sibling nests -> fission/fuse):
    // under load the closure share of --budget may end before the menu's tail is reached.
    std::set<std::string> signalled;
    std::map<std::string, std::string> signalOf; // the first seen signal proposing each kind
    for (const SignalReading &s : Result.signals)
      if (s.seen)
        for (const std::string &kind : s.opKinds) {
          signalled.insert(kind);
          signalOf.emplace(kind, s.name);
        }
    std::stable_partition(menu.begin(), menu.end(),
                          [&](const rewrite::LegalOp &m) { return signalled.count(m.op.value("op", "")) != 0; });
    // Structural starts first, then the signalled engine moves, each up to --closure-starts: the
    // moves (one per statement and engine) never crowd a structural start out.
    for (bool structural : {true, false}) {
      int starts = 0;
      for (const auto &m : menu) {
        if (isStructural(m.op) != structural || !startsClosure(m.op, signalled)) continue;
        if (starts++ >= O.closureStarts || closureBudgetSpent()) break;
        auto applied = rewrite::applyCandidate(prepared, {m.op});
        if (applied.status == rewrite::Status::Applied) score(Closure{{m.op}, std::move(applied.text)});
      }
    }
    // The macros start closures too: what they enable (a widen, a fusion) is scored with them.
    for (llvm::StringRef kind : closureMacroKinds())
      if (!closureBudgetSpent())
        if (auto macro = macroMove(prepared, kind, room)) score(std::move(*macro));
    std::stable_sort(found.begin(), found.end(),
                     [](const Closure &a, const Closure &b) { return a.latency < b.latency; });
    for (auto &closure : found) {
      if (int(out.size()) >= O.plans) break;
      Candidate c;
      c.parent = parent.id;
      c.iteration = it;
      c.plan = llvm::formatv("closure: {0} and {1} more op(s) it enabled, scored on the model ({2:F4} ms)",
                             closure.ops.front().value("op", ""), closure.ops.size() - 1, closure.latency)
                   .str();
      // A closure started by an op a signal proposed (set_engine on busy-engine-next-to-idle) names it.
      std::string first = closure.ops.front().value("op", "");
      bool signalledStart = llvm::is_contained(signalledStartKinds(), first) && signalOf.count(first);
      c.signal = signalledStart ? signalOf[first] : "valley-crossing";
      c.ops = parent.ops;
      c.ops.insert(c.ops.end(), closure.ops.begin(), closure.ops.end());
      c.text = std::move(closure.text);
      c.hash = normalisedHash(c.text);
      ClosureEstimates[c.hash] = closure.latency;
      out.push_back(std::move(c));
    }
    return out;
  }

  llvm::Expected<nki::KernelFile> parse(const std::string &text) {
    return parseCandidate(Path, text, Inputs, O.kernelName);
  }

  /// Plans for every beam member, applied to their text; duplicates dropped.
  std::vector<Candidate> propose(const std::vector<int> &beam, int it) {
    std::vector<Candidate> out;
    std::map<std::string, bool> batch;
    for (size_t bi = 0; bi < beam.size(); ++bi) {
      const Candidate &parent = Result.candidates[beam[bi]];
      auto file = parse(parent.text);
      if (!file) {
        llvm::consumeError(file.takeError());
        continue;
      }
      uint64_t seed = O.seed * 1000003u + uint64_t(it) * 7919u + bi;
      std::vector<Plan> plans = P.propose(parent, *file, O.plans, O.samples, seed);
      auto src = syntax::SourceBuffer::fromText(Path, parent.text);
      if (!src) {
        llvm::consumeError(src.takeError());
        continue;
      }
      rewrite::CandidateOptions opts = candidateOptions();
      // Parsed and verified once for all of this parent's realisations.
      auto prepared = rewrite::PreparedKernel::prepare(**src, opts);
      if (!prepared) {
        llvm::consumeError(prepared.takeError());
        continue;
      }
      std::vector<Candidate> made;
      for (const Plan &plan : plans)
        for (const auto &ops : plan.realisations) {
          if (ops.empty() || int(parent.ops.size() + ops.size()) > O.maxOpsPerCandidate) continue;
          auto applied = rewrite::applyCandidate(*prepared, ops);
          if (applied.status != rewrite::Status::Applied) continue; // refused: never a candidate
          Candidate c;
          c.parent = parent.id;
          c.iteration = it;
          c.plan = plan.description;
          c.signal = plan.signal;
          c.patternId = plan.patternId;
          c.ops = parent.ops;
          c.ops.insert(c.ops.end(), ops.begin(), ops.end());
          c.text = std::move(applied.text);
          c.hash = normalisedHash(c.text);
          made.push_back(std::move(c));
        }
      for (Candidate &c : closureCandidates(parent, *prepared, it)) made.push_back(std::move(c));
      for (Candidate &c : made) {
        if (Seen.count(c.hash) || batch.count(c.hash)) continue; // never re-evaluated
        if (Obs)
          if (auto known = Obs->known(c.hash)) {
            // Evaluated in an earlier (resumed) run: reuse its verdict and profile.
            c.status = known->status;
            c.profile = known->profile;
            c.error = known->error;
          }
        batch[c.hash] = true;
        out.push_back(std::move(c));
      }
    }
    return out;
  }

  llvm::Error evaluate(std::vector<Candidate> &pending, double cutoff) {
    auto one = [this, cutoff](Candidate &c) {
      if (c.status == Candidate::Pending && !budgetSpent()) Evaluator->evaluate(c, cutoff);
    };
    if (O.remote) {
      std::vector<Candidate *> remote;
      for (auto &c : pending)
        if (c.status == Candidate::Pending) remote.push_back(&c);
      return remote.empty() ? llvm::Error::success() : O.remote->evaluate(remote, cutoff);
    }
    // Closures first, fastest estimate first: the model already says they beat their parent, and
    // under --budget the numeric checks of the planner's candidates could otherwise use it up
    // (bmm_softmax at full size: the 1.79x closure was left unevaluated behind a 1.005x candidate).
    std::vector<Candidate *> order;
    for (auto &c : pending) order.push_back(&c);
    auto estimate = [this](const Candidate *c) {
      auto it = ClosureEstimates.find(c->hash);
      return it == ClosureEstimates.end() ? std::numeric_limits<double>::infinity() : it->second;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](const Candidate *a, const Candidate *b) { return estimate(a) < estimate(b); });
    if (O.jobs <= 1) {
      for (Candidate *c : order) one(*c);
      return llvm::Error::success();
    }
    llvm::ThreadPool pool(llvm::hardware_concurrency(O.jobs));
    for (Candidate *c : order) pool.async([&one, c] { one(*c); });
    pool.wait();
    return llvm::Error::success();
  }

  /// The best B correct new candidates, refilled from the previous beam.
  std::vector<int> nextBeam(std::vector<int> fresh, const std::vector<int> &previous) {
    auto byLatency = [this](int a, int b) {
      double la = Result.candidates[a].latency(), lb = Result.candidates[b].latency();
      return la != lb ? la < lb : a < b;
    };
    std::sort(fresh.begin(), fresh.end(), byLatency);
    std::vector<int> next(fresh.begin(), fresh.begin() + std::min<size_t>(fresh.size(), O.beam));
    std::vector<int> prev = previous;
    std::sort(prev.begin(), prev.end(), byLatency);
    for (int p : prev)
      if (int(next.size()) < O.beam && std::find(next.begin(), next.end(), p) == next.end()) next.push_back(p);
    return next;
  }

  /// The fastest correct candidate, or the original when none is strictly faster than it.
  int bestCorrect() const {
    int best = 0;
    double original = Result.candidates[0].latency();
    for (const auto &c : Result.candidates)
      if (c.status == Candidate::Correct && strictlyFaster(c.latency(), original) &&
          c.latency() < Result.candidates[best].latency())
        best = c.id;
    return best;
  }
};

} // namespace

llvm::Expected<SearchResult> optimize(llvm::StringRef path, const nki::InputSpecs &inputs, Planner &planner,
                                      const SearchOptions &options, SearchObserver *observer) {
  if (options.iterations < 0) return stringError("error: --iterations must not be negative");
  if (options.beam < 1 || options.plans < 1 || options.samples < 1)
    return stringError("error: --beam, --plans and --samples must be at least 1");
  Loop loop(options, planner, observer, inputs, path.str());
  return loop.run();
}

} // namespace accelopt::search
