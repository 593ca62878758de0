// Where kernel input shapes come from: --inputs text, a numpy reference file
// (run with a Python that has numpy), or a case of a suite manifest.
#pragma once

#include "NKI/FrontEnd.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace accelopt::nki {

/// The Python used to run numpy references: $ACCELOPT_PYTHON, else /usr/bin/python3.
std::string pythonForReferences();

/// Runs `program` and waits at most `seconds` for it (killed after that);
/// returns its exit status, -2 for a crash, -1 when it did not start, and sets
/// `timedOut`. Thread-safe (no signals).
int runWithTimeout(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                   llvm::ArrayRef<llvm::Optional<llvm::StringRef>> redirects, double seconds, std::string &execError,
                   bool &timedOut);

/// How long a numpy reference may run when the caller sets no limit (seconds).
inline constexpr double DefaultReferenceTimeoutSeconds = 300;

/// Runs the reference's get_inputs() and transform_to_nki_inputs() and names the
/// results after `paramNames` (the kernel's parameters, in order). The Python
/// process is stopped after `timeoutSeconds` (0: DefaultReferenceTimeoutSeconds).
llvm::Expected<InputSpecs> inputsFromReference(llvm::StringRef referencePath,
                                               const std::vector<std::string> &paramNames, double timeoutSeconds = 0);

/// One case of a suite manifest (nkibench/manifest.json).
struct SuiteCase {
  std::string name;
  std::string problem;
  std::string kernelPath;                             // absolute
  std::string referencePath;                          // absolute, may be empty
  InputSpecs inputs;                                  // with `init` filled in
  std::vector<std::pair<std::string, double>> values; // M, N, K, ...
  std::string pair, variant;                          // direction pairs
};

struct SuiteLocation {
  std::string manifestPath; // "" = default: $ACCELOPT_MANIFEST or <repo>/nkibench/manifest.json
  std::string nkibenchRoot; // "" = default: $ACCELOPT_NKIBENCH or the manifest's nkibench_default_root
};

llvm::Expected<std::vector<SuiteCase>> loadSuite(const SuiteLocation &where);
llvm::Expected<SuiteCase> findCase(const SuiteLocation &where, llvm::StringRef name);

} // namespace accelopt::nki

namespace accelopt::nki {

/// Files a numpy reference produced for one seed: the kernel's inputs (after
/// transform_to_nki_inputs) and forward()'s outputs, as .npy files in `dir`.
struct ReferenceData {
  std::vector<std::string> inputFiles;        // "" for scalar inputs
  std::vector<std::optional<double>> scalars; // value for scalar inputs
  std::vector<std::string> literals;          // other non-array inputs as Python literals ("" for the rest)
  std::vector<std::string> outputFiles;       // forward() results, in order
};

/// Runs the reference (np.random.seed(seed); get_inputs; forward; transforms) and
/// writes the arrays into `dir`; stopped after `timeoutSeconds` (0: the default).
llvm::Expected<ReferenceData> runReference(llvm::StringRef referencePath, uint64_t seed, llvm::StringRef dir,
                                           double timeoutSeconds = 0);

} // namespace accelopt::nki
