#include "Profile/Backend.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <mutex>

namespace accelopt::profile {

#define ACCELOPT_BACKEND(kind, factory) llvm::Expected<std::unique_ptr<Backend>> factory(llvm::StringRef target);
#include "Profile/Backends.def"

Backend::~Backend() = default;

llvm::Expected<perf::Profile> Backend::profile(const nki::Kernel &kernel, const nki::InputSpecs &inputs) const {
  auto e = estimate(kernel, inputs);
  if (!e) return e.takeError();
  return std::move(e->profile);
}

namespace {

struct Registry {
  Registry() {
#define ACCELOPT_BACKEND(kind, factory) factories[kind] = factory;
#include "Profile/Backends.def"
  }
  std::mutex lock;
  llvm::StringMap<BackendFactory> factories;
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

BackendRegistration::BackendRegistration(llvm::StringRef kind, BackendFactory factory) {
  Registry &r = registry();
  std::lock_guard<std::mutex> guard(r.lock);
  r.factories[kind] = std::move(factory);
}

std::vector<std::string> backendKinds() {
  Registry &r = registry();
  std::lock_guard<std::mutex> guard(r.lock);
  std::vector<std::string> kinds;
  for (const auto &entry : r.factories) kinds.push_back(entry.getKey().str());
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

llvm::Expected<std::unique_ptr<Backend>> createBackend(llvm::StringRef kind, llvm::StringRef target) {
  BackendFactory factory;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> guard(r.lock);
    auto it = r.factories.find(kind);
    if (it != r.factories.end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const std::string &k : backendKinds()) known += (known.empty() ? "" : ", ") + k;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "error: unknown backend '" + kind + "' (known: " + known + ")");
  }
  return factory(target);
}

} // namespace accelopt::profile
