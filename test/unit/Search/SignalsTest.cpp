// The built-in planner's signal table read on a kernel and a profile: each
// signal shows exactly when its figures cross the threshold it declares.
#include "NKI/FrontEnd.h"
#include "Search/Search.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace accelopt;

namespace {

// Two sibling nests; the load of `w` does not move with `m`, so it is re-read per iteration.
const char *TwoNests = R"(import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
  out = nl.ndarray((256, 512), dtype=np.float32, buffer=nl.shared_hbm)
  for m in nl.affine_range(2):
    xt = nl.load(x[m * 128 + nl.arange(128)[:, None], nl.arange(512)[None, :]])
    wt = nl.load(w[nl.arange(128)[:, None], nl.arange(512)[None, :]])
    nl.store(out[m * 128 + nl.arange(128)[:, None], nl.arange(512)[None, :]], value=nl.add(xt, wt))
  for r in nl.affine_range(2):
    yt = nl.load(x[r * 128 + nl.arange(128)[:, None], nl.arange(512)[None, :]])
    nl.store(out[r * 128 + nl.arange(128)[:, None], nl.arange(512)[None, :]], value=yt)
  return out
)";

struct Loaded {
  nki::InputSpecs inputs;
  nki::KernelFile file;
};

Loaded load() {
  auto inputs = nki::parseInputSpecs("x=f32[256,512],w=f32[128,512]");
  EXPECT_TRUE(bool(inputs));
  nki::FrontEndOptions fe;
  fe.inputs = &*inputs;
  auto file = nki::buildKernelFile(std::move(*syntax::SourceBuffer::fromText("two_nests.py", TwoNests)), fe);
  EXPECT_TRUE(bool(file));
  return {std::move(*inputs), std::move(*file)};
}

std::map<std::string, search::SignalReading> byName(const std::vector<search::SignalReading> &readings) {
  std::map<std::string, search::SignalReading> out;
  for (const auto &r : readings) out[r.name] = r;
  return out;
}

TEST(PlannerSignals, RowsAreNamedOnceAndProposeSomething) {
  Loaded k = load();
  auto readings = search::readSignals(nullptr, k.file.kernels.front());
  std::set<std::string> names;
  for (const auto &r : readings) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_FALSE(r.opKinds.empty()) << r.name;
    EXPECT_FALSE(r.why.empty()) << r.name;
  }
  EXPECT_GE(readings.size(), 6u);
}

TEST(PlannerSignals, EachSignalShowsOnlyPastItsThreshold) {
  Loaded k = load();
  const nki::Kernel &kernel = k.file.kernels.front();
  perf::Profile quiet;
  quiet.hardwareFlops = 100;
  quiet.transposeFlops = 4; // 4 %: under the 5 % threshold
  quiet.vectorEngineActiveTimePercent = 0.3;
  quiet.scalarEngineActiveTimePercent = 0.3;
  quiet.hbmReadBytes = (256 + 128) * 512 * 4; // exactly the compulsory bytes
  auto none = byName(search::readSignals(&quiet, kernel));
  for (const char *name : {"spills-across-sibling-nests", "spills", "transposes-above-5%-of-pe-flops",
                           "busy-engine-next-to-idle", "hbm-reads-above-compulsory"})
    EXPECT_FALSE(none[name].seen) << name << ": " << none[name].evidence;

  perf::Profile loud = quiet;
  loud.spillSaveBytes = 4096;
  loud.transposeFlops = 6;
  loud.vectorEngineActiveTimePercent = 0.9;
  loud.scalarEngineActiveTimePercent = 0.05;
  loud.hbmReadBytes = 2 * quiet.hbmReadBytes;
  auto all = byName(search::readSignals(&loud, kernel));
  for (const char *name : {"spills-across-sibling-nests", "spills", "transposes-above-5%-of-pe-flops",
                           "busy-engine-next-to-idle", "hbm-reads-above-compulsory"})
    EXPECT_TRUE(all[name].seen) << name << ": " << all[name].evidence;
  EXPECT_NE(all["hbm-reads-above-compulsory"].evidence.find("2.00x compulsory"), std::string::npos)
      << all["hbm-reads-above-compulsory"].evidence;

  // An engine idle for more than a quarter of the kernel's time more than the busiest one counts
  // as idle next to it.
  perf::Profile lopsided = quiet;
  lopsided.vectorEngineActiveTimePercent = 0.8;
  lopsided.scalarEngineActiveTimePercent = 0.35;
  EXPECT_TRUE(byName(search::readSignals(&lopsided, kernel))["busy-engine-next-to-idle"].seen);
  lopsided.scalarEngineActiveTimePercent = 0.6;
  EXPECT_FALSE(byName(search::readSignals(&lopsided, kernel))["busy-engine-next-to-idle"].seen);
  // adamw: VectorE 94 % with its reciprocal, ScalarE 53 %, not half as busy but with room.
  lopsided.vectorEngineActiveTimePercent = 0.94;
  lopsided.scalarEngineActiveTimePercent = 0.53;
  EXPECT_TRUE(byName(search::readSignals(&lopsided, kernel))["busy-engine-next-to-idle"].seen);
}

// 320 rows in 128-row tiles: the last tile is masked.
const char *MaskedTail = R"(import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((320, 512), dtype=np.float32, buffer=nl.shared_hbm)
  for m in nl.affine_range(3):
    xt = nl.load(x[m * 128 + nl.arange(128)[:, None], nl.arange(512)[None, :]], mask=(m * 128 + nl.arange(128)[:, None] < 320))
    nl.store(out[m * 128 + nl.arange(128)[:, None], nl.arange(512)[None, :]], value=xt, mask=(m * 128 + nl.arange(128)[:, None] < 320))
  return out
)";

TEST(PlannerSignals, MaskedPartialTilesShowOnlyWithMasksInLoops) {
  Loaded plain = load();
  EXPECT_FALSE(byName(search::readSignals(nullptr, plain.file.kernels.front()))["masked-partial-tiles"].seen);
  auto inputs = nki::parseInputSpecs("x=f32[320,512]");
  ASSERT_TRUE(bool(inputs));
  nki::FrontEndOptions fe;
  fe.inputs = &*inputs;
  auto file = nki::buildKernelFile(std::move(*syntax::SourceBuffer::fromText("masked.py", MaskedTail)), fe);
  ASSERT_TRUE(bool(file));
  auto reading = byName(search::readSignals(nullptr, file->kernels.front()))["masked-partial-tiles"];
  EXPECT_TRUE(reading.seen);
  EXPECT_EQ(reading.evidence, "2 masked statement(s) in loops");
  EXPECT_EQ(reading.opKinds, std::vector<std::string>{"trim_tail"});
}

// The producer of t and its consumer with an independent load nest between them (reorder's case).
const char *SeparatedNests = R"(import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, w):
  out = nl.ndarray((256, 512), dtype=np.float32, buffer=nl.shared_hbm)
  t = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  wb = nl.ndarray((2, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.sbuf)
  for m in nl.affine_range(2):
    t[m, 0:128, 0:512] = nl.exp(nl.load(x[m * 128:(m + 1) * 128, 0:512]))
  for k in nl.affine_range(2):
    wb[k, 0:128, 0:512] = nl.load(w[k * 128:(k + 1) * 128, 0:512])
  for n in nl.affine_range(2):
    nl.store(out[n * 128:(n + 1) * 128, 0:512], value=nl.multiply(t[n, 0:128, 0:512], wb[n, 0:128, 0:512]))
  return out
)";

search::SignalReading separatedReading(const std::string &text) {
  auto inputs = nki::parseInputSpecs("x=f32[256,512],w=f32[256,512]");
  EXPECT_TRUE(bool(inputs));
  nki::FrontEndOptions fe;
  fe.inputs = &*inputs;
  auto file = nki::buildKernelFile(std::move(*syntax::SourceBuffer::fromText("separated.py", text)), fe);
  EXPECT_TRUE(bool(file));
  return byName(search::readSignals(nullptr, file->kernels.front()))["separated-producer-consumer-nests"];
}

TEST(PlannerSignals, SeparatedNestsShowOnlyWithCodeBetweenProducerAndConsumer) {
  search::SignalReading separated = separatedReading(SeparatedNests);
  EXPECT_TRUE(separated.seen);
  EXPECT_EQ(separated.evidence, "1 producer/consumer loop pair(s) with code between");
  EXPECT_EQ(separated.opKinds, std::vector<std::string>{"reorder"});
  // Without the load nest between them (the consumer squares t), nothing to reorder.
  std::string adjacent = SeparatedNests;
  size_t nest = adjacent.find("  for k in");
  adjacent.erase(nest, adjacent.find("  for n in") - nest);
  adjacent.replace(adjacent.find("wb[n, 0:128, 0:512]"), 19, "t[n, 0:128, 0:512]");
  search::SignalReading none = separatedReading(adjacent);
  EXPECT_FALSE(none.seen);
  EXPECT_EQ(none.evidence, "0 producer/consumer loop pair(s) with code between");
  EXPECT_FALSE(separatedReading(TwoNests).seen);
}

TEST(PlannerSignals, StrictlyFasterNeedsMoreThanTheMargin) {
  EXPECT_FALSE(search::strictlyFaster(1.0, 1.0));
  EXPECT_FALSE(search::strictlyFaster(1.0 - search::MinRelativeGain / 2, 1.0));
  EXPECT_TRUE(search::strictlyFaster(1.0 - 2 * search::MinRelativeGain, 1.0));
}

} // namespace
