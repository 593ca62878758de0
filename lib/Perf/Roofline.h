// AccelOpt's theoretical peak for a benchmark problem (NKI.md §3.6): the
// largest of vector time, matmul time and compulsory-HBM-traffic time, from
// per-problem formulas kept as data in nkibench/roofline.json.
#pragma once

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace accelopt::perf {

/// A number as Python arithmetic sees it: integers stay exact until an
/// operation needs a float.
struct ExprValue {
  bool isInteger = true;
  int64_t integer = 0;
  double real = 0;

  static ExprValue ofInteger(int64_t v) { return {true, v, static_cast<double>(v)}; }
  static ExprValue ofReal(double v) { return {false, 0, v}; }
  double asDouble() const { return isInteger ? static_cast<double>(integer) : real; }
};

using ExprVariables = llvm::StringMap<ExprValue>;

/// Evaluates an arithmetic expression: integer and float literals (1e9, 1.5),
/// names bound in `variables`, + - * / // ** (right-associative), unary +/-,
/// parentheses. `/` is true division and `//` floor division, as in Python.
/// Integer overflow, division by zero and unknown names are errors.
llvm::Expected<ExprValue> evaluateExpression(llvm::StringRef text, const ExprVariables &variables);

/// A JSON object of numbers ({"M": 4096, "N": 2048}) as expression variables.
llvm::Expected<ExprVariables> variablesFromJSON(const nlohmann::json &values);

enum class RooflineBound : uint8_t { Vec, MM, Memory };
/// "vec", "mm", "memory" (AccelOpt's bound keys).
std::string_view rooflineBoundName(RooflineBound bound);

struct RooflinePeak {
  double vecFlops = 0, mmFlops = 0, totalBytes = 0;
  double vecMs = 0, mmMs = 0, memoryMs = 0;
  double peakMs = 0;
  RooflineBound bound = RooflineBound::Vec;

  /// Baseline % of peak as AccelOpt reports it: peak / measured (a fraction).
  double fractionOfPeak(double latencyMs) const { return peakMs / latencyMs; }
};

class Roofline {
public:
  /// nkibench/roofline.json as embedded in the library at build time.
  static llvm::Expected<Roofline> builtin();
  static llvm::Expected<Roofline> load(llvm::StringRef path);
  /// Checks that every formula parses; `origin` names the text in errors.
  static llvm::Expected<Roofline> parse(llvm::StringRef jsonText, llvm::StringRef origin);

  double peakBandwidth() const { return PeakBandwidth; }     ///< B/s
  double peakVecFlops() const { return PeakVecFlops; }       ///< FLOP/s
  double peakMatmulFlops() const { return PeakMatmulFlops; } ///< FLOP/s
  std::vector<std::string> problems() const;
  bool hasProblem(llvm::StringRef problem) const { return FormulasByProblem.count(problem.str()) != 0; }

  /// The peak of `problem` for a case's values (M, N, K, ...).
  llvm::Expected<RooflinePeak> peak(llvm::StringRef problem, const ExprVariables &values) const;

private:
  struct Formulas {
    std::string vecFlops, mmFlops, totalBytes;
  };
  double PeakBandwidth = 0, PeakVecFlops = 0, PeakMatmulFlops = 0;
  std::map<std::string, Formulas> FormulasByProblem;
};

} // namespace accelopt::perf
