// libFuzzer target: arbitrary bytes through the source checks, the parser, the
// front end and the verifier must never crash. Seed corpus: nkibench/kernels.
#include "Analysis/Verifier.h"
#include "NKI/FrontEnd.h"

#include <cstdint>
#include <string>

using namespace accelopt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static nki::InputSpecs inputs =
      *nki::parseInputSpecs("x=f32[256,512],a=f32[128,1024],b=f32[128,512],v1=f32[128,4,512],eps=1e-5");
  std::string text(reinterpret_cast<const char *>(data), size);
  auto source = syntax::SourceBuffer::fromText("fuzz.py", std::move(text));
  if (!source) {
    llvm::consumeError(source.takeError());
    return 0;
  }
  nki::FrontEndOptions opts;
  opts.inputs = size % 2 ? &inputs : nullptr; // exercise symbolic and concrete shapes
  auto file = nki::buildKernelFile(std::move(*source), opts);
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  for (auto &k : file->kernels) (void)analysis::verify(k);
  return 0;
}
