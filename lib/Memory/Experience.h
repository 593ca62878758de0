// AccelOpt-style experience selection: from the (parent -> child) pairs of one
// beam-search iteration keep the clear wins (speedup above a threshold) and the
// clear losses (below another), the top K of each, for a bounded queue of
// ExpN experiences per kernel (the oldest are dropped).
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accelopt::memory {

struct ExperienceConfig {
  double positiveThreshold = 1.04;       // speedup > this: a slow -> fast pair
  double negativeThreshold = 1.0 / 1.15; // speedup < this: a fast -> slow pair
  size_t topK = 2;                       // per iteration, for each polarity
  size_t queueSize = 16;                 // ExpN: experiences kept (oldest dropped)
  bool keepNegative = true;              // also record fast -> slow pairs
  bool perKernelQueue = true;            // ExpN per kernel; false: one global queue

  /// Reads "experience": {"positive_threshold", "negative_threshold", "top_k",
  /// "queue_size", "keep_negative", "per_kernel_queue"} (missing keys keep defaults).
  static llvm::Expected<ExperienceConfig> fromJson(const nlohmann::json &j);
  nlohmann::json toJson() const;
};

/// One evaluated (parent -> child) step of the search.
struct ExperiencePair {
  int64_t from = 0; // parent candidate id
  int64_t to = 0;   // child candidate id
  double fromLatencyMs = 0;
  double toLatencyMs = 0;
  nlohmann::json ops = nlohmann::json::array(); // the ops that turn `from` into `to`
  std::string summary;                          // the summarizer's text (may be empty)

  /// fromLatency / toLatency (> 1: the child is faster); 0 if unknown.
  double speedup() const { return toLatencyMs > 0 && fromLatencyMs > 0 ? fromLatencyMs / toLatencyMs : 0; }
};

struct SelectedExperiences {
  std::vector<ExperiencePair> positive; // best speedup first
  std::vector<ExperiencePair> negative; // worst slowdown first
};

/// The pairs worth remembering from one iteration.
SelectedExperiences selectExperiences(llvm::ArrayRef<ExperiencePair> pairs, const ExperienceConfig &config);

} // namespace accelopt::memory
