#include "Perf/Profile.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>

namespace accelopt::perf {

llvm::ArrayRef<Profile::Field> Profile::fields() {
  static const Field table[] = {
      {"hbm_read_bytes", &Profile::hbmReadBytes, true},
      {"hbm_write_bytes", &Profile::hbmWriteBytes, true},
      {"psum_read_bytes", &Profile::psumReadBytes, true},
      {"psum_write_bytes", &Profile::psumWriteBytes, true},
      {"sbuf_read_bytes", &Profile::sbufReadBytes, true},
      {"sbuf_write_bytes", &Profile::sbufWriteBytes, true},
      {"spill_reload_bytes", &Profile::spillReloadBytes, true},
      {"spill_save_bytes", &Profile::spillSaveBytes, true},
      {"hardware_flops", &Profile::hardwareFlops, true},
      {"transpose_flops", &Profile::transposeFlops, true},
      {"peak_flops_bandwidth_ratio", &Profile::peakFlopsBandwidthRatio, false},
      {"mm_arithmetic_intensity", &Profile::mmArithmeticIntensity, false},
      {"hfu_estimated_percent", &Profile::hfuEstimatedPercent, false},
      {"scalar_engine_active_time_percent", &Profile::scalarEngineActiveTimePercent, false},
      {"vector_engine_active_time_percent", &Profile::vectorEngineActiveTimePercent, false},
      {"gpsimd_engine_active_time_percent", &Profile::gpsimdEngineActiveTimePercent, false},
  };
  return table;
}

namespace {
// Byte and FLOP counts stay integers in JSON, as neuron-profile writes them.
bool printableAsInteger(double v) { return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15; }
} // namespace

nlohmann::ordered_json Profile::toJSON() const {
  nlohmann::ordered_json out;
  out["backend"] = backend;
  out["latency"] = latency;
  for (const Field &f : fields()) {
    double v = this->*f.member;
    if (f.integral && printableAsInteger(v))
      out[std::string(f.name)] = static_cast<int64_t>(v);
    else
      out[std::string(f.name)] = v;
  }
  if (isLowerBound()) {
    out["lower_bound"] = true;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const UnmodelledWork &w : unmodelled) {
      nlohmann::ordered_json item;
      item["stmt"] = w.stmt >= 0 ? "S" + std::to_string(w.stmt) : std::string();
      item["line"] = w.line;
      item["what"] = w.what;
      item["reason"] = w.reason;
      list.push_back(std::move(item));
    }
    out["unmodelled"] = std::move(list);
  }
  return out;
}

std::string Profile::lowerBoundNote() const {
  if (!isLowerBound()) return "";
  return "lower bound: " + std::to_string(unmodelled.size()) +
         (unmodelled.size() == 1 ? " statement or sub-expression" : " statements or sub-expressions") + " not modelled";
}

llvm::Expected<Profile> Profile::fromJSON(const nlohmann::json &json) {
  auto error = [](const std::string &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "profile: " + what);
  };
  if (!json.is_object()) return error("expected a JSON object");
  Profile p;
  auto backend = json.find("backend");
  if (backend == json.end() || !backend->is_string()) return error("missing \"backend\"");
  p.backend = backend->get<std::string>();
  auto latency = json.find("latency");
  if (latency == json.end() || !latency->is_number()) return error("missing numeric \"latency\"");
  p.latency = latency->get<double>();
  if (auto list = json.find("unmodelled"); list != json.end() && list->is_array()) {
    for (const auto &item : *list) {
      if (!item.is_object()) return error("\"unmodelled\" entries must be objects");
      UnmodelledWork w;
      std::string stmt = item.value("stmt", std::string());
      if (stmt.size() > 1 && stmt[0] == 'S') w.stmt = std::atoi(stmt.c_str() + 1);
      w.line = item.value("line", -1);
      w.what = item.value("what", std::string());
      w.reason = item.value("reason", std::string());
      p.unmodelled.push_back(std::move(w));
    }
  }
  for (const Field &f : fields()) {
    auto it = json.find(std::string(f.name));
    if (it == json.end()) continue;
    if (!it->is_number()) {
      std::string what("\"");
      what.append(f.name).append("\" is not a number");
      return error(what);
    }
    p.*f.member = it->get<double>();
  }
  return p;
}

std::string Profile::renderText() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "backend: " << backend;
  if (isLowerBound()) os << " (" << lowerBoundNote() << ")";
  os << "\n";
  if (isEstimate()) os << "note: estimated by the accelopt performance model, not measured\n";
  os << "latency: " << llvm::format("%.6f", latency) << " ms\n";
  for (const Field &f : fields()) {
    double v = this->*f.member;
    os << f.name << ": ";
    if (f.integral && printableAsInteger(v))
      os << static_cast<int64_t>(v);
    else
      os << llvm::format("%.6g", v);
    os << "\n";
  }
  if (isLowerBound()) {
    os << "unmodelled (not in this estimate, which is a lower bound):\n";
    for (const UnmodelledWork &w : unmodelled) {
      os << "  ";
      if (w.stmt >= 0) os << "S" << w.stmt << " ";
      if (w.line >= 0) os << "line " << w.line << ": ";
      os << w.what << ": " << w.reason << "\n";
    }
  }
  return os.str();
}

Profile summarize(const SimulationResult &r, const HardwareDesc &hw) {
  Profile p;
  p.backend = hw.backend;
  p.latency = r.makespanMs();
  p.unmodelled = r.unmodelled;
  p.hbmReadBytes = static_cast<double>(r.hbmReadBytes);
  p.hbmWriteBytes = static_cast<double>(r.hbmWriteBytes);
  p.psumReadBytes = static_cast<double>(r.psumReadBytes);
  p.psumWriteBytes = static_cast<double>(r.psumWriteBytes);
  p.sbufReadBytes = static_cast<double>(r.sbufReadBytes);
  p.sbufWriteBytes = static_cast<double>(r.sbufWriteBytes);
  p.spillReloadBytes = static_cast<double>(r.spillReloadBytes);
  p.spillSaveBytes = static_cast<double>(r.spillSaveBytes);
  p.hardwareFlops = r.hardwareFlops;
  p.transposeFlops = r.transposeFlops;
  p.peakFlopsBandwidthRatio = hw.tensorPeakFlopsPerSecond() / hw.hbmBytesPerSecond();
  double hbmBytes = p.hbmReadBytes + p.hbmWriteBytes;
  p.mmArithmeticIntensity = hbmBytes > 0 ? (p.hardwareFlops - p.transposeFlops) / hbmBytes : 0;
  double seconds = r.makespanNs * 1e-9;
  if (seconds > 0) {
    p.hfuEstimatedPercent = p.hardwareFlops / (hw.tensorPeakFlopsPerSecond() * seconds);
    // One in-order queue per engine: busy time is the time it has an
    // instruction in flight.
    auto active = [&](ComputeEngine e) { return r.engineBusyNs[static_cast<unsigned>(e)] / r.makespanNs; };
    p.scalarEngineActiveTimePercent = active(ComputeEngine::Scalar);
    p.vectorEngineActiveTimePercent = active(ComputeEngine::Vector);
    p.gpsimdEngineActiveTimePercent = active(ComputeEngine::GpSimd);
  }
  return p;
}

} // namespace accelopt::perf
