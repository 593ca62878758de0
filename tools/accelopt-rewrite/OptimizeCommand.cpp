// accelopt-rewrite [optimize] FILE: the beam search, end to end.
#include "Command.h"
#include "KernelInputs.h"

#include "Perf/Roofline.h"
#include "Rewrite/Rewrite.h"
#include "Search/Search.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace accelopt::cli {
namespace {

cl::SubCommand OptimizeCmd("optimize", "Search for a faster verified kernel (the default subcommand)");
InputOptions Inputs(OptimizeCmd);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<int> Iterations("iterations", cl::desc("Beam-search iterations T (default 4)"), cl::init(4), cl::sub(OptimizeCmd),
                        cl::cat(category()));
cl::opt<int> Beam("beam", cl::desc("Beam width B (default 2)"), cl::init(2), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<int> Plans("plans", cl::desc("Plans per beam candidate N (default 4)"), cl::init(4), cl::sub(OptimizeCmd),
                   cl::cat(category()));
cl::opt<int> Samples("samples", cl::desc("Realisations per plan K (default 2)"), cl::init(2), cl::sub(OptimizeCmd),
                     cl::cat(category()));
cl::opt<std::string> PlannerKind("planner", cl::desc("builtin (default) or llm"), cl::init("builtin"),
                                 cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> Target("target", cl::desc("trn1 (default) or trn2"), cl::init("trn1"), cl::sub(OptimizeCmd),
                            cl::cat(category()));
cl::opt<uint64_t> Seed("seed", cl::desc("Search seed (default 0)"), cl::init(0), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<unsigned> Jobs("j", cl::desc("Candidates evaluated in parallel (default 1)"), cl::init(1), cl::sub(OptimizeCmd),
                       cl::cat(category()));
cl::opt<unsigned> NumericSeeds("numeric-seeds", cl::desc("Seeds of the numeric check per candidate (default 2)"),
                               cl::init(2), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> CheckAll("check-all", cl::desc("Numerically check every candidate, also those slower than the beam"),
                       cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<std::string> Output("o", cl::desc("Write the best kernel here (atomically)"), cl::value_desc("BEST.py"),
                            cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> InPlace("in-place", cl::desc("Overwrite the input file with the best kernel"), cl::sub(OptimizeCmd),
                      cl::cat(category()));
cl::opt<std::string> ReportDir("report", cl::desc("Write report.md/.json, best.diff and latency.svg here"),
                               cl::value_desc("DIR"), cl::sub(OptimizeCmd), cl::cat(category()));
cl::opt<bool> Quiet("quiet", cl::desc("No progress output"), cl::sub(OptimizeCmd), cl::cat(category()));

/// Progress: a redrawn line on a terminal, plain log lines otherwise.
class Progress : public search::SearchObserver {
public:
  Progress(bool quiet) : Quiet(quiet), Tty(llvm::sys::Process::StandardErrIsDisplayed()), Start(now()) {}
  void candidateEvaluated(const search::Candidate &c) override {
    ++Evaluated;
    if (c.id == 0) Baseline = c.latency();
    if (c.status == search::Candidate::Correct) Best = std::min(Best, c.latency());
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
    llvm::errs() << llvm::formatv("iteration {0}: {1} candidates evaluated, best {2:F4} ms ({3:F3}x, backend: sim)\n",
                                  iteration, evaluated, best.latency(), Baseline / best.latency());
  }
  void finish() {
    if (Tty && !Quiet) llvm::errs() << "\n";
  }
  int Iteration = 0;
  int Total = 0;

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
    llvm::errs() << llvm::formatv("\r[{0}{1}] iteration {2}/{3}, {4} candidates, best {5:F3}x, ETA {6:F0}s   ",
                                  std::string(filled, '#'), std::string(width - filled, '.'), Iteration, Total, Evaluated,
                                  Best < 1e299 && Best > 0 ? Baseline / Best : 1.0, eta);
  }
};

int runOptimize() {
  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  if (!Inputs.resolvedInputs)
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: optimizing needs input shapes: give --inputs, --reference or --case"));
  if (PlannerKind != "builtin")
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: unknown --planner '" + PlannerKind + "' (builtin)"));
  if (!Output.empty() && InPlace)
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(), "error: give -o or --in-place, not both"));
  std::string path = file->source().path().str();
  if (!Output.empty() && llvm::sys::fs::equivalent(Output, path))
    return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "error: -o names the input file; use --in-place to overwrite it"));
  applyMemoryLimit(0);
  search::SearchOptions opts;
  opts.iterations = Iterations;
  opts.beam = Beam;
  opts.plans = Plans;
  opts.samples = Samples;
  opts.seed = Seed;
  opts.jobs = Jobs;
  opts.target = Target;
  opts.numericSeeds = NumericSeeds;
  opts.checkAll = CheckAll;
  opts.kernelName = file->kernels.front().name;
  auto planner = search::makeBuiltinPlanner(&*Inputs.resolvedInputs);
  Progress progress(Quiet);
  progress.Total = Iterations;
  auto result = search::optimize(path, *Inputs.resolvedInputs, *planner, opts, &progress);
  progress.finish();
  if (!result) return reportError(result.takeError());
  const auto &best = result->best(), &orig = result->original();
  search::ReportContext ctx;
  ctx.kernelPath = path;
  ctx.caseName = Inputs.caseName;
  if (!Inputs.caseName.empty())
    if (auto c = nki::findCase(Inputs.suite(), Inputs.caseName)) {
      perf::ExprVariables vars;
      for (auto &kv : c->values)
        vars[kv.first] = kv.second == double(int64_t(kv.second)) ? perf::ExprValue::ofInteger(int64_t(kv.second))
                                                                  : perf::ExprValue::ofReal(kv.second);
      auto roofline = perf::Roofline::builtin();
      if (!roofline) llvm::consumeError(roofline.takeError());
      else if (roofline->hasProblem(c->problem)) {
        if (auto peak = roofline->peak(c->problem, vars)) ctx.rooflinePeakMs = peak->peakMs;
        else llvm::consumeError(peak.takeError());
      }
    } else {
      llvm::consumeError(c.takeError());
    }
  llvm::outs() << llvm::formatv("baseline {0:F4} ms, best {1:F4} ms: {2:F3}x faster (estimates, backend: {3}); {4} "
                                "candidates in {5:F1} s\n",
                                orig.latency(), best.latency(), orig.latency() / best.latency(),
                                orig.profile ? orig.profile->backend : "sim", result->candidates.size() - 1, result->seconds);
  if (ctx.rooflinePeakMs)
    llvm::outs() << llvm::formatv("percent of peak: baseline {0:F1}%, best {1:F1}% (roofline {2:F4} ms)\n",
                                  100 * *ctx.rooflinePeakMs / orig.latency(), 100 * *ctx.rooflinePeakMs / best.latency(),
                                  *ctx.rooflinePeakMs);
  for (const auto &op : best.ops) llvm::outs() << "  " << rewrite::formatOp(op) << "\n";
  if (!ReportDir.empty())
    if (auto err = search::writeReport(ReportDir, *result, opts, ctx)) return reportError(std::move(err));
  std::string target = InPlace ? path : Output.getValue();
  if (!target.empty()) {
    if (auto err = rewrite::writeFileAtomically(target, best.text)) return reportError(std::move(err));
    llvm::outs() << "wrote " << target << "\n";
  } else if (!best.ops.empty()) {
    llvm::outs() << rewrite::unifiedDiff(orig.text, best.text, "a/" + path, "b/" + path);
  }
  return 0;
}

RegisterCommand Registration(OptimizeCmd, runOptimize);

} // namespace
} // namespace accelopt::cli
