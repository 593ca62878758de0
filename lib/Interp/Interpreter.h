// Executes NKI kernels on the CPU: a Python-subset evaluator for trace-time
// code plus the NKI runtime (HBM/SBUF/PSUM tensors, indexing, masks, the op
// table's numerics). It is the numeric check of every candidate.
#pragma once

#include "Interp/NDArray.h"
#include "NKI/FrontEnd.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace accelopt::interp {

/// One kernel argument: an HBM array or a Python scalar.
struct KernelArg {
  std::string name;
  std::optional<NDArray> array;
  double scalar = 0;
  bool isInt = false;  // the scalar is a Python int (trip counts, slice bounds)
  std::string literal; // non-empty: a Python literal the kernel's module evaluates (nki::InputSpec::literal)
};

struct RunOptions {
  double timeoutSeconds = 0;     // 0: no limit
  bool detectRaces = true;       // affine_range iterations writing the same element
  bool detectUninitReads = true; // reads of never-written SBUF/PSUM/HBM elements
};

struct RunStats {
  double seconds = 0;
  uint64_t instructions = 0; // NKI calls executed
  double matmulFlops = 0;    // 2*M*N*K of every nc_matmul
};

struct RunResult {
  std::vector<NDArray> outputs;      // the returned HBM tensors, in order
  std::vector<std::string> warnings; // "file:line:col: warning: ..." lines
  RunStats stats;
};

/// Runs `kernel` (from `file`) on `args` (matched to the parameters by name,
/// else by position). Runtime problems — out-of-bounds indices, shape
/// mismatches, reads of never-written memory, races in affine_range, timeouts,
/// the memory cap — are errors with "file:line:col: error: ..." text.
llvm::Expected<RunResult> runKernel(const nki::KernelFile &file, const nki::Kernel &kernel, std::vector<KernelArg> args,
                                    const RunOptions &options = {});

/// Seeded random arguments following each spec's `init` ("normal(0,1)",
/// "uniform(lo,hi)", "randint(lo,hi)", "abs(D)", "exp(D)", "const(c)",
/// "identity"; default normal(0,1)).
llvm::Expected<std::vector<KernelArg>> makeRandomInputs(const nki::InputSpecs &specs, uint64_t seed);

/// Deep copies of `args`: runKernel consumes its arguments, and callers run the
/// same inputs on several candidates.
llvm::Expected<std::vector<KernelArg>> cloneArgs(const std::vector<KernelArg> &args);

} // namespace accelopt::interp
