// accelopt-rewrite profile: estimate a kernel's neuron-profile summary with a
// profile backend (the simulator: trace from the IR + timing model on a target).
#include "BackendOptions.h"
#include "Command.h"

#include "Perf/Bench.h"
#include "Perf/Roofline.h"
#include "Perf/TraceBuilder.h"
#include "Profile/Backend.h"
#include "Profile/SimulatorBackend.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace accelopt::cli {
namespace {

cl::SubCommand ProfileCmd("profile", "Estimate a kernel's profile (latency and neuron-profile fields) with the "
                                     "performance model");
InputOptions Inputs(ProfileCmd);
FormatOption Format(ProfileCmd);
BackendOptions Backend(ProfileCmd, /*ownTimeout=*/true);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(ProfileCmd), cl::cat(category()));
cl::opt<std::string>
    Target("target",
           cl::desc("Hardware: trn1, trn2, or a target JSON file (default: the kernel's platform_target, else trn1)"),
           cl::value_desc("NAME"), cl::init("trn1"), cl::sub(ProfileCmd), cl::cat(category()));
cl::opt<unsigned> DumpTrace("dump-trace", cl::desc("Print the first N instructions of the trace (debugging)"),
                            cl::init(0), cl::sub(ProfileCmd), cl::cat(category()), cl::Hidden);
cl::opt<std::string> Timeline("timeline",
                              cl::desc("Write the simulated schedule as Chrome trace-event JSON "
                                       "(open it in Perfetto or chrome://tracing)"),
                              cl::value_desc("FILE.json"), cl::sub(ProfileCmd), cl::cat(category()));
cl::opt<unsigned> Top("top", cl::desc("Statements to list by estimated time (default 5)"), cl::init(5),
                      cl::sub(ProfileCmd), cl::cat(category()));

/// The roofline peak of the --case, when it is a problem of the roofline table.
std::optional<perf::RooflinePeak> casePeak(std::string &problem) {
  if (Inputs.caseName.empty()) return std::nullopt;
  auto c = nki::findCase(Inputs.suite(), Inputs.caseName);
  if (!c) {
    llvm::consumeError(c.takeError());
    return std::nullopt;
  }
  auto peak = perf::peakForCase(*c);
  if (peak) problem = c->problem;
  return peak;
}

std::string statementText(const nki::Kernel &k, int id) {
  if (id < 0 || id >= int(k.stmts.size()) || !k.source) return "";
  std::string text = k.source->slice(k.stmts[id].range).str();
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > 90) text = text.substr(0, 87) + "...";
  return text;
}

int runProfile() {
  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  auto backend = Backend.create(kernelTarget(Target, file->kernels));
  if (!backend) return reportError(backend.takeError());
  const auto *neuron = dynamic_cast<const profile::NeuronBackend *>(backend->get());
  const nki::InputSpecs noSpecs;
  const nki::InputSpecs &specs = Inputs.resolvedInputs ? *Inputs.resolvedInputs : noSpecs;
  if (!Timeline.empty()) {
    if (file->kernels.size() != 1)
      return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                                 "error: --timeline writes one kernel's schedule, but '" + File +
                                                     "' has " + std::to_string(file->kernels.size()) +
                                                     " kernels; select one with --kernel"));
    auto *simulator = dynamic_cast<profile::SimulatorBackend *>(backend->get());
    if (!simulator)
      return reportError(
          llvm::createStringError(llvm::inconvertibleErrorCode(), "error: --timeline needs the simulator backend"));
    simulator->recordSchedules(true);
  }
  std::string problem;
  std::optional<perf::RooflinePeak> peak = casePeak(problem);

  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  bool first = true;
  for (const nki::Kernel &k : file->kernels) {
    if (DumpTrace) {
      auto trace = perf::buildTrace(k);
      if (!trace) return reportError(trace.takeError());
      auto tensors = trace->tensors();
      auto region = [&](const perf::Region &r) {
        return tensors[r.tensor].name + "[" + std::to_string(r.block) + "][" + std::to_string(r.begin) + "," +
               std::to_string(r.end) + ")";
      };
      size_t n = std::min<size_t>(DumpTrace, trace->instructions().size());
      for (size_t i = 0; i < n; ++i) {
        const perf::Instruction &inst = trace->instructions()[i];
        llvm::errs() << i << " S" << inst.stmt << " " << perf::opKindName(inst.op) << " "
                     << nki::engineName(inst.engine) << " p=" << inst.partitions << " n=" << inst.freeElems
                     << " bytes=" << inst.bytes << " bpp=" << inst.bytesPerPartition << " reads:";
        for (const perf::Region &r : trace->reads(inst)) llvm::errs() << " " << region(r);
        llvm::errs() << " writes:";
        for (const perf::Region &r : trace->writes(inst)) llvm::errs() << " " << region(r);
        llvm::errs() << "\n";
      }
    }
    // The neuron backend's measurement keeps its runs' spread for the output.
    std::optional<profile::NeuronMeasurement> measured;
    auto estimate = [&]() -> llvm::Expected<perf::KernelEstimate> {
      if (!neuron) return (*backend)->estimate(k, specs);
      auto m = neuron->measure(k, specs);
      if (!m) return m.takeError();
      perf::KernelEstimate e;
      e.profile = m->profile;
      measured = std::move(*m);
      return e;
    }();
    if (!estimate) return reportError(estimate.takeError());
    const perf::Profile &p = estimate->profile;
    const perf::SimulationResult &sim = estimate->simulation;
    if (p.isLowerBound())
      llvm::errs() << "warning: kernel '" << k.name << "': the estimate is a " << p.lowerBoundNote()
                   << " (listed in the profile)\n";
    if (!Timeline.empty()) {
      if (llvm::Error err =
              syntax::writeFileAtomically(Timeline, perf::renderTimeline(sim, k.name, (*backend)->hardware().backend)))
        return reportError(std::move(err));
      llvm::errs() << "wrote the simulated timeline of '" << k.name << "' to " << Timeline
                   << (sim.scheduleTruncated ? " (truncated)" : "") << "\n";
    }
    double totalNs = 0;
    for (const perf::StatementCost &s : sim.statements) totalNs += s.engineNs + s.dmaNs;
    size_t shown = std::min<size_t>(Top, sim.statements.size());

    if (Format.format == OutputFormat::Json) {
      nlohmann::ordered_json out = p.toJSON();
      out["kernel"] = k.name;
      out["file"] = file->source().path().str();
      out["target"] = (*backend)->hardware().name;
      if (!k.grid.empty()) out["grid"] = k.grid;
      if (!Inputs.caseName.empty()) out["case"] = Inputs.caseName.getValue();
      if (measured) {
        out["runs"] = measured->latenciesMs;
        out["latency_min_ms"] = measured->minMs;
        out["latency_median_ms"] = measured->medianMs;
        out["latency_max_ms"] = measured->maxMs;
        out["unreported"] = measured->unreported;
      } else {
        out["instructions"] = estimate->instructions;
      }
      if (peak) {
        out["roofline"] = {{"problem", problem},
                           {"peak_ms", peak->peakMs},
                           {"bound", std::string(perf::rooflineBoundName(peak->bound))},
                           {"percent_of_peak", 100 * peak->fractionOfPeak(p.latency)}};
      }
      nlohmann::ordered_json stmts = nlohmann::ordered_json::array();
      for (size_t i = 0; i < shown; ++i) {
        const perf::StatementCost &s = sim.statements[i];
        std::string id("S");
        id += std::to_string(s.stmt);
        stmts.push_back({{"stmt", id},
                         {"line", s.line},
                         {"op", s.stmt >= 0 && size_t(s.stmt) < k.stmts.size() ? k.stmts[s.stmt].callee : ""},
                         {"instructions", s.instructions},
                         {"engine_ms", s.engineNs * 1e-6},
                         {"dma_ms", s.dmaNs * 1e-6}});
      }
      out["top_statements"] = stmts;
      all.push_back(out);
      continue;
    }

    llvm::raw_ostream &os = llvm::outs();
    if (!first) os << "\n";
    first = false;
    os << "kernel " << k.name << "  (" << file->source().path() << ", target " << (*backend)->hardware().name << ")\n";
    if (!k.grid.empty()) {
      unsigned cores = std::min<int64_t>((*backend)->hardware().launch.gridCores, k.gridSize());
      os << "grid: " << k.gridSize() << " instances [";
      for (size_t d = 0; d < k.grid.size(); ++d) os << (d ? ", " : "") << k.grid[d];
      os << "], " << (cores > 1 ? "spread over " + std::to_string(cores) + " cores, " : std::string("on one core, "))
         << "each core's one after the other; the profile is the whole grid's\n";
    }
    os << p.renderText();
    if (measured)
      os << renderNeuronMeasurement(*measured, neuron->options());
    else
      os << "model: " << estimate->instructions << " instructions, peak live SBUF " << sim.peakLiveSbufBytesPerPartition
         << " B/partition, trace " << llvm::format("%.1f", estimate->traceMs) << " ms + simulation "
         << llvm::format("%.1f", estimate->simulateMs) << " ms\n";
    if (peak)
      os << "roofline (" << problem << "): peak " << llvm::format("%.4f", peak->peakMs) << " ms, "
         << perf::rooflineBoundName(peak->bound) << " bound; estimate at "
         << llvm::format("%.1f", 100 * peak->fractionOfPeak(p.latency)) << "% of peak\n";
    if (shown) {
      os << "top statements by estimated time (engine + DMA time, overlapping):\n";
      for (size_t i = 0; i < shown; ++i) {
        const perf::StatementCost &s = sim.statements[i];
        double ns = s.engineNs + s.dmaNs;
        os << llvm::format("  S%-4d line %-4d %6.1f%%  %9.4f ms  %8llu instr  ", s.stmt, s.line,
                           totalNs > 0 ? 100 * ns / totalNs : 0.0, ns * 1e-6,
                           static_cast<unsigned long long>(s.instructions))
           << statementText(k, s.stmt) << "\n";
      }
    }
  }
  if (Format.format == OutputFormat::Json)
    llvm::outs() << (all.size() == 1 ? all.front().dump(2) : all.dump(2)) << "\n";
  return 0;
}

RegisterCommand Registration(ProfileCmd, runProfile);

} // namespace
} // namespace accelopt::cli
