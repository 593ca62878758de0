// The hardware backend: runs a kernel on the host's NeuronDevice through the
// Neuron SDK and reads the profiler's summary. Each measurement writes a work
// directory with the kernel, its inputs (.npy, from the same seeded input
// specs the simulator path uses) and a Python harness (NeuronHarness.py), runs
// the harness with the SDK's Python (nki.baremetal: warm-ups, then timed runs
// each saving a NEFF and an NTFF trace), reads every trace with
// `neuron-profile view --output-format summary-json -n NEFF -s NTFF`, and
// collects the outputs. Profiles are labelled `neuron-trn1` / `neuron-trn2`
// after the device: measurements, never estimates.
#pragma once

#include "Profile/Backend.h"

#include "Interp/Interpreter.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace accelopt::profile {

struct NeuronOptions {
  /// The Neuron SDK's Python (the venv with neuronx-cc): --neuron-python, else
  /// $ACCELOPT_NEURON_PYTHON, else `python3` on PATH.
  std::string python;
  unsigned warmup = 2; ///< untimed runs first (compilation caches, device warm-up)
  unsigned runs = 10;  ///< timed runs: latency min / median / max over them
  /// Limit of each subprocess (the harness, each neuron-profile view), seconds.
  double timeoutSeconds = 1800;
  /// Passed as nki.baremetal's additional_compile_opt when not empty.
  std::string compileOptions;
  /// Keep each run's work directory (harness, inputs, NEFF, NTFFs, summaries) under
  /// this directory; "" = a temporary directory, removed afterwards.
  std::string keepDir;

  /// Defaults with `python` from $ACCELOPT_NEURON_PYTHON or "python3".
  static NeuronOptions fromEnvironment();
};

/// One kernel measured on the device.
struct NeuronMeasurement {
  /// The summary of the median run; latency is the median latency (ms).
  perf::Profile profile;
  std::vector<double> latenciesMs; ///< neuron-profile total_time of each timed run, in run order
  double minMs = 0, medianMs = 0, maxMs = 0;
  /// Profile::fields() the summary JSON did not report (left 0), e.g.
  /// hardware_flops for a kernel without TensorE work.
  std::vector<std::string> unreported;
  std::string platform; ///< "trn1" / "trn2" as the harness read it from the host, or the target's when unknown
  std::string sdk;      ///< the Python package that ran it: "neuronxcc.nki" or "nki"
  std::vector<interp::NDArray> outputs; ///< of the first run
};

class NeuronBackend final : public Backend {
public:
  NeuronBackend(perf::HardwareDesc hw, NeuronOptions options);

  /// "neuron-<target>" until a measurement reads the device's family.
  llvm::StringRef name() const override { return Label; }
  const perf::HardwareDesc &hardware() const override { return Hw; }
  /// Measures the kernel on the inputs of AccelOpt's first seed drawn from
  /// `inputs`. Runs on the device one at a time (concurrent runs would
  /// disturb each other's timing).
  llvm::Expected<perf::KernelEstimate> estimate(const nki::Kernel &kernel,
                                                const nki::InputSpecs &inputs) const override;

  /// measure() on the inputs of AccelOpt's first seed drawn from `inputs`.
  llvm::Expected<NeuronMeasurement> measure(const nki::Kernel &kernel, const nki::InputSpecs &inputs) const;
  /// Compiles, runs and profiles `kernel` on `args` (one per parameter).
  llvm::Expected<NeuronMeasurement> measure(const nki::Kernel &kernel,
                                            const std::vector<interp::KernelArg> &args) const;

  /// Whether the SDK is there (the Python, its nki package, neuron-profile):
  /// an error saying what is missing and how to install it.
  llvm::Error checkSdk() const;

  const NeuronOptions &options() const { return Options; }
  void setOptions(NeuronOptions options) { Options = std::move(options); }

private:
  /// The Python and neuron-profile to run (`probeImport`: also import the SDK's nki).
  llvm::Expected<std::pair<std::string, std::string>> findTools(bool probeImport) const;

  perf::HardwareDesc Hw;
  NeuronOptions Options;
  std::string Label;
  mutable std::mutex DeviceLock;
  mutable std::atomic<bool> SdkFound{false};
};

/// The neuron backend for `target` ("trn1", "trn2" or a target JSON file),
/// options from the environment.
llvm::Expected<std::unique_ptr<Backend>> createNeuronBackend(llvm::StringRef target);

/// Reads `neuron-profile view --output-format summary-json` output (log lines
/// before the JSON are skipped): the first entry's total_time (seconds) becomes
/// latency (ms), Profile::fields() are copied by name, and `unreported` lists
/// the fields it lacks. `source` names the output in errors.
llvm::Expected<perf::Profile> parseNeuronSummary(llvm::StringRef text, llvm::StringRef source,
                                                 std::vector<std::string> *unreported = nullptr);

} // namespace accelopt::profile
