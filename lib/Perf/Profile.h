// The profile summary every backend produces: latency plus the neuron-profile
// summary fields AccelOpt records (NKI.md §5), and the backend that produced
// them so an estimate is never mistaken for a measurement.
#pragma once

#include "Perf/Hardware.h"
#include "Perf/TimingModel.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace accelopt::perf {

struct Profile {
  std::string backend; ///< "sim-trn1", "sim-trn2", "neuron"
  double latency = 0;  ///< ms

  // In the order AccelOpt lists profile fields to its agents.
  double hbmReadBytes = 0;
  double hbmWriteBytes = 0;
  double psumReadBytes = 0;
  double psumWriteBytes = 0;
  double sbufReadBytes = 0;
  double sbufWriteBytes = 0;
  double spillReloadBytes = 0;
  double spillSaveBytes = 0;
  double hardwareFlops = 0; ///< profiler convention: 4 FLOPs per fp32 MAC, padding counted
  double transposeFlops = 0;
  double peakFlopsBandwidthRatio = 0;
  double mmArithmeticIntensity = 0;
  double hfuEstimatedPercent = 0; ///< fraction in [0, 1], as the profiler reports it
  double scalarEngineActiveTimePercent = 0;
  double vectorEngineActiveTimePercent = 0;
  double gpsimdEngineActiveTimePercent = 0;

  /// Work the estimate leaves out (empty for a measurement): when there is
  /// any, latency and traffic are lower bounds, never silently (issue I.2).
  std::vector<UnmodelledWork> unmodelled;
  bool isLowerBound() const { return !unmodelled.empty(); }
  /// "lower bound: N unmodelled statements/sub-expressions", or "".
  std::string lowerBoundNote() const;

  /// The fields after `latency`, by their neuron-profile names, in order.
  struct Field {
    std::string_view name;
    double Profile::*member;
    bool integral; ///< printed without a fraction
  };
  static llvm::ArrayRef<Field> fields();

  /// An ordered JSON object: backend, latency, then fields() in order, then
  /// (only for a lower bound) "lower_bound": true and the "unmodelled" list.
  nlohmann::ordered_json toJSON() const;
  /// Reads a profile written by toJSON or a neuron backend; absent fields
  /// (neuron-profile omits some, e.g. hardware_flops without TensorE work) stay 0.
  static llvm::Expected<Profile> fromJSON(const nlohmann::json &json);
  /// "backend: sim-trn1" first (with "(lower bound ...)" when work is
  /// unmodelled), then one "name: value" line per field, then the
  /// unmodelled work.
  std::string renderText() const;

  bool isEstimate() const { return backend.rfind("sim-", 0) == 0; }
};

/// A kernel's estimate: the profile, the simulation behind it (the
/// simulator's; another backend leaves it empty), and timings.
struct KernelEstimate {
  Profile profile;
  SimulationResult simulation;
  size_t instructions = 0;
  double traceMs = 0;    ///< wall time to build the trace
  double simulateMs = 0; ///< wall time to simulate it
};

/// The profile of a simulated stream on `hw`.
Profile summarize(const SimulationResult &result, const HardwareDesc &hw);

} // namespace accelopt::perf
