// accelopt-rewrite [optimize] FILE: the beam search, end to end.
#include "BackendOptions.h"
#include "Command.h"
#include "KernelInputs.h"

#include "Agent/Config.h"
#include "Agent/Roles.h"
#include "Dispatch/Slurm.h"
#include "Perf/Bench.h"
#include "Perf/Roofline.h"
#include "Profile/Backend.h"
#include "Profile/SimulatorBackend.h"
#include "Rewrite/Rewrite.h"
#include "Search/MemoryBridge.h"
#include "Search/Search.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <cstdlib>

namespace accelopt::cli {
namespace {

/// With --budget and no --iterations: iterations until the budget ends the search, or until
/// this many pass without a better kernel.
constexpr int BudgetIterationCap = 1000;
constexpr int BudgetStallIterations = 4;

cl::SubCommand OptimizeCmd("optimize", "Search for a faster verified kernel (the default subcommand)");
InputOptions Inputs(OptimizeCmd);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<int> Iterations("iterations", cl::desc("Beam-search iterations T (default 4)"), cl::init(4),
                        cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<int> Beam("beam", cl::desc("Beam width B (default 2)"), cl::init(2), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<int> Plans("plans", cl::desc("Plans per beam candidate N (default 4)"), cl::init(4), cl::sub(OptimizeCmd),
                   cl::cat(category()));
cl::opt<int> Samples("samples", cl::desc("Realisations per plan K (default 2)"), cl::init(2), cl::sub(OptimizeCmd),
                     cl::cat(category()));
cl::opt<std::string> PlannerKind("planner", cl::desc("builtin (default) or llm"), cl::init("builtin"),
                                 cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> Target("target", cl::desc("trn1 or trn2 (default: the kernel's platform_target, else trn1)"),
                            cl::init("trn1"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<uint64_t> Seed("seed", cl::desc("Search seed (default 0)"), cl::init(0), cl::sub(OptimizeCmd),
                       cl::cat(category()));
cl::opt<unsigned> Jobs("j", cl::desc("Candidates evaluated in parallel (default 1)"), cl::init(1), cl::sub(OptimizeCmd),
                       cl::cat(category()));
cl::opt<unsigned> NumericSeeds("numeric-seeds", cl::desc("Seeds of the numeric check per candidate (default 2)"),
                               cl::init(2), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> CheckAll("check-all", cl::desc("Numerically check every candidate, also those slower than the beam"),
                       cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> AllowReplace("allow-replace",
                           cl::desc("Accept 'replace' ops (arbitrary code) from the LLM or the optimization memory"),
                           cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> Output("o", cl::desc("Write the best kernel here (atomically)"), cl::value_desc("BEST.py"),
                            cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> InPlace("in-place", cl::desc("Overwrite the input file with the best kernel"), cl::sub(OptimizeCmd),
                      cl::cat(category()));
cl::opt<std::string> ReportDir("report", cl::desc("Write report.md/.json, best.diff and latency.svg here"),
                               cl::value_desc("DIR"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> AgentConfigFile("agent-config",
                                     cl::desc("Planner/executor/summarizer endpoints (JSON) for --planner llm"),
                                     cl::value_desc("FILE"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> DryRun("dry-run", cl::desc("With --planner llm: print the prompts of the first step, call nothing"),
                     cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> MemoryPath("memory",
                                cl::desc("Optimization memory (SQLite; default $ACCELOPT_MEMORY or "
                                         ".accelopt/memory.db; 'none' to run without)"),
                                cl::value_desc("DB"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string>
    ExperienceConfig("experience-config",
                     cl::desc("JSON file: {\"experience\": {\"positive_threshold\", \"negative_threshold\", \"top_k\", "
                              "\"queue_size\", ...}} (AccelOpt's defaults: 1.04, 1/1.15, 2, 16)"),
                     cl::value_desc("FILE"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> Resume("resume", cl::desc("Continue this kernel's last unfinished run from the memory"),
                     cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<double> BudgetMinutes(
    "budget",
    cl::desc("Wall-clock minutes the search may take; checked between candidates. Without --iterations the "
             "search then runs until the budget is spent or it stops improving"),
    cl::value_desc("MINUTES"), cl::init(0), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<double> Timeout("timeout",
                        cl::desc("Seconds per interpreter run of the numeric check (default 120; 0: no limit)"),
                        cl::value_desc("S"), cl::init(120), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<int> ClosureSteps("closure-steps",
                          cl::desc("Structural follow-up moves scored with each structural op (valley crossing; "
                                   "default 3, 0: off)"),
                          cl::init(3), cl::sub(OptimizeCmd), cl::cat(category()));
// --backend neuron: every candidate's profile is measured on this host's NeuronDevice.
BackendOptions BackendChoice(OptimizeCmd, /*ownTimeout=*/false);
cl::opt<bool> Quiet("quiet", cl::desc("No progress output"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> Dispatch("dispatch",
                              cl::desc("Where candidates are evaluated: local (default, -j threads) or slurm"),
                              cl::init("local"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> Partition("partition", cl::desc("With --dispatch slurm: the Slurm partition"), cl::value_desc("P"),
                               cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> SlurmOpts("slurm-opts", cl::desc("With --dispatch slurm: more sbatch options, e.g. \"--time=10\""),
                               cl::value_desc("OPTS"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string>
    SlurmDir("slurm-dir", cl::desc("With --dispatch slurm: directory shared with the nodes (default .accelopt/slurm)"),
             cl::value_desc("DIR"), cl::init(".accelopt/slurm"), cl::sub(OptimizeCmd), cl::cat(category()));

/// Progress: a redrawn line on a terminal, plain log lines otherwise.
class Progress : public search::SearchObserver {
public:
  Progress(bool quiet) : Quiet(quiet), Tty(llvm::sys::Process::StandardErrIsDisplayed()), Start(now()) {}
  void candidateEvaluated(const search::Candidate &c) override {
    ++Evaluated;
    if (c.id == 0) Baseline = c.latency();
    if (c.id == 0 && c.profile && c.profile->isLowerBound() && !Quiet)
      llvm::errs() << "warning: the original kernel's estimate is a " << c.profile->lowerBoundNote()
                   << "; candidates are compared on the work the model sees (`profile` lists the rest)\n";
    if (c.status == search::Candidate::Correct) Best = std::min(Best, c.latency());
    if (c.profile) Backend = c.profile->backend;
    if (Tty && !Quiet) draw();
  }
  void iterationDone(int iteration, const search::Candidate &best, size_t evaluated, size_t total) override {
    Iteration = iteration;
    Best = best.latency();
    if (Quiet) return;
    if (Tty) {
      draw();
      return;
    }
    llvm::errs() << llvm::formatv(
        "iteration {0}: {1} candidates evaluated, best {2:F4} ms ({3:F3}x, backend: {4}{5})\n", iteration, evaluated,
        best.latency(), Baseline / best.latency(), best.profile ? best.profile->backend : "sim",
        best.profile && best.profile->isLowerBound() ? ", " + best.profile->lowerBoundNote() : std::string());
  }
  void finish() {
    if (Tty && !Quiet) llvm::errs() << "\n";
  }
  int Iteration = 0;
  int Total = 0;
  std::string Backend = "sim"; // of the latest profile: every speed-up shown is that backend's estimate

private:
  bool Quiet, Tty;
  std::chrono::steady_clock::time_point Start;
  size_t Evaluated = 0;
  double Baseline = 0, Best = 1e300;
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  void draw() {
    double elapsed = std::chrono::duration<double>(now() - Start).count();
    double eta = Iteration > 0 ? elapsed / Iteration * (Total - Iteration) : 0;
    int width = 20, filled = Total ? width * Iteration / Total : 0;
    llvm::errs() << llvm::formatv("\r[{0}{1}] iteration {2}/{3}, {4} candidates, best {5:F3}x ({7}), ETA {6:F0}s   ",
                                  std::string(filled, '#'), std::string(width - filled, '.'), Iteration, Total,
                                  Evaluated, Best < 1e299 && Best > 0 ? Baseline / Best : 1.0, eta, Backend);
  }
};

/// Forwards search events to the progress display and the memory.
struct Observers : search::SearchObserver {
  Progress *progress;
  search::MemoryBridge *memory;
  Observers(Progress *p, search::MemoryBridge *m) : progress(p), memory(m) {}
  void candidateEvaluated(const search::Candidate &c) override {
    progress->candidateEvaluated(c);
    if (memory) memory->candidateEvaluated(c);
    // Fault injection for the kill-and-resume test: die as SIGKILL would.
    if (killAfter && ++evaluated >= killAfter) std::raise(SIGKILL);
  }
  size_t evaluated = 0;
  size_t killAfter = [] {
    const char *v = std::getenv("ACCELOPT_FAULT_KILL_AFTER");
    return v ? size_t(std::atoll(v)) : size_t(0);
  }();
  void iterationDone(int it, const search::Candidate &best, size_t evaluated, size_t total) override {
    progress->iterationDone(it, best, evaluated, total);
    if (memory) memory->iterationDone(it, best, evaluated, total);
  }
  void beamSelected(int it, const std::vector<int> &beam) override {
    if (memory) memory->beamSelected(it, beam);
  }
  std::optional<search::Candidate> known(const std::string &hash) override {
    return memory ? memory->known(hash) : std::nullopt;
  }
};

/// The simulated schedule of the best candidate, as `profile --timeline` writes it, into the report.
llvm::Error writeBestTimeline(llvm::StringRef path, const std::string &text, const search::SearchOptions &opts) {
  nki::FrontEndOptions fe;
  fe.inputs = &*Inputs.resolvedInputs;
  fe.kernelName = opts.kernelName; // an undecorated function named by --kernel is the kernel, as in the search
  auto source = syntax::SourceBuffer::fromText(path.str(), text);
  if (!source) return source.takeError();
  auto file = nki::buildKernelFile(std::move(*source), fe);
  if (!file) return file.takeError();
  const nki::Kernel *kernel = nullptr;
  for (const nki::Kernel &k : file->kernels)
    if (k.name == opts.kernelName) kernel = &k;
  if (!kernel) return llvm::Error::success();
  auto hw = perf::loadTarget(opts.target);
  if (!hw) return hw.takeError();
  profile::SimulatorBackend simulator(std::move(*hw));
  simulator.recordSchedules(true);
  auto estimate = simulator.estimate(*kernel);
  if (!estimate) return estimate.takeError();
  llvm::SmallString<256> out(ReportDir);
  llvm::sys::path::append(out, "timeline.json");
  return syntax::writeFileAtomically(
      out, perf::renderTimeline(estimate->simulation, kernel->name, simulator.hardware().backend));
}

/// --dry-run: the prompts of one search step on the original kernel.
int dryRun(const nki::KernelFile &file, agent::AgentSession &session) {
  const nki::Kernel &k = file.kernels.front();
  agent::KernelContext ctx;
  ctx.listing = agent::listingText(k);
  auto backend = profile::createBackend("sim", kernelTarget(Target, file.kernels));
  if (!backend) return reportError(backend.takeError());
  if (auto profile = (*backend)->profile(k, *Inputs.resolvedInputs))
    ctx.profile = profile->toJSON();
  else
    llvm::consumeError(profile.takeError());
  if (!Inputs.resolvedReference.empty())
    if (auto buf = llvm::MemoryBuffer::getFile(Inputs.resolvedReference)) ctx.problem = (*buf)->getBuffer().str();
  rewrite::CandidateOptions opts;
  opts.inputs = &*Inputs.resolvedInputs;
  opts.kernelName = k.name;
  auto menu = rewrite::legalOps(file.source(), opts);
  if (!menu) return reportError(menu.takeError());
  for (auto &m : *menu) ctx.menu.push_back({m.op, m.description});
  nlohmann::json exampleOps = nlohmann::json::array();
  if (!menu->empty()) exampleOps.push_back(menu->front().op);
  if (auto err = agent::dryRunPrompts(llvm::outs(), session.prompts(), ctx, unsigned(Plans),
                                      "<the plan the planner proposed>", ctx.listing, exampleOps, 1.0))
    return reportError(std::move(err));
  return 0;
}

int runOptimize() {
  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  if (!Inputs.resolvedInputs)
    return reportError(llvm::createStringError(
        llvm::inconvertibleErrorCode(), "error: optimizing needs input shapes: give --inputs, --reference or --case"));
  if (PlannerKind != "builtin" && PlannerKind != "llm")
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: unknown --planner '" + PlannerKind + "' (builtin or llm)"));
  if (PlannerKind == "llm" && AgentConfigFile.empty() && !DryRun)
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: --planner llm needs --agent-config FILE (or --dry-run)"));
  if (!Output.empty() && InPlace)
    return reportError(
        llvm::createStringError(llvm::inconvertibleErrorCode(), "error: give -o or --in-place, not both"));
  std::string path = file->source().path().str();
  if (!Output.empty() && llvm::sys::fs::equivalent(Output, path))
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: -o names the input file; use --in-place to overwrite it"));
  if (NumericSeeds == 0)
    return reportError(llvm::createStringError(
        llvm::inconvertibleErrorCode(), "error: --numeric-seeds 0 would accept candidates no run has checked; give at "
                                        "least 1"));
  if (BudgetMinutes < 0 || ClosureSteps < 0 || Timeout < 0)
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: --budget, --closure-steps and --timeout must not be negative"));
  applyMemoryLimit(0);
  search::SearchOptions opts;
  opts.iterations = Iterations;
  opts.closureSteps = ClosureSteps;
  opts.candidateTimeout = Timeout;
  opts.budgetSeconds = 60 * BudgetMinutes;
  // A budget without --iterations: iterate until the budget is spent (or nothing improves).
  if (BudgetMinutes > 0 && !Iterations.getNumOccurrences()) {
    opts.iterations = BudgetIterationCap;
    opts.stallIterations = BudgetStallIterations;
  }
  opts.beam = Beam;
  opts.plans = Plans;
  opts.samples = Samples;
  opts.seed = Seed;
  opts.jobs = Jobs;
  // The kernel's platform_target when --target is not given, as `check` and `profile` choose it.
  opts.target = kernelTarget(Target, file->kernels);
  if (BackendChoice.neuron()) {
    auto created = BackendChoice.create(opts.target);
    if (!created) return reportError(created.takeError());
    opts.backend = std::move(*created);
  }
  opts.numericSeeds = NumericSeeds;
  opts.checkAll = CheckAll;
  opts.allowReplace = AllowReplace;
  opts.kernelName = file->kernels.front().name;
  // The optimization memory: candidates, experiences and patterns across runs.
  std::unique_ptr<memory::Store> store;
  std::unique_ptr<search::MemoryBridge> bridge;
  if (MemoryPath != "none") {
    std::string dbPath = MemoryPath.empty() ? memory::Store::defaultPath() : MemoryPath.getValue();
    auto opened = memory::Store::open(dbPath);
    if (!opened) return reportError(opened.takeError());
    store = std::move(*opened);
    nlohmann::json config = {
        {"iterations", int(Iterations)}, {"beam", int(Beam)},
        {"plans", int(Plans)},           {"samples", int(Samples)},
        {"seed", uint64_t(Seed)},        {"planner", PlannerKind.getValue()},
        {"target", opts.target},         {"inputs", nki::formatInputSpecs(*Inputs.resolvedInputs)}};
    memory::ExperienceConfig experiences;
    if (!ExperienceConfig.empty()) {
      auto buf = llvm::MemoryBuffer::getFile(ExperienceConfig);
      if (!buf)
        return reportError(llvm::createStringError(
            buf.getError(), ExperienceConfig + ": error: cannot read: " + buf.getError().message()));
      nlohmann::json j = nlohmann::json::parse((*buf)->getBuffer().str(), nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded())
        return reportError(
            llvm::createStringError(llvm::inconvertibleErrorCode(), ExperienceConfig + ": error: invalid JSON"));
      auto parsed = memory::ExperienceConfig::fromJson(j);
      if (!parsed) return reportError(parsed.takeError());
      experiences = *parsed;
    }
    auto b = search::MemoryBridge::open(*store, file->kernels.front(), config, Resume, experiences);
    if (!b) return reportError(b.takeError());
    bridge = std::move(*b);
    if (Resume && !bridge->resumed() && !Quiet)
      llvm::errs() << "accelopt-rewrite: no unfinished run of this kernel in the memory; starting a new one\n";
  } else if (Resume) {
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(), "error: --resume needs the memory"));
  }
  std::unique_ptr<search::Planner> planner;
  std::unique_ptr<agent::AgentSession> session;
  if (PlannerKind == "llm") {
    auto config = AgentConfigFile.empty() ? llvm::Expected<agent::AgentConfig>(agent::AgentConfig())
                                          : agent::loadAgentConfig(AgentConfigFile);
    if (!config) return reportError(config.takeError());
    agent::SessionOptions so;
    so.reportDir = ReportDir;
    so.dryRun = DryRun;
    so.notes = Quiet ? nullptr : &llvm::errs();
    auto created = agent::AgentSession::create(*config, so);
    if (!created) return reportError(created.takeError());
    session = std::move(*created);
    if (DryRun) return dryRun(*file, *session);
    std::function<std::vector<agent::Experience>(const nki::Kernel &)> lessons;
    if (bridge)
      lessons = [&](const nki::Kernel &) {
        std::vector<agent::Experience> out;
        for (auto &[summary, ops, speedup] : bridge->lessons()) out.push_back({summary, ops, speedup});
        return out;
      };
    planner = search::makeLlmPlanner(*session, &*Inputs.resolvedInputs, Inputs.resolvedReference, lessons);
  } else {
    planner = search::makeBuiltinPlanner(&*Inputs.resolvedInputs,
                                         bridge ? bridge->suggestions() : search::SuggestionSource());
  }
  std::unique_ptr<dispatch::SlurmEvaluator> slurm;
  if (Dispatch == "slurm") {
    dispatch::SlurmOptions so;
    so.partition = Partition;
    so.extraOptions = SlurmOpts;
    so.sharedDir = SlurmDir;
    so.workerProgram = llvm::sys::fs::getMainExecutable(nullptr, (void *)&runOptimize);
    so.notes = Quiet ? nullptr : &llvm::errs();
    auto created = dispatch::SlurmEvaluator::create(so, path, *Inputs.resolvedInputs, opts);
    if (!created) return reportError(created.takeError());
    slurm = std::move(*created);
    opts.remote = slurm.get();
  } else if (Dispatch != "local") {
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: unknown --dispatch '" + Dispatch + "' (local or slurm)"));
  }
  Progress progress(Quiet);
  progress.Total = opts.iterations;
  Observers observers{&progress, bridge.get()};
  auto result = search::optimize(path, *Inputs.resolvedInputs, *planner, opts, &observers);
  progress.finish();
  if (bridge)
    if (auto err = bridge->finish(bool(result))) {
      if (!result) llvm::consumeError(result.takeError());
      return reportError(std::move(err));
    }
  if (!result) return reportError(result.takeError());
  if (bridge && bridge->reusedCandidates() && !Quiet)
    llvm::errs() << "resumed run r" << bridge->runId() << ": " << bridge->reusedCandidates()
                 << " candidates taken from the memory without re-evaluation\n";
  if (slurm && !Quiet) {
    const dispatch::SlurmStats &st = slurm->stats();
    llvm::errs() << "slurm: " << st.submitted << " tasks submitted, " << st.retried << " retried, " << st.failed
                 << " failed, " << st.reused << " results reused from " << slurm->runDir() << ", " << st.adopted
                 << " followed from an earlier run\n";
  }
  const auto &best = result->best(), &orig = result->original();
  search::ReportContext ctx;
  ctx.kernelPath = path;
  ctx.caseName = Inputs.caseName;
  if (!Inputs.caseName.empty()) {
    if (auto c = nki::findCase(Inputs.suite(), Inputs.caseName)) {
      perf::ExprVariables vars;
      for (auto &kv : c->values)
        vars[kv.first] = kv.second == double(int64_t(kv.second)) ? perf::ExprValue::ofInteger(int64_t(kv.second))
                                                                 : perf::ExprValue::ofReal(kv.second);
      auto roofline = perf::Roofline::builtin();
      if (!roofline)
        llvm::consumeError(roofline.takeError());
      else if (roofline->hasProblem(c->problem)) {
        if (auto peak = roofline->peak(c->problem, vars))
          ctx.rooflinePeakMs = peak->peakMs;
        else
          llvm::consumeError(peak.takeError());
      }
    } else {
      llvm::consumeError(c.takeError());
    }
  }
  llvm::outs() << llvm::formatv("baseline {0:F4} ms, best {1:F4} ms: {2:F3}x faster ({6}, backend: {3}); {4} "
                                "candidates in {5:F1} s\n",
                                orig.latency(), best.latency(), orig.latency() / best.latency(),
                                orig.profile ? orig.profile->backend : "sim", result->candidates.size() - 1,
                                result->seconds,
                                orig.profile && !orig.profile->isEstimate() ? "measured" : "estimates");
  if (ctx.rooflinePeakMs)
    llvm::outs() << llvm::formatv("percent of peak: baseline {0:F1}%, best {1:F1}% (roofline {2:F4} ms)\n",
                                  100 * *ctx.rooflinePeakMs / orig.latency(),
                                  100 * *ctx.rooflinePeakMs / best.latency(), *ctx.rooflinePeakMs);
  std::string seen;
  for (const search::SignalReading &s : result->signals)
    if (s.seen) seen += (seen.empty() ? "" : ", ") + s.name;
  llvm::outs() << "profile signals: " << (seen.empty() ? "none" : seen) << "\n";
  if (best.ops.empty() && result->candidates.size() > 1)
    llvm::outs() << "kept the original: no verified candidate is more than "
                 << llvm::formatv("{0:F1}%", 100 * search::MinRelativeGain) << " faster\n";
  for (const auto &op : best.ops) llvm::outs() << "  " << rewrite::formatOp(op) << "\n";
  ctx.planner = PlannerKind;
  if (session) {
    ctx.extra = session->usage().toJson();
    if (auto err = session->writeUsage()) return reportError(std::move(err));
  }
  if (!ReportDir.empty()) {
    if (auto err = search::writeReport(ReportDir, *result, opts, ctx)) return reportError(std::move(err));
    if (auto err = writeBestTimeline(path, best.text, opts)) return reportError(std::move(err));
  }
  if (std::string failure = planner->failure(); !failure.empty()) {
    llvm::errs() << "accelopt-rewrite: error: " << failure << "\n";
    return 1;
  }
  std::string target = InPlace ? path : Output.getValue();
  if (!target.empty()) {
    // In place: the text read at the start must still be there (an edit saved meanwhile is not lost).
    if (auto err = InPlace ? syntax::rewriteFileInPlace(path, file->source().text(), best.text)
                           : syntax::writeFileAtomically(target, best.text))
      return reportError(std::move(err));
    llvm::outs() << "wrote " << target << "\n";
  } else if (!best.ops.empty()) {
    llvm::outs() << rewrite::unifiedDiff(orig.text, best.text, "a/" + path, "b/" + path);
  }
  return 0;
}

RegisterCommand Registration(OptimizeCmd, runOptimize);

} // namespace
} // namespace accelopt::cli
