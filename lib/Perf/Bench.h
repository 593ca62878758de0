// Tabulating a suite's estimates: the pieces behind `accelopt-rewrite bench`
// (the estimates themselves come from a profile backend, lib/Profile).
#pragma once

#include "NKI/InputSources.h"
#include "NKI/KernelIR.h"
#include "Perf/Hardware.h"
#include "Perf/Profile.h"
#include "Perf/Roofline.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace accelopt::perf {

/// The built-in roofline peak of a suite case (NKI.md §3.6), when its problem
/// is in nkibench/roofline.json and its values fill the formulas.
std::optional<RooflinePeak> peakForCase(const nki::SuiteCase &c);

/// Measured latencies (ms) by case name, from an NKIBench
/// measured/trn1_baselines.json (a list of {case_name, measured_trn1: {latency}}).
llvm::Expected<llvm::StringMap<double>> loadMeasuredLatencies(llvm::StringRef path);

/// One row of a bench table.
struct BenchRow {
  std::string name;
  std::string problem;
  double estimatedMs = 0;
  std::optional<double> measuredMs;
  std::optional<RooflinePeak> peak;
  std::string error; ///< set when the case could not be profiled
  /// Statements or sub-expressions the model left out: the estimate is a lower bound.
  size_t unmodelled = 0;

  std::optional<double> relativeError() const {
    if (!measuredMs || *measuredMs <= 0 || !error.empty()) return std::nullopt;
    return (estimatedMs - *measuredMs) / *measuredMs;
  }
};

struct BenchSummary {
  std::optional<double> geomeanEstimatedMs, geomeanMeasuredMs;
  std::optional<double> medianAbsError, maxAbsError; ///< fractions
  std::optional<double> geomeanPercentOfPeak;        ///< estimated, fraction
  size_t profiled = 0, failed = 0, withMeasurement = 0;
  size_t lowerBounds = 0; ///< cases whose estimate leaves work out
};

BenchSummary summarizeBench(const std::vector<BenchRow> &rows);

/// The table as text, with `backend` ("sim-trn1") labelling the estimate.
std::string renderBenchTable(const std::vector<BenchRow> &rows, const BenchSummary &summary, llvm::StringRef backend);
std::string renderBenchCsv(const std::vector<BenchRow> &rows, llvm::StringRef backend);
/// A bar chart of estimated (and measured) latency per case, as SVG text.
std::string renderBenchSvg(const std::vector<BenchRow> &rows, llvm::StringRef backend);

} // namespace accelopt::perf
