// The first backend: the performance model. A kernel's IR becomes its
// instruction stream (Perf/TraceBuilder), the stream is simulated on the
// target's hardware description (Perf/TimingModel), and the simulation is
// summarised as a Profile labelled `sim-<target>`: an estimate.
#pragma once

#include "Perf/TimingModel.h"
#include "Profile/Backend.h"

#include <memory>
#include <mutex>
#include <vector>

namespace accelopt::profile {

class SimulatorBackend final : public Backend {
public:
  explicit SimulatorBackend(perf::HardwareDesc hw);
  ~SimulatorBackend() override;

  llvm::StringRef name() const override { return Hw.backend; }
  const perf::HardwareDesc &hardware() const override { return Hw; }
  /// Inputs are not read: the IR carries the shapes the trace needs.
  llvm::Expected<perf::KernelEstimate> estimate(const nki::Kernel &kernel,
                                                const nki::InputSpecs &inputs) const override;
  /// The same, for a kernel on its own.
  /// The whole launch grid's estimate (perf::combineGrid over its instances).
  llvm::Expected<perf::KernelEstimate> estimate(const nki::Kernel &kernel) const;
  /// Keep each simulation's schedule in the estimate (for `profile --timeline`).
  void recordSchedules(bool record) { RecordSchedules = record; }

private:
  llvm::Expected<perf::KernelEstimate> estimateInstance(const nki::Kernel &kernel) const;
  perf::HardwareDesc Hw;
  bool RecordSchedules = false;
  // Timing models keep scratch buffers between simulations; idle ones are
  // reused, one per concurrent caller.
  mutable std::mutex IdleLock;
  mutable std::vector<std::unique_ptr<perf::TimingModel>> IdleModels;
};

/// The simulator for `target` ("trn1", "trn2" or a target JSON file).
llvm::Expected<std::unique_ptr<Backend>> createSimulatorBackend(llvm::StringRef target);

} // namespace accelopt::profile
