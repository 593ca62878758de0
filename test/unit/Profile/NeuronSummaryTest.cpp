// The neuron backend's reading of `neuron-profile view --output-format
// summary-json`: seconds to ms, field names, unreported fields, malformed output.
#include "Profile/NeuronBackend.h"

#include <gtest/gtest.h>

namespace accelopt::profile {
namespace {

TEST(NeuronSummary, ReadsTheFirstEntryByNeuronProfileNames) {
  std::vector<std::string> unreported;
  auto p = parseNeuronSummary(R"(level=info msg="loading"
{"kernel_0": {"total_time": 0.0025, "hbm_read_bytes": 4096, "hfu_estimated_percent": 0.25,
              "total_exec_time": 1.0},
 "other": {"total_time": 9}})",
                              "test", &unreported);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_DOUBLE_EQ(p->latency, 2.5);
  EXPECT_EQ(p->hbmReadBytes, 4096);
  EXPECT_DOUBLE_EQ(p->hfuEstimatedPercent, 0.25);
  EXPECT_EQ(p->hbmWriteBytes, 0);
  EXPECT_FALSE(p->isEstimate());
  EXPECT_EQ(unreported.size(), perf::Profile::fields().size() - 2);
  EXPECT_EQ(std::find(unreported.begin(), unreported.end(), "hbm_read_bytes"), unreported.end());
  EXPECT_NE(std::find(unreported.begin(), unreported.end(), "hardware_flops"), unreported.end());
}

TEST(NeuronSummary, MalformedOutputIsAnErrorNamingTheCause) {
  auto message = [](llvm::StringRef text) {
    auto p = parseNeuronSummary(text, "view of run0.ntff");
    return p ? std::string("parsed") : llvm::toString(p.takeError());
  };
  EXPECT_NE(message("no json here")
                .find("view of run0.ntff: malformed summary JSON from neuron-profile: no JSON "
                      "object"),
            std::string::npos);
  EXPECT_NE(message(R"({"k": {"total_time": )").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"k": 3})").find("expected {\"<name>\": {fields}}"), std::string::npos);
  EXPECT_NE(message(R"({"k": {"hbm_read_bytes": 1}})").find("no numeric \"total_time\""), std::string::npos);
  EXPECT_NE(message(R"({"k": {"total_time": 1, "hbm_read_bytes": "x"}})").find("\"hbm_read_bytes\" is not a number"),
            std::string::npos);
}

} // namespace
} // namespace accelopt::profile
