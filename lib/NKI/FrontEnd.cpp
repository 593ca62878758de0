// The front end is an abstract evaluator of trace-time Python: it walks a
// kernel body once (as NKI 0.1.0 tracing does), folds integers and shapes,
// treats loop variables as affine symbols, and records loops, statements,
// tensors and accesses into the kernel IR.
#include "NKI/FrontEnd.h"
#include "NKI/FrontEnd/KernelBuilder.h"

#include <functional>
#include <set>

namespace accelopt::nki {

using frontend::KernelBuilder;
using syntax::Expr;
using syntax::Stmt;

namespace {

/// Module functions made kernels by a call rather than a decorator: `run = nki.baremetal()(f)`,
/// `nki.jit(f)`, `nki.simulate_kernel(nki.jit(f), a)` anywhere in the file (the samples' wrappers
/// at the call site or under `__main__`).
std::set<std::string> functionsWrappedAsKernels(const syntax::Module &m,
                                                const std::map<std::string, std::string> &aliases) {
  std::set<std::string> names;
  std::function<void(const Expr *)> visit = [&](const Expr *e) {
    if (!e) return;
    if (e->kind == syntax::ExprKind::Call && e->base && frontend::isKernelDecorator(e->base, aliases) &&
        !e->elts.empty() && e->elts[0]->kind == syntax::ExprKind::Name)
      names.insert(e->elts[0]->name);
    visit(e->base);
    for (const Expr *x : e->elts) visit(x);
    for (const auto &k : e->keywords) visit(k.value);
  };
  syntax::forEachStmt(m.body(), [&](const Stmt *s) {
    visit(s->value);
    visit(s->msg);
    for (const Expr *t : s->targets) visit(t);
    for (const Expr *d : s->decorators) visit(d);
  });
  return names;
}

} // namespace

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
  std::set<std::string> wrapped = functionsWrappedAsKernels(m, aliases);
  for (const Stmt *fn : m.functions()) {
    // A kernel: decorated, wrapped by a call in the file, or named by --kernel (a helper kernel others call).
    bool isKernel = wrapped.count(fn->name) || (!options.kernelName.empty() && fn->name == options.kernelName);
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
