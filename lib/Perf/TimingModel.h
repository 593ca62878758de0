// Simulates an instruction stream on a NeuronCore description.
//
// Each compute engine runs its instructions in stream order; DMAs are spread
// over the DMA queues and share the core's HBM bandwidth. An instruction
// starts once its engine is free and every earlier instruction it depends on
// (read-after-write, write-after-read, write-after-write on overlapping
// regions) has finished; sequential_range iteration boundaries are barriers.
// SBUF is finite: when the blocks live at a point exceed it, the block needed
// furthest in the future is spilled to HBM and reloaded when next used, as
// the compiler does; PSUM blocks wait for free banks.
#pragma once

#include "Perf/Hardware.h"
#include "Perf/Trace.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::perf {

/// Time one kernel statement cost, for attribution in reports and prompts.
struct StatementCost {
  int32_t stmt = -1;
  int32_t line = -1;
  uint64_t instructions = 0;
  double engineNs = 0; ///< compute-engine busy time
  double dmaNs = 0;    ///< DMA time at the full DMA bandwidth of the core
};

/// One instruction (or inserted spill transfer) as the simulation scheduled it.
struct ScheduledInstruction {
  double startNs = 0;
  double endNs = 0;
  OpKind op = OpKind::OtherCompute;
  /// The compute engine that ran it, or none for a DMA.
  std::optional<ComputeEngine> engine;
  uint32_t instruction = 0; ///< index in the trace; UINT32_MAX for compiler spill traffic
  int32_t stmt = -1;
  int32_t line = -1;
  uint32_t queues = 0; ///< DMA: queues the transfer is striped over
  uint64_t bytes = 0;  ///< DMA: bytes moved
};

struct SimulationResult {
  double makespanNs = 0;
  std::array<double, kNumComputeEngines> engineBusyNs{};
  std::array<uint64_t, kNumComputeEngines> engineInstructions{};
  double dmaQueueBusyNs = 0; ///< summed over queues
  uint64_t dmaTransfers = 0; ///< trace DMAs plus inserted spill traffic

  // Traffic in neuron-profile's accounting (NKI.md §5): DMAs count their
  // bytes, engine instructions the bytes per partition they access.
  uint64_t hbmReadBytes = 0;
  uint64_t hbmWriteBytes = 0;
  uint64_t psumReadBytes = 0;
  uint64_t psumWriteBytes = 0;
  uint64_t sbufReadBytes = 0;
  uint64_t sbufWriteBytes = 0;
  uint64_t spillSaveBytes = 0;
  uint64_t spillReloadBytes = 0;
  double hardwareFlops = 0;
  double transposeFlops = 0;

  /// Largest SBUF footprint per partition of the live blocks, before spilling.
  uint64_t peakLiveSbufBytesPerPartition = 0;
  /// PSUM blocks that found fewer free banks than they need (the kernel
  /// over-subscribes PSUM; the verifier should have flagged it).
  uint64_t psumOverflows = 0;
  /// Statements with at least one instruction, most expensive first.
  std::vector<StatementCost> statements;
  /// The schedule, when TimingModel::recordSchedule asked for it (at most
  /// kMaxScheduled entries; `scheduleTruncated` says when more ran).
  std::vector<ScheduledInstruction> schedule;
  bool scheduleTruncated = false;
  static constexpr size_t kMaxScheduled = 1'000'000;
  /// The trace's unmodelled work: when non-empty the makespan is a lower bound.
  std::vector<UnmodelledWork> unmodelled;

  double makespanMs() const { return makespanNs * 1e-6; }
};

/// A launch grid's run from its instances' simulations (`instances` in row-major order, or one
/// simulation standing for every instance when they trace alike): traffic and flops add up; instance i
/// runs on core i % hw.launch.gridCores after that core's earlier instances, and the makespan is the
/// busiest core's. Engine busy time is averaged over the cores used; the schedule is instance 0's.
SimulationResult combineGrid(std::vector<SimulationResult> instances, int64_t gridSize, const HardwareDesc &hw);

/// Engine cycles of one compute instruction by the NKI.md §3.5 formulas,
/// without the engine's static overhead. `readsPsum`: an input is in PSUM.
double computeCycles(const HardwareDesc &hw, const Instruction &inst, ComputeEngine engine, bool readsPsum);
/// Wall time of one compute instruction: cycles plus static overhead at the
/// engine clock.
double computeDurationNs(const HardwareDesc &hw, const Instruction &inst, ComputeEngine engine, bool readsPsum);
/// The engine a compute instruction runs on: its own, or the hardware
/// description's default for the op when the trace leaves it open.
std::optional<ComputeEngine> resolveEngine(const HardwareDesc &hw, const Instruction &inst);
/// Duration of one DMA alone on an idle core: fixed latency plus the transfer
/// striped over min(partitions, queues) queues, capped by HBM bandwidth.
double isolatedDmaNs(const HardwareDesc &hw, uint64_t bytes, uint32_t bytesPerPartition, unsigned partitions,
                     bool touchesHbm);

/// The schedule of `result` as Chrome trace-event JSON (Perfetto and
/// chrome://tracing open it): one track per compute engine and per DMA kind,
/// an "X" event per instruction with its statement id and source line.
std::string renderTimeline(const SimulationResult &result, llvm::StringRef kernelName, llvm::StringRef backend);

class TimingModel {
public:
  explicit TimingModel(HardwareDesc hw);
  ~TimingModel();
  TimingModel(TimingModel &&) noexcept;
  TimingModel &operator=(TimingModel &&) noexcept;

  const HardwareDesc &hardware() const { return Hw; }

  /// Simulates `trace`; errors name the first malformed instruction or tensor.
  /// Scratch buffers are kept between calls, so re-simulating is cheaper.
  llvm::Expected<SimulationResult> simulate(const Trace &trace);
  /// Whether simulate() records the schedule of every instruction (for a timeline).
  void recordSchedule(bool record) { RecordSchedule = record; }

private:
  struct Simulation;
  HardwareDesc Hw;
  std::unique_ptr<Simulation> Scratch;
  bool RecordSchedule = false;
};

} // namespace accelopt::perf
