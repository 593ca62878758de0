// The profile backend: what turns a kernel into a Profile. `profile`, `bench`,
// the search, batch and the language server ask a Backend, never the trace
// builder or the timing model, so a hardware backend plugs in beside the
// simulator (ARCHITECTURE.md, "Add a backend").
#pragma once

#include "NKI/FrontEnd.h"
#include "NKI/KernelIR.h"
#include "Perf/Hardware.h"
#include "Perf/Profile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace accelopt::profile {

class Backend {
public:
  virtual ~Backend();

  /// The label every profile it produces carries ("sim-trn1", "sim-trn2", "neuron").
  virtual llvm::StringRef name() const = 0;
  /// The target it profiles for (its limits, clocks and name).
  virtual const perf::HardwareDesc &hardware() const = 0;
  /// The profile of `kernel`, whose IR was built with the shapes of `inputs`,
  /// with whatever detail the backend has (the simulator: per-statement costs
  /// and its timings). Safe to call from several threads at once.
  virtual llvm::Expected<perf::KernelEstimate> estimate(const nki::Kernel &kernel,
                                                        const nki::InputSpecs &inputs) const = 0;

  /// estimate()'s profile alone.
  llvm::Expected<perf::Profile> profile(const nki::Kernel &kernel, const nki::InputSpecs &inputs) const;
};

/// Makes a backend for `target` ("trn1", "trn2" or a target JSON file).
using BackendFactory = std::function<llvm::Expected<std::unique_ptr<Backend>>(llvm::StringRef target)>;

/// The backend of kind `kind` ("sim": the performance model) for `target`;
/// an unknown kind is an error naming the known ones.
llvm::Expected<std::unique_ptr<Backend>> createBackend(llvm::StringRef kind, llvm::StringRef target);

/// The kinds createBackend knows, sorted.
std::vector<std::string> backendKinds();

/// Registers a backend kind from outside this library (a plugin, a test):
/// `static BackendRegistration R("kind", factory);`. The library's own kinds
/// are listed in Backends.def.
class BackendRegistration {
public:
  BackendRegistration(llvm::StringRef kind, BackendFactory factory);
};

} // namespace accelopt::profile
