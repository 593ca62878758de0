#include "NKI/DTypeLimits.h"

namespace accelopt::nki {

namespace {

struct FloatLimits {
  DType dtype;
  double max, eps, tiny;
  int bits;
};

// IEEE binary32/16, bfloat16 (8-bit exponent, 7-bit mantissa), TensorFloat-32 (binary32's range, 10-bit
// mantissa), and the OCP FP8 formats as ml_dtypes names them for NKI (float8_e4m3: e4m3fn, max 448).
constexpr FloatLimits kFloatLimits[] = {
    {DType::Float32, 3.4028234663852886e38, 1.1920928955078125e-07, 1.1754943508222875e-38, 32},
    {DType::BFloat16, 3.3895313892515355e38, 0.0078125, 1.1754943508222875e-38, 16},
    {DType::Float16, 65504.0, 0.0009765625, 6.103515625e-05, 16},
    {DType::TFloat32, 3.4028234663852886e38, 0.0009765625, 1.1754943508222875e-38, 32},
    {DType::Float8E4M3, 448.0, 0.125, 0.015625, 8},
    {DType::Float8E5M2, 57344.0, 0.25, 6.103515625e-05, 8},
};

} // namespace

std::vector<DTypeLimit> dtypeLimits(DType dtype, bool integerInfo) {
  if (integerInfo) {
    if (isFloat(dtype) || dtype == DType::Bool) return {};
    int bits = dtypeBytes(dtype) * 8;
    bool isSigned = dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32;
    double max = isSigned ? double((int64_t(1) << (bits - 1)) - 1) : double((int64_t(1) << bits) - 1);
    double min = isSigned ? -max - 1 : 0;
    return {{"min", min, true}, {"max", max, true}, {"bits", double(bits), true}};
  }
  for (const FloatLimits &f : kFloatLimits)
    if (f.dtype == dtype)
      return {{"min", -f.max, false},
              {"max", f.max, false},
              {"eps", f.eps, false},
              {"tiny", f.tiny, false},
              {"smallest_normal", f.tiny, false},
              {"bits", double(f.bits), true}};
  return {};
}

std::string_view dtypeInfoKind(std::string_view callee) {
  if (callee == "nl.finfo" || callee == "np.finfo") return "finfo";
  if (callee == "nl.iinfo" || callee == "np.iinfo") return "iinfo";
  return "";
}

} // namespace accelopt::nki
