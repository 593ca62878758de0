#include "PerfTestUtil.h"

#include "Perf/Profile.h"

using namespace accelopt;
using namespace accelopt::perf;
using namespace accelopt::perf::testing;

namespace {

const char *const kAccelOptFieldOrder[] = {
    "hbm_read_bytes",
    "hbm_write_bytes",
    "psum_read_bytes",
    "psum_write_bytes",
    "sbuf_read_bytes",
    "sbuf_write_bytes",
    "spill_reload_bytes",
    "spill_save_bytes",
    "hardware_flops",
    "transpose_flops",
    "peak_flops_bandwidth_ratio",
    "mm_arithmetic_intensity",
    "hfu_estimated_percent",
    "scalar_engine_active_time_percent",
    "vector_engine_active_time_percent",
    "gpsimd_engine_active_time_percent",
};

SimulationResult sampleResult() {
  SimulationResult r;
  r.makespanNs = 2e6; // 2 ms
  r.hbmReadBytes = 3000;
  r.hbmWriteBytes = 1000;
  r.hardwareFlops = 1e9;
  r.transposeFlops = 2e8;
  r.engineBusyNs[unsigned(ComputeEngine::Scalar)] = 5e5;
  r.engineBusyNs[unsigned(ComputeEngine::Vector)] = 1e6;
  return r;
}

TEST(Profile, FieldsInAccelOptOrder) {
  auto fields = Profile::fields();
  ASSERT_EQ(fields.size(), std::size(kAccelOptFieldOrder));
  for (size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(fields[i].name, kAccelOptFieldOrder[i]);
}

TEST(Profile, SummarizesASimulation) {
  HardwareDesc trn1 = target("trn1");
  Profile p = summarize(sampleResult(), trn1);
  EXPECT_EQ(p.backend, "sim-trn1");
  EXPECT_TRUE(p.isEstimate());
  EXPECT_DOUBLE_EQ(p.latency, 2.0);
  EXPECT_NEAR(p.peakFlopsBandwidthRatio, 223.781463973542, 1e-6);
  EXPECT_DOUBLE_EQ(p.mmArithmeticIntensity, (1e9 - 2e8) / 4000);
  EXPECT_NEAR(p.hfuEstimatedPercent, 1e9 / (91.75e12 * 2e-3), 1e-3 * p.hfuEstimatedPercent);
  EXPECT_DOUBLE_EQ(p.scalarEngineActiveTimePercent, 0.25);
  EXPECT_DOUBLE_EQ(p.vectorEngineActiveTimePercent, 0.5);
  EXPECT_DOUBLE_EQ(p.gpsimdEngineActiveTimePercent, 0);
}

TEST(Profile, JsonKeepsTheOrderAndRoundTrips) {
  Profile p = summarize(sampleResult(), target("trn1"));
  nlohmann::ordered_json j = p.toJSON();
  std::vector<std::string> keys;
  for (const auto &item : j.items()) keys.push_back(item.key());
  ASSERT_EQ(keys.size(), 2 + std::size(kAccelOptFieldOrder));
  EXPECT_EQ(keys[0], "backend");
  EXPECT_EQ(keys[1], "latency");
  for (size_t i = 0; i < std::size(kAccelOptFieldOrder); ++i) EXPECT_EQ(keys[i + 2], kAccelOptFieldOrder[i]);
  EXPECT_TRUE(j["hbm_read_bytes"].is_number_integer());
  EXPECT_EQ(j["backend"], "sim-trn1");

  auto back = Profile::fromJSON(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->backend, p.backend);
  for (const auto &f : Profile::fields()) EXPECT_DOUBLE_EQ((*back).*f.member, p.*f.member) << f.name;
}

TEST(Profile, ReadsAMeasuredProfileWithMissingFields) {
  auto measured = Profile::fromJSON(nlohmann::json::parse(
      R"({"backend": "neuron", "latency": 1.333232, "hbm_read_bytes": 117440512,
          "vector_engine_active_time_percent": 0.7387849379303731})"));
  ASSERT_TRUE(bool(measured)) << llvm::toString(measured.takeError());
  EXPECT_FALSE(measured->isEstimate());
  EXPECT_DOUBLE_EQ(measured->hbmReadBytes, 117440512);
  EXPECT_DOUBLE_EQ(measured->hardwareFlops, 0);
  auto bad = Profile::fromJSON(nlohmann::json::parse(R"({"latency": 1})"));
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

TEST(Profile, TextAlwaysNamesTheBackend) {
  Profile p = summarize(sampleResult(), target("trn1"));
  std::string text = p.renderText();
  EXPECT_EQ(text.rfind("backend: sim-trn1\n", 0), 0u) << text;
  EXPECT_NE(text.find("not measured"), std::string::npos);
  EXPECT_NE(text.find("latency: 2.000000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("hbm_read_bytes: 3000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpsimd_engine_active_time_percent: 0\n"), std::string::npos) << text;
}

} // namespace
