// Trace mode from the kernel IR: the instruction stream a kernel issues, built
// by walking its loop nest with concrete trip counts and emitting, for every
// statement instance, the instructions its NKI op implies (NKI.md §1.8, §3.5),
// with tile shapes, dtypes, DMA sizes and the memory regions that order them.
//
// Each access of the IR is affine in the loop counters, so every region is
// compiled once into affine forms (block index, first byte) and evaluated per
// instance; building a trace costs a few additions per region.
#pragma once

#include "NKI/KernelIR.h"
#include "Perf/Trace.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace accelopt::perf {

struct HardwareDesc;

struct TraceBuildOptions {
  /// Refuse streams longer than this (a runaway loop nest), with an error.
  uint64_t maxInstructions = 20'000'000;
  /// Trace a load of an input nothing writes, into a tile nothing else writes, once for all
  /// iterations of each enclosing loop its address does not depend on: the iterations share the
  /// tile, as the compiler's loop-invariant load hoisting makes them (target scheduler section).
  bool hoistInvariantLoads = false;
  /// The SBUF bytes per partition hoisting may fill: a load is hoisted out of a loop only while the
  /// copies the hoisted tile then needs, plus what is live in one iteration of the loop at its peak
  /// (tensors live across the loop, loads hoisted before, the body's tiles from first to last access),
  /// take at most this many; a reused transpose's copies take at most this many.
  uint64_t hoistBytesPerPartition = 0;
  /// Trace an explicit TensorE transpose (nc_transpose, nc_matmul with is_transpose) of a tile
  /// loaded from an input nothing writes once for all iterations of each enclosing loop the load's
  /// address does not depend on; the iterations read that one transposed copy (the compiler reuses
  /// the transpose of a loop-invariant operand, target scheduler section).
  bool reuseInvariantTransposes = false;
  /// Trace an engine instruction (not a DMA, matmul or transpose) whose operands are the same in
  /// every iteration of its affine loop once for that loop, and so on outward while it stays
  /// invariant (never out of a sequential_range), when its result, which nothing else writes, is read
  /// only inside the loop and its copies fit SBUF beside the operands they are computed from and the
  /// loop body's other tiles (the
  /// compiler's loop-invariant code motion, target scheduler section).
  bool hoistInvariantCompute = false;
};

/// The options that make the trace what `hw`'s compiler issues.
TraceBuildOptions traceOptionsFor(const HardwareDesc &hw);

/// Builds the instruction stream of `kernel`. Fails with "needs input shapes"
/// when a trip count or tensor shape is unknown, and when the stream would
/// exceed `options.maxInstructions`.
llvm::Expected<Trace> buildTrace(const nki::Kernel &kernel, const TraceBuildOptions &options = {});

/// Contiguous bytes per partition of an HBM access (the DMA descriptor size,
/// NKI.md §3.4): the innermost run of unit-stride free-axis indices, widened
/// outward while a dimension is covered entirely. `tensor` is the accessed
/// tensor (its shape must be known).
uint64_t contiguousBytesPerPartition(const nki::Tensor &tensor, const nki::Access &access);

} // namespace accelopt::perf
