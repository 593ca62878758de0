#include "Memory/Experience.h"
#include "Memory/Store.h"

#include "MemoryTestUtil.h"

using namespace accelopt::memory;
using nlohmann::json;

namespace {

ExperiencePair pair(int64_t from, int64_t to, double fromMs, double toMs) {
  return {from, to, fromMs, toMs, json::array({{{"op", "split"}, {"loop", "L0"}, {"factor", 2}}}), ""};
}

TEST(Experience, Thresholds) {
  ExperienceConfig cfg;
  cfg.topK = 10;
  // speedups: 1.05 (win), exactly 1.04 (not), 1.0, 1/1.15 exactly (not), 1/1.2 (loss), unknown latency
  std::vector<ExperiencePair> pairs = {pair(1, 2, 1.05, 1.0), pair(1, 3, 1.04, 1.0), pair(1, 4, 1.0, 1.0),
                                       pair(1, 5, 1.0, 1.15), pair(1, 6, 1.0, 1.2),  pair(1, 7, 1.0, 0.0)};
  auto sel = selectExperiences(pairs, cfg);
  ASSERT_EQ(sel.positive.size(), 1u);
  EXPECT_EQ(sel.positive[0].to, 2);
  ASSERT_EQ(sel.negative.size(), 1u);
  EXPECT_EQ(sel.negative[0].to, 6);
  EXPECT_NEAR(sel.negative[0].speedup(), 1 / 1.2, 1e-12);
  cfg.keepNegative = false;
  EXPECT_TRUE(selectExperiences(pairs, cfg).negative.empty());
  // Thresholds are configurable.
  cfg.positiveThreshold = 1.5;
  EXPECT_TRUE(selectExperiences(pairs, cfg).positive.empty());
}

TEST(Experience, TopKPerIterationBestFirst) {
  ExperienceConfig cfg;
  cfg.topK = 2;
  std::vector<ExperiencePair> pairs = {pair(1, 2, 1.1, 1), pair(1, 3, 3, 1), pair(1, 4, 2, 1),
                                       pair(1, 5, 1, 2),   pair(1, 6, 1, 5), pair(1, 7, 1, 3)};
  auto sel = selectExperiences(pairs, cfg);
  ASSERT_EQ(sel.positive.size(), 2u);
  EXPECT_EQ(sel.positive[0].to, 3); // 3x
  EXPECT_EQ(sel.positive[1].to, 4); // 2x
  ASSERT_EQ(sel.negative.size(), 2u);
  EXPECT_EQ(sel.negative[0].to, 6); // 5x slower first
  EXPECT_EQ(sel.negative[1].to, 7);
}

TEST(Experience, ConfigFromJson) {
  auto cfg = ExperienceConfig::fromJson(json::parse(R"({"top_k": 5, "queue_size": 3, "positive_threshold": 1.1})"));
  ASSERT_TRUE(bool(cfg));
  EXPECT_EQ(cfg->topK, 5u);
  EXPECT_EQ(cfg->queueSize, 3u);
  EXPECT_DOUBLE_EQ(cfg->positiveThreshold, 1.1);
  EXPECT_DOUBLE_EQ(cfg->negativeThreshold, 1 / 1.15);
  auto back = ExperienceConfig::fromJson(cfg->toJson());
  ASSERT_TRUE(bool(back));
  EXPECT_EQ(back->toJson(), cfg->toJson());
  auto bad = ExperienceConfig::fromJson(json::parse(R"({"negative_threshold": 2})"));
  ASSERT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
  auto wrongType = ExperienceConfig::fromJson(json::parse(R"({"top_k": "many"})"));
  ASSERT_FALSE(bool(wrongType));
  llvm::consumeError(wrongType.takeError());
}

TEST(Experience, QueueIsBoundedOldestDropped) {
  auto store = Store::open(":memory:");
  ASSERT_TRUE(bool(store));
  Store &s = **store;
  auto k1 = s.upsertKernel({"k1", "k1.py", "h1", ""});
  auto k2 = s.upsertKernel({"k2", "k2.py", "h2", ""});
  ASSERT_TRUE(k1 && k2);
  ExperienceConfig cfg;
  cfg.topK = 2;
  cfg.queueSize = 3;
  std::vector<int64_t> stored;
  for (int it = 0; it < 4; ++it) {
    // Two wins and one loss per iteration; topK = 2 keeps all three.
    std::vector<ExperiencePair> pairs = {pair(0, 0, 2, 1), pair(0, 0, 3, 1), pair(0, 0, 1, 2)};
    auto ids = s.addExperiences(*k1, it, pairs, cfg);
    ASSERT_TRUE(bool(ids)) << llvm::toString(ids.takeError());
    EXPECT_EQ(ids->size(), 3u);
    stored.insert(stored.end(), ids->begin(), ids->end());
  }
  ASSERT_TRUE(bool(s.addExperiences(*k2, 0, {pair(0, 0, 2, 1)}, cfg)));
  auto kept = s.experiences(*k1);
  ASSERT_TRUE(bool(kept));
  ASSERT_EQ(kept->size(), 3u);
  // Newest first: the last iteration's three.
  EXPECT_EQ((*kept)[0].id, stored[11]);
  EXPECT_EQ((*kept)[2].id, stored[9]);
  for (auto &e : *kept) EXPECT_EQ(e.iteration, 3);
  EXPECT_DOUBLE_EQ((*kept)[2].speedup, 3.0); // positives first within an iteration, best first
  EXPECT_DOUBLE_EQ((*kept)[0].speedup, 0.5);
  auto all = s.experiences();
  ASSERT_TRUE(bool(all));
  EXPECT_EQ(all->size(), 4u); // the queue is per kernel
  auto first = s.getExperience(stored[0]);
  ASSERT_TRUE(bool(first));
  EXPECT_FALSE(first->has_value());
  // One global queue.
  cfg.perKernelQueue = false;
  cfg.queueSize = 2;
  ASSERT_TRUE(bool(s.addExperiences(*k2, 1, {pair(0, 0, 4, 1)}, cfg)));
  all = s.experiences();
  ASSERT_TRUE(bool(all));
  EXPECT_EQ(all->size(), 2u);
  // A queue smaller than the selection reports only what stayed.
  cfg.queueSize = 1;
  auto ids = s.addExperiences(*k1, 5, {pair(0, 0, 2, 1), pair(0, 0, 3, 1)}, cfg);
  ASSERT_TRUE(bool(ids));
  EXPECT_EQ(ids->size(), 1u);
}

// Reliability report D18: a run resumed after kill -9 summarises the interrupted iteration again; the
// experience it already stored is not stored twice.
TEST(Experiences, StoringTheSameStepAgainKeepsOneRow) {
  auto opened = Store::open(":memory:");
  ASSERT_TRUE(bool(opened)) << llvm::toString(opened.takeError());
  Store &s = **opened;
  auto k = s.upsertKernel({"k", "k.py", "h", ""});
  ASSERT_TRUE(bool(k));
  ExperienceConfig cfg;
  auto first = s.addExperiences(*k, 3, {pair(0, 0, 2, 1)}, cfg);
  auto again = s.addExperiences(*k, 3, {pair(0, 0, 2, 1)}, cfg);
  ASSERT_TRUE(first && again);
  EXPECT_EQ(*first, *again);
  auto all = s.experiences(*k);
  ASSERT_TRUE(bool(all));
  EXPECT_EQ(all->size(), 1u);
  // Another iteration's experience is a new row.
  ASSERT_TRUE(bool(s.addExperiences(*k, 4, {pair(0, 0, 2, 1)}, cfg)));
  all = s.experiences(*k);
  ASSERT_TRUE(bool(all));
  EXPECT_EQ(all->size(), 2u);
}

} // namespace
