// The one declarative table of NKI operations. The front end, verifier,
// interpreter, performance model, prompts and LSP all read it: adding an op is
// one row here plus its numeric kernel in the interpreter.
#pragma once

#include "NKI/Types.h"

#include <span>
#include <string_view>
#include <vector>

namespace accelopt::nki {

enum class OpKind : uint8_t {
  Alloc,         // nl.ndarray / zeros / full / shared_constant: creates a tensor
  Load,          // HBM -> SBUF DMA
  Store,         // SBUF -> HBM DMA
  DmaCopy,       // nisa.dma_copy
  Copy,          // on-chip copy (PSUM -> SBUF eviction, re-layout)
  Matmul,        // TensorE matrix multiply (nc_matmul, nl.matmul)
  Transpose,     // PF transpose
  Activation,    // ScalarE f(x * scale + bias); nl.exp etc. lower to it
  TensorTensor,  // elementwise binary
  TensorScalar,  // tile op per-partition scalar/vector (up to two ops)
  Reduce,        // free-axis reduction
  Scan,          // tensor_tensor_scan recurrence
  Reciprocal,    // VectorE 1/x
  Memset,        // constant fill
  Iota,          // index pattern fill
  LoopReduce,    // nl.loop_reduce: dst = op(x, dst) across iterations
  Broadcast,     // tile.broadcast_to (partition broadcast)
};

enum class Role : uint8_t {
  Tile,     // tensor input read by the instruction
  Dest,     // tensor written by the call itself (nl.store dst)
  Shape,    // tuple of ints
  DType,
  Buffer,
  Func,     // an NKI/numpy function passed as a value (op=nl.exp)
  Operand,  // compile-time scalar or per-partition (P,1) vector tile
  Flag,     // compile-time bool
  Int,      // compile-time int or list of ints (axis)
  Mask,
  Engine,
  Name,
  Any,      // accepted, not interpreted
};

/// How the result tile's shape follows from the operands.
enum class ShapeRule : uint8_t {
  None,           // no result (store)
  FromShapeArg,   // alloc / memset: the `shape` parameter
  SameAsInput,    // elementwise on the first Tile operand (with (P,1) broadcasting)
  MatmulResult,   // [stationary free, moving free]; nl.matmul: [x partitions, y free]
  TransposePF,    // [F, P]
  ReduceFree,     // [P, 1] (or keepdims)
  BroadcastTo,    // the `shape` parameter of broadcast_to
};

/// Cost class the performance model charges (NKI.md §3.5).
enum class CostClass : uint8_t {
  None, Dma, Matmul, TransposePE, ActivationN, VectorN, Vector2N, Vector8N, ReduceN, ScanN,
  MemsetN, IotaN,
};

struct ParamInfo {
  std::string_view name;
  Role role;
  bool required = false;
  int maxPartitions = 0;  // 0 = no extra limit beyond pmax for tiles
  int maxFree = 0;        // per-partition free elements limit, 0 = none
  uint8_t buffers = 0;    // allowed buffers for Tile params (bit per nki::Buffer), 0 = any
};

constexpr uint8_t bufferBit(Buffer b) { return uint8_t(1u << static_cast<unsigned>(b)); }
constexpr uint8_t OnChip = bufferBit(Buffer::SBUF) | bufferBit(Buffer::PSUM);
constexpr uint8_t SbufOnly = bufferBit(Buffer::SBUF);
constexpr uint8_t HbmOnly = bufferBit(Buffer::SharedHBM) | bufferBit(Buffer::PrivateHBM);

struct OpInfo {
  std::string_view name;        // canonical spelling, e.g. "nisa.nc_matmul"
  OpKind kind;
  Engine engine;                // engine the instruction runs on (Unknown = compiler picks)
  std::span<const ParamInfo> params;  // in positional order
  ShapeRule shape;
  Buffer result;                // buffer of the result tile
  CostClass cost;
  std::string_view summary;     // one line for hover text and prompts

  const ParamInfo *param(std::string_view n) const;
  int paramIndex(std::string_view n) const;
};

/// Looks up an op by canonical name ("nl.load", "nisa.activation"); null if unknown.
const OpInfo *lookupOp(std::string_view canonicalName);
std::span<const OpInfo> allOps();

/// Canonical module prefixes of the old `neuronxcc.nki` dialect.
///   neuronxcc.nki.language -> "nl", neuronxcc.nki.isa -> "nisa",
///   neuronxcc.nki -> "nki", numpy -> "np", math -> "math".
/// Returns "" for modules that are not NKI/numpy.
std::string_view canonicalModule(std::string_view dottedModule);

/// nl.matmul(x, y) computes x @ y, so TensorE gets x transposed (its stationary operand's contraction
/// runs along its free axis) unless transpose_x=True says x is already laid out K x M; nisa.nc_matmul
/// always takes its stationary operand K x M. The one statement of that rule, for every layer.
bool matmulTransposesStationary(const OpInfo &op, bool transposeX);

/// Named constants reachable as attributes (nl.tile_size.pmax, nl.sbuf, nl.float32,
/// nki.isa.unknown_engine, ...).
struct NamedConstant {
  std::string_view name;   // canonical, e.g. "nl.tile_size.pmax"
  enum Kind : uint8_t { Int, BufferKind, DTypeKind, EngineKind } kind;
  int64_t value;           // Int value, or the enum value
};
const NamedConstant *lookupConstant(std::string_view canonicalName);

/// True for functions that may be passed as `op=` values (nl.exp, np.add, nl.multiply, ...).
bool isFunctionValue(std::string_view canonicalName);

/// Names of the loop iterators: "nl.affine_range", "nl.sequential_range", "nl.static_range".
bool isLoopIterator(std::string_view canonicalName);

} // namespace accelopt::nki
