#include "Profile/SimulatorBackend.h"

#include "Perf/TraceBuilder.h"

#include <chrono>

namespace accelopt::profile {

namespace {

double elapsedMs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

SimulatorBackend::SimulatorBackend(perf::HardwareDesc hw) : Hw(std::move(hw)) {}
SimulatorBackend::~SimulatorBackend() = default;

llvm::Expected<perf::KernelEstimate> SimulatorBackend::estimate(const nki::Kernel &kernel,
                                                                const nki::InputSpecs &) const {
  return estimate(kernel);
}

llvm::Expected<perf::KernelEstimate> SimulatorBackend::estimate(const nki::Kernel &kernel) const {
  auto first = estimateInstance(kernel);
  if (!first || kernel.gridSize() <= 1) return first;
  // A launch grid: every instance's work (each instance's own IR when its trace reads the program id).
  perf::KernelEstimate e = std::move(*first);
  std::vector<perf::SimulationResult> sims;
  sims.push_back(std::move(e.simulation));
  if (kernel.gridInstances)
    for (const nki::Kernel &instance : *kernel.gridInstances) {
      auto other = estimateInstance(instance);
      if (!other) return other.takeError();
      e.instructions += other->instructions;
      e.traceMs += other->traceMs;
      e.simulateMs += other->simulateMs;
      sims.push_back(std::move(other->simulation));
    }
  else
    e.instructions *= size_t(kernel.gridSize());
  e.simulation = perf::combineGrid(std::move(sims), kernel.gridSize(), Hw);
  e.profile = perf::summarize(e.simulation, Hw);
  return e;
}

llvm::Expected<perf::KernelEstimate> SimulatorBackend::estimateInstance(const nki::Kernel &kernel) const {
  perf::KernelEstimate e;
  auto start = std::chrono::steady_clock::now();
  auto trace = perf::buildTrace(kernel, perf::traceOptionsFor(Hw));
  if (!trace) return trace.takeError();
  e.traceMs = elapsedMs(start);
  e.instructions = trace->instructions().size();

  std::unique_ptr<perf::TimingModel> model;
  {
    std::lock_guard<std::mutex> guard(IdleLock);
    if (!IdleModels.empty()) {
      model = std::move(IdleModels.back());
      IdleModels.pop_back();
    }
  }
  if (!model) model = std::make_unique<perf::TimingModel>(Hw);
  model->recordSchedule(RecordSchedules);
  start = std::chrono::steady_clock::now();
  auto sim = model->simulate(*trace);
  e.simulateMs = elapsedMs(start);
  {
    std::lock_guard<std::mutex> guard(IdleLock);
    IdleModels.push_back(std::move(model));
  }
  if (!sim) return sim.takeError();
  e.simulation = std::move(*sim);
  e.profile = perf::summarize(e.simulation, Hw);
  return e;
}

llvm::Expected<std::unique_ptr<Backend>> createSimulatorBackend(llvm::StringRef target) {
  auto hw = perf::loadTarget(target);
  if (!hw) return hw.takeError();
  return std::make_unique<SimulatorBackend>(std::move(*hw));
}

} // namespace accelopt::profile
