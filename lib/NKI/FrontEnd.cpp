// The front end is an abstract evaluator of trace-time Python: it walks a
// kernel body once (as NKI 0.1.0 tracing does), folds integers and shapes,
// treats loop variables as affine symbols, and records loops, statements,
// tensors and accesses into the kernel IR.
#include "NKI/FrontEnd.h"
#include "NKI/FrontEnd/KernelBuilder.h"

namespace accelopt::nki {

using frontend::KernelBuilder;
using syntax::Expr;
using syntax::Stmt;

llvm::Expected<KernelFile> buildKernelFile(std::unique_ptr<syntax::SourceBuffer> source,
                                           const FrontEndOptions &options) {
  return buildKernelFile(syntax::Module::parse(std::move(source)), options);
}

llvm::Expected<KernelFile> buildKernelFile(std::unique_ptr<syntax::Module> module, const FrontEndOptions &options) {
  KernelFile file;
  std::string path = module->source().path().str();
  file.module = std::move(module);
  const syntax::Module &m = *file.module;
  if (!m.errors().empty()) {
    std::string msg;
    for (const auto &err : m.errors()) {
      if (!msg.empty()) msg += "\n";
      msg += m.source().location(err.offset) + ": error: " + err.message;
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  }
  std::map<std::string, std::string> aliases;
  KernelBuilder::recordModuleImports(m, aliases);
  bool foundAny = false;
  for (const Stmt *fn : m.functions()) {
    bool isKernel = false;
    for (const Expr *d : fn->decorators) isKernel |= frontend::isKernelDecorator(d, aliases);
    if (!isKernel) continue;
    foundAny = true;
    if (!options.kernelName.empty() && fn->name != options.kernelName) continue;
    KernelBuilder builder(m, aliases, options.inputs);
    file.kernels.push_back(builder.build(fn));
  }
  if (!foundAny)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ":1:1: error: no @nki.jit kernel in this file (is it an NKI kernel?)");
  if (file.kernels.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ":1:1: error: no kernel named '" + options.kernelName + "' in this file");
  return file;
}

llvm::Expected<KernelFile> loadKernelFile(llvm::StringRef path, const FrontEndOptions &options) {
  auto source = syntax::SourceBuffer::fromFile(path);
  if (!source) return source.takeError();
  return buildKernelFile(std::move(*source), options);
}

} // namespace accelopt::nki
