#include "BackendOptions.h"

#include "NKI/Platform.h"
#include "Perf/Hardware.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace accelopt::cli {

// The neuron kind runs the Neuron SDK on the host, so it is registered by the
// CLI that offers --backend rather than listed in Backends.def for every user
// of the library (the language server keeps to the simulator).
static profile::BackendRegistration RegisterNeuron("neuron", profile::createNeuronBackend);

std::string kernelTarget(const cl::opt<std::string> &target, const std::vector<nki::Kernel> &kernels) {
  if (target.getNumOccurrences() || kernels.empty()) return target;
  std::optional<std::string> declared = nki::platformTarget(kernels.front());
  if (!declared) return target;
  std::vector<std::string> known = perf::knownTargets();
  return std::find(known.begin(), known.end(), *declared) != known.end() ? *declared : std::string(target);
}

BackendOptions::BackendOptions(cl::SubCommand &sub, bool ownTimeout)
    : kind("backend",
           cl::desc("Profile backend: sim (default: the performance model, estimates) or neuron (runs on this host's "
                    "NeuronDevice through the Neuron SDK: measurements)"),
           cl::value_desc("KIND"), cl::init("sim"), cl::sub(sub), cl::cat(category())),
      python("neuron-python",
             cl::desc("With --backend neuron: the Neuron SDK's Python (default $ACCELOPT_NEURON_PYTHON, else python3)"),
             cl::value_desc("PYTHON"), cl::sub(sub), cl::cat(category())),
      compileOptions("neuron-compile-opt", cl::desc("With --backend neuron: nki.baremetal's additional_compile_opt"),
                     cl::value_desc("FLAGS"), cl::sub(sub), cl::cat(category())),
      keepDir("neuron-keep",
              cl::desc("With --backend neuron: keep each run's harness, inputs, NEFF, traces and logs under DIR"),
              cl::value_desc("DIR"), cl::sub(sub), cl::cat(category())),
      runs("neuron-runs", cl::desc("With --backend neuron: timed runs per kernel (default 10)"), cl::init(10),
           cl::sub(sub), cl::cat(category())),
      warmup("neuron-warmup", cl::desc("With --backend neuron: untimed warm-up runs first (default 2)"), cl::init(2),
             cl::sub(sub), cl::cat(category())) {
  if (ownTimeout)
    timeout = std::make_unique<cl::opt<double>>(
        "timeout", cl::desc("With --backend neuron: limit of each SDK subprocess in seconds (default 1800)"),
        cl::init(0), cl::sub(sub), cl::cat(category()));
}

llvm::Expected<std::unique_ptr<profile::Backend>> BackendOptions::create(llvm::StringRef target,
                                                                         double timeoutSeconds) const {
  auto backend = profile::createBackend(kind, target);
  if (!backend) return backend.takeError();
  if (auto *neuron = dynamic_cast<profile::NeuronBackend *>(backend->get())) {
    profile::NeuronOptions o = neuron->options();
    if (!python.empty()) o.python = python;
    o.runs = runs;
    o.warmup = warmup;
    o.compileOptions = compileOptions;
    o.keepDir = keepDir;
    double limit = timeout ? double(*timeout) : timeoutSeconds;
    if (limit > 0) o.timeoutSeconds = limit;
    neuron->setOptions(std::move(o));
  }
  return backend;
}

std::string renderNeuronMeasurement(const profile::NeuronMeasurement &m, const profile::NeuronOptions &o) {
  std::string s =
      llvm::formatv("measured: {0} runs after {1} warm-ups (nki.baremetal, {2}), latency min {3:F4} / "
                    "median {4:F4} / max {5:F4} ms (neuron-profile total_time)\n",
                    m.latenciesMs.size(), o.warmup, m.sdk.empty() ? "?" : m.sdk, m.minMs, m.medianMs, m.maxMs)
          .str();
  if (!m.unreported.empty()) {
    s += "not reported by neuron-profile (shown as 0):";
    for (const std::string &f : m.unreported) s += " " + f;
    s += "\n";
  }
  return s;
}

} // namespace accelopt::cli
