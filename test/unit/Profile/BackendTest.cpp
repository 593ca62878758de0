// The backend registry: the simulator by name, its label, and a second backend
// plugged in by name from outside the library.
#include "Profile/Backend.h"
#include "Profile/SimulatorBackend.h"

#include "Perf/TimingModel.h"
#include "Perf/TraceBuilder.h"
#include "ProfileTestUtil.h"

#include <gtest/gtest.h>

namespace accelopt::profile {
namespace {

/// A test-only backend: latency 1 ms per input element it is given, labelled
/// "fixed-<target>", so the test sees both the inputs and the target arrive.
class ElementCountBackend final : public Backend {
public:
  explicit ElementCountBackend(perf::HardwareDesc hw) : Hw(std::move(hw)), Label("fixed-" + Hw.name) {}
  llvm::StringRef name() const override { return Label; }
  const perf::HardwareDesc &hardware() const override { return Hw; }
  llvm::Expected<perf::KernelEstimate> estimate(const nki::Kernel &kernel,
                                                const nki::InputSpecs &inputs) const override {
    perf::KernelEstimate e;
    e.profile.backend = Label;
    for (const nki::InputSpec &spec : inputs) {
      double elements = 1;
      for (int64_t d : spec.shape) elements *= double(d);
      e.profile.latency += elements;
    }
    return e;
  }

private:
  perf::HardwareDesc Hw;
  std::string Label;
};

BackendRegistration RegisterElementCount("fixed",
                                         [](llvm::StringRef target) -> llvm::Expected<std::unique_ptr<Backend>> {
                                           auto hw = perf::loadTarget(target);
                                           if (!hw) return hw.takeError();
                                           return std::make_unique<ElementCountBackend>(std::move(*hw));
                                         });

TEST(Backend, SimulatorIsLabelledWithItsTarget) {
  for (const char *target : {"trn1", "trn2"}) {
    auto backend = createBackend("sim", target);
    ASSERT_TRUE(bool(backend)) << llvm::toString(backend.takeError());
    EXPECT_EQ((*backend)->name(), std::string("sim-") + target);
    EXPECT_EQ((*backend)->hardware().name, target);
  }
}

TEST(Backend, SimulatorProfileIsTheTimingModelsSummary) {
  nki::InputSpecs specs = testing::abSpecs();
  nki::KernelFile file = testing::mustBuild(testing::elementwiseKernel("subtract"), specs);
  ASSERT_FALSE(file.kernels.empty());
  auto backend = createBackend("sim", "trn1");
  ASSERT_TRUE(bool(backend)) << llvm::toString(backend.takeError());
  auto profile = (*backend)->profile(file.kernels.front(), specs);
  ASSERT_TRUE(bool(profile)) << llvm::toString(profile.takeError());
  EXPECT_EQ(profile->backend, "sim-trn1");
  EXPECT_GT(profile->latency, 0);
  EXPECT_EQ(profile->hbmReadBytes, 2.0 * 128 * 512 * 4); // both inputs, once

  // The same pipeline by hand: the backend adds nothing to it.
  auto trace = perf::buildTrace(file.kernels.front());
  ASSERT_TRUE(bool(trace)) << llvm::toString(trace.takeError());
  perf::TimingModel model((*backend)->hardware());
  auto sim = model.simulate(*trace);
  ASSERT_TRUE(bool(sim)) << llvm::toString(sim.takeError());
  EXPECT_EQ(profile->latency, perf::summarize(*sim, (*backend)->hardware()).latency);

  // Re-estimating reuses a timing model's scratch and gives the same figures.
  auto again = (*backend)->estimate(file.kernels.front(), specs);
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->profile.toJSON(), profile->toJSON());
  EXPECT_EQ(again->instructions, trace->instructions().size());
}

TEST(Backend, ASecondBackendPlugsInByName) {
  std::vector<std::string> kinds = backendKinds();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "sim"), kinds.end());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "fixed"), kinds.end());

  nki::InputSpecs specs = testing::abSpecs();
  nki::KernelFile file = testing::mustBuild(testing::elementwiseKernel("add"), specs);
  ASSERT_FALSE(file.kernels.empty());
  auto backend = createBackend("fixed", "trn2");
  ASSERT_TRUE(bool(backend)) << llvm::toString(backend.takeError());
  EXPECT_EQ((*backend)->name(), "fixed-trn2");
  auto profile = (*backend)->profile(file.kernels.front(), specs);
  ASSERT_TRUE(bool(profile)) << llvm::toString(profile.takeError());
  EXPECT_EQ(profile->backend, "fixed-trn2");
  EXPECT_EQ(profile->latency, 2.0 * 128 * 512);
  EXPECT_FALSE(profile->isEstimate()); // only sim-* figures are estimates
  EXPECT_EQ(profile->renderText().rfind("backend: fixed-trn2\n", 0), 0u);
}

TEST(Backend, UnknownKindOrTargetIsAnError) {
  auto unknown = createBackend("neuron-typo", "trn1");
  ASSERT_FALSE(bool(unknown));
  std::string message = llvm::toString(unknown.takeError());
  EXPECT_NE(message.find("unknown backend 'neuron-typo'"), std::string::npos) << message;
  EXPECT_NE(message.find("fixed, sim"), std::string::npos) << message;

  auto badTarget = createBackend("sim", "trn9");
  ASSERT_FALSE(bool(badTarget));
  llvm::consumeError(badTarget.takeError());
}

} // namespace
} // namespace accelopt::profile
