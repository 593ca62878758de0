// libFuzzer target over `memory import`: the bytes are an export file, checked
// for nesting, parsed and imported into a fresh in-memory store, which is then
// read back (export, pattern list, suggestions for a suite kernel) as a later
// run would. Nothing may crash; bad input is an error. Seed corpus: exports
// written by the tests (test/Memory, test/LSP/Inputs/memory.json).
#include "Memory/Store.h"
#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"
#include "Syntax/JsonNesting.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace accelopt;

namespace {
const nki::Kernel &suiteKernel() {
  static nki::SuiteCase suiteCase = [] {
    auto c = nki::findCase({}, "hoist_load_before");
    if (!c) {
      llvm::errs() << "fuzz-memory-import: " << llvm::toString(c.takeError()) << "\n";
      std::abort();
    }
    return std::move(*c);
  }();
  static nki::KernelFile file = [] {
    nki::FrontEndOptions options;
    options.inputs = &suiteCase.inputs;
    auto f = nki::loadKernelFile(suiteCase.kernelPath, options);
    if (!f || f->kernels.empty()) std::abort();
    return std::move(*f);
  }();
  return file.kernels.front();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const nki::Kernel &kernel = suiteKernel();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (llvm::Error err = syntax::checkJsonNesting(text, "fuzz.json")) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  auto store = memory::Store::open(":memory:");
  if (!store) std::abort();
  auto stats = (*store)->importJson(doc);
  if (!stats) {
    llvm::consumeError(stats.takeError());
    return 0;
  }
  // What was imported must read back: a later export, listing and pattern match.
  if (auto exported = (*store)->exportJson(); !exported) llvm::consumeError(exported.takeError());
  if (auto patterns = (*store)->listPatterns(); !patterns) llvm::consumeError(patterns.takeError());
  if (auto suggestions = (*store)->suggest(kernel); !suggestions) llvm::consumeError(suggestions.takeError());
  if (auto again = (*store)->importJson(doc); !again) llvm::consumeError(again.takeError());
  return 0;
}
