// A NeuronCore description for the timing model. The numbers live in JSON
// data files (lib/Perf/targets/*.json, embedded at build time), each with its
// source in NKI.md; this header only gives them names and units.
#pragma once

#include "NKI/Types.h"
#include "Perf/Trace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accelopt::perf {

/// The compute engines with an in-order instruction queue each.
enum class ComputeEngine : uint8_t { Tensor, Vector, Scalar, GpSimd };
inline constexpr unsigned kNumComputeEngines = 4;
std::optional<ComputeEngine> toComputeEngine(nki::Engine e);
std::string_view computeEngineName(ComputeEngine e);

struct EngineParams {
  double clockGHz = 1;
  unsigned lanes = 128;
  double minIICycles = 64;         ///< MIN_II of the cost formulas
  double staticOverheadCycles = 0; ///< per-instruction issue/semaphore cost
};

struct MatmulParams {
  unsigned peRows = 128;
  unsigned peColumns = 128;
  double initLatencyCycles = 64;   ///< MM_INIT_LATENCY: floor of a matmul
  double fp32Factor = 4;           ///< fp32 operands take this many passes
  double fp32OneZeroSpeedup = 1;   ///< is_*_onezero hint on fp32 operands
  double fp32TransposeSpeedup = 1; ///< is_transpose on fp32 (NC-v3 transpose mode)
  double passOverheadCycles = 0;   ///< fixed cost of each pass over the PE array
};

/// Cost of one compute op class: cycles = max(MIN_II if usesMinII,
/// cyclesPerElement * N) + fixedCycles, on `engine` when the trace leaves
/// the engine to the compiler.
struct InstructionCost {
  ComputeEngine engine = ComputeEngine::Vector;
  /// Further engines (a bit per ComputeEngine) the cost holds on when the kernel names them (engine=),
  /// though the compiler does not place the op there by itself.
  uint8_t pinnedEngines = 0;
  double cyclesPerElement = 1;
  double fastCyclesPerElement = 1; ///< when the op's fast path holds
  /// For instructions flagged LanguageLevel (nl.* ops the compiler lowers).
  double languageCyclesPerElement = 1;
  bool usesMinII = true;
  double fixedCycles = 0;
  bool psumInputIsFastPath = false; ///< tensor_tensor: one PSUM + one SBUF input
  /// Further engines the compiler may place the op on when the kernel leaves
  /// the engine open (nki.isa engine=unknown); it takes the one that finishes
  /// the instruction first.
  std::vector<ComputeEngine> alternativeEngines;
  /// Whether the description costs the op on `e`: elsewhere its work is unmodelled (a lower bound).
  bool costsOn(ComputeEngine e) const {
    return e == engine || llvm::is_contained(alternativeEngines, e) || (pinnedEngines >> unsigned(e) & 1u);
  }
};

/// How a launch grid (`kernel[4, 2](...)`) runs.
struct LaunchParams {
  /// Physical NeuronCores the grid's instances are spread over (round-robin in row-major order); each
  /// core runs its instances one after the other.
  unsigned gridCores = 1;
};

/// How the compiler's instruction scheduler is modelled.
struct SchedulerParams {
  /// An engine instruction may run in an idle slot of its engine before
  /// instructions issued earlier in program order (list scheduling across
  /// independent iterations); false keeps each engine strictly in order.
  bool fillIdleSlots = false;
  /// Each sequential_range iteration starts after everything before it has
  /// finished. When false, iterations are ordered only by their data
  /// dependences (engines stay in order inside the loop, and the trace gives
  /// a sequential loop's tiles one buffer instead of one per iteration).
  bool sequentialBarrier = true;
  /// A new SBUF block waits until enough memory is free: held neither by
  /// live blocks nor by dead blocks whose last access is still running.
  bool sbufReuseWaits = false;
  /// The compiler hoists a load out of the loops its address does not depend on (one copy shared
  /// by their iterations, re-streamed from HBM when SBUF cannot hold it); see TraceBuilder.h.
  bool hoistInvariantLoads = false;
  /// The compiler computes an explicit TensorE transpose of loaded data once for the loops the
  /// load's address does not depend on; see TraceBuilder.h.
  bool reuseInvariantTransposes = false;
  /// The compiler computes an engine instruction whose operands do not change across a loop once for
  /// the loop (loop-invariant code motion); see TraceBuilder.h.
  bool hoistInvariantCompute = false;
  /// A tile loaded from an input that SBUF cannot keep beside the others until its last use is not
  /// kept: its load is sunk to each instruction that reads it, which loads the part it reads.
  bool sinkLoadsThatDoNotFit = false;
  /// An SBUF tensor written by engines only whose blocks are live one at a time has one buffer: a
  /// new block waits until the previous block's last access has finished.
  bool singleBufferEngineTiles = false;
  /// An elementwise VectorE instruction whose tile only the next engine instruction, elementwise
  /// on VectorE too, reads is fused into it: one instruction that reads the first one's inputs.
  bool fuseElementwiseChains = false;
};

struct DmaParams {
  unsigned queues = 16;
  double queueBytesPerNs = 17;
  double fixedLatencyNs = 1300;
  /// Each partition's descriptor costs as much as moving this many bytes:
  /// efficiency = bpp / (bpp + descriptorOverheadBytes).
  double descriptorOverheadBytes = 256;
  double hbmBytesPerNs = 410;

  double efficiency(double bytesPerPartition) const {
    return bytesPerPartition / (bytesPerPartition + descriptorOverheadBytes);
  }
};

struct MemoryParams {
  unsigned partitions = 128;
  uint64_t sbufBytesPerPartition = 192 * 1024;
  uint64_t sbufReservedBytesPerPartition = 0;
  unsigned psumBanks = 8;
  uint64_t psumBankBytes = 2048;

  uint64_t sbufUsableBytesPerPartition() const { return sbufBytesPerPartition - sbufReservedBytesPerPartition; }
};

/// Conventions of neuron-profile's counters (NKI.md §5).
struct ProfilerParams {
  double flopsPerMac = 2;
  double flopsPerFp32Mac = 4;
  /// fp32 TensorE reads of SBUF and writes of PSUM count this many times.
  double fp32TensorAccessFactor = 2;
};

struct HardwareDesc {
  std::string name;    ///< "trn1"
  std::string core;    ///< "NeuronCore-v2"
  std::string backend; ///< "sim-trn1": what a profile from this target reports
  std::array<EngineParams, kNumComputeEngines> engines;
  MatmulParams matmul;
  std::array<InstructionCost, kNumOpKinds> costs; ///< compute op kinds only
  DmaParams dma;
  MemoryParams memory;
  ProfilerParams profiler;
  SchedulerParams scheduler;
  LaunchParams launch;

  const EngineParams &engine(ComputeEngine e) const { return engines[static_cast<unsigned>(e)]; }
  const InstructionCost &cost(OpKind op) const { return costs[static_cast<unsigned>(op)]; }
  /// 2 * PE rows * PE columns * TensorE clock: what neuron-profile divides by
  /// for hfu_estimated_percent.
  double tensorPeakFlopsPerSecond() const;
  double hbmBytesPerSecond() const { return dma.hbmBytesPerNs * 1e9; }
};

/// Names of the built-in targets ("trn1", "trn2").
std::vector<std::string> knownTargets();

/// A built-in target by name, or a JSON file in the same format by path.
llvm::Expected<HardwareDesc> loadTarget(llvm::StringRef nameOrPath);

/// Parses a target description; `origin` names it in error messages.
llvm::Expected<HardwareDesc> parseTarget(llvm::StringRef jsonText, llvm::StringRef origin);

} // namespace accelopt::perf
