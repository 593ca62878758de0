// accelopt-rewrite bench: profile every case of a suite with the performance
// model and compare with measured latencies when the suite has them.
#include "BackendOptions.h"
#include "Command.h"
#include "Dispatch/Slurm.h"
#include "KernelInputs.h"

#include "Perf/Bench.h"
#include "Profile/Backend.h"
#include "Profile/NumericCheck.h"
#include "Search/Search.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

namespace accelopt::cli {
namespace {

cl::SubCommand BenchCmd("bench", "Profile every case of a suite with the performance model; compare with "
                                 "measured latencies and roofline peaks");
cl::opt<std::string> Suite("suite",
                           cl::desc("NKIBench checkout (kernels/, measured/); default: the "
                                    "manifest's, when it exists"),
                           cl::value_desc("DIR"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Manifest("manifest", cl::desc("Suite manifest (default: nkibench/manifest.json)"),
                              cl::value_desc("FILE"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Target("target", cl::desc("Hardware: trn1 (default), trn2, or a JSON file"),
                            cl::value_desc("NAME"), cl::init("trn1"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> OutDir("out", cl::desc("Write bench.csv and bench.svg into DIR"), cl::value_desc("DIR"),
                            cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Filter("filter", cl::desc("Only the cases whose name matches REGEX"), cl::value_desc("REGEX"),
                            cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Dispatch("dispatch", cl::desc("Where cases are profiled: local (default) or slurm"),
                              cl::init("local"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Partition("partition", cl::desc("With --dispatch slurm: the Slurm partition"), cl::value_desc("P"),
                               cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> SlurmOpts("slurm-opts", cl::desc("With --dispatch slurm: more sbatch options"),
                               cl::value_desc("OPTS"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string>
    SlurmDir("slurm-dir", cl::desc("With --dispatch slurm: directory shared with the nodes (default .accelopt/slurm)"),
             cl::value_desc("DIR"), cl::init(".accelopt/slurm"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<bool> Optimize("optimize",
                       cl::desc("Optimize every selected case with the default built-in search, verify the result "
                                "at full size against the numpy reference, and tabulate estimated speedups next to "
                                "AccelOpt's measured ones"),
                       cl::sub(BenchCmd), cl::cat(category()));
cl::opt<double> BudgetMinutes("budget", cl::desc("With --optimize: wall-clock minutes per case (default: none)"),
                              cl::value_desc("MINUTES"), cl::init(0), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<double> Timeout("timeout", cl::desc("With --optimize: seconds per interpreter run (default 120; 0: no limit)"),
                        cl::value_desc("S"), cl::init(120), cl::sub(BenchCmd), cl::cat(category()));
// --backend neuron: the measured column is this host's NeuronDevice (each case
// run through the Neuron SDK) instead of the suite's recorded latencies, so the
// table is the model's error against the device per kernel.
BackendOptions Backend(BenchCmd, /*ownTimeout=*/false);
cl::opt<bool> Own("own", cl::desc("Our own small cases even when NKIBench is present"), cl::sub(BenchCmd),
                  cl::cat(category()));

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// The suite's cases, which of them come from the NKIBench checkout, and the
/// checkout's root directory.
struct Selection {
  std::vector<nki::SuiteCase> cases;
  std::vector<bool> fromNkibench;
  std::string nkibenchRoot;
};

llvm::Expected<Selection> loadCases() {
  // Cases rooted in the NKIBench checkout are told apart by loading the
  // manifest once with a root that cannot occur in a real path.
  const std::string probe = "/\x01nkibench-root";
  auto probed = nki::loadSuite({Manifest, probe});
  if (!probed) return probed.takeError();
  auto real = nki::loadSuite({Manifest, Suite});
  if (!real) return real.takeError();
  Selection s;
  s.cases = std::move(*real);
  for (size_t i = 0; i < s.cases.size(); ++i) {
    llvm::StringRef path = i < probed->size() ? llvm::StringRef((*probed)[i].kernelPath) : "";
    bool nkibench = path.startswith(probe);
    s.fromNkibench.push_back(nkibench);
    if (nkibench && s.nkibenchRoot.empty()) {
      llvm::StringRef rel = path.drop_front(probe.size());
      llvm::StringRef full = s.cases[i].kernelPath;
      if (full.endswith(rel)) s.nkibenchRoot = full.drop_back(rel.size()).str();
    }
  }
  if (!Suite.empty()) s.nkibenchRoot = Suite;
  return s;
}

/// AccelOpt's speedups measured on trn1 (paper Fig. 5), by problem, when the suite vendors them.
llvm::StringMap<double> loadAccelOptSpeedups(llvm::StringRef nkibenchRoot) {
  llvm::StringMap<double> out;
  llvm::SmallString<256> path(nkibenchRoot);
  llvm::sys::path::append(path, "measured", "accelopt_paper_fig5_trn1.csv");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return out;
  llvm::SmallVector<llvm::StringRef, 32> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  int column = -1;
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.empty() || line.startswith("#")) continue;
    llvm::SmallVector<llvm::StringRef, 8> cells;
    line.split(cells, ',');
    if (column < 0) { // the header names the column
      for (size_t i = 0; i < cells.size(); ++i)
        if (cells[i].trim() == "accelopt_speedup") column = int(i);
      if (column < 0) return out;
      continue;
    }
    double speedup = 0;
    if (int(cells.size()) > column && !cells[column].trim().getAsDouble(speedup)) out[cells[0].trim()] = speedup;
  }
  return out;
}

/// One case of `bench --optimize`.
struct OptimizedRow {
  std::string name, problem;
  double baselineMs = 0, bestMs = 0, seconds = 0;
  std::optional<double> peakMs, accelOptSpeedup;
  size_t ops = 0;
  std::string verdict; // "equal", "NOT equal", or why it could not be checked
  std::string error;
  std::string ranOn; // where its candidates were evaluated
};

/// The best kernel against the numpy reference (or the original when there is none) on
/// AccelOpt's first seed, at the case's full size.
std::string verifyAgainstReference(const nki::SuiteCase &c, const std::string &bestText) {
  nki::FrontEndOptions fe;
  fe.inputs = &c.inputs;
  auto original = nki::loadKernelFile(c.kernelPath, fe);
  if (!original) return "not checked: " + llvm::toString(original.takeError());
  auto source = syntax::SourceBuffer::fromText(c.kernelPath, bestText);
  if (!source) return "not checked: " + llvm::toString(source.takeError());
  auto best = nki::buildKernelFile(std::move(*source), fe);
  if (!best) return "not checked: " + llvm::toString(best.takeError());
  if (original->kernels.empty() || best->kernels.empty()) return "not checked: no kernel";
  const nki::Kernel &ko = original->kernels.front();
  uint64_t seed = profile::accelOptSeed(0);
  SeededInputs inputs;
  if (!c.referencePath.empty()) {
    auto fromReference = referenceInputsForSeed(c.referencePath, &c.inputs, 0, ko, seed);
    if (!fromReference) return "not checked: " + llvm::toString(fromReference.takeError());
    inputs = std::move(*fromReference);
  } else {
    auto random = interp::makeRandomInputs(c.inputs, seed);
    if (!random) return "not checked: " + llvm::toString(random.takeError());
    inputs.args = std::move(*random);
  }
  profile::NumericCheckOptions check;
  check.run.timeoutSeconds = Timeout;
  auto baseline =
      profile::captureSeed(*original, ko, seed, std::move(inputs.args), std::move(inputs.reference), check.run);
  if (!baseline) return "not checked: " + llvm::toString(baseline.takeError());
  profile::SeedCheck result = profile::checkSeed(*baseline, *best, best->kernels.front(), check);
  return result.equal() ? (c.referencePath.empty() ? "equal (to the original)" : "equal") : "NOT equal";
}

int runBench();

/// Where --dispatch slurm sends work, from the command's options.
dispatch::SlurmOptions slurmOptions() {
  dispatch::SlurmOptions so;
  so.partition = Partition;
  so.extraOptions = SlurmOpts;
  so.sharedDir = SlurmDir;
  so.workerProgram = llvm::sys::fs::getMainExecutable(nullptr, (void *)&runBench);
  so.notes = &llvm::errs();
  return so;
}

int runOptimizeBench(const Selection &selection, bool useNkibench, const std::optional<llvm::Regex> &filter,
                     const std::string &backend) {
  llvm::StringMap<double> accelOpt =
      useNkibench ? loadAccelOptSpeedups(selection.nkibenchRoot) : llvm::StringMap<double>();
  applyMemoryLimit(0);
  auto start = std::chrono::steady_clock::now();
  std::vector<OptimizedRow> rows;
  // Each case's outcome on stderr as soon as it is known (a whole-suite run takes an hour; the table
  // comes at the end).
  auto finished = [&](OptimizedRow row) {
    if (!row.error.empty())
      llvm::errs() << "bench --optimize: " << row.name << ": error\n";
    else
      llvm::errs() << llvm::formatv("bench --optimize: {0}: {1:F3}x ({2:F4} -> {3:F4} ms, {4}), {5}, {6:F0} s\n",
                                    row.name, row.baselineMs / row.bestMs, row.baselineMs, row.bestMs, backend,
                                    row.verdict, row.seconds);
    rows.push_back(std::move(row));
  };
  for (size_t i = 0; i < selection.cases.size(); ++i) {
    const nki::SuiteCase &c = selection.cases[i];
    if (selection.fromNkibench[i] != useNkibench || !c.pair.empty()) continue;
    if (filter && !filter->match(c.name)) continue;
    OptimizedRow row;
    row.name = c.name;
    row.problem = c.problem;
    if (auto peak = perf::peakForCase(c)) row.peakMs = peak->peakMs;
    if (auto it = accelOpt.find(c.problem); it != accelOpt.end()) row.accelOptSpeedup = it->second;
    llvm::errs() << "bench --optimize: " << c.name << " ...\n";
    search::SearchOptions opts; // the defaults of `accelopt-rewrite optimize`
    opts.target = Target;
    opts.budgetSeconds = 60 * BudgetMinutes;
    opts.candidateTimeout = Timeout;
    nki::FrontEndOptions fe;
    fe.inputs = &c.inputs;
    auto file = nki::loadKernelFile(c.kernelPath, fe);
    if (!file || file->kernels.empty()) {
      row.error = file ? "no kernel" : llvm::toString(file.takeError());
      finished(std::move(row));
      continue;
    }
    opts.kernelName = file->kernels.front().name;
    // --dispatch slurm: the case's candidates are evaluated as Slurm jobs, the search stays here.
    std::unique_ptr<dispatch::SlurmEvaluator> slurm;
    if (Dispatch == "slurm") {
      auto created = dispatch::SlurmEvaluator::create(slurmOptions(), c.kernelPath, c.inputs, opts);
      if (!created) {
        row.error = llvm::toString(created.takeError());
        finished(std::move(row));
        continue;
      }
      slurm = std::move(*created);
      opts.remote = slurm.get();
    }
    auto planner = search::makeBuiltinPlanner(&c.inputs);
    auto result = search::optimize(c.kernelPath, c.inputs, *planner, opts);
    if (!result) {
      row.error = llvm::toString(result.takeError());
      finished(std::move(row));
      continue;
    }
    row.baselineMs = result->original().latency();
    row.bestMs = result->best().latency();
    row.ops = result->best().ops.size();
    row.seconds = result->seconds;
    row.verdict = row.ops ? verifyAgainstReference(c, result->best().text) : "original kept";
    if (slurm)
      row.ranOn = llvm::formatv("slurm: {0} task(s) submitted, {1} retried, {2} failed", slurm->stats().submitted,
                                slurm->stats().retried, slurm->stats().failed)
                      .str();
    finished(std::move(row));
  }
  if (rows.empty()) return reportError(fail("error: no case selected"));
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  llvm::outs() << "bench --optimize: default built-in search per case; latencies are estimates (backend: " << backend
               << "), AccelOpt's speedups are trn1 measurements (paper Fig. 5)\n";
  llvm::outs() << llvm::formatv("{0,-42} {1,12} {2,12} {3,8} {4,10} {5,10} {6,9} {7,8}  {8}\n", "case", "base ms",
                                "best ms", "speedup", "% peak", "% peak", "AccelOpt", "seconds",
                                "verified at full size");
  llvm::outs() << llvm::formatv("{0,-42} {1,12} {2,12} {3,8} {4,10} {5,10} {6,9} {7,8}\n", "", "(" + backend + ")", "",
                                "(est)", "base", "best", "(trn1)", "");
  double logSpeedup = 0, logBasePeak = 0, logBestPeak = 0, logAccelOpt = 0;
  size_t done = 0, withPeak = 0, withAccelOpt = 0, failed = 0;
  for (const OptimizedRow &r : rows) {
    if (!r.error.empty()) {
      ++failed;
      llvm::outs() << llvm::formatv("{0,-42} error: {1}\n", r.name, llvm::StringRef(r.error).trim());
      continue;
    }
    double speedup = r.baselineMs / r.bestMs;
    auto pct = [&](double ms) {
      return r.peakMs ? llvm::formatv("{0:F1}%", 100 * *r.peakMs / ms).str() : std::string("-");
    };
    llvm::outs() << llvm::formatv("{0,-42} {1,12:F4} {2,12:F4} {3,7:F3}x {4,10} {5,10} {6,9} {7,8:F0}  {8}\n", r.name,
                                  r.baselineMs, r.bestMs, speedup, pct(r.baselineMs), pct(r.bestMs),
                                  r.accelOptSpeedup ? llvm::formatv("{0:F3}x", *r.accelOptSpeedup).str() : "-",
                                  r.seconds, r.verdict);
    if (r.verdict == "NOT equal" || llvm::StringRef(r.verdict).startswith("not checked")) ++failed;
    ++done;
    logSpeedup += std::log(speedup);
    if (r.peakMs) {
      ++withPeak;
      logBasePeak += std::log(*r.peakMs / r.baselineMs);
      logBestPeak += std::log(*r.peakMs / r.bestMs);
    }
    if (r.accelOptSpeedup) {
      ++withAccelOpt;
      logAccelOpt += std::log(*r.accelOptSpeedup);
    }
  }
  if (done)
    llvm::outs() << llvm::formatv("geomean estimated speedup ({0}): {1:F3}x over {2} cases\n", backend,
                                  std::exp(logSpeedup / double(done)), done);
  if (withPeak)
    llvm::outs() << llvm::formatv("geomean % of peak (estimated, {0}): baseline {1:F1}%, best {2:F1}%\n", backend,
                                  100 * std::exp(logBasePeak / double(withPeak)),
                                  100 * std::exp(logBestPeak / double(withPeak)));
  if (withAccelOpt)
    llvm::outs() << llvm::formatv("geomean AccelOpt speedup (trn1, measured, same cases): {0:F3}x\n",
                                  std::exp(logAccelOpt / double(withAccelOpt)));
  for (const OptimizedRow &r : rows)
    if (!r.ranOn.empty()) llvm::outs() << "ran on: " << r.name << ": " << r.ranOn << "\n";
  llvm::outs() << llvm::formatv("wall time: {0:F1} s\n", wall);
  return failed ? 1 : 0;
}

int runBench() {
  // The search behind --optimize scores and checks candidates on the simulator and the interpreter;
  // a device backend there would be silently ignored.
  if (Optimize && Backend.neuron())
    return reportError(fail("error: bench --optimize searches with the simulator; --backend neuron is not "
                            "supported with --optimize: run `accelopt-rewrite optimize --backend neuron KERNEL` "
                            "per kernel"));
  auto created = profile::createBackend("sim", Target);
  if (!created) return reportError(created.takeError());
  const profile::Backend &simulator = **created;
  const std::string backend = simulator.name().str();

  std::unique_ptr<profile::Backend> device;
  if (Backend.neuron()) {
    auto created = Backend.create(Target);
    if (!created) return reportError(created.takeError());
    device = std::move(*created);
  }
  const auto *neuron = dynamic_cast<const profile::NeuronBackend *>(device.get());
  if (neuron)
    if (llvm::Error err = neuron->checkSdk()) return reportError(std::move(err));
  std::string measuredBackend;

  auto selection = loadCases();
  if (!selection) return reportError(selection.takeError());
  bool haveNkibench = !selection->nkibenchRoot.empty() && llvm::sys::fs::is_directory(selection->nkibenchRoot);
  if (!Suite.empty() && !haveNkibench)
    return reportError(fail("error: suite directory '" + Suite + "' does not exist"));
  bool useNkibench = haveNkibench && !Own;

  std::optional<llvm::Regex> filter;
  if (!Filter.empty()) {
    filter.emplace(Filter);
    std::string why;
    if (!filter->isValid(why)) return reportError(fail("error: --filter: " + why));
  }

  // Measurements are trn1 profiles; only a trn1 estimate is compared with them.
  llvm::StringMap<double> measured;
  if (useNkibench && simulator.name() == "sim-trn1" && !neuron) {
    llvm::SmallString<256> path(selection->nkibenchRoot);
    llvm::sys::path::append(path, "measured", "trn1_baselines.json");
    if (llvm::sys::fs::exists(path)) {
      auto m = perf::loadMeasuredLatencies(path);
      if (!m) return reportError(m.takeError());
      measured = std::move(*m);
    }
  }

  if (BudgetMinutes < 0 || Timeout < 0) return reportError(fail("error: --budget and --timeout must not be negative"));
  if (BudgetMinutes > 0 && !Optimize) return reportError(fail("error: --budget needs --optimize"));
  if (Dispatch != "local" && Dispatch != "slurm")
    return reportError(fail("error: unknown --dispatch '" + Dispatch + "' (local or slurm)"));
  if (Optimize) return runOptimizeBench(*selection, useNkibench, filter, backend);

  std::vector<perf::BenchRow> rows;
  std::vector<dispatch::CaseProfile> profiles; // one per row
  std::vector<const nki::SuiteCase *> cases;   // one per row
  for (size_t i = 0; i < selection->cases.size(); ++i) {
    const nki::SuiteCase &c = selection->cases[i];
    if (selection->fromNkibench[i] != useNkibench) continue;
    if (!c.pair.empty()) continue; // direction pairs are tested, not benchmarked
    if (filter && !filter->match(c.name)) continue;
    perf::BenchRow row;
    row.name = c.name;
    row.problem = c.problem;
    row.peak = perf::peakForCase(c);
    if (auto it = measured.find(c.name); it != measured.end()) row.measuredMs = it->second;
    dispatch::CaseProfile profile;
    profile.kernelPath = c.kernelPath;
    profile.inputs = c.inputs;
    profile.target = Target;
    profiles.push_back(std::move(profile));
    rows.push_back(std::move(row));
    cases.push_back(&c);
  }
  if (Dispatch == "slurm") {
    if (llvm::Error err = dispatch::profileOnSlurm(slurmOptions(), profiles)) return reportError(std::move(err));
  } else if (Dispatch == "local") {
    for (dispatch::CaseProfile &p : profiles) dispatch::profileCase(p);
  } else {
    return reportError(fail("error: unknown --dispatch '" + Dispatch + "' (local or slurm)"));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    perf::BenchRow &row = rows[i];
    const dispatch::CaseProfile &p = profiles[i];
    row.estimatedMs = p.estimatedMs;
    row.error = p.error;
    row.unmodelled = p.unmodelled;
    if (!p.lowerBoundNote.empty())
      llvm::errs() << "warning: " << row.name << ": the estimate is a " << p.lowerBoundNote << "\n";
    // --backend neuron: the measured column is this host's device, run here (one device per host).
    if (neuron && row.error.empty()) {
      nki::FrontEndOptions opts;
      opts.inputs = &cases[i]->inputs;
      auto file = nki::loadKernelFile(cases[i]->kernelPath, opts);
      if (!file) {
        row.error = llvm::toString(file.takeError());
      } else if (file->kernels.empty()) {
        row.error = "no kernel";
      } else if (auto m = neuron->measure(file->kernels.front(), cases[i]->inputs); !m) {
        row.error = llvm::toString(m.takeError());
      } else {
        row.measuredMs = m->medianMs;
        measuredBackend = m->profile.backend;
      }
    }
    while (!row.error.empty() && row.error.back() == '\n') row.error.pop_back();
  }
  if (rows.empty()) return reportError(fail("error: no case selected"));

  perf::BenchSummary summary = perf::summarizeBench(rows);
  llvm::outs() << "suite: "
               << (useNkibench ? "NKIBench (" + selection->nkibenchRoot + ")" : std::string("accelopt's own cases"))
               << ", target " << simulator.hardware().name << "; estimates are " << backend << ", not measurements\n";
  if (neuron)
    llvm::outs() << "measured: backend " << (measuredBackend.empty() ? neuron->name().str() : measuredBackend)
                 << " on this host (median of " << neuron->options().runs
                 << " runs per case); error = (estimate - measured) / measured\n";
  llvm::outs() << perf::renderBenchTable(rows, summary, backend);
  if (Dispatch == "slurm") {
    llvm::outs() << "where each case ran:\n";
    for (size_t i = 0; i < rows.size(); ++i) llvm::outs() << "  " << rows[i].name << ": " << profiles[i].ranOn << "\n";
  }

  if (!OutDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(OutDir))
      return reportError(fail("error: cannot create '" + OutDir + "': " + ec.message()));
    llvm::SmallString<256> csv(OutDir), svg(OutDir);
    llvm::sys::path::append(csv, "bench.csv");
    llvm::sys::path::append(svg, "bench.svg");
    if (llvm::Error err = syntax::writeFileAtomically(csv, perf::renderBenchCsv(rows, backend)))
      return reportError(std::move(err));
    if (llvm::Error err = syntax::writeFileAtomically(svg, perf::renderBenchSvg(rows, backend)))
      return reportError(std::move(err));
    llvm::outs() << "wrote " << csv << " and " << svg << "\n";
  }
  return summary.failed ? 1 : 0;
}

RegisterCommand Registration(BenchCmd, runBench);

} // namespace
} // namespace accelopt::cli
