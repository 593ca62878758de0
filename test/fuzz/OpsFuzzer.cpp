// libFuzzer target over rewrite op JSON: the bytes are the text of --op/--ops,
// parsed and applied to three fixed suite kernels (with their case shapes), the
// way `apply` and batch do. Nothing may crash; every result is
// applied, refused or bad input. Seed corpus: ops from the tests and patterns.
#include "NKI/InputSources.h"
#include "Rewrite/Rewrite.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace accelopt;

namespace {
// Suite kernels with a loop nest, a single loop and loads to hoist; their case shapes.
const char *const Cases[] = {"matmul_K512_M256_N1024", "hoist_load_before", "softmax_M256_N512"};

struct Fixture {
  nki::SuiteCase suiteCase;
  std::unique_ptr<syntax::SourceBuffer> source;
  std::unique_ptr<rewrite::PreparedKernel> prepared;
};

[[noreturn]] void fail(llvm::Error err) {
  llvm::errs() << "fuzz-ops: " << llvm::toString(std::move(err)) << "\n";
  std::abort();
}

const std::vector<std::unique_ptr<Fixture>> &fixtures() {
  static std::vector<std::unique_ptr<Fixture>> all = [] {
    std::vector<std::unique_ptr<Fixture>> out;
    for (const char *name : Cases) {
      auto f = std::make_unique<Fixture>();
      auto c = nki::findCase({}, name);
      if (!c) fail(c.takeError());
      f->suiteCase = std::move(*c);
      auto source = syntax::SourceBuffer::fromFile(f->suiteCase.kernelPath);
      if (!source) fail(source.takeError());
      f->source = std::move(*source);
      rewrite::CandidateOptions options;
      options.inputs = &f->suiteCase.inputs;
      auto prepared = rewrite::PreparedKernel::prepare(*f->source, options);
      if (!prepared) fail(prepared.takeError());
      f->prepared = std::make_unique<rewrite::PreparedKernel>(std::move(*prepared));
      out.push_back(std::move(f));
    }
    return out;
  }();
  return all;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto &all = fixtures();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto ops = rewrite::parseOps(text);
  if (!ops) {
    llvm::consumeError(ops.takeError());
    return 0;
  }
  for (const auto &f : all) {
    rewrite::CandidateResult result = rewrite::applyCandidate(*f->prepared, *ops);
    // A refusal or bad input always says why.
    if (result.status != rewrite::Status::Applied && result.message.empty()) std::abort();
  }
  return 0;
}
