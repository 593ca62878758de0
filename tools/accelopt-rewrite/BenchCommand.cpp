// accelopt-rewrite bench: profile every case of a suite with the performance
// model and compare with measured latencies when the suite has them.
#include "BackendOptions.h"
#include "Command.h"

#include "Perf/Bench.h"
#include "Profile/Backend.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand BenchCmd("bench",
                        "Profile every case of a suite with the performance model; compare with "
                        "measured latencies and roofline peaks");
cl::opt<std::string> Suite("suite",
                           cl::desc("NKIBench checkout (kernels/, measured/); default: the "
                                    "manifest's, when it exists"),
                           cl::value_desc("DIR"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Manifest("manifest",
                              cl::desc("Suite manifest (default: nkibench/manifest.json)"),
                              cl::value_desc("FILE"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Target("target", cl::desc("Hardware: trn1 (default), trn2, or a JSON file"),
                            cl::value_desc("NAME"), cl::init("trn1"), cl::sub(BenchCmd),
                            cl::cat(category()));
cl::opt<std::string> OutDir("out", cl::desc("Write bench.csv and bench.svg into DIR"),
                            cl::value_desc("DIR"), cl::sub(BenchCmd), cl::cat(category()));
cl::opt<std::string> Filter("filter", cl::desc("Only the cases whose name matches REGEX"),
                            cl::value_desc("REGEX"), cl::sub(BenchCmd), cl::cat(category()));
// --backend neuron: the measured column is this host's NeuronDevice (each case
// run through the Neuron SDK) instead of the suite's recorded latencies, so the
// table is the model's error against the device per kernel.
BackendOptions Backend(BenchCmd, /*ownTimeout=*/true);
cl::opt<bool> Own("own", cl::desc("Our own small cases even when NKIBench is present"),
                  cl::sub(BenchCmd), cl::cat(category()));

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

int runBench() {
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
  bool haveNkibench = !selection->nkibenchRoot.empty() &&
                      llvm::sys::fs::is_directory(selection->nkibenchRoot);
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

  std::vector<perf::BenchRow> rows;
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
    nki::FrontEndOptions opts;
    opts.inputs = &c.inputs;
    auto file = nki::loadKernelFile(c.kernelPath, opts);
    if (!file) {
      row.error = llvm::toString(file.takeError());
    } else if (file->kernels.empty()) {
      row.error = "no kernel";
    } else {
      auto estimate = simulator.estimate(file->kernels.front(), c.inputs);
      if (!estimate)
        row.error = llvm::toString(estimate.takeError());
      else
        row.estimatedMs = estimate->profile.latency;
      if (neuron && estimate) {
        auto m = neuron->measure(file->kernels.front(), c.inputs);
        if (!m) {
          row.error = llvm::toString(m.takeError());
        } else {
          row.measuredMs = m->medianMs;
          measuredBackend = m->profile.backend;
        }
      }
      if (estimate && estimate->profile.isLowerBound()) {
        row.unmodelled = estimate->profile.unmodelled.size();
        llvm::errs() << "warning: " << c.name << ": the estimate is a "
                     << estimate->profile.lowerBoundNote() << "\n";
      }
    }
    while (!row.error.empty() && row.error.back() == '\n') row.error.pop_back();
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return reportError(fail("error: no case selected"));

  perf::BenchSummary summary = perf::summarizeBench(rows);
  llvm::outs() << "suite: " << (useNkibench ? "NKIBench (" + selection->nkibenchRoot + ")"
                                            : std::string("accelopt's own cases"))
               << ", target " << simulator.hardware().name << "; estimates are " << backend
               << ", not measurements\n";
  if (neuron)
    llvm::outs() << "measured: backend " << (measuredBackend.empty() ? neuron->name().str() : measuredBackend)
                 << " on this host (median of " << neuron->options().runs
                 << " runs per case); error = (estimate - measured) / measured\n";
  llvm::outs() << perf::renderBenchTable(rows, summary, backend);

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
