// Concrete kernel arguments for one seed: random from the input specs, or the
// exact arrays a numpy reference draws (with its forward() outputs).
#pragma once

#include "Command.h"

#include "Interp/Interpreter.h"

namespace accelopt::cli {

struct SeededInputs {
  std::vector<interp::KernelArg> args;
  std::vector<interp::NDArray> reference; // forward() outputs when a reference ran
};

/// With a reference file (from --reference or the case), runs it for `seed`;
/// otherwise draws random inputs from the specs the front end used.
llvm::Expected<SeededInputs> inputsForSeed(const InputOptions &opts, const nki::Kernel &kernel, uint64_t seed,
                                           bool useReference);

/// As above for a numpy reference file given directly (bench runs cases, not --reference).
llvm::Expected<SeededInputs> referenceInputsForSeed(llvm::StringRef referencePath, const nki::InputSpecs *specs,
                                                    double timeoutSeconds, const nki::Kernel &kernel, uint64_t seed);

/// Loads <dir>/<param>.npy for every array parameter (scalars from the specs).
llvm::Expected<SeededInputs> inputsFromDir(const InputOptions &opts, const nki::Kernel &kernel, llvm::StringRef dir);

} // namespace accelopt::cli

namespace accelopt::cli {
/// Caps interpreter memory: `gib` GiB, or 75% of physical memory when 0.
void applyMemoryLimit(double gib);
} // namespace accelopt::cli
