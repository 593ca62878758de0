#include "NKI/OpTable.h"

#include <algorithm>
#include <array>
#include <string>

namespace accelopt::nki {

namespace {

using P = ParamInfo;
constexpr int PMax = 128;
// The engines an engine= argument may name (NKI.md §1.8): tensor_scalar and tensor_copy run on Vector,
// Scalar or GpSimd, tensor_tensor and memset on Vector or GpSimd, nc_transpose on Tensor or Vector.
constexpr uint8_t VectorScalarGpSimd =
    engineBit(Engine::Vector) | engineBit(Engine::Scalar) | engineBit(Engine::GpSimd);
constexpr uint8_t VectorGpSimd = engineBit(Engine::Vector) | engineBit(Engine::GpSimd);
constexpr uint8_t TensorVector = engineBit(Engine::Tensor) | engineBit(Engine::Vector);

// Parameter lists in positional order (NKI.md §1.8, the neuronxcc.nki 0.1.0 API).
constexpr P ndarrayParams[] = {
    {"shape", Role::Shape, true}, {"dtype", Role::DType, true}, {"buffer", Role::Buffer}, {"name", Role::Name}};
constexpr P zerosParams[] = {{"shape", Role::Shape, true},
                             {"dtype", Role::DType, true},
                             {"buffer", Role::Buffer},
                             {"name", Role::Name},
                             {"lazy_initialization", Role::Flag}};
// nl.zeros_like(a, dtype=None, buffer=None, name=''): `a` gives the shape and default dtype only.
constexpr P zerosLikeParams[] = {{"a", Role::Any, true, 0, 0, 0, Slot::Like},
                                 {"dtype", Role::DType},
                                 {"buffer", Role::Buffer},
                                 {"name", Role::Name}};
constexpr P fullParams[] = {{"shape", Role::Shape, true},
                            {"fill_value", Role::Operand, true, 0, 0, 0, Slot::Fill},
                            {"dtype", Role::DType, true},
                            {"buffer", Role::Buffer},
                            {"name", Role::Name}};
constexpr P sharedConstantParams[] = {{"constant", Role::Any, true, 0, 0, 0, Slot::Host}, {"dtype", Role::DType}};
constexpr P loadParams[] = {
    {"src", Role::Tile, true, PMax, 0, HbmOnly, Slot::Data}, {"mask", Role::Mask}, {"dtype", Role::DType}};
// nl.load_transpose2d(src): src [F, P] in HBM lands as a [P, F] SBUF tile, so src's free size is the
// tile's partition count.
constexpr P loadTransposeParams[] = {
    {"src", Role::Tile, true, 0, PMax, HbmOnly, Slot::Data}, {"mask", Role::Mask}, {"dtype", Role::DType}};
constexpr P storeParams[] = {{"dst", Role::Dest, true, PMax, 0, HbmOnly, Slot::Dest},
                             {"value", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                             {"mask", Role::Mask}};
constexpr P copyParams[] = {
    {"src", Role::Tile, true, PMax, 0, OnChip, Slot::Data}, {"mask", Role::Mask}, {"dtype", Role::DType}};
constexpr P tensorCopyParams[] = {{"src", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                  {"mask", Role::Mask},
                                  {"dtype", Role::DType},
                                  {"engine", Role::Engine}};
constexpr P dmaCopyParams[] = {{"dst", Role::Dest, true, 0, 0, 0, Slot::Dest},
                               {"src", Role::Tile, true, 0, 0, 0, Slot::Data},
                               {"mask", Role::Mask},
                               {"dst_rmw_op", Role::Func},
                               {"oob_mode", Role::Any},
                               {"dge_mode", Role::Any}};
// perf_mode (NC-v3+, NKI.md §3.2) is a flag: a mode name sets it (NKI/Platform.h). The free limits are per PE
// row; the double-row mode packs two rows (whether a target has the mode is a target fact).
constexpr P ncMatmulParams[] = {{"stationary", Role::Tile, true, PMax, 128, SbufOnly, Slot::Stationary},
                                {"moving", Role::Tile, true, PMax, 512, SbufOnly, Slot::Moving},
                                {"is_stationary_onezero", Role::Flag},
                                {"is_moving_onezero", Role::Flag},
                                {"is_transpose", Role::Flag},
                                {"tile_position", Role::Any},
                                {"tile_size", Role::Any},
                                {"mask", Role::Mask},
                                {"perf_mode", Role::Flag}};
// nl.matmul is a language-level op: the compiler copies an operand it finds in PSUM (an nl.transpose
// result) to SBUF first, so both on-chip buffers are accepted (NKI.md §1.8).
constexpr P matmulParams[] = {{"x", Role::Tile, true, PMax, 128, OnChip, Slot::Stationary},
                              {"y", Role::Tile, true, PMax, 512, OnChip, Slot::Moving},
                              {"transpose_x", Role::Flag},
                              {"mask", Role::Mask}};
constexpr P ncTransposeParams[] = {{"data", Role::Tile, true, PMax, 128, OnChip, Slot::Data},
                                   {"mask", Role::Mask},
                                   {"dtype", Role::DType},
                                   {"engine", Role::Engine}};
constexpr P transposeParams[] = {
    {"x", Role::Tile, true, PMax, 128, OnChip, Slot::Data}, {"dtype", Role::DType}, {"mask", Role::Mask}};
constexpr P activationParams[] = {{"op", Role::Func, true, 0, 0, 0, Slot::Func},
                                  {"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                  {"bias", Role::Operand},
                                  {"scale", Role::Operand},
                                  {"reduce_op", Role::Func},
                                  {"reduce_res", Role::Any},
                                  {"reduce_cmd", Role::Any},
                                  {"mask", Role::Mask},
                                  {"dtype", Role::DType}};
// nisa.activation_reduce (kept for NKI 0.1 kernels): activation plus the row reduction into reduce_res.
constexpr P activationReduceParams[] = {{"op", Role::Func, true, 0, 0, 0, Slot::Func},
                                        {"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                        {"reduce_op", Role::Func, true},
                                        {"reduce_res", Role::Any, true},
                                        {"bias", Role::Operand},
                                        {"scale", Role::Operand},
                                        {"mask", Role::Mask},
                                        {"dtype", Role::DType}};
constexpr P tensorTensorParams[] = {{"data1", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                    {"data2", Role::Tile, true, PMax, 0, OnChip, Slot::Data2},
                                    {"op", Role::Func, true, 0, 0, 0, Slot::Func},
                                    {"dtype", Role::DType},
                                    {"mask", Role::Mask},
                                    {"engine", Role::Engine}};
constexpr P tensorScalarParams[] = {{"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                    {"op0", Role::Func, true},
                                    {"operand0", Role::Operand, true},
                                    {"reverse0", Role::Flag},
                                    {"op1", Role::Func},
                                    {"operand1", Role::Operand},
                                    {"reverse1", Role::Flag},
                                    {"dtype", Role::DType},
                                    {"mask", Role::Mask},
                                    {"engine", Role::Engine}};
// nisa.tensor_scalar_reduce: one tensor_scalar step, and the result's free axes reduced into reduce_res.
constexpr P tensorScalarReduceParams[] = {{"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                          {"op0", Role::Func, true},
                                          {"operand0", Role::Operand, true},
                                          {"reduce_op", Role::Func, true},
                                          {"reduce_res", Role::Any, true},
                                          {"reverse0", Role::Flag},
                                          {"dtype", Role::DType},
                                          {"mask", Role::Mask}};
// nisa.scalar_tensor_tensor: (data op0 operand0) op1 operand1, operand0 a scalar or (P,1) vector, operand1 a tile
// of data's shape (VectorE; about the latency of one tensor_tensor).
constexpr P scalarTensorTensorParams[] = {{"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                          {"op0", Role::Func, true},
                                          {"operand0", Role::Operand, true},
                                          {"op1", Role::Func, true},
                                          {"operand1", Role::Tile, true, PMax, 0, OnChip, Slot::Data2},
                                          {"reverse0", Role::Flag},
                                          {"reverse1", Role::Flag},
                                          {"dtype", Role::DType},
                                          {"mask", Role::Mask}};
constexpr P tensorReduceParams[] = {{"op", Role::Func, true, 0, 0, 0, Slot::Func},
                                    {"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                    {"axis", Role::Int, true},
                                    {"mask", Role::Mask},
                                    {"dtype", Role::DType},
                                    {"negate", Role::Flag},
                                    {"keepdims", Role::Flag}};
constexpr P scanParams[] = {{"data0", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                            {"data1", Role::Tile, true, PMax, 0, OnChip, Slot::Data2},
                            {"initial", Role::Operand, true},
                            {"op0", Role::Func, true},
                            {"op1", Role::Func, true},
                            {"reverse0", Role::Flag},
                            {"reverse1", Role::Flag},
                            {"dtype", Role::DType},
                            {"mask", Role::Mask}};
constexpr P unaryTileParams[] = {
    {"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data}, {"dtype", Role::DType}, {"mask", Role::Mask}};
constexpr P memsetParams[] = {{"shape", Role::Shape, true},
                              {"value", Role::Operand, true, 0, 0, 0, Slot::Fill},
                              {"dtype", Role::DType, true},
                              {"mask", Role::Mask},
                              {"engine", Role::Engine}};
constexpr P iotaParams[] = {{"expr", Role::Any, true}, {"dtype", Role::DType, true}, {"mask", Role::Mask}};
// nisa.affine_select (0.1): pred is one affine comparison of nl.arange indices (and loop variables).
constexpr P affineSelectParams[] = {{"pred", Role::Any, true},
                                    {"on_true_tile", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                    {"on_false_value", Role::Operand, true},
                                    {"mask", Role::Mask},
                                    {"dtype", Role::DType}};
constexpr P loopReduceParams[] = {{"x", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                  {"op", Role::Func, true, 0, 0, 0, Slot::Func},
                                  {"loop_indices", Role::Any, true},
                                  {"dtype", Role::DType},
                                  {"mask", Role::Mask}};
constexpr P binaryParams[] = {{"x", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                              {"y", Role::Tile, true, PMax, 0, OnChip, Slot::Data2},
                              {"dtype", Role::DType},
                              {"mask", Role::Mask}};
constexpr P unaryParams[] = {
    {"x", Role::Tile, true, PMax, 0, OnChip, Slot::Data}, {"dtype", Role::DType}, {"mask", Role::Mask}};
constexpr P reductionParams[] = {{"x", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                 {"axis", Role::Int, true},
                                 {"dtype", Role::DType},
                                 {"mask", Role::Mask},
                                 {"keepdims", Role::Flag}};
constexpr P broadcastParams[] = {{"shape", Role::Shape, true}};
// nl.broadcast_to(x, shape): the function form of tile.broadcast_to.
constexpr P broadcastFnParams[] = {{"x", Role::Tile, true, PMax, 0, OnChip, Slot::Data}, {"shape", Role::Shape, true}};
// nl.where(condition, x, y): x and y may be scalars or (P,1) vectors, so they are operands.
constexpr P whereParams[] = {{"condition", Role::Tile, true, PMax, 0, OnChip, Slot::Predicate},
                             {"x", Role::Operand, true, 0, 0, 0, Slot::Data},
                             {"y", Role::Operand, true, 0, 0, 0, Slot::Data2},
                             {"dtype", Role::DType},
                             {"mask", Role::Mask}};
// nisa.select_reduce: on_true where the predicate holds (where it does not, with reverse_pred), else on_false (a
// scalar or (P,1) vector); with reduce_res, the result's rows also reduced into it (reduce_op: max by default).
constexpr P selectReduceParams[] = {{"predicate", Role::Tile, true, PMax, 0, OnChip, Slot::Predicate},
                                    {"on_true", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                    {"on_false", Role::Operand, true, 0, 0, 0, Slot::Data2},
                                    {"reduce_res", Role::Any},
                                    {"reduce_cmd", Role::Any},
                                    {"reduce_op", Role::Func},
                                    {"reverse_pred", Role::Flag},
                                    {"mask", Role::Mask},
                                    {"dtype", Role::DType}};
// nl.tile_size.bn_stats_fmax bounds bn_stats' free size.
constexpr P bnStatsParams[] = {
    {"data", Role::Tile, true, PMax, 512, OnChip, Slot::Data}, {"mask", Role::Mask}, {"dtype", Role::DType}};
// nl.dropout(x, rate) / nisa.dropout(data, prob): the drop probability is a scalar or a (P,1) tile.
constexpr P dropoutParams[] = {{"x", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                               {"rate", Role::Operand, true},
                               {"dtype", Role::DType},
                               {"mask", Role::Mask}};
constexpr P isaDropoutParams[] = {{"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data},
                                  {"prob", Role::Operand, true},
                                  {"mask", Role::Mask},
                                  {"dtype", Role::DType}};
constexpr P bnAggrParams[] = {
    {"data", Role::Tile, true, PMax, 0, OnChip, Slot::Data}, {"mask", Role::Mask}, {"dtype", Role::DType}};

// The elementwise and reduction rows of the language: each fixes its numerics in the row.
#define ELEMENTWISE_BINARY(fn, aluOp, what)                                                                            \
  OpInfo {                                                                                                             \
    "nl." fn, OpKind::TensorTensor, Engine::Vector, binaryParams, ShapeRule::SameAsInput, Buffer::SBUF,                \
        Instr::TensorTensor, what " (elementwise, broadcasts a (P,1) operand)", {                                      \
      .alu = AluOp::aluOp, .resultDType = ResultDType::Promoted                                                        \
    }                                                                                                                  \
  }
#define ELEMENTWISE_UNARY_SCALED(fn, func, inputScale, what)                                                           \
  OpInfo {                                                                                                             \
    "nl." fn, OpKind::Activation, Engine::Scalar, unaryParams, ShapeRule::SameAsInput, Buffer::SBUF,                   \
        Instr::Activation, what " (ScalarE activation)", {                                                             \
      .act = ActFunc::func, .scale = inputScale, .resultDType = ResultDType::Input                                     \
    }                                                                                                                  \
  }
#define ELEMENTWISE_UNARY(fn, func, what) ELEMENTWISE_UNARY_SCALED(fn, func, 1.0f, what)
#define REDUCTION(fn, aluOp, isMean, what)                                                                             \
  OpInfo {                                                                                                             \
    "nl." fn, OpKind::Reduce, Engine::Vector, reductionParams, ShapeRule::ReduceFree, Buffer::SBUF,                    \
        Instr::TensorReduce, what " along free axes (VectorE tensor_reduce)", {                                        \
      .alu = AluOp::aluOp, .mean = isMean                                                                              \
    }                                                                                                                  \
  }

const OpInfo opTable[] = {
    {"nl.ndarray", OpKind::Alloc, Engine::Unknown, ndarrayParams, ShapeRule::FromShapeArg, Buffer::SBUF, Instr::None,
     "allocate an uninitialised tensor (SBUF unless buffer=)"},
    {"nl.zeros",
     OpKind::Alloc,
     Engine::Vector,
     zerosParams,
     ShapeRule::FromShapeArg,
     Buffer::SBUF,
     Instr::Memset,
     "allocate a zero-filled tensor",
     {.fill = 0.0f}},
    {"nl.ones",
     OpKind::Alloc,
     Engine::Vector,
     zerosParams,
     ShapeRule::FromShapeArg,
     Buffer::SBUF,
     Instr::Memset,
     "allocate a tensor filled with ones",
     {.fill = 1.0f}},
    {"nl.zeros_like",
     OpKind::Alloc,
     Engine::Vector,
     zerosLikeParams,
     ShapeRule::SameAsInput,
     Buffer::SBUF,
     Instr::Memset,
     "allocate a zero-filled tensor of another tensor's shape (and dtype unless dtype=)",
     {.fill = 0.0f}},
    {"nl.full", OpKind::Alloc, Engine::Vector, fullParams, ShapeRule::FromShapeArg, Buffer::SBUF, Instr::Memset,
     "allocate a tensor filled with fill_value"},
    {"nl.shared_constant", OpKind::Alloc, Engine::Unknown, sharedConstantParams, ShapeRule::FromShapeArg,
     Buffer::SharedHBM, Instr::None, "an HBM tensor holding a host numpy constant"},
    {"nl.load", OpKind::Load, Engine::DMA, loadParams, ShapeRule::SameAsInput, Buffer::SBUF, Instr::Load,
     "DMA an HBM region into a new SBUF tile"},
    {"nl.load_transpose2d", OpKind::Load, Engine::DMA, loadTransposeParams, ShapeRule::TransposePF, Buffer::SBUF,
     Instr::Load, "DMA a 2-D HBM region into a new SBUF tile, transposing partition and free axes"},
    {"nl.store", OpKind::Store, Engine::DMA, storeParams, ShapeRule::None, Buffer::SharedHBM, Instr::Store,
     "DMA an SBUF tile (PSUM via an extra copy) into HBM"},
    {"nisa.dma_copy", OpKind::DmaCopy, Engine::DMA, dmaCopyParams, ShapeRule::None, Buffer::Unknown, Instr::DmaCopy,
     "DMA between HBM and SBUF in any direction"},
    {"nl.copy", OpKind::Copy, Engine::Vector, copyParams, ShapeRule::SameAsInput, Buffer::SBUF, Instr::TensorCopy,
     "on-chip copy (evicts PSUM to SBUF)"},
    {"nisa.tensor_copy",
     OpKind::Copy,
     Engine::Vector,
     tensorCopyParams,
     ShapeRule::SameAsInput,
     Buffer::SBUF,
     Instr::TensorCopy,
     "on-chip copy on Vector/Scalar/GpSimd",
     {},
     0,
     VectorScalarGpSimd},
    {"nisa.nc_matmul", OpKind::Matmul, Engine::Tensor, ncMatmulParams, ShapeRule::MatmulResult, Buffer::PSUM,
     Instr::NcMatmul, "TensorE stationary.T @ moving into PSUM (fp32); is_transpose with identity = PF transpose"},
    {"nl.matmul", OpKind::Matmul, Engine::Tensor, matmulParams, ShapeRule::MatmulResult, Buffer::PSUM, Instr::NcMatmul,
     "x @ y on TensorE; without transpose_x the compiler adds a TensorE transpose of x"},
    {"nisa.nc_transpose",
     OpKind::Transpose,
     Engine::Tensor,
     ncTransposeParams,
     ShapeRule::TransposePF,
     Buffer::PSUM,
     Instr::Transpose,
     "partition/free transpose (TensorE up to 128x128)",
     {},
     0,
     TensorVector},
    {"nl.transpose", OpKind::Transpose, Engine::Tensor, transposeParams, ShapeRule::TransposePF, Buffer::PSUM,
     Instr::Transpose, "partition/free transpose"},
    {"nisa.activation",
     OpKind::Activation,
     Engine::Scalar,
     activationParams,
     ShapeRule::SameAsInput,
     Buffer::SBUF,
     Instr::Activation,
     "ScalarE op(data * scale + bias), math in fp32, result in data's dtype unless dtype=",
     {.resultDType = ResultDType::Input}},
    {"nisa.activation_reduce",
     OpKind::Activation,
     Engine::Scalar,
     activationReduceParams,
     ShapeRule::SameAsInput,
     Buffer::SBUF,
     Instr::Activation,
     "ScalarE activation, and its rows summed into reduce_res; result in data's dtype unless dtype=",
     {.resultDType = ResultDType::Input}},
    {"nisa.tensor_tensor",
     OpKind::TensorTensor,
     Engine::Vector,
     tensorTensorParams,
     ShapeRule::SameAsInput,
     Buffer::SBUF,
     Instr::TensorTensor,
     "VectorE elementwise op(data1, data2), same shapes",
     {},
     0,
     VectorGpSimd},
    {"nisa.tensor_scalar",
     OpKind::TensorScalar,
     Engine::Vector,
     tensorScalarParams,
     ShapeRule::SameAsInput,
     Buffer::SBUF,
     Instr::TensorScalar,
     "(data op0 operand0) op1 operand1 with per-partition scalars",
     {},
     0,
     VectorScalarGpSimd},
    {"nisa.tensor_scalar_reduce", OpKind::TensorScalar, Engine::Vector, tensorScalarReduceParams,
     ShapeRule::SameAsInput, Buffer::SBUF, Instr::TensorScalar,
     "data op0 operand0, its free axes also reduced with reduce_op into reduce_res (one per partition)"},
    {"nisa.scalar_tensor_tensor", OpKind::TensorScalar, Engine::Vector, scalarTensorTensorParams,
     ShapeRule::SameAsInput, Buffer::SBUF, Instr::TensorTensor,
     "VectorE (data op0 operand0) op1 operand1: a per-partition scalar step, then elementwise with a tile"},
    {"nisa.tensor_reduce", OpKind::Reduce, Engine::Vector, tensorReduceParams, ShapeRule::ReduceFree, Buffer::SBUF,
     Instr::TensorReduce, "VectorE reduction along free axes"},
    {"nisa.tensor_tensor_scan", OpKind::Scan, Engine::Vector, scanParams, ShapeRule::SameAsInput, Buffer::SBUF,
     Instr::TensorTensorScan, "per-partition scan r[i] = op1(op0(data0[i], r[i-1]), data1[i])"},
    {"nisa.reciprocal",
     OpKind::Reciprocal,
     Engine::Vector,
     unaryTileParams,
     ShapeRule::SameAsInput,
     Buffer::SBUF,
     Instr::Reciprocal,
     "VectorE 1/x (8 cycles/element)",
     {.act = ActFunc::Reciprocal}},
    {"nisa.memset",
     OpKind::Memset,
     Engine::Vector,
     memsetParams,
     ShapeRule::FromShapeArg,
     Buffer::SBUF,
     Instr::Memset,
     "fill a new tile with a constant",
     {},
     0,
     VectorGpSimd},
    {"nisa.iota", OpKind::Iota, Engine::GpSimd, iotaParams, ShapeRule::SameAsInput, Buffer::SBUF, Instr::Iota,
     "GpSimd writes an affine index pattern"},
    {"nisa.affine_select", OpKind::AffineSelect, Engine::GpSimd, affineSelectParams, ShapeRule::SameAsInput,
     Buffer::SBUF, Instr::AffineSelect,
     "GpSimd keeps on_true_tile where an affine index predicate holds, else a scalar"},
    {"nl.loop_reduce", OpKind::LoopReduce, Engine::Vector, loopReduceParams, ShapeRule::SameAsInput, Buffer::SBUF,
     Instr::TensorTensor, "dst = op(x, dst) across the named loops"},
    {"tile.broadcast_to", OpKind::Broadcast, Engine::Tensor, broadcastParams, ShapeRule::BroadcastTo, Buffer::SBUF,
     Instr::NcMatmul, "partition-broadcast a 1-row tile (TensorE ones-matmul)"},
    {"nl.broadcast_to", OpKind::Broadcast, Engine::Tensor, broadcastFnParams, ShapeRule::BroadcastTo, Buffer::SBUF,
     Instr::NcMatmul, "partition-broadcast a 1-row tile x to shape (TensorE ones-matmul)"},
    ELEMENTWISE_BINARY("add", Add, "x + y"),
    ELEMENTWISE_BINARY("subtract", Subtract, "x - y"),
    ELEMENTWISE_BINARY("multiply", Multiply, "x * y"),
    ELEMENTWISE_BINARY("divide", Divide, "x / y"),
    ELEMENTWISE_BINARY("maximum", Maximum, "max(x, y)"),
    ELEMENTWISE_BINARY("minimum", Minimum, "min(x, y)"),
    ELEMENTWISE_BINARY("power", Power, "x ** y"),
    ELEMENTWISE_BINARY("mod", Mod, "x mod y (sign of y)"),
    ELEMENTWISE_BINARY("fmod", Fmod, "x fmod y (sign of x)"),
    ELEMENTWISE_BINARY("equal", Equal, "x == y"),
    ELEMENTWISE_BINARY("not_equal", NotEqual, "x != y"),
    ELEMENTWISE_BINARY("greater", Greater, "x > y"),
    ELEMENTWISE_BINARY("greater_equal", GreaterEqual, "x >= y"),
    ELEMENTWISE_BINARY("less", Less, "x < y"),
    ELEMENTWISE_BINARY("less_equal", LessEqual, "x <= y"),
    ELEMENTWISE_BINARY("logical_and", LogicalAnd, "x and y"),
    ELEMENTWISE_BINARY("logical_or", LogicalOr, "x or y"),
    ELEMENTWISE_BINARY("logical_xor", LogicalXor, "x xor y"),
    ELEMENTWISE_BINARY("bitwise_and", BitwiseAnd, "x & y"),
    ELEMENTWISE_BINARY("bitwise_or", BitwiseOr, "x | y"),
    ELEMENTWISE_BINARY("bitwise_xor", BitwiseXor, "x ^ y"),
    ELEMENTWISE_BINARY("left_shift", LeftShift, "x << y"),
    ELEMENTWISE_BINARY("right_shift", RightShift, "x >> y (logical)"),
    {"nl.where", OpKind::Select, Engine::Vector, whereParams, ShapeRule::SameAsInput, Buffer::SBUF, Instr::OtherCompute,
     "condition ? x : y elementwise (x, y tiles, (P,1) vectors or scalars)"},
    {"nisa.select_reduce", OpKind::Select, Engine::Vector, selectReduceParams, ShapeRule::SameAsInput, Buffer::SBUF,
     Instr::OtherCompute,
     "VectorE predicate ? on_true : on_false (negated with reverse_pred), rows optionally max-reduced into reduce_res"},
    {"nisa.bn_stats",
     OpKind::BnStats,
     Engine::Vector,
     bnStatsParams,
     ShapeRule::FixedFree,
     Buffer::SBUF,
     Instr::OtherCompute,
     "per partition (count, mean, variance*count) of the even and the odd free elements, fp32",
     {},
     6},
    {"nisa.bn_aggr",
     OpKind::BnAggr,
     Engine::Vector,
     bnAggrParams,
     ShapeRule::FixedFree,
     Buffer::SBUF,
     Instr::OtherCompute,
     "per partition (mean, variance) from bn_stats triples, fp32",
     {},
     2},
    {"nl.dropout", OpKind::Dropout, Engine::Vector, dropoutParams, ShapeRule::SameAsInput, Buffer::SBUF,
     Instr::TensorScalar, "zero each element with probability rate (VectorE; no rescaling of the kept ones)"},
    {"nisa.dropout", OpKind::Dropout, Engine::Vector, isaDropoutParams, ShapeRule::SameAsInput, Buffer::SBUF,
     Instr::TensorScalar, "zero each element with probability prob (VectorE; no rescaling of the kept ones)"},
    ELEMENTWISE_UNARY("exp", Exp, "e**x"),
    ELEMENTWISE_UNARY("log", Log, "ln x"),
    ELEMENTWISE_UNARY("sqrt", Sqrt, "sqrt x"),
    ELEMENTWISE_UNARY("rsqrt", Rsqrt, "1/sqrt x"),
    ELEMENTWISE_UNARY("square", Square, "x*x"),
    ELEMENTWISE_UNARY("sigmoid", Sigmoid, "1/(1+e**-x)"),
    ELEMENTWISE_UNARY("relu", Relu, "max(x, 0)"),
    ELEMENTWISE_UNARY("gelu", Gelu, "gelu x"),
    ELEMENTWISE_UNARY("silu", Silu, "x*sigmoid x"),
    ELEMENTWISE_UNARY("tanh", Tanh, "tanh x"),
    ELEMENTWISE_UNARY("softplus", Softplus, "ln(1+e**x)"),
    ELEMENTWISE_UNARY("mish", Mish, "x*tanh(softplus x)"),
    ELEMENTWISE_UNARY("erf", Erf, "erf x"),
    ELEMENTWISE_UNARY("sin", Sin, "sin x"),
    ELEMENTWISE_UNARY("cos", Cos, "cos x"),
    ELEMENTWISE_UNARY("arctan", Arctan, "atan x"),
    ELEMENTWISE_UNARY("abs", Abs, "|x|"),
    ELEMENTWISE_UNARY("sign", Sign, "sign x"),
    ELEMENTWISE_UNARY("tan", Tan, "tan x"),
    ELEMENTWISE_UNARY("floor", Floor, "largest integer <= x"),
    ELEMENTWISE_UNARY("ceil", Ceil, "smallest integer >= x"),
    ELEMENTWISE_UNARY("trunc", Trunc, "x rounded toward 0"),
    ELEMENTWISE_UNARY("gelu_dx", GeluDx, "d/dx gelu x"),
    ELEMENTWISE_UNARY("gelu_apprx_tanh", GeluApproxTanh, "gelu x, tanh approximation"),
    ELEMENTWISE_UNARY("silu_dx", SiluDx, "d/dx silu x"),
    ELEMENTWISE_UNARY("erf_dx", ErfDx, "d/dx erf x"),
    ELEMENTWISE_UNARY_SCALED("negative", Copy, -1.0f, "-x"),
    ELEMENTWISE_UNARY("reciprocal", Reciprocal, "1/x"),
    REDUCTION("sum", Add, false, "sum"),
    REDUCTION("max", Maximum, false, "max"),
    REDUCTION("min", Minimum, false, "min"),
    REDUCTION("mean", Add, true, "mean"),
    REDUCTION("prod", Multiply, false, "product"),
};

#undef ELEMENTWISE_BINARY
#undef ELEMENTWISE_UNARY
#undef ELEMENTWISE_UNARY_SCALED
#undef REDUCTION

const NamedConstant constants[] = {
    {"nl.tile_size.pmax", NamedConstant::Int, 128},
    {"nl.tile_size.psum_fmax", NamedConstant::Int, 512},
    {"nl.tile_size.gemm_stationary_fmax", NamedConstant::Int, 128},
    {"nl.tile_size.gemm_moving_fmax", NamedConstant::Int, 512},
    {"nl.tile_size.bn_stats_fmax", NamedConstant::Int, 512},
    {"nl.tile_size.psum_num_banks", NamedConstant::Int, 8},
    {"nl.sbuf", NamedConstant::BufferKind, int64_t(Buffer::SBUF)},
    {"nl.psum", NamedConstant::BufferKind, int64_t(Buffer::PSUM)},
    {"nl.shared_hbm", NamedConstant::BufferKind, int64_t(Buffer::SharedHBM)},
    {"nl.hbm", NamedConstant::BufferKind, int64_t(Buffer::PrivateHBM)},
    {"nl.private_hbm", NamedConstant::BufferKind, int64_t(Buffer::PrivateHBM)},
    {"nisa.unknown_engine", NamedConstant::EngineKind, int64_t(Engine::Unknown)},
    {"nisa.vector_engine", NamedConstant::EngineKind, int64_t(Engine::Vector)},
    {"nisa.scalar_engine", NamedConstant::EngineKind, int64_t(Engine::Scalar)},
    {"nisa.gpsimd_engine", NamedConstant::EngineKind, int64_t(Engine::GpSimd)},
    {"nisa.tensor_engine", NamedConstant::EngineKind, int64_t(Engine::Tensor)},
    {"nisa.engine.unknown", NamedConstant::EngineKind, int64_t(Engine::Unknown)},
    {"nisa.engine.vector", NamedConstant::EngineKind, int64_t(Engine::Vector)},
    {"nisa.engine.scalar", NamedConstant::EngineKind, int64_t(Engine::Scalar)},
    {"nisa.engine.gpsimd", NamedConstant::EngineKind, int64_t(Engine::GpSimd)},
    {"nisa.engine.tensor", NamedConstant::EngineKind, int64_t(Engine::Tensor)},
};

// Functions that kernels pass as values (op=..., op0=..., np.max as "maximum").
constexpr std::string_view functionValues[] = {
    "nl.add",
    "nl.subtract",
    "nl.multiply",
    "nl.divide",
    "nl.maximum",
    "nl.minimum",
    "nl.power",
    "nl.max",
    "nl.min",
    "nl.sum",
    "nl.exp",
    "nl.log",
    "nl.sqrt",
    "nl.rsqrt",
    "nl.square",
    "nl.sigmoid",
    "nl.relu",
    "nl.gelu",
    "nl.gelu_dx",
    "nl.gelu_apprx_tanh",
    "nl.gelu_apprx_sigmoid",
    "nl.silu",
    "nl.silu_dx",
    "nl.tanh",
    "nl.softplus",
    "nl.mish",
    "nl.erf",
    "nl.erf_dx",
    "nl.sin",
    "nl.cos",
    "nl.arctan",
    "nl.abs",
    "nl.sign",
    "nl.negative",
    "nl.reciprocal",
    "nl.copy",
    "nl.identity",
    "nl.equal",
    "nl.not_equal",
    "nl.greater",
    "nl.greater_equal",
    "nl.less",
    "nl.less_equal",
    "nl.logical_and",
    "nl.logical_or",
    "nl.logical_xor",
    "nl.bitwise_and",
    "nl.bitwise_or",
    "nl.bitwise_xor",
    "nl.left_shift",
    "nl.right_shift",
    "np.add",
    "np.subtract",
    "np.multiply",
    "np.divide",
    "np.maximum",
    "np.minimum",
    "np.max",
    "np.min",
    "np.power",
    "np.exp",
    "np.sqrt",
    "np.equal",
    "np.logical_and",
    "np.logical_or",
    "np.bitwise_and",
    "np.bitwise_or",
    "nl.mod",
    "nl.fmod",
    "np.mod",
    "np.fmod",
    "nl.tan",
    "nl.floor",
    "nl.ceil",
    "nl.trunc",
};

} // namespace

const ParamInfo *OpInfo::param(std::string_view n) const {
  for (const auto &p : params)
    if (p.name == n) return &p;
  return nullptr;
}

int OpInfo::slotIndex(Slot s) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].slot == s) return static_cast<int>(i);
  return -1;
}

const ParamInfo *OpInfo::slot(Slot s) const {
  int i = slotIndex(s);
  return i >= 0 ? &params[i] : nullptr;
}

int OpInfo::paramIndex(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return static_cast<int>(i);
  return -1;
}

const OpInfo *lookupOp(std::string_view canonicalName) {
  for (const auto &op : opTable)
    if (op.name == canonicalName) return &op;
  return nullptr;
}

std::span<const OpInfo> allOps() { return opTable; }

std::optional<DType> defaultResultDType(const OpInfo &op, std::optional<DType> data, std::optional<DType> data2) {
  switch (op.numerics.resultDType) {
  case ResultDType::Computed: return std::nullopt;
  case ResultDType::Input: return data;
  case ResultDType::Promoted:
    if (data && data2) return promoteDTypes(*data, *data2);
    return data ? data : data2; // a scalar operand does not widen the tile's dtype
  }
  return std::nullopt;
}

const NamedConstant *lookupConstant(std::string_view n) {
  for (const auto &c : constants)
    if (c.name == n) return &c;
  return nullptr;
}

bool isFunctionValue(std::string_view n) {
  return std::find(std::begin(functionValues), std::end(functionValues), n) != std::end(functionValues);
}

std::optional<AluOp> aluOfFunctionValue(std::string_view n) {
  if (!isFunctionValue(n)) return std::nullopt;
  std::string name(n);
  if (name.rfind("np.", 0) == 0) name = "nl." + name.substr(3);
  const OpInfo *op = lookupOp(name);
  if (!op || op->kind != OpKind::TensorTensor) return std::nullopt;
  return op->numerics.alu;
}

bool accumulatesInAnyOrder(AluOp op) {
  return op == AluOp::Add || op == AluOp::Multiply || op == AluOp::Maximum || op == AluOp::Minimum;
}

bool engineComputes(Engine engine, std::span<const AluOp> ops, int ncGeneration) {
  auto addOrMultiply = [](AluOp op) { return op == AluOp::Add || op == AluOp::Multiply; };
  if (ops.empty()) return engine == Engine::Vector || engine == Engine::Scalar || engine == Engine::GpSimd;
  switch (engine) {
  case Engine::Vector: return true;
  case Engine::GpSimd: return std::all_of(ops.begin(), ops.end(), addOrMultiply);
  case Engine::Scalar:
    if (ncGeneration < 3 || ops.size() > 2) return false;
    if (ops.size() == 1) return addOrMultiply(ops[0]);
    return ops[0] == AluOp::Multiply && ops[1] == AluOp::Add;
  default: return false;
  }
}

bool matmulTransposesStationary(const OpInfo &op, bool transposeX) { return op.name == "nl.matmul" && !transposeX; }

bool isLoopIterator(std::string_view n) {
  return n == "nl.affine_range" || n == "nl.sequential_range" || n == "nl.static_range";
}

} // namespace accelopt::nki
