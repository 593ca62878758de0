#include "Memory/Experience.h"

#include "Memory/Database.h"

#include <algorithm>

namespace accelopt::memory {

llvm::Expected<ExperienceConfig> ExperienceConfig::fromJson(const nlohmann::json &j) {
  ExperienceConfig c;
  if (j.is_null()) return c;
  if (!j.is_object()) return makeError(MemoryError::BadInput, "error: experience config must be a JSON object");
  try {
    c.positiveThreshold = j.value("positive_threshold", c.positiveThreshold);
    c.negativeThreshold = j.value("negative_threshold", c.negativeThreshold);
    c.topK = j.value("top_k", c.topK);
    c.queueSize = j.value("queue_size", c.queueSize);
    c.keepNegative = j.value("keep_negative", c.keepNegative);
    c.perKernelQueue = j.value("per_kernel_queue", c.perKernelQueue);
  } catch (const nlohmann::json::exception &e) {
    return makeError(MemoryError::BadInput, std::string("error: bad experience config: ") + e.what());
  }
  if (!(c.positiveThreshold >= 1.0) || !(c.negativeThreshold > 0) || c.negativeThreshold > 1.0)
    return makeError(MemoryError::BadInput,
                     "error: experience thresholds need positive_threshold >= 1 and 0 < negative_threshold <= 1");
  return c;
}

nlohmann::json ExperienceConfig::toJson() const {
  return {{"positive_threshold", positiveThreshold},
          {"negative_threshold", negativeThreshold},
          {"top_k", topK},
          {"queue_size", queueSize},
          {"keep_negative", keepNegative},
          {"per_kernel_queue", perKernelQueue}};
}

SelectedExperiences selectExperiences(llvm::ArrayRef<ExperiencePair> pairs, const ExperienceConfig &config) {
  SelectedExperiences out;
  for (const ExperiencePair &p : pairs) {
    double s = p.speedup();
    if (s <= 0) continue; // unknown latency: nothing to learn
    if (s > config.positiveThreshold)
      out.positive.push_back(p);
    else if (config.keepNegative && s < config.negativeThreshold)
      out.negative.push_back(p);
  }
  std::stable_sort(out.positive.begin(), out.positive.end(),
                   [](const ExperiencePair &a, const ExperiencePair &b) { return a.speedup() > b.speedup(); });
  std::stable_sort(out.negative.begin(), out.negative.end(),
                   [](const ExperiencePair &a, const ExperiencePair &b) { return a.speedup() < b.speedup(); });
  if (out.positive.size() > config.topK) out.positive.resize(config.topK);
  if (out.negative.size() > config.topK) out.negative.resize(config.topK);
  return out;
}

} // namespace accelopt::memory
