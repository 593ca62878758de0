// libFuzzer target over the interpreter entry: any text that the front end
// accepts as a kernel is executed on tiny inputs; nothing may crash, hang
// past the time limit, or exhaust memory past the cap.
#include "Interp/Interpreter.h"
#include "NKI/FrontEnd.h"

#include <cstdint>
#include <string>

using namespace accelopt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool init = [] {
    interp::setMemoryCap(256u << 20);
    return true;
  }();
  (void)init;
  static nki::InputSpecs specs = *nki::parseInputSpecs(
      "x=f32[8,16],a=f32[128,64],b=f32[128,64],lhsT=f32[128,128],rhs=f32[128,512],v1=f32[4,8,16],eps=1e-5");
  std::string text(reinterpret_cast<const char *>(data), size);
  auto source = syntax::SourceBuffer::fromText("fuzz.py", std::move(text));
  if (!source) {
    llvm::consumeError(source.takeError());
    return 0;
  }
  auto file = nki::buildKernelFile(std::move(*source), {});
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  const nki::Kernel &k = file->kernels.front();
  nki::InputSpecs mine;
  for (auto &p : k.params)
    for (auto &s : specs)
      if (s.name == p.name) mine.push_back(s);
  auto args = interp::makeRandomInputs(mine, 0);
  if (!args) {
    llvm::consumeError(args.takeError());
    return 0;
  }
  interp::RunOptions opts;
  opts.timeoutSeconds = 2;
  auto result = interp::runKernel(*file, k, std::move(*args), opts);
  if (!result) llvm::consumeError(result.takeError());
  return 0;
}
