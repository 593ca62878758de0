// Numerics of NKI instructions on 2-D tiles [P partitions x F free elements].
//
// Every function computes in fp32 and writes fp32; rounding the result to the
// destination's dtype is the caller's job (DTypeRounding.h). Shapes are checked
// and a mismatch is an llvm::Error naming the instruction, never a crash; the
// operation dispatch happens once per call (or per row), never per element.
// Outputs may alias inputs only element-for-element (same tile, same layout).
#pragma once

#include "Interp/NDArray.h"
#include "NKI/OpTable.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace accelopt::interp {

// --- Operators -------------------------------------------------------------------

/// Binary ALU operators of the Vector/Scalar/GpSimd engines, declared with the op table (the op
/// table's rows name them). Comparisons and
/// logical operators produce 1.0 / 0.0 and treat any non-zero value (NaN too) as
/// true. Bitwise operators and shifts act on the value converted to int32
/// (truncated toward zero, saturated, NaN -> 0); shifts move the 32-bit pattern,
/// right_shift is logical (NKI has no arithmetic right shift), and a shift count
/// outside [0, 31] yields 0. maximum/minimum propagate NaN (as numpy).
using nki::AluOp;
using nki::kAluOpCount;

/// Activation functions of the Scalar engine, declared with the op table.
using nki::ActFunc;
using nki::kActFuncCount;

/// Resolves the spelling a kernel passes as an operator argument: "nl.add",
/// "np.add", "nki.language.add", "numpy.add" or a bare "add". numpy's reduction
/// names mean the elementwise operator here ("np.max" -> Maximum, as in
/// `nl.loop_reduce(op=np.max)`). Only numpy's own functions resolve with "np.".
std::optional<AluOp> aluOpFromName(std::string_view name);
/// Same for activation functions: "nl.exp", "np.exp", "nl.copy", "nl.identity", ...
std::optional<ActFunc> actFuncFromName(std::string_view name);
/// Canonical spelling, "nl.add" / "nl.exp".
std::string_view name(AluOp op);
std::string_view name(ActFunc func);

/// One element; the tile functions below apply exactly this per element.
float applyAlu(AluOp op, float a, float b);
float applyActivation(ActFunc func, float x);

// --- Operands ----------------------------------------------------------------------

/// A per-partition operand: one fp32 constant for every partition, or a (P, 1)
/// column read row by row (a (1, 1) column broadcasts like a constant).
class PerPartition {
public:
  PerPartition(float constant) : Constant(constant) {}
  PerPartition(ConstTile column) : Column(column) {}
  PerPartition(Tile column) : Column(ConstTile(column)) {}

  /// The activation bias meaning "no bias": adding -0.0 leaves every value,
  /// including -0.0, unchanged.
  static PerPartition noBias() { return PerPartition(-0.0f); }

  float at(int64_t row) const {
    if (!Column) return Constant;
    return Column->rows == 1 ? Column->data[0] : Column->at(row, 0);
  }
  /// Error unless this is a constant or a (partitions, 1) / (1, 1) column.
  llvm::Error checkFor(int64_t partitions, std::string_view instruction, std::string_view role) const;

private:
  float Constant = 0.0f;
  std::optional<ConstTile> Column;
};

/// One operator of nisa.tensor_scalar: `data op operand`, or `operand op data`
/// when `reverse` is set.
struct ScalarStep {
  AluOp op;
  PerPartition operand;
  bool reverse = false;
};

// --- Instructions ------------------------------------------------------------------

/// nc_matmul: out[M, N] = stationary[K, M]^T . moving[K, N] (or += with
/// `accumulate`, as a PSUM accumulation group does), in fp32 with OpenBLAS.
/// Strided tiles are passed to BLAS as leading dimensions, never copied. `out`
/// must not overlap the inputs.
llvm::Error matmul(Tile out, ConstTile stationary, ConstTile moving, bool accumulate);

/// Elementwise out = a op b. Each operand is (P, F), (P, 1), (1, F) or (1, 1) and
/// broadcasts to the output tile (P, F).
llvm::Error applyBinary(AluOp op, Tile out, ConstTile a, ConstTile b);
llvm::Error applyBinary(AluOp op, Tile out, ConstTile a, float b);
llvm::Error applyBinary(AluOp op, Tile out, float a, ConstTile b);

/// nisa.tensor_scalar: out = (data op0 operand0) op1 operand1, each step optionally reversed.
llvm::Error tensorScalar(Tile out, ConstTile data, ScalarStep first, std::optional<ScalarStep> second = std::nullopt);

/// nisa.activation: out = func(data * scale + bias), multiply then add then the
/// function, in fp32. With `reduceSum` (a (P, 1) tile) also writes the sum of each
/// output row, as the fused add-reduce (activation_reduce) does.
llvm::Error activation(Tile out, ActFunc func, ConstTile data, PerPartition scale = 1.0f,
                       PerPartition bias = PerPartition::noBias(), std::optional<Tile> reduceSum = std::nullopt);

/// nisa.tensor_reduce along the free axis into a (P, 1) tile; `negate` multiplies
/// the result by -1. Legal ops: add, subtract, multiply, maximum, minimum and the
/// logical and bitwise and/or/xor. Subtract folds left (x0 - x1 - x2 ...);
/// add/multiply/maximum/minimum accumulate in 8 interleaved lanes combined
/// pairwise (a fixed order, so results are reproducible).
llvm::Error tensorReduce(Tile out, AluOp op, ConstTile data, bool negate = false);

/// nisa.tensor_tensor_scan, per partition along the free axis:
///   out[:, i] = op1(op0(data0[:, i], out[:, i-1]), data1[:, i]), out[:, -1] = initial;
/// reverse0 / reverse1 swap the operands of op0 / op1. op0 and op1 must be
/// arithmetic: add, subtract, multiply, divide, maximum, minimum.
llvm::Error tensorTensorScan(Tile out, ConstTile data0, ConstTile data1, PerPartition initial, AluOp op0, AluOp op1,
                             bool reverse0 = false, bool reverse1 = false);

/// nc_transpose: out[F, P] = in[P, F]^T. Moves data exactly (the never-written
/// marker survives), any size; hardware limits are checked by the verifier.
llvm::Error transpose(Tile out, ConstTile in);

/// tensor_copy between equal shapes (exact; the never-written marker survives).
llvm::Error copy(Tile out, ConstTile in);

/// nisa.reciprocal: out = 1 / in.
llvm::Error reciprocal(Tile out, ConstTile in);

/// nl.dropout / nisa.dropout: out = in, or 0 where element (r, c) is dropped with probability
/// rate.at(r). The device draws from its RNG; the interpreter draws from a fixed hash of `seed` and the
/// element's position, so a run repeats exactly: a rate of 0 keeps every element, 1 drops every one.
/// A rate outside [0, 1] is an error.
llvm::Error dropout(Tile out, ConstTile in, PerPartition rate, uint64_t seed);

/// nl.where: out = predicate != 0 ? onTrue : onFalse, each operand the output's shape or a
/// (P,1) / (1,F) / (1,1) broadcast (a NaN predicate counts as true, as in the logical operators).
llvm::Error select(Tile out, ConstTile predicate, ConstTile onTrue, ConstTile onFalse);

/// Elements per partition of a bn_stats result: (count, mean, variance * count) of the even and
/// of the odd free elements.
inline constexpr int64_t kBnStatsWidth = 6;
/// nisa.bn_stats: out [P, 6] from data [P, F]; variance is the population variance.
llvm::Error bnStats(Tile out, ConstTile data);
/// nisa.bn_aggr: out [P, 2] = (mean, variance) of all elements described by data's
/// (count, mean, variance * count) triples (F a multiple of 3; triples with count 0 add nothing).
llvm::Error bnAggr(Tile out, ConstTile data);

/// nisa.memset: every element = value.
void memset(Tile out, float value);

/// nisa.iota for an affine expression of the partition and free indices:
/// out[p, f] = base + p * partitionStep + f * freeStep, evaluated in int32
/// (wrapping) like the hardware, then converted to fp32.
void iota(Tile out, int64_t base, int64_t partitionStep, int64_t freeStep);

} // namespace accelopt::interp
