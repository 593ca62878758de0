#include "Perf/Hardware.h"

#include "Perf/EmbeddedData.h"
#include "Perf/TargetLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace accelopt::perf {

using nlohmann::json;

std::optional<ComputeEngine> toComputeEngine(nki::Engine e) {
  switch (e) {
  case nki::Engine::Tensor: return ComputeEngine::Tensor;
  case nki::Engine::Vector: return ComputeEngine::Vector;
  case nki::Engine::Scalar: return ComputeEngine::Scalar;
  case nki::Engine::GpSimd: return ComputeEngine::GpSimd;
  default: return std::nullopt;
  }
}

std::string_view computeEngineName(ComputeEngine e) {
  switch (e) {
  case ComputeEngine::Tensor: return "tensor";
  case ComputeEngine::Vector: return "vector";
  case ComputeEngine::Scalar: return "scalar";
  case ComputeEngine::GpSimd: return "gpsimd";
  }
  return "?";
}

double HardwareDesc::tensorPeakFlopsPerSecond() const {
  return 2.0 * matmul.peRows * matmul.peColumns * engine(ComputeEngine::Tensor).clockGHz * 1e9;
}

namespace {

/// Reads the target JSON format: every parameter is {"value": x, "why": "..."}.
/// The first problem found is kept and reported with its JSON path.
class TargetReader {
public:
  explicit TargetReader(llvm::StringRef origin) : Origin(origin.str()) {}

  const json *section(const json &parent, const char *key, const std::string &path) {
    auto it = parent.find(key);
    if (it == parent.end() || !it->is_object()) {
      fail(path + key, "missing section");
      return nullptr;
    }
    return &*it;
  }

  double number(const json *obj, const char *key, const std::string &path, double min, double max = INFINITY) {
    if (!obj) return 0;
    std::string where = path + key;
    auto it = obj->find(key);
    if (it == obj->end()) {
      fail(where, "missing");
      return 0;
    }
    const json &value = it->is_object() && it->contains("value") ? (*it)["value"] : *it;
    if (!value.is_number()) {
      fail(where, "expected a number or {\"value\": number, \"why\": ...}");
      return 0;
    }
    double v = value.get<double>();
    if (!(v >= min && v <= max)) {
      fail(where,
           "value " + std::to_string(v) + " out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
      return 0;
    }
    return v;
  }

  std::string text(const json &obj, const char *key) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_string()) {
      fail(key, "missing string");
      return {};
    }
    return it->get<std::string>();
  }

  void fail(const std::string &where, const std::string &what) {
    if (Error.empty()) Error = Origin + ": " + where + ": " + what;
  }
  llvm::Error takeError() {
    if (Error.empty()) return llvm::Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Error);
  }

private:
  std::string Origin;
  std::string Error;
};

std::optional<ComputeEngine> parseComputeEngine(std::string_view name) {
  for (unsigned i = 0; i < kNumComputeEngines; ++i)
    if (computeEngineName(static_cast<ComputeEngine>(i)) == name) return static_cast<ComputeEngine>(i);
  return std::nullopt;
}

void readInstructionCost(TargetReader &reader, const json &entry, const std::string &path, InstructionCost &cost) {
  auto engine = entry.find("engine");
  std::optional<ComputeEngine> parsed;
  if (engine != entry.end() && engine->is_string()) parsed = parseComputeEngine(engine->get<std::string>());
  if (!parsed) {
    reader.fail(path + "engine", "expected one of tensor, vector, scalar, gpsimd");
    return;
  }
  cost.engine = *parsed;
  cost.cyclesPerElement = reader.number(&entry, "cycles_per_element", path, 0);
  cost.fastCyclesPerElement = entry.contains("fast_cycles_per_element")
                                  ? reader.number(&entry, "fast_cycles_per_element", path, 0)
                                  : cost.cyclesPerElement;
  cost.languageCyclesPerElement = entry.contains("language_cycles_per_element")
                                      ? reader.number(&entry, "language_cycles_per_element", path, 0)
                                      : cost.cyclesPerElement;
  cost.fixedCycles = entry.contains("fixed_cycles") ? reader.number(&entry, "fixed_cycles", path, 0) : 0;
  auto flag = [&](const char *key) {
    auto it = entry.find(key);
    if (it == entry.end()) return false;
    if (!it->is_boolean()) reader.fail(path + key, "expected true or false");
    return it->is_boolean() && it->get<bool>();
  };
  if (!entry.contains("min_ii")) reader.fail(path + "min_ii", "missing");
  cost.usesMinII = flag("min_ii");
  cost.psumInputIsFastPath = flag("psum_input_is_fast_path");
  auto engineList = [&](const char *key, std::vector<ComputeEngine> &into) {
    into.clear();
    auto list = entry.find(key);
    if (list == entry.end()) return;
    if (!list->is_array()) return reader.fail(path + key, "expected a list of engine names");
    for (const json &name : *list) {
      std::optional<ComputeEngine> e;
      if (name.is_string()) e = parseComputeEngine(name.get<std::string>());
      if (!e) return reader.fail(path + key, "expected one of tensor, vector, scalar, gpsimd");
      if (*e != cost.engine) into.push_back(*e);
    }
  };
  engineList("alt_engines", cost.alternativeEngines);
  std::vector<ComputeEngine> pinned;
  engineList("pinned_engines", pinned);
  cost.pinnedEngines = 0;
  for (ComputeEngine e : pinned) cost.pinnedEngines |= uint8_t(1u << unsigned(e));
}

} // namespace

/// Parses a target description into the timing model's parameters and the verifier's limits (both from
/// the one file, every field required).
static llvm::Expected<HardwareDesc> parseTarget(llvm::StringRef jsonText, llvm::StringRef origin,
                                                analysis::VerifyOptions &limits) {
  json doc = json::parse(jsonText.begin(), jsonText.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: not a valid JSON object", origin.str().c_str());
  TargetReader reader(origin);
  HardwareDesc hw;
  hw.name = reader.text(doc, "name");
  hw.core = reader.text(doc, "core");
  hw.backend = reader.text(doc, "backend");

  if (const json *engines = reader.section(doc, "engines", "")) {
    for (unsigned i = 0; i < kNumComputeEngines; ++i) {
      std::string name(computeEngineName(static_cast<ComputeEngine>(i)));
      std::string path = "engines." + name + ".";
      const json *e = reader.section(*engines, name.c_str(), "engines.");
      EngineParams &p = hw.engines[i];
      p.clockGHz = reader.number(e, "clock_ghz", path, 1e-3);
      p.lanes = static_cast<unsigned>(reader.number(e, "lanes", path, 1, 4096));
      p.minIICycles = reader.number(e, "min_ii_cycles", path, 0);
      p.staticOverheadCycles = reader.number(e, "static_overhead_cycles", path, 0);
    }
  }

  if (const json *m = reader.section(doc, "matmul", "")) {
    MatmulParams &p = hw.matmul;
    p.peRows = static_cast<unsigned>(reader.number(m, "pe_rows", "matmul.", 1, 4096));
    p.peColumns = static_cast<unsigned>(reader.number(m, "pe_columns", "matmul.", 1, 4096));
    p.initLatencyCycles = reader.number(m, "init_latency_cycles", "matmul.", 0);
    p.fp32Factor = reader.number(m, "fp32_factor", "matmul.", 1);
    p.fp32OneZeroSpeedup = reader.number(m, "fp32_onezero_speedup", "matmul.", 1);
    p.fp32TransposeSpeedup = reader.number(m, "fp32_transpose_speedup", "matmul.", 1);
    p.passOverheadCycles =
        m->contains("pass_overhead_cycles") ? reader.number(m, "pass_overhead_cycles", "matmul.", 0) : 0;
    limits.doubleRow = reader.number(m, "double_row", "matmul.", 0, 1) != 0;
  }

  if (const json *ins = reader.section(doc, "instructions", "")) {
    for (unsigned i = 0; i < kNumOpKinds; ++i) {
      auto op = static_cast<OpKind>(i);
      if (isDma(op)) continue; // DMA kinds are costed by the dma section
      std::string name(opKindName(op));
      const json *entry = reader.section(*ins, name.c_str(), "instructions.");
      if (entry) readInstructionCost(reader, *entry, "instructions." + name + ".", hw.costs[i]);
    }
  }

  if (const json *d = reader.section(doc, "dma", "")) {
    DmaParams &p = hw.dma;
    p.queues = static_cast<unsigned>(reader.number(d, "queues", "dma.", 1, 256));
    p.queueBytesPerNs = reader.number(d, "queue_bytes_per_ns", "dma.", 1e-6);
    p.fixedLatencyNs = reader.number(d, "fixed_latency_ns", "dma.", 0);
    p.descriptorOverheadBytes = reader.number(d, "descriptor_overhead_bytes", "dma.", 0);
    p.hbmBytesPerNs = reader.number(d, "hbm_bytes_per_ns", "dma.", 1e-6);
  }

  if (const json *m = reader.section(doc, "memory", "")) {
    MemoryParams &p = hw.memory;
    p.partitions = static_cast<unsigned>(reader.number(m, "partitions", "memory.", 1, 65535));
    p.sbufBytesPerPartition = static_cast<uint64_t>(reader.number(m, "sbuf_bytes_per_partition", "memory.", 1));
    p.sbufReservedBytesPerPartition = static_cast<uint64_t>(reader.number(
        m, "sbuf_reserved_bytes_per_partition", "memory.", 0, static_cast<double>(p.sbufBytesPerPartition) - 1));
    // Bank occupancy is tracked in a 16-bit mask.
    p.psumBanks = static_cast<unsigned>(reader.number(m, "psum_banks", "memory.", 1, 16));
    p.psumBankBytes = static_cast<uint64_t>(reader.number(m, "psum_bank_bytes", "memory.", 1));
  }

  if (const json *p = reader.section(doc, "profiler", "")) {
    hw.profiler.flopsPerMac = reader.number(p, "flops_per_mac", "profiler.", 0);
    hw.profiler.flopsPerFp32Mac = reader.number(p, "flops_per_fp32_mac", "profiler.", 0);
    hw.profiler.fp32TensorAccessFactor = reader.number(p, "fp32_tensor_access_factor", "profiler.", 0);
  }

  // Optional: targets written before the launch section run a launch grid on one core.
  if (doc.contains("launch"))
    if (const json *l = reader.section(doc, "launch", ""))
      hw.launch.gridCores = static_cast<unsigned>(reader.number(l, "grid_cores", "launch.", 1, 64));

  // Optional: targets written before the scheduler section keep in-order engines.
  if (auto sched = doc.find("scheduler"); sched != doc.end()) {
    if (!sched->is_object()) {
      reader.fail("scheduler", "expected an object");
    } else {
      auto boolean = [&](const char *key, bool &out) {
        auto it = sched->find(key);
        if (it == sched->end()) return;
        const json &value = it->is_object() && it->contains("value") ? (*it)["value"] : *it;
        if (!value.is_boolean())
          reader.fail(std::string("scheduler.") + key, "expected true or false");
        else
          out = value.get<bool>();
      };
      boolean("fill_idle_slots", hw.scheduler.fillIdleSlots);
      boolean("sequential_barrier", hw.scheduler.sequentialBarrier);
      boolean("sbuf_reuse_waits", hw.scheduler.sbufReuseWaits);
      boolean("hoist_invariant_loads", hw.scheduler.hoistInvariantLoads);
      boolean("reuse_invariant_transposes", hw.scheduler.reuseInvariantTransposes);
      boolean("hoist_invariant_compute", hw.scheduler.hoistInvariantCompute);
      boolean("sink_loads_that_do_not_fit", hw.scheduler.sinkLoadsThatDoNotFit);
      boolean("single_buffer_engine_tiles", hw.scheduler.singleBufferEngineTiles);
      boolean("fuse_elementwise_chains", hw.scheduler.fuseElementwiseChains);
    }
  }

  if (llvm::Error err = reader.takeError()) return err;
  limits.target = hw.name;
  limits.maxPartitions = static_cast<int>(hw.memory.partitions);
  limits.sbufBytesPerPartition = static_cast<int64_t>(hw.memory.sbufBytesPerPartition);
  limits.psumBankBytes = static_cast<int64_t>(hw.memory.psumBankBytes);
  return hw;
}

std::vector<std::string> knownTargets() {
  std::vector<std::string> names;
  for (const embedded::DataFile &file : embedded::targetFiles()) names.emplace_back(file.name);
  return names;
}

llvm::Expected<HardwareDesc> parseTarget(llvm::StringRef jsonText, llvm::StringRef origin) {
  analysis::VerifyOptions limits;
  return parseTarget(jsonText, origin, limits);
}

/// Parses a built-in target by name, or a JSON file in the same format by path.
static llvm::Expected<HardwareDesc> loadTarget(llvm::StringRef nameOrPath, analysis::VerifyOptions &limits) {
  for (const embedded::DataFile &file : embedded::targetFiles())
    if (nameOrPath == file.name) return parseTarget(file.text, std::string(file.name) + ".json", limits);

  bool looksLikePath = nameOrPath.endswith(".json") || nameOrPath.contains('/');
  if (!looksLikePath && !llvm::sys::fs::exists(nameOrPath))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown target '%s'; known targets: %s (or give the path of a target JSON file)",
                                   nameOrPath.str().c_str(), llvm::join(knownTargets(), ", ").c_str());
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read target file '%s': %s", nameOrPath.str().c_str(),
                                   buffer.getError().message().c_str());
  return parseTarget((*buffer)->getBuffer(), nameOrPath, limits);
}

llvm::Expected<HardwareDesc> loadTarget(llvm::StringRef nameOrPath) {
  analysis::VerifyOptions limits;
  return loadTarget(nameOrPath, limits);
}

llvm::Expected<analysis::VerifyOptions> verifyOptions(llvm::StringRef nameOrPath) {
  analysis::VerifyOptions limits;
  auto hw = loadTarget(nameOrPath, limits);
  if (!hw) return hw.takeError();
  return limits;
}

} // namespace accelopt::perf
