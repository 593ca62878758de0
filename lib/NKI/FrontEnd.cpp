// The front end is an abstract evaluator of trace-time Python: it walks a
// kernel body once (as NKI 0.1.0 tracing does), folds integers and shapes,
// treats loop variables as affine symbols, and records loops, statements,
// tensors and accesses into the kernel IR.
#include "NKI/FrontEnd.h"
#include "NKI/FrontEnd/KernelBuilder.h"
#include "Syntax/AstWalks.h"

#include <functional>
#include <set>

#include <functional>
#include <set>

namespace accelopt::nki {

using frontend::KernelBuilder;
using syntax::Expr;
using syntax::ExprKind;
using syntax::Stmt;
namespace PyStmt = syntax;

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

/// The module-level functions of a file that imports NKI that no function of the file calls.
std::set<std::string> entryFunctions(const syntax::Module &m, const std::map<std::string, std::string> &aliases) {
  bool importsNki = false;
  for (const auto &[alias, module] : aliases) {
    llvm::StringRef root = llvm::StringRef(module).split('.').first; // canonical: nki, nl, nisa
    importsNki |= root == "nki" || root == "nl" || root == "nisa";
  }
  std::set<std::string> names, called;
  if (!importsNki) return names;
  for (const Stmt *fn : m.functions()) {
    names.insert(fn->name);
    syntax::forEachStmt(fn->body, [&](const Stmt *s) {
      syntax::forEachExpr(s, [&](const Expr *e) {
        if (e->kind == ExprKind::Call && e->base && e->base->kind == ExprKind::Name) called.insert(e->base->name);
      });
    });
  }
  for (const std::string &c : called) names.erase(c);
  return names;
}

} // namespace

llvm::Expected<KernelFile> buildKernelFile(std::unique_ptr<syntax::SourceBuffer> source,
                                           const FrontEndOptions &options) {
  return buildKernelFile(syntax::Module::parse(std::move(source)), options);
}

namespace {

/// A launch `name[g0, g1](...)` in the file (under `if __name__ == "__main__":`, in a host function):
/// its extents when the file computes them from integers it spells (literals, module constants, the
/// host function's own assignments, nl.nc(n)) and the shapes of the arrays it passes (`a.shape[0] //
/// 128`, with `a` the kernel argument the input shapes give).
struct FileLaunch {
  const Expr *at = nullptr;
  std::vector<int64_t> dims;
  bool known = false;
};

using Names = std::map<std::string, const Expr *>; // a name bound once -> its value (null: bound again)

void collectAssigns(const std::vector<const Stmt *> &body, Names &out) {
  syntax::forEachStmt(body, [&](const Stmt *s) {
    if (s->kind != PyStmt::StmtKind::Assign || s->targets.size() != 1 || s->targets[0]->kind != ExprKind::Name) return;
    auto [it, added] = out.emplace(s->targets[0]->name, s->value);
    if (!added) it->second = nullptr;
  });
}

FileLaunch launchInFile(const syntax::Module &m, const Stmt &kernel, const InputSpecs *inputs) {
  const std::string &name = kernel.name;
  Names constants;
  for (const Stmt *s : m.body())
    if (s->kind == PyStmt::StmtKind::Assign && s->targets.size() == 1 && s->targets[0]->kind == ExprKind::Name)
      constants[s->targets[0]->name] = s->value;
  Names locals;                                    // the enclosing host function's
  std::map<std::string, const InputSpec *> arrays; // names the launch passes for kernel arguments
  std::function<std::optional<int64_t>(const Expr *, int)> value = [&](const Expr *e,
                                                                       int depth) -> std::optional<int64_t> {
    if (!e || depth > 16) return std::nullopt;
    switch (e->kind) {
    case ExprKind::Int: return e->intValue;
    case ExprKind::Name: {
      if (auto it = locals.find(e->name); it != locals.end()) return value(it->second, depth + 1);
      auto it = constants.find(e->name);
      return it == constants.end() ? std::nullopt : value(it->second, depth + 1);
    }
    case ExprKind::Subscript: { // a.shape[k]
      const Expr *b = e->base;
      if (!b || b->kind != ExprKind::Attribute || b->name != "shape" || !b->base || b->base->kind != ExprKind::Name ||
          e->elts.size() != 1)
        return std::nullopt;
      auto arr = arrays.find(b->base->name);
      auto k = value(e->elts[0], depth + 1);
      if (arr == arrays.end() || !k) return std::nullopt;
      int64_t rank = int64_t(arr->second->shape.size());
      int64_t at = *k < 0 ? *k + rank : *k;
      return at >= 0 && at < rank ? std::optional<int64_t>(arr->second->shape[size_t(at)]) : std::nullopt;
    }
    case ExprKind::Call: // nl.nc(2): a logical-core axis of that extent
      if (e->base && e->base->kind == ExprKind::Attribute && e->base->name == "nc" && e->elts.size() == 1)
        return value(e->elts[0], depth + 1);
      return std::nullopt;
    case ExprKind::BinOp: {
      auto l = value(e->elts[0], depth + 1), r = value(e->elts[1], depth + 1);
      if (!l || !r || std::abs(*l) > (1 << 30) || std::abs(*r) > (1 << 30)) return std::nullopt;
      if (e->name == "+") return *l + *r;
      if (e->name == "-") return *l - *r;
      if (e->name == "*") return *l * *r;
      if (e->name == "//" && *r > 0 && *l >= 0) return *l / *r;
      return std::nullopt;
    }
    default: return std::nullopt;
    }
  };
  FileLaunch out;
  for (const Stmt *s : m.body()) {
    locals.clear();
    if (s->kind == PyStmt::StmtKind::FunctionDef)
      collectAssigns(s->body, locals);
    else if (s->kind != PyStmt::StmtKind::Assign) // `if __name__ == "__main__":` and other blocks
      collectAssigns({s}, locals);
    syntax::forEachExpr(s, [&](const Expr *e) {
      if (out.at || e->kind != ExprKind::Call || !e->base || e->base->kind != ExprKind::Subscript) return;
      const Expr *sub = e->base;
      if (!sub->base || sub->base->kind != ExprKind::Name || sub->base->name != name) return;
      out.at = e;
      out.known = true;
      // The names it passes stand for the kernel's arguments (by position, then by keyword).
      arrays.clear();
      auto bindArray = [&](const std::string &param, const Expr *arg) {
        if (!inputs || !arg || arg->kind != ExprKind::Name) return;
        for (const InputSpec &spec : *inputs)
          if (spec.name == param && !spec.isScalar && spec.literal.empty()) arrays[arg->name] = &spec;
      };
      for (size_t k = 0; k < e->elts.size() && k < kernel.params.size(); ++k)
        bindArray(kernel.params[k].name, e->elts[k]);
      for (const syntax::Keyword &kw : e->keywords) bindArray(kw.name, kw.value);
      std::vector<const Expr *> elts = sub->elts;
      if (elts.size() == 1 && elts[0]->kind == ExprKind::Tuple) elts = elts[0]->elts;
      for (const Expr *x : elts) {
        auto v = value(x, 0);
        if (!v || *v <= 0) out.known = false;
        out.dims.push_back(v.value_or(0));
      }
    });
  }
  return out;
}

} // namespace

/// The kernel `fn` traced as instance 0 of its launch grid (given, else the file's launch), and, when
/// the trace reads the program id, every other instance: their diagnostics join instance 0's.
static Kernel buildGrid(const syntax::Module &m, const std::map<std::string, std::string> &aliases,
                        const FrontEndOptions &options, const Stmt *fn, const ModuleImports *imports) {
  std::vector<int64_t> dims = options.grid;
  if (dims.empty() && options.inputs) dims = options.inputs->grid;
  std::optional<Diagnostic> launchNote;
  if (dims.empty()) {
    FileLaunch launch = launchInFile(m, *fn, options.inputs);
    if (launch.at && launch.known)
      dims = launch.dims;
    else if (launch.at)
      launchNote = Diagnostic{Diagnostic::Warning, launch.at->base->range.begin, launch.at->base->range.end,
                              "the launch grid of '" + m.text(launch.at->base).str() +
                                  "' is not known at trace time; give it with --grid G0[,G1]",
                              ruleId(Rule::TraceTime)};
  }
  pycore::LaunchGrid grid;
  grid.dims = dims;
  int64_t size = grid.size();
  if (size > pycore::kMaxGridInstances) grid.dims.clear();
  KernelBuilder builder(m, aliases, options.inputs, grid, imports);
  Kernel k = builder.build(fn);
  k.grid = grid.dims;
  if (launchNote && builder.readLaunchGrid()) k.diagnostics.push_back(*launchNote);
  if (size > pycore::kMaxGridInstances)
    k.diagnostics.push_back({Diagnostic::Error, fn->headerRange.begin, fn->headerRange.end,
                             "the launch grid " + pycore::gridText(dims) + " has more than " +
                                 std::to_string(pycore::kMaxGridInstances) +
                                 " instances; accelopt traces each one (give a smaller --grid)",
                             ruleId(Rule::Inputs)});
  if (!builder.readLaunchGrid() || k.gridSize() <= 1) return k;
  // Each diagnostic once, at the first instance that has it (by place and rule).
  std::set<std::tuple<uint32_t, uint32_t, std::string>> seen;
  for (const Diagnostic &d : k.diagnostics) seen.insert({d.offset, d.endOffset, d.rule});
  auto others = std::make_shared<std::vector<Kernel>>();
  for (int64_t flat = 1; flat < k.gridSize(); ++flat) {
    pycore::LaunchGrid at = pycore::LaunchGrid::at(k.grid, flat);
    KernelBuilder b(m, aliases, options.inputs, at, imports);
    Kernel ki = b.build(fn);
    for (const Diagnostic &d : ki.diagnostics)
      if (d.severity != Diagnostic::Note && seen.insert({d.offset, d.endOffset, d.rule}).second) {
        Diagnostic copy = d;
        copy.message = "in grid instance " + at.instanceText() + ": " + d.message;
        k.diagnostics.push_back(std::move(copy));
      }
    ki.grid = k.grid;
    others->push_back(std::move(ki));
  }
  k.gridInstances = std::move(others);
  return k;
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
  auto isKernel = [&](const Stmt *fn) {
    // Decorated, wrapped by a call in the file, or named by --kernel (a helper kernel others call).
    bool kernel = wrapped.count(fn->name) || (!options.kernelName.empty() && fn->name == options.kernelName);
    for (const Expr *d : fn->decorators) kernel |= frontend::isKernelDecorator(d, aliases);
    return kernel;
  };
  bool anyMarked = llvm::any_of(m.functions(), isKernel);
  std::set<std::string> entries;
  if (!anyMarked && options.entryFunctionsAsKernels) entries = entryFunctions(m, aliases);
  for (const Stmt *fn : m.functions()) {
    if (!isKernel(fn) && !entries.count(fn->name)) continue;
    foundAny = true;
    if (!options.kernelName.empty() && fn->name != options.kernelName) continue;
    if (!file.imports) file.imports = ModuleImports::resolve(m);
    file.kernels.push_back(buildGrid(m, aliases, options, fn, file.imports.get()));
  }
  if (!foundAny) {
    // An NKI file whose kernels are plain functions (launched by a harness elsewhere): name them.
    std::string candidates;
    for (const std::string &name : entryFunctions(m, aliases))
      candidates += (candidates.empty() ? "'" : ", '") + name + "'";
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ":1:1: error: no @nki.jit kernel in this file (is it an NKI kernel?)" +
                                       (candidates.empty()
                                            ? std::string()
                                            : "; it imports NKI: to take one of its functions (" + candidates +
                                                  ") as the kernel, name it with --kernel NAME"));
  }
  if (file.kernels.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ":1:1: error: no kernel named '" + options.kernelName + "' in this file");
  return file;
}

void keepEntryKernels(KernelFile &file) {
  std::set<std::string> names, called;
  for (const Kernel &k : file.kernels) names.insert(k.name);
  for (const Kernel &k : file.kernels) {
    if (!k.def) continue;
    syntax::forEachStmt(k.def->body, [&](const Stmt *s) {
      syntax::forEachExpr(s, [&](const Expr *e) {
        if (e->kind == ExprKind::Call && e->base && e->base->kind == ExprKind::Name && e->base->name != k.name &&
            names.count(e->base->name))
          called.insert(e->base->name);
      });
    });
  }
  if (called.empty() || called.size() == names.size()) return;
  llvm::erase_if(file.kernels, [&](const Kernel &k) { return called.count(k.name) != 0; });
}

llvm::Expected<KernelFile> loadKernelFile(llvm::StringRef path, const FrontEndOptions &options) {
  auto source = syntax::SourceBuffer::fromFile(path);
  if (!source) return source.takeError();
  return buildKernelFile(std::move(*source), options);
}

} // namespace accelopt::nki
