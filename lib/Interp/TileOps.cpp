#include "Interp/TileOps.h"

#include "Interp/Uninit.h"
#include "NKI/PyCore.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

namespace accelopt::interp {

namespace {

// --- Per-element operator functors -----------------------------------------------
// Each is a type with a static `apply`, so the tile loops are instantiated per
// operator and the per-element code is inlined and, where possible, vectorised.

/// Value -> int32 for bitwise operators: truncate, saturate, NaN -> 0.
inline int32_t toInt32(float x) {
  // 2147483520 is the largest fp32 below 2^31; anything larger would overflow the cast.
  float clamped = std::clamp(x, -2147483648.0f, 2147483520.0f);
  return x != x ? 0 : static_cast<int32_t>(clamped);
}
inline float truth(bool value) { return value ? 1.0f : 0.0f; }

struct AddOp {
  static float apply(float a, float b) { return a + b; }
};
struct SubtractOp {
  static float apply(float a, float b) { return a - b; }
};
struct MultiplyOp {
  static float apply(float a, float b) { return a * b; }
};
struct DivideOp {
  static float apply(float a, float b) { return a / b; }
};
// The select order makes a NaN in either operand win; the result is quieted
// because it is one of the operands, not the product of arithmetic.
struct MaximumOp {
  static float apply(float a, float b) {
    float nanOrB = a != a ? a : b;
    return quieted(a > b ? a : nanOrB);
  }
};
struct MinimumOp {
  static float apply(float a, float b) {
    float nanOrB = a != a ? a : b;
    return quieted(a < b ? a : nanOrB);
  }
};
struct PowerOp {
  static float apply(float a, float b) { return std::pow(a, b); }
};
struct EqualOp {
  static float apply(float a, float b) { return truth(a == b); }
};
struct NotEqualOp {
  static float apply(float a, float b) { return truth(a != b); }
};
struct GreaterOp {
  static float apply(float a, float b) { return truth(a > b); }
};
struct GreaterEqualOp {
  static float apply(float a, float b) { return truth(a >= b); }
};
struct LessOp {
  static float apply(float a, float b) { return truth(a < b); }
};
struct LessEqualOp {
  static float apply(float a, float b) { return truth(a <= b); }
};
struct LogicalAndOp {
  static float apply(float a, float b) { return truth((a != 0.0f) & (b != 0.0f)); }
};
struct LogicalOrOp {
  static float apply(float a, float b) { return truth((a != 0.0f) | (b != 0.0f)); }
};
struct LogicalXorOp {
  static float apply(float a, float b) { return truth((a != 0.0f) != (b != 0.0f)); }
};
struct BitwiseAndOp {
  static float apply(float a, float b) { return static_cast<float>(toInt32(a) & toInt32(b)); }
};
struct BitwiseOrOp {
  static float apply(float a, float b) { return static_cast<float>(toInt32(a) | toInt32(b)); }
};
struct BitwiseXorOp {
  static float apply(float a, float b) { return static_cast<float>(toInt32(a) ^ toInt32(b)); }
};
struct LeftShiftOp {
  static float apply(float a, float b) {
    int32_t count = toInt32(b);
    if (count < 0 || count > 31) return 0.0f;
    return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(toInt32(a)) << count));
  }
};
struct RightShiftOp {
  static float apply(float a, float b) {
    int32_t count = toInt32(b);
    if (count < 0 || count > 31) return 0.0f;
    return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(toInt32(a)) >> count));
  }
};

// fmod is arithmetic on both operands, so a NaN operand comes out quiet; the floor variant
// moves a non-zero remainder whose sign differs from the divisor's by one divisor.
struct FmodOp {
  static float apply(float a, float b) { return quieted(std::fmod(a, b)); }
};
struct ModOp {
  static float apply(float a, float b) {
    float r = std::fmod(a, b);
    return quieted(r != 0.0f && ((r < 0.0f) != (b < 0.0f)) ? r + b : r);
  }
};

/// `Op` with its operands swapped (the reverse flags of tensor_scalar / scan).
template <class Op> struct Swapped {
  static float apply(float a, float b) { return Op::apply(b, a); }
};

/// Calls `body(OpFunctor{})` for `op`: the one switch of an instruction.
template <class Body> void withAluOp(AluOp op, Body &&body) {
  switch (op) {
  case AluOp::Add: return body(AddOp{});
  case AluOp::Subtract: return body(SubtractOp{});
  case AluOp::Multiply: return body(MultiplyOp{});
  case AluOp::Divide: return body(DivideOp{});
  case AluOp::Maximum: return body(MaximumOp{});
  case AluOp::Minimum: return body(MinimumOp{});
  case AluOp::Power: return body(PowerOp{});
  case AluOp::Equal: return body(EqualOp{});
  case AluOp::NotEqual: return body(NotEqualOp{});
  case AluOp::Greater: return body(GreaterOp{});
  case AluOp::GreaterEqual: return body(GreaterEqualOp{});
  case AluOp::Less: return body(LessOp{});
  case AluOp::LessEqual: return body(LessEqualOp{});
  case AluOp::LogicalAnd: return body(LogicalAndOp{});
  case AluOp::LogicalOr: return body(LogicalOrOp{});
  case AluOp::LogicalXor: return body(LogicalXorOp{});
  case AluOp::BitwiseAnd: return body(BitwiseAndOp{});
  case AluOp::BitwiseOr: return body(BitwiseOrOp{});
  case AluOp::BitwiseXor: return body(BitwiseXorOp{});
  case AluOp::LeftShift: return body(LeftShiftOp{});
  case AluOp::RightShift: return body(RightShiftOp{});
  case AluOp::Mod: return body(ModOp{});
  case AluOp::Fmod: return body(FmodOp{});
  }
}

// --- Activation functors ------------------------------------------------------------
// Inputs are always the result of `x * scale + bias`, i.e. of arithmetic, so a NaN
// reaching these is already quiet and returning it unchanged is safe.

constexpr float kInvSqrt2 = static_cast<float>(1.0 / std::numbers::sqrt2);
constexpr float kInvSqrt2Pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
constexpr float kTwoOverSqrtPi = static_cast<float>(2.0 * std::numbers::inv_sqrtpi);
constexpr float kSqrtTwoOverPi = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
/// The standard normal CDF. erfc keeps full relative precision in the left tail,
/// where 1 + erf(x) would cancel.
inline float normalCdf(float x) { return 0.5f * std::erfc(-x * kInvSqrt2); }
inline float softplus(float x) {
  // max(x, 0) + log1p(exp(-|x|)) neither overflows for large x nor loses small ones.
  return std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x)));
}

struct CopyFn {
  static float apply(float x) { return x; }
};
struct SquareFn {
  static float apply(float x) { return x * x; }
};
struct SigmoidFn {
  static float apply(float x) { return sigmoid(x); }
};
struct ReluFn {
  static float apply(float x) { return x <= 0.0f ? 0.0f : x; }
};
struct GeluFn {
  static float apply(float x) { return x * normalCdf(x); }
};
struct GeluDxFn {
  // d/dx x*Phi(x) = Phi(x) + x*phi(x)
  static float apply(float x) { return normalCdf(x) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x); }
};
struct GeluApproxTanhFn {
  // 0.5*(1 + tanh(u)) == sigmoid(2u), which does not cancel for negative u.
  static float apply(float x) { return x * sigmoid(2.0f * kSqrtTwoOverPi * (x + 0.044715f * x * x * x)); }
};
struct GeluApproxSigmoidFn {
  static float apply(float x) { return x * sigmoid(1.702f * x); }
};
struct SiluFn {
  static float apply(float x) { return x * sigmoid(x); }
};
struct SiluDxFn {
  // sigmoid(x) * (1 + x * (1 - sigmoid(x))), with 1 - sigmoid(x) as sigmoid(-x) to avoid cancellation.
  static float apply(float x) { return sigmoid(x) * (1.0f + x * sigmoid(-x)); }
};
struct TanhFn {
  static float apply(float x) { return std::tanh(x); }
};
struct SoftplusFn {
  static float apply(float x) { return softplus(x); }
};
struct MishFn {
  static float apply(float x) { return x * std::tanh(softplus(x)); }
};
struct ErfFn {
  static float apply(float x) { return std::erf(x); }
};
struct ErfDxFn {
  static float apply(float x) { return kTwoOverSqrtPi * std::exp(-x * x); }
};
struct ExpFn {
  static float apply(float x) { return std::exp(x); }
};
struct LogFn {
  static float apply(float x) { return std::log(x); }
};
struct SinFn {
  static float apply(float x) { return std::sin(x); }
};
struct CosFn {
  static float apply(float x) { return std::cos(x); }
};
struct ArctanFn {
  static float apply(float x) { return std::atan(x); }
};
struct SqrtFn {
  static float apply(float x) { return std::sqrt(x); }
};
struct RsqrtFn {
  static float apply(float x) { return 1.0f / std::sqrt(x); }
};
struct ReciprocalFn {
  static float apply(float x) { return 1.0f / x; }
};
struct SignFn {
  static float apply(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x; }
};
struct AbsFn {
  static float apply(float x) { return std::fabs(x); }
};
struct TanFn {
  static float apply(float x) { return std::tan(x); }
};
struct FloorFn {
  static float apply(float x) { return quieted(std::floor(x)); }
};
struct CeilFn {
  static float apply(float x) { return quieted(std::ceil(x)); }
};
struct TruncFn {
  static float apply(float x) { return quieted(std::trunc(x)); }
};

template <class Body> void withActFunc(ActFunc func, Body &&body) {
  switch (func) {
  case ActFunc::Copy: return body(CopyFn{});
  case ActFunc::Square: return body(SquareFn{});
  case ActFunc::Sigmoid: return body(SigmoidFn{});
  case ActFunc::Relu: return body(ReluFn{});
  case ActFunc::Gelu: return body(GeluFn{});
  case ActFunc::GeluDx: return body(GeluDxFn{});
  case ActFunc::GeluApproxTanh: return body(GeluApproxTanhFn{});
  case ActFunc::GeluApproxSigmoid: return body(GeluApproxSigmoidFn{});
  case ActFunc::Silu: return body(SiluFn{});
  case ActFunc::SiluDx: return body(SiluDxFn{});
  case ActFunc::Tanh: return body(TanhFn{});
  case ActFunc::Softplus: return body(SoftplusFn{});
  case ActFunc::Mish: return body(MishFn{});
  case ActFunc::Erf: return body(ErfFn{});
  case ActFunc::ErfDx: return body(ErfDxFn{});
  case ActFunc::Exp: return body(ExpFn{});
  case ActFunc::Log: return body(LogFn{});
  case ActFunc::Sin: return body(SinFn{});
  case ActFunc::Arctan: return body(ArctanFn{});
  case ActFunc::Sqrt: return body(SqrtFn{});
  case ActFunc::Rsqrt: return body(RsqrtFn{});
  case ActFunc::Reciprocal: return body(ReciprocalFn{});
  case ActFunc::Sign: return body(SignFn{});
  case ActFunc::Abs: return body(AbsFn{});
  case ActFunc::Cos: return body(CosFn{});
  case ActFunc::Tan: return body(TanFn{});
  case ActFunc::Floor: return body(FloorFn{});
  case ActFunc::Ceil: return body(CeilFn{});
  case ActFunc::Trunc: return body(TruncFn{});
  }
}

// --- Names ----------------------------------------------------------------------------

enum Namespaces : uint8_t { kNki = 1, kNumpy = 2, kBoth = kNki | kNumpy };

template <class Enum> struct NameEntry {
  Enum value;
  std::string_view name;
  uint8_t namespaces;
};

// The first NKI entry of each value is its canonical name.
constexpr NameEntry<AluOp> kAluOpNames[] = {
    {AluOp::Add, "add", kBoth},
    {AluOp::Subtract, "subtract", kBoth},
    {AluOp::Multiply, "multiply", kBoth},
    {AluOp::Divide, "divide", kBoth},
    {AluOp::Divide, "true_divide", kNumpy},
    {AluOp::Maximum, "maximum", kBoth},
    {AluOp::Maximum, "max", kBoth},
    {AluOp::Maximum, "amax", kNumpy},
    {AluOp::Minimum, "minimum", kBoth},
    {AluOp::Minimum, "min", kBoth},
    {AluOp::Minimum, "amin", kNumpy},
    {AluOp::Power, "power", kBoth},
    {AluOp::Equal, "equal", kBoth},
    {AluOp::NotEqual, "not_equal", kBoth},
    {AluOp::Greater, "greater", kBoth},
    {AluOp::GreaterEqual, "greater_equal", kBoth},
    {AluOp::Less, "less", kBoth},
    {AluOp::LessEqual, "less_equal", kBoth},
    {AluOp::LogicalAnd, "logical_and", kBoth},
    {AluOp::LogicalOr, "logical_or", kBoth},
    {AluOp::LogicalXor, "logical_xor", kBoth},
    {AluOp::BitwiseAnd, "bitwise_and", kBoth},
    {AluOp::BitwiseOr, "bitwise_or", kBoth},
    {AluOp::BitwiseXor, "bitwise_xor", kBoth},
    {AluOp::LeftShift, "left_shift", kBoth},
    {AluOp::RightShift, "right_shift", kBoth},
    {AluOp::Mod, "mod", kBoth},
    {AluOp::Mod, "remainder", kNumpy},
    {AluOp::Fmod, "fmod", kBoth},
};

constexpr NameEntry<ActFunc> kActFuncNames[] = {
    {ActFunc::Copy, "copy", kBoth},
    {ActFunc::Copy, "identity", kNki},
    {ActFunc::Square, "square", kBoth},
    {ActFunc::Sigmoid, "sigmoid", kNki},
    {ActFunc::Relu, "relu", kNki},
    {ActFunc::Gelu, "gelu", kNki},
    {ActFunc::GeluDx, "gelu_dx", kNki},
    {ActFunc::GeluApproxTanh, "gelu_apprx_tanh", kNki},
    {ActFunc::GeluApproxSigmoid, "gelu_apprx_sigmoid", kNki},
    {ActFunc::Silu, "silu", kNki},
    {ActFunc::SiluDx, "silu_dx", kNki},
    {ActFunc::Tanh, "tanh", kBoth},
    {ActFunc::Softplus, "softplus", kNki},
    {ActFunc::Mish, "mish", kNki},
    {ActFunc::Erf, "erf", kNki},
    {ActFunc::ErfDx, "erf_dx", kNki},
    {ActFunc::Exp, "exp", kBoth},
    {ActFunc::Log, "log", kBoth},
    {ActFunc::Sin, "sin", kBoth},
    {ActFunc::Cos, "cos", kBoth},
    {ActFunc::Arctan, "arctan", kBoth},
    {ActFunc::Sqrt, "sqrt", kBoth},
    {ActFunc::Rsqrt, "rsqrt", kNki},
    {ActFunc::Reciprocal, "reciprocal", kBoth},
    {ActFunc::Sign, "sign", kBoth},
    {ActFunc::Abs, "abs", kBoth},
    {ActFunc::Abs, "absolute", kNumpy},
    {ActFunc::Tan, "tan", kBoth},
    {ActFunc::Floor, "floor", kBoth},
    {ActFunc::Ceil, "ceil", kBoth},
    {ActFunc::Trunc, "trunc", kBoth},
};

/// Splits "np.add" into the namespace it may come from and the bare name.
std::pair<uint8_t, std::string> splitModule(std::string_view spelled) {
  std::string name = nki::pycore::canonicalPath(spelled);
  if (name.starts_with("nl.")) return {kNki, name.substr(3)};
  if (name.starts_with("np.")) return {kNumpy, name.substr(3)};
  return {kNki, name};
}

template <class Enum, size_t N>
std::optional<Enum> lookUp(const NameEntry<Enum> (&table)[N], std::string_view spelled) {
  auto [space, bare] = splitModule(spelled);
  for (const NameEntry<Enum> &entry : table)
    if (entry.name == bare && (entry.namespaces & space)) return entry.value;
  return std::nullopt;
}

/// "nl.<name>" for every value, built once from the tables.
template <class Enum, size_t N, int kCount>
const std::array<std::string, kCount> &canonicalNames(const NameEntry<Enum> (&table)[N]) {
  static const std::array<std::string, kCount> names = [&] {
    std::array<std::string, kCount> result;
    for (const NameEntry<Enum> &entry : table) {
      std::string &slot = result[static_cast<size_t>(entry.value)];
      if (slot.empty() && (entry.namespaces & kNki)) slot = "nl." + std::string(entry.name);
    }
    return result;
  }();
  return names;
}

// --- Shape checks -----------------------------------------------------------------------

std::string describe(int64_t rows, int64_t cols) { return formatShape(std::array<int64_t, 2>{rows, cols}); }
std::string describe(ConstTile tile) { return describe(tile.rows, tile.cols); }

llvm::Error shapeError(std::string_view instruction, const std::string &message) {
  return llvm::createStringError(std::errc::invalid_argument, "%.*s: %s", static_cast<int>(instruction.size()),
                                 instruction.data(), message.c_str());
}

llvm::Error checkSameShape(std::string_view instruction, ConstTile out, ConstTile in, std::string_view role) {
  if (in.rows == out.rows && in.cols == out.cols) return llvm::Error::success();
  return shapeError(instruction,
                    std::string(role) + " tile " + describe(in) + " differs from the output tile " + describe(out));
}

llvm::Error checkBroadcastsTo(std::string_view instruction, ConstTile operand, ConstTile out, std::string_view role) {
  bool rowsFit = operand.rows == out.rows || operand.rows == 1;
  bool colsFit = operand.cols == out.cols || operand.cols == 1;
  if (rowsFit && colsFit) return llvm::Error::success();
  return shapeError(instruction, std::string(role) + " tile " + describe(operand) +
                                     " does not broadcast to the output tile " + describe(out));
}

llvm::Error checkColumn(std::string_view instruction, ConstTile out, int64_t partitions) {
  if (out.rows == partitions && out.cols == 1) return llvm::Error::success();
  return shapeError(instruction, "result tile " + describe(out) + " should be [" + std::to_string(partitions) + ", 1]");
}

// --- Shared loops -------------------------------------------------------------------------

/// Folds a row in 8 interleaved lanes, then combines the lanes pairwise: a fixed
/// order that vectorises and is reproducible. `identity` is the neutral element
/// (it also makes a 1-element fold do arithmetic, so NaNs come out quiet).
template <class Op> float foldLanes(const float *x, int64_t n, float identity) {
  constexpr int64_t kLanes = 8;
  float lanes[kLanes];
  std::fill_n(lanes, kLanes, identity);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] = Op::apply(lanes[k], x[j + k]);
  for (int64_t k = 0; j < n; ++j, ++k) lanes[k] = Op::apply(lanes[k], x[j]);
  for (int64_t width = kLanes / 2; width > 0; width /= 2)
    for (int64_t k = 0; k < width; ++k) lanes[k] = Op::apply(lanes[k], lanes[k + width]);
  return lanes[0];
}

/// Left fold x0 op x1 op ... for operators without a lane-friendly identity.
template <class Op> float foldSequential(const float *x, int64_t n) {
  float result = x[0];
  for (int64_t j = 1; j < n; ++j) result = Op::apply(result, x[j]);
  return quieted(result);
}

/// out = op(data, operand) (or reversed) for every row of the tile.
void applyScalarStep(Tile out, ConstTile data, const ScalarStep &step) {
  withAluOp(step.op, [&](auto opTag) {
    using Op = decltype(opTag);
    for (int64_t r = 0; r < out.rows; ++r) {
      const float *x = data.row(r);
      float s = step.operand.at(r);
      if (step.reverse)
        generateElements(out.row(r), out.cols, [&](int64_t j) { return Op::apply(s, x[j]); });
      else
        generateElements(out.row(r), out.cols, [&](int64_t j) { return Op::apply(x[j], s); });
    }
  });
}

/// The operators tensor_tensor_scan accepts, with the reverse flag folded into the type.
template <class Body> bool withScanOp(AluOp op, bool reverse, Body &&body) {
  auto pick = [&](auto forward, auto swapped) { reverse ? body(swapped) : body(forward); };
  switch (op) {
  case AluOp::Add: body(AddOp{}); return true; // commutative
  case AluOp::Multiply: body(MultiplyOp{}); return true;
  case AluOp::Subtract: pick(SubtractOp{}, Swapped<SubtractOp>{}); return true;
  case AluOp::Divide: pick(DivideOp{}, Swapped<DivideOp>{}); return true;
  // Operand order decides which of +-0 or of two NaNs comes out.
  case AluOp::Maximum: pick(MaximumOp{}, Swapped<MaximumOp>{}); return true;
  case AluOp::Minimum: pick(MinimumOp{}, Swapped<MinimumOp>{}); return true;
  default: return false;
  }
}

} // namespace

// --- Names and single elements --------------------------------------------------------------

std::optional<AluOp> aluOpFromName(std::string_view name) { return lookUp(kAluOpNames, name); }
std::optional<ActFunc> actFuncFromName(std::string_view name) { return lookUp(kActFuncNames, name); }

std::string_view name(AluOp op) {
  return canonicalNames<AluOp, std::size(kAluOpNames), kAluOpCount>(kAluOpNames)[static_cast<size_t>(op)];
}
std::string_view name(ActFunc func) {
  return canonicalNames<ActFunc, std::size(kActFuncNames), kActFuncCount>(kActFuncNames)[static_cast<size_t>(func)];
}

float applyAlu(AluOp op, float a, float b) {
  float result = 0.0f;
  withAluOp(op, [&](auto opTag) { result = decltype(opTag)::apply(a, b); });
  return result;
}

float applyActivation(ActFunc func, float x) {
  float result = 0.0f;
  withActFunc(func, [&](auto fnTag) { result = decltype(fnTag)::apply(x); });
  return result;
}

llvm::Error PerPartition::checkFor(int64_t partitions, std::string_view instruction, std::string_view role) const {
  if (!Column || (Column->cols == 1 && (Column->rows == partitions || Column->rows == 1)))
    return llvm::Error::success();
  return shapeError(instruction, std::string(role) + " tile " + describe(*Column) + " should be a scalar or [" +
                                     std::to_string(partitions) + ", 1]");
}

// --- Instructions ------------------------------------------------------------------------------

llvm::Error matmul(Tile out, ConstTile stationary, ConstTile moving, bool accumulate) {
  constexpr std::string_view kName = "nc_matmul";
  if (stationary.rows != moving.rows)
    return shapeError(kName, "stationary " + describe(stationary) + " and moving " + describe(moving) +
                                 " differ in the contraction (partition) size");
  if (out.rows != stationary.cols || out.cols != moving.cols)
    return shapeError(kName, "result tile " + describe(out) + " should be [" + std::to_string(stationary.cols) + ", " +
                                 std::to_string(moving.cols) + "]");
  for (int64_t extent : {out.rows, out.cols, stationary.rows, stationary.rowStride, moving.rowStride, out.rowStride})
    if (extent > INT_MAX) return shapeError(kName, "tile extents beyond 2^31 are not supported by BLAS");
  if (out.rows == 0 || out.cols == 0) return llvm::Error::success();
  // BLAS insists on leading dimensions >= the row length even for a single row.
  auto leading = [](auto tile) { return static_cast<int>(std::max(tile.rowStride, tile.cols)); };
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(out.rows), static_cast<int>(out.cols),
              static_cast<int>(stationary.rows), 1.0f, stationary.data, leading(stationary), moving.data,
              leading(moving), accumulate ? 1.0f : 0.0f, out.data, leading(out));
  return llvm::Error::success();
}

llvm::Error applyBinary(AluOp op, Tile out, ConstTile a, ConstTile b) {
  std::string_view instruction = name(op);
  if (llvm::Error err = checkBroadcastsTo(instruction, a, out, "first operand")) return err;
  if (llvm::Error err = checkBroadcastsTo(instruction, b, out, "second operand")) return err;
  // A (.., 1) operand contributes one value per row; a (1, ..) operand the same row for all.
  bool aIsRow = a.cols == out.cols, bIsRow = b.cols == out.cols;
  int64_t aStride = a.rows == 1 ? 0 : a.rowStride, bStride = b.rows == 1 ? 0 : b.rowStride;
  withAluOp(op, [&](auto opTag) {
    using Op = decltype(opTag);
    for (int64_t r = 0; r < out.rows; ++r) {
      const float *x = a.data + r * aStride;
      const float *y = b.data + r * bStride;
      float *o = out.row(r);
      if (aIsRow && bIsRow) {
        generateElements(o, out.cols, [&](int64_t j) { return Op::apply(x[j], y[j]); });
      } else if (aIsRow) {
        float s = y[0];
        generateElements(o, out.cols, [&](int64_t j) { return Op::apply(x[j], s); });
      } else if (bIsRow) {
        float s = x[0];
        generateElements(o, out.cols, [&](int64_t j) { return Op::apply(s, y[j]); });
      } else {
        std::fill_n(o, out.cols, Op::apply(x[0], y[0]));
      }
    }
  });
  return llvm::Error::success();
}

llvm::Error applyBinary(AluOp op, Tile out, ConstTile a, float b) {
  return applyBinary(op, out, a, ConstTile{&b, 1, 1, 1});
}

llvm::Error applyBinary(AluOp op, Tile out, float a, ConstTile b) {
  return applyBinary(op, out, ConstTile{&a, 1, 1, 1}, b);
}

llvm::Error tensorScalar(Tile out, ConstTile data, ScalarStep first, std::optional<ScalarStep> second) {
  constexpr std::string_view kName = "tensor_scalar";
  if (llvm::Error err = checkSameShape(kName, out, data, "data")) return err;
  if (llvm::Error err = first.operand.checkFor(out.rows, kName, "operand0")) return err;
  if (second)
    if (llvm::Error err = second->operand.checkFor(out.rows, kName, "operand1")) return err;
  applyScalarStep(out, data, first);
  if (second) applyScalarStep(out, out, *second);
  return llvm::Error::success();
}

llvm::Error activation(Tile out, ActFunc func, ConstTile data, PerPartition scale, PerPartition bias,
                       std::optional<Tile> reduceSum) {
  constexpr std::string_view kName = "activation";
  if (llvm::Error err = checkSameShape(kName, out, data, "data")) return err;
  if (llvm::Error err = scale.checkFor(out.rows, kName, "scale")) return err;
  if (llvm::Error err = bias.checkFor(out.rows, kName, "bias")) return err;
  if (reduceSum)
    if (llvm::Error err = checkColumn(kName, *reduceSum, out.rows)) return err;
  withActFunc(func, [&](auto fnTag) {
    using Fn = decltype(fnTag);
    for (int64_t r = 0; r < out.rows; ++r) {
      const float *x = data.row(r);
      float s = scale.at(r), b = bias.at(r);
      generateElements(out.row(r), out.cols, [&](int64_t j) { return Fn::apply(x[j] * s + b); });
      if (reduceSum) reduceSum->at(r, 0) = foldLanes<AddOp>(out.row(r), out.cols, -0.0f);
    }
  });
  return llvm::Error::success();
}

llvm::Error tensorReduce(Tile out, AluOp op, ConstTile data, bool negate) {
  constexpr std::string_view kName = "tensor_reduce";
  if (llvm::Error err = checkColumn(kName, out, data.rows)) return err;
  if (data.cols == 0) return shapeError(kName, "cannot reduce the empty free axis of tile " + describe(data));
  auto reduceRows = [&](auto fold) {
    for (int64_t r = 0; r < data.rows; ++r) {
      float value = fold(data.row(r), data.cols);
      out.at(r, 0) = negate ? -value : value;
    }
  };
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (op) {
  case AluOp::Add: reduceRows([](auto x, auto n) { return foldLanes<AddOp>(x, n, -0.0f); }); break;
  case AluOp::Multiply: reduceRows([](auto x, auto n) { return foldLanes<MultiplyOp>(x, n, 1.0f); }); break;
  case AluOp::Maximum: reduceRows([](auto x, auto n) { return foldLanes<MaximumOp>(x, n, -kInf); }); break;
  case AluOp::Minimum: reduceRows([](auto x, auto n) { return foldLanes<MinimumOp>(x, n, kInf); }); break;
  case AluOp::Subtract:
  case AluOp::LogicalAnd:
  case AluOp::LogicalOr:
  case AluOp::LogicalXor:
  case AluOp::BitwiseAnd:
  case AluOp::BitwiseOr:
  case AluOp::BitwiseXor:
    withAluOp(op,
              [&](auto opTag) { reduceRows([](auto x, auto n) { return foldSequential<decltype(opTag)>(x, n); }); });
    break;
  default: return shapeError(kName, std::string(name(op)) + " is not a reduction operator");
  }
  return llvm::Error::success();
}

llvm::Error tensorTensorScan(Tile out, ConstTile data0, ConstTile data1, PerPartition initial, AluOp op0, AluOp op1,
                             bool reverse0, bool reverse1) {
  constexpr std::string_view kName = "tensor_tensor_scan";
  if (llvm::Error err = checkSameShape(kName, out, data0, "data0")) return err;
  if (llvm::Error err = checkSameShape(kName, out, data1, "data1")) return err;
  if (llvm::Error err = initial.checkFor(out.rows, kName, "initial")) return err;
  auto isScanOp = [](AluOp op) { return withScanOp(op, false, [](auto) {}); };
  if (!isScanOp(op0) || !isScanOp(op1))
    return shapeError(kName, "operators must be add, subtract, multiply, divide, maximum or "
                             "minimum, got " +
                                 std::string(name(op0)) + " and " + std::string(name(op1)));
  withScanOp(op0, reverse0, [&](auto first) {
    withScanOp(op1, reverse1, [&](auto second) {
      using Op0 = decltype(first);
      using Op1 = decltype(second);
      for (int64_t r = 0; r < out.rows; ++r) {
        const float *x0 = data0.row(r);
        const float *x1 = data1.row(r);
        float *o = out.row(r);
        float carry = initial.at(r);
        for (int64_t j = 0; j < out.cols; ++j) {
          carry = Op1::apply(Op0::apply(x0[j], carry), x1[j]);
          o[j] = carry;
        }
      }
    });
  });
  return llvm::Error::success();
}

llvm::Error transpose(Tile out, ConstTile in) {
  if (out.rows != in.cols || out.cols != in.rows)
    return shapeError("nc_transpose", "result tile " + describe(out) + " should be " + describe(in.cols, in.rows));
  // Square blocks keep both the reads and the writes within a few cache lines.
  constexpr int64_t kBlock = 32;
  for (int64_t r0 = 0; r0 < in.rows; r0 += kBlock)
    for (int64_t c0 = 0; c0 < in.cols; c0 += kBlock) {
      int64_t rEnd = std::min(r0 + kBlock, in.rows), cEnd = std::min(c0 + kBlock, in.cols);
      for (int64_t c = c0; c < cEnd; ++c)
        for (int64_t r = r0; r < rEnd; ++r) out.at(c, r) = in.at(r, c);
    }
  return llvm::Error::success();
}

llvm::Error copy(Tile out, ConstTile in) {
  if (llvm::Error err = checkSameShape("tensor_copy", out, in, "source")) return err;
  if (out.cols == 0) // empty tiles may have no storage at all
    return llvm::Error::success();
  for (int64_t r = 0; r < out.rows; ++r)
    std::memmove(out.row(r), in.row(r), static_cast<size_t>(out.cols) * sizeof(float));
  return llvm::Error::success();
}

llvm::Error reciprocal(Tile out, ConstTile in) {
  if (llvm::Error err = checkSameShape("reciprocal", out, in, "data")) return err;
  for (int64_t r = 0; r < out.rows; ++r) {
    const float *x = in.row(r);
    generateElements(out.row(r), out.cols, [&](int64_t j) { return 1.0f / x[j]; });
  }
  return llvm::Error::success();
}

llvm::Error dropout(Tile out, ConstTile in, PerPartition rate, uint64_t seed) {
  if (llvm::Error err = checkSameShape("dropout", out, in, "data")) return err;
  if (llvm::Error err = rate.checkFor(out.rows, "dropout", "rate")) return err;
  for (int64_t r = 0; r < out.rows; ++r) {
    float p = rate.at(r);
    if (!(p >= 0.0f && p <= 1.0f))
      return shapeError("dropout", "drop probability " + std::to_string(p) + " of partition " + std::to_string(r) +
                                       " is outside [0, 1]");
    const float *x = in.row(r);
    for (int64_t c = 0; c < out.cols; ++c) {
      // splitmix64 of (seed, r, c): a uniform draw in [0, 1).
      uint64_t z = seed + 0x9e3779b97f4a7c15ULL * uint64_t(r * out.cols + c + 1);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      double u = double(z >> 11) * 0x1.0p-53;
      out.row(r)[c] = u < double(p) ? 0.0f : x[c];
    }
  }
  return llvm::Error::success();
}

llvm::Error select(Tile out, ConstTile predicate, ConstTile onTrue, ConstTile onFalse) {
  constexpr std::string_view kName = "where";
  for (auto [tile, role] : {std::pair{predicate, "condition"}, {onTrue, "x"}, {onFalse, "y"}})
    if (llvm::Error err = checkBroadcastsTo(kName, tile, out, role)) return err;
  auto element = [](ConstTile t, int64_t r, int64_t c) { return t.at(t.rows == 1 ? 0 : r, t.cols == 1 ? 0 : c); };
  for (int64_t r = 0; r < out.rows; ++r)
    for (int64_t c = 0; c < out.cols; ++c)
      out.at(r, c) = quieted(element(predicate, r, c) != 0.0f ? element(onTrue, r, c) : element(onFalse, r, c));
  return llvm::Error::success();
}

llvm::Error bnStats(Tile out, ConstTile data) {
  constexpr std::string_view kName = "bn_stats";
  if (out.rows != data.rows || out.cols != kBnStatsWidth)
    return shapeError(kName, "result tile " + describe(out) + " should be [" + std::to_string(data.rows) + ", " +
                                 std::to_string(kBnStatsWidth) + "]");
  for (int64_t r = 0; r < data.rows; ++r) {
    const float *x = data.row(r);
    for (int64_t parity = 0; parity < 2; ++parity) {
      // Two passes in double: the mean, then the sum of squared deviations.
      int64_t count = 0;
      double sum = 0.0;
      for (int64_t j = parity; j < data.cols; j += 2, ++count) sum += x[j];
      double mean = count ? sum / double(count) : 0.0;
      double squares = 0.0;
      for (int64_t j = parity; j < data.cols; j += 2) squares += (x[j] - mean) * (x[j] - mean);
      float *o = out.row(r) + 3 * parity;
      o[0] = float(count);
      o[1] = float(mean);
      o[2] = float(squares);
    }
  }
  return llvm::Error::success();
}

llvm::Error bnAggr(Tile out, ConstTile data) {
  constexpr std::string_view kName = "bn_aggr";
  if (data.cols == 0 || data.cols % 3 != 0)
    return shapeError(kName, "input tile " + describe(data) +
                                 " should hold (count, mean, variance*count) triples (free size a multiple of 3)");
  if (out.rows != data.rows || out.cols != 2)
    return shapeError(kName, "result tile " + describe(out) + " should be [" + std::to_string(data.rows) + ", 2]");
  for (int64_t r = 0; r < data.rows; ++r) {
    const float *x = data.row(r);
    // Chan et al.'s pairwise combination: counts add, means weight by count, and the squared
    // deviations gain count * (mean_i - mean)^2.
    double count = 0.0, mean = 0.0, squares = 0.0;
    for (int64_t t = 0; t < data.cols; t += 3) {
      double n = x[t], m = x[t + 1], s = x[t + 2];
      if (n == 0.0) continue;
      double total = count + n, delta = m - mean;
      mean += delta * n / total;
      squares += s + delta * delta * count * n / total;
      count = total;
    }
    out.at(r, 0) = float(mean);
    out.at(r, 1) = count > 0.0 ? float(squares / count) : 0.0f;
  }
  return llvm::Error::success();
}

void memset(Tile out, float value) {
  for (int64_t r = 0; r < out.rows; ++r) std::fill_n(out.row(r), out.cols, value);
}

void iota(Tile out, int64_t base, int64_t partitionStep, int64_t freeStep) {
  // Unsigned arithmetic wraps modulo 2^32 exactly like int32 hardware arithmetic.
  auto wrap = [](int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); };
  for (int64_t r = 0; r < out.rows; ++r) {
    uint32_t rowStart = wrap(base) + wrap(r) * wrap(partitionStep);
    float *o = out.row(r);
    for (int64_t j = 0; j < out.cols; ++j)
      o[j] = static_cast<float>(static_cast<int32_t>(rowStart + wrap(j) * wrap(freeStep)));
  }
}

} // namespace accelopt::interp
