// --backend and the neuron backend's options, shared by the subcommands that
// profile or run kernels (profile, verify, optimize, bench).
#pragma once

#include "Command.h"

#include "Profile/Backend.h"
#include "Profile/NeuronBackend.h"

#include <memory>

namespace accelopt::cli {

/// --backend sim|neuron, --neuron-python, --neuron-runs, --neuron-warmup,
/// --neuron-compile-opt, --neuron-keep and (unless the subcommand has its own)
/// --timeout. Define it in the same translation unit as its SubCommand.
struct BackendOptions {
  cl::opt<std::string> kind, python, compileOptions, keepDir;
  cl::opt<unsigned> runs, warmup;
  std::unique_ptr<cl::opt<double>> timeout; ///< null when the subcommand declares --timeout itself

  /// `ownTimeout`: declare --timeout (limit of each SDK subprocess).
  BackendOptions(cl::SubCommand &sub, bool ownTimeout);

  bool neuron() const { return kind == "neuron"; }
  /// The backend of --backend for `target`. `timeoutSeconds` (0: the
  /// backend's default) limits each SDK subprocess when this group has no --timeout.
  llvm::Expected<std::unique_ptr<profile::Backend>> create(llvm::StringRef target, double timeoutSeconds = 0) const;
};

/// The target a subcommand uses: `--target` when given, else the built-in target the first kernel's
/// decorator names (`@nki.jit(platform_target='trn2')`), else `--target`'s default (trn1).
std::string kernelTarget(const cl::opt<std::string> &target, const std::vector<nki::Kernel> &kernels);

/// The measurement details a profile of the neuron backend adds to `profile`'s
/// text output: runs, latency min/median/max, platform, unreported fields.
std::string renderNeuronMeasurement(const profile::NeuronMeasurement &m, const profile::NeuronOptions &o);

} // namespace accelopt::cli
