#include "Perf/Bench.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace accelopt::perf {

namespace {

std::optional<double> geomean(const std::vector<double> &values) {
  if (values.empty()) return std::nullopt;
  double logSum = 0;
  for (double v : values) logSum += std::log(v);
  return std::exp(logSum / static_cast<double>(values.size()));
}

std::string fixed(double v, int decimals) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(("%." + std::to_string(decimals) + "f").c_str(), v);
  return os.str();
}

std::string percent(double fraction) { return fixed(fraction * 100, 1) + "%"; }
std::string signedPercent(double fraction) {
  std::string out(fraction >= 0 ? "+" : "");
  out += fixed(fraction * 100, 1);
  out += '%';
  return out;
}

std::string xmlEscape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string csvField(llvm::StringRef text) {
  if (text.find_first_of(",\"\n") == llvm::StringRef::npos) return text.str();
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

} // namespace

std::optional<RooflinePeak> peakForCase(const nki::SuiteCase &c) {
  static const auto roofline = []() -> std::optional<Roofline> {
    auto r = Roofline::builtin();
    if (!r) {
      llvm::consumeError(r.takeError());
      return std::nullopt;
    }
    return std::move(*r);
  }();
  if (!roofline || c.problem.empty() || !roofline->hasProblem(c.problem)) return std::nullopt;
  ExprVariables values;
  for (const auto &[name, v] : c.values)
    values[name] = v == std::floor(v) && std::fabs(v) < 9e15 ? ExprValue::ofInteger(static_cast<int64_t>(v))
                                                             : ExprValue::ofReal(v);
  auto peak = roofline->peak(c.problem, values);
  if (!peak) {
    llvm::consumeError(peak.takeError());
    return std::nullopt;
  }
  return *peak;
}

llvm::Expected<llvm::StringMap<double>> loadMeasuredLatencies(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  auto doc = nlohmann::json::parse((*buffer)->getBuffer().begin(), (*buffer)->getBuffer().end(), nullptr,
                                   /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_array())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: expected a JSON list of measured cases",
                                   path.str().c_str());
  llvm::StringMap<double> out;
  for (const auto &entry : doc) {
    if (!entry.is_object()) continue;
    auto name = entry.find("case_name");
    auto measured = entry.find("measured_trn1");
    if (name == entry.end() || !name->is_string() || measured == entry.end() || !measured->is_object()) continue;
    auto latency = measured->find("latency");
    if (latency != measured->end() && latency->is_number()) out[name->get<std::string>()] = latency->get<double>();
  }
  return out;
}

BenchSummary summarizeBench(const std::vector<BenchRow> &rows) {
  BenchSummary s;
  std::vector<double> estimated, measured, errors, ofPeak;
  for (const BenchRow &r : rows) {
    if (!r.error.empty()) {
      ++s.failed;
      continue;
    }
    ++s.profiled;
    if (r.unmodelled) ++s.lowerBounds;
    if (r.estimatedMs > 0) estimated.push_back(r.estimatedMs);
    if (r.peak && r.estimatedMs > 0) ofPeak.push_back(r.peak->fractionOfPeak(r.estimatedMs));
    if (auto e = r.relativeError()) {
      ++s.withMeasurement;
      measured.push_back(*r.measuredMs);
      errors.push_back(std::fabs(*e));
    }
  }
  s.geomeanEstimatedMs = geomean(estimated);
  s.geomeanMeasuredMs = geomean(measured);
  s.geomeanPercentOfPeak = geomean(ofPeak);
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    size_t n = errors.size();
    s.medianAbsError = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
    s.maxAbsError = errors.back();
  }
  return s;
}

std::string renderBenchTable(const std::vector<BenchRow> &rows, const BenchSummary &summary, llvm::StringRef backend) {
  bool anyMeasured = summary.withMeasurement > 0;
  size_t nameWidth = 4;
  for (const BenchRow &r : rows) nameWidth = std::max(nameWidth, r.name.size());
  std::string text;
  llvm::raw_string_ostream os(text);
  auto cell = [&](llvm::StringRef s, size_t width) {
    os << llvm::format("%*s", static_cast<int>(width), s.str().c_str()) << "  ";
  };
  os << llvm::format("%-*s", static_cast<int>(nameWidth), static_cast<const char *>("case")) << "  ";
  std::string estimatedHeader = "est ms (" + backend.str() + ")";
  cell(estimatedHeader, estimatedHeader.size());
  if (anyMeasured) {
    cell("measured ms", 11);
    cell("error", 8);
  }
  cell("roofline ms", 11);
  cell("bound", 6);
  cell("% of peak (est)", 15);
  os << "\n";
  for (const BenchRow &r : rows) {
    os << llvm::format("%-*s", static_cast<int>(nameWidth), r.name.c_str()) << "  ";
    if (!r.error.empty()) {
      os << "error: " << r.error << "\n";
      continue;
    }
    cell(fixed(r.estimatedMs, 4), estimatedHeader.size());
    if (anyMeasured) {
      cell(r.measuredMs ? fixed(*r.measuredMs, 4) : "-", 11);
      auto e = r.relativeError();
      cell(e ? signedPercent(*e) : "-", 8);
    }
    cell(r.peak ? fixed(r.peak->peakMs, 4) : "-", 11);
    cell(r.peak ? std::string(rooflineBoundName(r.peak->bound)) : "-", 6);
    cell(r.peak && r.estimatedMs > 0 ? percent(r.peak->fractionOfPeak(r.estimatedMs)) : "-", 15);
    if (r.unmodelled) os << "lower bound: " << r.unmodelled << " unmodelled (see `profile`)";
    os << "\n";
  }
  os << "cases: " << summary.profiled << " profiled";
  if (summary.failed) os << ", " << summary.failed << " failed";
  if (summary.lowerBounds)
    os << ", " << summary.lowerBounds << " estimated as lower bounds (work the model leaves out)";
  os << "\n";
  if (summary.geomeanEstimatedMs)
    os << "geomean estimated (" << backend << "): " << fixed(*summary.geomeanEstimatedMs, 4) << " ms\n";
  if (summary.geomeanMeasuredMs)
    os << "geomean measured: " << fixed(*summary.geomeanMeasuredMs, 4) << " ms over " << summary.withMeasurement
       << " cases\n";
  if (summary.medianAbsError)
    os << "|error| median " << percent(*summary.medianAbsError) << ", max " << percent(*summary.maxAbsError) << "\n";
  if (summary.geomeanPercentOfPeak)
    os << "geomean % of peak (estimated): " << percent(*summary.geomeanPercentOfPeak) << "\n";
  return os.str();
}

std::string renderBenchCsv(const std::vector<BenchRow> &rows, llvm::StringRef backend) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "case,problem,backend,estimated_ms,measured_ms,relative_error,roofline_ms,bound,"
        "percent_of_peak_estimated,error\n";
  for (const BenchRow &r : rows) {
    os << csvField(r.name) << "," << csvField(r.problem) << "," << csvField(backend) << ",";
    bool ok = r.error.empty();
    os << (ok ? fixed(r.estimatedMs, 6) : "") << ",";
    os << (r.measuredMs ? fixed(*r.measuredMs, 6) : "") << ",";
    auto e = r.relativeError();
    os << (e ? fixed(*e, 6) : "") << ",";
    os << (r.peak ? fixed(r.peak->peakMs, 6) : "") << ",";
    os << (r.peak ? std::string(rooflineBoundName(r.peak->bound)) : "") << ",";
    os << (ok && r.peak && r.estimatedMs > 0 ? fixed(r.peak->fractionOfPeak(r.estimatedMs) * 100, 3) : "") << ",";
    os << csvField(r.error) << "\n";
  }
  return os.str();
}

std::string renderBenchSvg(const std::vector<BenchRow> &rows, llvm::StringRef backend) {
  // One group of bars per case on a log scale (latencies span 3 decades).
  const double left = 70, top = 40, plotHeight = 260, barWidth = 14, groupGap = 18;
  std::vector<const BenchRow *> shown;
  double lo = INFINITY, hi = 0;
  bool anyMeasured = false;
  for (const BenchRow &r : rows) {
    if (!r.error.empty() || r.estimatedMs <= 0) continue;
    shown.push_back(&r);
    lo = std::min(lo, r.estimatedMs);
    hi = std::max(hi, r.estimatedMs);
    if (r.measuredMs && *r.measuredMs > 0) {
      anyMeasured = true;
      lo = std::min(lo, *r.measuredMs);
      hi = std::max(hi, *r.measuredMs);
    }
  }
  if (shown.empty()) lo = 0.001, hi = 1;
  double logLo = std::floor(std::log10(lo)), logHi = std::ceil(std::log10(hi));
  if (logHi <= logLo) logHi = logLo + 1;
  double groupWidth = barWidth * (anyMeasured ? 2 : 1) + groupGap;
  double width = left + groupWidth * static_cast<double>(shown.size()) + 160;
  double height = top + plotHeight + 250; // room for the rotated case names
  auto y = [&](double ms) {
    double f = (std::log10(ms) - logLo) / (logHi - logLo);
    return top + plotHeight * (1 - std::clamp(f, 0.0, 1.0));
  };

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fixed(width, 0) << "\" height=\"" << fixed(height, 0)
     << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << fixed(left, 0)
     << "\" y=\"20\" font-size=\"14\">Latency per case, ms (log "
        "scale): estimated ("
     << xmlEscape(backend) << ")" << (anyMeasured ? " vs measured" : "") << "</text>\n";
  for (double d = logLo; d <= logHi; d += 1) {
    double yy = y(std::pow(10.0, d));
    os << "<line x1=\"" << fixed(left, 0) << "\" x2=\"" << fixed(width - 150, 0) << "\" y1=\"" << fixed(yy, 1)
       << "\" y2=\"" << fixed(yy, 1) << "\" stroke=\"#ddd\"/>\n";
    os << "<text x=\"" << fixed(left - 6, 0) << "\" y=\"" << fixed(yy + 4, 1) << "\" text-anchor=\"end\">"
       << llvm::format("%g", std::pow(10.0, d)) << "</text>\n";
  }
  double baseline = top + plotHeight;
  for (size_t i = 0; i < shown.size(); ++i) {
    const BenchRow &r = *shown[i];
    double x = left + groupGap / 2 + groupWidth * static_cast<double>(i);
    auto bar = [&](double ms, const char *color, const char *what) {
      double yy = y(ms);
      os << "<rect x=\"" << fixed(x, 1) << "\" y=\"" << fixed(yy, 1) << "\" width=\"" << fixed(barWidth, 0)
         << "\" height=\"" << fixed(baseline - yy, 1) << "\" fill=\"" << color << "\"><title>" << xmlEscape(r.name)
         << " " << what << ": " << fixed(ms, 4) << " ms</title></rect>\n";
      x += barWidth;
    };
    bar(r.estimatedMs, "#4477aa", "estimated");
    if (anyMeasured && r.measuredMs) bar(*r.measuredMs, "#ee6677", "measured");
    double labelX = left + groupGap / 2 + groupWidth * static_cast<double>(i) + barWidth / 2;
    os << "<text transform=\"translate(" << fixed(labelX, 1) << "," << fixed(baseline + 8, 1) << ") rotate(60)\">"
       << xmlEscape(r.name) << "</text>\n";
  }
  double legendX = width - 140;
  os << "<rect x=\"" << fixed(legendX, 0) << "\" y=\"" << fixed(top, 0)
     << "\" width=\"12\" height=\"12\" fill=\"#4477aa\"/><text x=\"" << fixed(legendX + 16, 0) << "\" y=\""
     << fixed(top + 10, 0) << "\">estimated (" << xmlEscape(backend) << ")</text>\n";
  if (anyMeasured)
    os << "<rect x=\"" << fixed(legendX, 0) << "\" y=\"" << fixed(top + 18, 0)
       << "\" width=\"12\" height=\"12\" fill=\"#ee6677\"/><text x=\"" << fixed(legendX + 16, 0) << "\" y=\""
       << fixed(top + 28, 0) << "\">measured</text>\n";
  os << "</svg>\n";
  return os.str();
}

} // namespace accelopt::perf
