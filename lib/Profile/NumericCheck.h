// The numeric check of a candidate kernel against the original: the original
// runs once per seed on the interpreter (AccelOpt's seeds 0, 21, 42, ...) and
// its outputs are kept; each candidate runs on copies of the same inputs and
// every output must be allclose(atol, rtol) to the original's, and, where a
// numpy reference gave outputs, within the relative L2 bound of them. Search,
// batch and `verify` ask this service and word its verdicts alike.
#pragma once

#include "Interp/Compare.h"
#include "Interp/Interpreter.h"
#include "NKI/FrontEnd.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::profile {

/// AccelOpt's seeds (0, 21, 42, 63, 84, ...): the i-th of them.
inline uint64_t accelOptSeed(unsigned i) { return 21u * i; }

/// The original kernel failed on the interpreter while its outputs were captured
/// (as opposed to its inputs not being made). The message is the interpreter's.
class OriginalFailedError : public llvm::ErrorInfo<OriginalFailedError> {
public:
  static char ID;
  explicit OriginalFailedError(std::string message) : Message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << Message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string Message;
};

/// The original kernel's run on one seed: its inputs (copied for every
/// candidate run), its outputs, and the numpy reference's outputs when given.
struct SeedBaseline {
  uint64_t seed = 0;
  std::vector<interp::KernelArg> inputs;
  std::vector<interp::NDArray> outputs;
  std::vector<interp::NDArray> reference;
};

/// Runs the original `kernel` of `file` on `inputs` (seed `seed`). Fails with
/// OriginalFailedError when the kernel fails on the interpreter.
llvm::Expected<SeedBaseline> captureSeed(const nki::KernelFile &file, const nki::Kernel &kernel, uint64_t seed,
                                         std::vector<interp::KernelArg> inputs, std::vector<interp::NDArray> reference,
                                         const interp::RunOptions &run);

/// `base` widened to the precision of a kernel whose narrowest floating-point dtype has machine epsilon
/// `epsilon` (interp::dtypeEpsilon): atol and the relative L2 bound at least epsilon, rtol at least
/// 2 epsilon (each side's result may carry one more rounding at that precision than the other's, in
/// another order). An fp32 kernel (epsilon 2^-23) keeps `base`: AccelOpt's bound is far above it.
interp::Tolerance widenTolerance(interp::Tolerance base, double epsilon);

/// The machine epsilon of the narrowest floating-point dtype `original` holds values in: its arguments,
/// its outputs and the intermediate tiles of its trace (0 when it has none).
double narrowestEpsilon(const nki::Kernel &original);

/// The comparison bound of candidates of `original` (and of `original` against a numpy reference):
/// widenTolerance(base, narrowestEpsilon(original)). Derived from the original kernel only, never the
/// candidate; `verify`, `run`, `migrate`, `batch` and the search compare with it (their options'
/// tolerance is this bound).
inline interp::Tolerance toleranceFor(const nki::Kernel &original, const interp::Tolerance &base) {
  return widenTolerance(base, narrowestEpsilon(original));
}

struct NumericCheckOptions {
  NumericCheckOptions() = default;
  NumericCheckOptions(const interp::Tolerance &tolerance, double timeoutSeconds) : tolerance(tolerance) {
    run.timeoutSeconds = timeoutSeconds;
  }

  interp::Tolerance tolerance;
  interp::RunOptions run;
  /// Stop at the first output that differs (a verdict is all the search and
  /// batch need); otherwise compare every output, and each with the reference
  /// (`verify`'s full report).
  bool stopAtFirstDifference = true;
};

/// One output of one seed.
struct OutputCheck {
  size_t index = 0;
  std::vector<int64_t> candidateShape, originalShape;
  int64_t elements = 0;          ///< of the original's output
  interp::Comparison vsOriginal; ///< candidate vs original
  /// Against the numpy reference (relative L2 under tolerance.relL2), when it gave this output.
  std::optional<interp::Comparison> originalVsReference, candidateVsReference;
  bool originalMatchesReference = true, candidateMatchesReference = true;

  bool equal() const {
    return vsOriginal.shapesMatch && vsOriginal.allclose && originalMatchesReference && candidateMatchesReference;
  }
};

/// The candidate on one seed.
struct SeedCheck {
  uint64_t seed = 0;
  enum Outcome {
    Compared,        ///< it ran and returned as many outputs as the original: see `outputs`
    InputsFailed,    ///< its inputs could not be copied (memory limit)
    CandidateFailed, ///< it failed on the interpreter
    OutputCount,     ///< it returned another number of outputs
  } outcome = Compared;
  std::string error; ///< InputsFailed, CandidateFailed: the message
  size_t candidateOutputs = 0, originalOutputs = 0;
  std::vector<OutputCheck> outputs;

  bool equal() const;
  /// "" when equal; otherwise the first difference in one line, e.g. "output 0
  /// differs from the original's (seed 21, max |error| 5.000E-01 at [3, 17])".
  std::string firstDifference() const;
  /// `verify`'s report of this seed: one line per output and per reference comparison.
  void render(llvm::raw_ostream &os, const interp::Tolerance &tolerance) const;
};

/// Copies of `baseline`'s inputs for the candidate `kernel`: `binding[i]` is the
/// baseline input its parameter i gets (renamed to it); empty: as they are.
llvm::Expected<std::vector<interp::KernelArg>> candidateInputs(const SeedBaseline &baseline, const nki::Kernel &kernel,
                                                               llvm::ArrayRef<size_t> binding = {});

/// Runs the candidate on `baseline`'s inputs and compares. `binding[i]` is the
/// baseline input the candidate's parameter i gets (renamed to it); empty: the
/// inputs as they are (the candidate has the original's parameters).
SeedCheck checkSeed(const SeedBaseline &baseline, const nki::KernelFile &file, const nki::Kernel &kernel,
                    const NumericCheckOptions &options, llvm::ArrayRef<size_t> binding = {});

/// Compares outputs the candidate produced elsewhere (e.g. on a NeuronDevice)
/// with `baseline`'s, as checkSeed does after running it.
SeedCheck compareOutputs(const SeedBaseline &baseline, const std::vector<interp::NDArray> &candidateOutputs,
                         const NumericCheckOptions &options);

/// The original's outputs on the first `seeds` of AccelOpt's seeds, captured
/// once, against which any number of candidates are checked (from several
/// threads at once).
class NumericBaseline {
public:
  /// Random inputs from `specs` on each seed. Fails when an input cannot be made
  /// (the error as is) or the original fails (OriginalFailedError).
  static llvm::Expected<NumericBaseline> capture(const nki::KernelFile &file, const nki::Kernel &kernel,
                                                 const nki::InputSpecs &specs, unsigned seeds,
                                                 const interp::RunOptions &run);

  size_t seeds() const { return Seeds.size(); }
  /// The original's run on the i-th seed (its inputs, outputs and reference).
  const SeedBaseline &seed(size_t i) const { return Seeds[i]; }
  /// The candidate on every seed, stopping at the first seed that is not equal.
  /// The result's last element is that seed (all equal when it is equal).
  std::vector<SeedCheck> check(const nki::KernelFile &file, const nki::Kernel &kernel,
                               const NumericCheckOptions &options) const;
  /// check()'s verdict: "" when equal on every seed, else the first difference.
  std::string firstDifference(const nki::KernelFile &file, const nki::Kernel &kernel,
                              const NumericCheckOptions &options) const;

private:
  std::vector<SeedBaseline> Seeds;
};

} // namespace accelopt::profile
