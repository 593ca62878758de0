// The one declarative table of NKI operations. The front end, verifier,
// interpreter, performance model, prompts and LSP all read it: adding an op is
// one row here plus its numeric kernel in the interpreter.
#pragma once

#include "NKI/Types.h"

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace accelopt::nki {

enum class OpKind : uint8_t {
  Alloc,        // nl.ndarray / zeros / full / shared_constant: creates a tensor
  Load,         // HBM -> SBUF DMA
  Store,        // SBUF -> HBM DMA
  DmaCopy,      // nisa.dma_copy
  Copy,         // on-chip copy (PSUM -> SBUF eviction, re-layout)
  Matmul,       // TensorE matrix multiply (nc_matmul, nl.matmul)
  Transpose,    // PF transpose
  Activation,   // ScalarE f(x * scale + bias); nl.exp etc. lower to it
  TensorTensor, // elementwise binary
  TensorScalar, // tile op per-partition scalar/vector (up to two ops)
  Reduce,       // free-axis reduction
  Scan,         // tensor_tensor_scan recurrence
  Reciprocal,   // VectorE 1/x
  Memset,       // constant fill
  Iota,         // index pattern fill
  LoopReduce,   // nl.loop_reduce: dst = op(x, dst) across iterations
  Broadcast,    // tile.broadcast_to (partition broadcast)
  Select,       // elementwise predicate ? x : y (nl.where)
  BnStats,      // per-partition (count, mean, variance*count) of even and odd free elements
  BnAggr,       // combines (count, mean, variance*count) triples into (mean, variance)
  Dropout,      // zeroes each element with a drop probability (a scalar or a (P,1) tile)
  AffineSelect, // on_true_tile where an affine predicate of the tile indices holds, else a scalar
};

enum class Role : uint8_t {
  Tile,  // tensor input read by the instruction
  Dest,  // tensor written by the call itself (nl.store dst)
  Shape, // tuple of ints
  DType,
  Buffer,
  Func,    // an NKI/numpy function passed as a value (op=nl.exp)
  Operand, // compile-time scalar or per-partition (P,1) vector tile
  Flag,    // compile-time bool
  Int,     // compile-time int or list of ints (axis)
  Mask,
  Engine,
  Name,
  Any, // accepted, not interpreted
};

/// How the result tile's shape follows from the operands.
enum class ShapeRule : uint8_t {
  None,         // no result (store)
  FromShapeArg, // alloc / memset: the `shape` parameter
  SameAsInput,  // elementwise on the first Tile operand (with (P,1) broadcasting)
  MatmulResult, // [stationary free, moving free]; nl.matmul: [x partitions, y free]
  TransposePF,  // [F, P]
  ReduceFree,   // [P, 1] (or keepdims)
  BroadcastTo,  // the `shape` parameter of broadcast_to
  FixedFree,    // [P, OpInfo::resultFree] (bn_stats: 6 statistics, bn_aggr: mean and variance)
};

/// Binary ALU operators of the Vector/Scalar/GpSimd engines (their numerics: Interp/TileOps.h).
enum class AluOp : uint8_t {
  Add,
  Subtract,
  Multiply,
  Divide,
  Maximum,
  Minimum,
  Power,
  Equal,
  NotEqual,
  Greater,
  GreaterEqual,
  Less,
  LessEqual,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  LeftShift,
  RightShift,
  Mod,  // x - floor(x / y) * y: the result takes the sign of y (numpy mod)
  Fmod, // x - trunc(x / y) * y: the result takes the sign of x (C fmod)
};
inline constexpr int kAluOpCount = static_cast<int>(AluOp::Fmod) + 1;

/// Activation functions of the Scalar engine (NKI's activation table; numerics: Interp/TileOps.h).
enum class ActFunc : uint8_t {
  Copy,
  Square,
  Sigmoid,
  Relu,
  Gelu,
  GeluDx,
  GeluApproxTanh,
  GeluApproxSigmoid,
  Silu,
  SiluDx,
  Tanh,
  Softplus,
  Mish,
  Erf,
  ErfDx,
  Exp,
  Log,
  Sin,
  Arctan,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Sign,
  Abs,
  Cos,
  Tan,
  Floor,
  Ceil,
  Trunc,
};
inline constexpr int kActFuncCount = static_cast<int>(ActFunc::Trunc) + 1;

/// The instruction a row lowers to, which the performance model costs by its class in the target
/// file (NKI.md §3.5). Compute kinds follow the nki.isa names; DMA kinds carry their direction,
/// because direction decides which profile counters a transfer feeds (NKI.md §5). The compiler's
/// own instructions (spills, other compute) are here too: this is the one instruction list.
enum class Instr : uint8_t {
  NcMatmul,           ///< nisa.nc_matmul (also PF-transposes with is_transpose)
  Transpose,          ///< nisa.nc_transpose (TensorE or VectorE path)
  Activation,         ///< nisa.activation, nl.exp/sqrt/rsqrt/square, ...
  TensorTensor,       ///< nisa.tensor_tensor, nl.add/multiply of two tiles
  TensorScalar,       ///< nisa.tensor_scalar, tile (op) scalar/vector
  ScalarTensorTensor, ///< nisa.scalar_tensor_tensor
  TensorReduce,       ///< nisa.tensor_reduce, nl.sum/max
  TensorTensorScan,   ///< nisa.tensor_tensor_scan
  TensorCopy,         ///< nisa.tensor_copy, nl.copy
  Reciprocal,         ///< nisa.reciprocal (VectorE)
  Memset,             ///< nisa.memset
  Iota,               ///< nisa.iota (GpSimd)
  AffineSelect,       ///< nisa.affine_select (GpSimd)
  OtherCompute,       ///< any other engine instruction, costed max(MIN_II, N)
  Load,               ///< DMA HBM -> SBUF (nl.load)
  Store,              ///< DMA SBUF -> HBM (nl.store)
  SpillSave,          ///< DMA SBUF -> HBM scratch written by the compiler (traced `_spill` tensors)
  SpillReload,        ///< DMA HBM scratch -> SBUF
  DmaCopy,            ///< any other DMA (SBUF->SBUF, HBM->HBM, nisa.dma_copy)
  None,               ///< no instruction (nl.ndarray); never in a trace
};
inline constexpr unsigned kNumInstrs = static_cast<unsigned>(Instr::DmaCopy) + 1;

/// The operand a parameter supplies, so layers find "the data tile" without knowing that it is
/// spelled `data` in nisa.activation and `x` in nl.exp.
enum class Slot : uint8_t {
  None,
  Data,       // the main input tile (src, value, data, data0, data1, x)
  Data2,      // the second input tile of a binary op or scan (data2, y, data1)
  Stationary, // matmul stationary operand (x of nl.matmul)
  Moving,     // matmul moving operand (y of nl.matmul)
  Dest,       // the tensor the call writes itself (nl.store / dma_copy dst)
  Func,       // the function argument when the row does not fix it (op= of nisa.activation)
  Fill,       // the fill value of a new tensor (nl.full fill_value, nisa.memset value)
  Host,       // a host constant copied into HBM (nl.shared_constant)
  Predicate,  // the elementwise condition choosing between Data and Data2 (nl.where)
  Like,       // the tensor a new one takes its shape and dtype from (nl.zeros_like's a); not read
};

/// The dtype of a row's result when the call gives no dtype= (Neuron docs, per op).
enum class ResultDType : uint8_t {
  Computed, // kept as computed (fp32 math); the front end types the tile as its first tile operand
  Input,    // the data operand's dtype (nisa.activation, nl.exp: "the same as the data type of the input tile")
  Promoted, // the tile operands' dtypes promoted (nl.add: "whichever input type has the highest precision")
};

struct OpInfo;
/// The result dtype of `op` without dtype=, from its tile operands' dtypes (`data`, and `data2` when the second
/// operand is a tile); nullopt when the row keeps its result as computed or no operand is a tile.
std::optional<DType> defaultResultDType(const OpInfo &op, std::optional<DType> data, std::optional<DType> data2);

/// What a row computes when the row itself says so (nl.add, nl.exp, nl.sum, nl.zeros). A row whose
/// function is an argument (nisa.activation, nisa.tensor_reduce) leaves it empty and has a
/// Slot::Func parameter; an elementwise or reduce row with neither is a table error (unit-tested).
struct Numerics {
  std::optional<AluOp> alu = {};   // elementwise binary op, or the combining op of a reduction
  std::optional<ActFunc> act = {}; // ScalarE function of (x * scale)
  float scale = 1.0f;              // activation input scale (nl.negative is copy(-1 * x))
  bool mean = false;               // the reduction is divided by the reduced element count (nl.mean)
  std::optional<float> fill = {};  // a new tensor filled with this value (nl.zeros)
  // The result dtype without dtype= (ResultDType); with dtype= the call's dtype rounds the result.
  ResultDType resultDType = ResultDType::Computed;
};

struct ParamInfo {
  std::string_view name;
  Role role;
  bool required = false;
  int maxPartitions = 0;  // 0 = no extra limit beyond pmax for tiles
  int maxFree = 0;        // per-partition free elements limit, 0 = none
  uint8_t buffers = 0;    // allowed buffers for Tile params (bit per nki::Buffer), 0 = any
  Slot slot = Slot::None; // the operand this parameter supplies
};

constexpr uint8_t bufferBit(Buffer b) { return uint8_t(1u << static_cast<unsigned>(b)); }
constexpr uint8_t engineBit(Engine e) { return uint8_t(1u << static_cast<unsigned>(e)); }
constexpr uint8_t OnChip = bufferBit(Buffer::SBUF) | bufferBit(Buffer::PSUM);
constexpr uint8_t SbufOnly = bufferBit(Buffer::SBUF);
constexpr uint8_t HbmOnly = bufferBit(Buffer::SharedHBM) | bufferBit(Buffer::PrivateHBM);

struct OpInfo {
  std::string_view name; // canonical spelling, e.g. "nisa.nc_matmul"
  OpKind kind;
  Engine engine;                     // engine the instruction runs on (Unknown = compiler picks)
  std::span<const ParamInfo> params; // in positional order
  ShapeRule shape;
  Buffer result;            // buffer of the result tile
  Instr instr;              // instruction it lowers to (sets its cost class)
  std::string_view summary; // one line for hover text and prompts
  Numerics numerics = {};   // what it computes, when the row fixes it
  int resultFree = 0;       // elements per partition of the result under ShapeRule::FixedFree
  uint8_t engines = 0;      // engines an `engine=` argument may name (bit per nki::Engine), 0: `engine` only

  /// Can an `engine=` argument place the instruction on `e`? (The ALU operators it computes must be
  /// there too: engineComputes.)
  bool runsOn(Engine e) const { return e == engine || (engines & engineBit(e)) != 0; }

  const ParamInfo *param(std::string_view n) const;
  int paramIndex(std::string_view n) const;
  /// Index of the parameter that supplies `s`, -1 if none.
  int slotIndex(Slot s) const;
  const ParamInfo *slot(Slot s) const;
};

/// Does `engine` compute the ALU operators `ops`, applied in this order by one instruction (tensor_scalar's
/// op0 then op1), on a NeuronCore of generation `ncGeneration` (2: trn1/inf2, 3: trn2)? The ISA's operator
/// table (NKI.md §1.8 "ALU operator availability"): add and multiply run on Vector, GpSimd and (NC-v3 on)
/// Scalar, where tensor_scalar takes (multiply), (multiply, add) or (add); every other operator on Vector.
/// No operators (a copy): every elementwise engine.
bool engineComputes(Engine engine, std::span<const AluOp> ops, int ncGeneration);

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
  std::string_view name; // canonical, e.g. "nl.tile_size.pmax"
  enum Kind : uint8_t { Int, BufferKind, DTypeKind, EngineKind } kind;
  int64_t value; // Int value, or the enum value
};
const NamedConstant *lookupConstant(std::string_view canonicalName);

/// True for functions that may be passed as `op=` values (nl.exp, np.add, nl.multiply, ...).
bool isFunctionValue(std::string_view canonicalName);

/// The ALU op a function value names (nl.add, np.maximum, ...), if it is an elementwise binary op.
std::optional<AluOp> aluOfFunctionValue(std::string_view canonicalName);

/// Whether `dst = op(dst, x)` repeated in any order gives one result (add, multiply, max, min): an
/// in-place tensor_tensor with such an op accumulates like `+=`.
bool accumulatesInAnyOrder(AluOp op);

/// Names of the loop iterators: "nl.affine_range", "nl.sequential_range", "nl.static_range".
bool isLoopIterator(std::string_view canonicalName);

} // namespace accelopt::nki
