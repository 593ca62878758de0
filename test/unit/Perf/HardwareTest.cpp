#include "Perf/Hardware.h"
#include "Perf/TargetLimits.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <sstream>

using namespace accelopt;
using namespace accelopt::perf;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A temporary file removed when the test ends.
class TempFile {
public:
  explicit TempFile(llvm::StringRef contents) {
    llvm::SmallString<128> path;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("accelopt-target", "json", path));
    Path = path.str().str();
    std::ofstream(Path) << contents.str();
  }
  ~TempFile() { llvm::sys::fs::remove(Path); }
  const std::string &path() const { return Path; }

private:
  std::string Path;
};

TEST(Hardware, LoadsTrn1) {
  auto hw = loadTarget("trn1");
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->name, "trn1");
  EXPECT_EQ(hw->core, "NeuronCore-v2");
  EXPECT_EQ(hw->backend, "sim-trn1");
  EXPECT_DOUBLE_EQ(hw->engine(ComputeEngine::Tensor).clockGHz, 2.8);
  EXPECT_DOUBLE_EQ(hw->engine(ComputeEngine::Vector).clockGHz, 1.12);
  EXPECT_DOUBLE_EQ(hw->engine(ComputeEngine::Scalar).clockGHz, 1.4);
  EXPECT_EQ(hw->memory.sbufBytesPerPartition, 192u * 1024);
  EXPECT_EQ(hw->memory.psumBanks, 8u);
  EXPECT_EQ(hw->memory.psumBankBytes, 2048u);
  EXPECT_EQ(hw->dma.queues, 16u);
  EXPECT_DOUBLE_EQ(hw->matmul.fp32Factor, 4);
  // neuron-profile's peak_flops_bandwidth_ratio on trn1 (NKI.md §5).
  EXPECT_NEAR(hw->tensorPeakFlopsPerSecond() / hw->hbmBytesPerSecond(), 223.781463973542, 1e-6);
  EXPECT_EQ(hw->cost(OpKind::Activation).engine, ComputeEngine::Scalar);
  EXPECT_EQ(hw->cost(OpKind::Iota).engine, ComputeEngine::GpSimd);
}

TEST(Hardware, LoadsTrn2) {
  auto hw = loadTarget("trn2");
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->backend, "sim-trn2");
  EXPECT_EQ(hw->memory.sbufBytesPerPartition, 224u * 1024);
  EXPECT_DOUBLE_EQ(hw->engine(ComputeEngine::Tensor).clockGHz, 2.4);
  EXPECT_DOUBLE_EQ(hw->matmul.fp32TransposeSpeedup, 2);
}

// The verifier's limits come from the target description; its defaults (used where no target is chosen)
// are trn1's and must not drift from trn1.json.
TEST(Hardware, VerifierLimitsAreTargetFacts) {
  auto trn1 = verifyOptions("trn1");
  ASSERT_TRUE(bool(trn1)) << llvm::toString(trn1.takeError());
  analysis::VerifyOptions defaults;
  EXPECT_EQ(trn1->target, defaults.target);
  EXPECT_EQ(trn1->sbufBytesPerPartition, defaults.sbufBytesPerPartition);
  EXPECT_EQ(trn1->psumBankBytes, defaults.psumBankBytes);
  EXPECT_EQ(trn1->maxPartitions, defaults.maxPartitions);
  EXPECT_EQ(trn1->doubleRow, defaults.doubleRow);
  EXPECT_FALSE(trn1->doubleRow);

  auto trn2 = verifyOptions("trn2");
  ASSERT_TRUE(bool(trn2)) << llvm::toString(trn2.takeError());
  EXPECT_EQ(trn2->target, "trn2");
  EXPECT_EQ(trn2->sbufBytesPerPartition, 224 * 1024);
  EXPECT_TRUE(trn2->doubleRow);
  EXPECT_FALSE(bool(verifyOptions("trn9")));
}

TEST(Hardware, KnownTargets) { EXPECT_EQ(knownTargets(), (std::vector<std::string>{"trn1", "trn2"})); }

TEST(Hardware, UnknownTargetListsTheKnownOnes) {
  auto hw = loadTarget("trn9");
  ASSERT_FALSE(bool(hw));
  std::string message = llvm::toString(hw.takeError());
  EXPECT_NE(message.find("unknown target 'trn9'"), std::string::npos) << message;
  EXPECT_NE(message.find("trn1, trn2"), std::string::npos) << message;
}

TEST(Hardware, DataFilesDocumentEveryParameter) {
  // Every {"value": ...} parameter carries a "why" naming its source.
  for (const char *name : {"trn1", "trn2"}) {
    auto doc =
        nlohmann::json::parse(readFile(std::string(ACCELOPT_SOURCE_DIR) + "/lib/Perf/targets/" + name + ".json"));
    std::function<void(const nlohmann::json &, const std::string &)> walk = [&](const nlohmann::json &node,
                                                                                const std::string &path) {
      if (!node.is_object()) return;
      if (node.contains("value") || node.contains("cycles_per_element"))
        EXPECT_TRUE(node.contains("why") && !node["why"].get<std::string>().empty()) << name << ": " << path;
      for (const auto &[key, child] : node.items()) walk(child, path + "." + key);
    };
    walk(doc, "");
  }
}

TEST(Hardware, LoadsAUserFile) {
  auto doc = nlohmann::json::parse(readFile(std::string(ACCELOPT_SOURCE_DIR) + "/lib/Perf/targets/trn1.json"));
  doc["name"] = "trn1-slow-hbm";
  doc["dma"]["hbm_bytes_per_ns"]["value"] = 100;
  TempFile file(doc.dump());
  auto hw = loadTarget(file.path());
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->name, "trn1-slow-hbm");
  EXPECT_DOUBLE_EQ(hw->dma.hbmBytesPerNs, 100);
}

TEST(Hardware, RejectsABadFile) {
  TempFile notJson("{ this is not json");
  auto hw = loadTarget(notJson.path());
  ASSERT_FALSE(bool(hw));
  EXPECT_NE(llvm::toString(hw.takeError()).find("not a valid JSON object"), std::string::npos);

  auto doc = nlohmann::json::parse(readFile(std::string(ACCELOPT_SOURCE_DIR) + "/lib/Perf/targets/trn1.json"));
  doc["dma"].erase("queues");
  TempFile missing(doc.dump());
  hw = loadTarget(missing.path());
  ASSERT_FALSE(bool(hw));
  std::string message = llvm::toString(hw.takeError());
  EXPECT_NE(message.find("dma.queues: missing"), std::string::npos) << message;

  doc = nlohmann::json::parse(readFile(std::string(ACCELOPT_SOURCE_DIR) + "/lib/Perf/targets/trn1.json"));
  doc["engines"]["vector"]["clock_ghz"]["value"] = -1;
  TempFile negative(doc.dump());
  hw = loadTarget(negative.path());
  ASSERT_FALSE(bool(hw));
  message = llvm::toString(hw.takeError());
  EXPECT_NE(message.find("engines.vector.clock_ghz"), std::string::npos) << message;

  doc = nlohmann::json::parse(readFile(std::string(ACCELOPT_SOURCE_DIR) + "/lib/Perf/targets/trn1.json"));
  doc["instructions"]["iota"]["engine"] = "sync";
  TempFile badEngine(doc.dump());
  hw = loadTarget(badEngine.path());
  ASSERT_FALSE(bool(hw));
  message = llvm::toString(hw.takeError());
  EXPECT_NE(message.find("instructions.iota.engine"), std::string::npos) << message;
}

} // namespace
