#include "NKI/Imports.h"
#include "NKI/PyCore.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <set>

namespace accelopt::nki {

namespace {

/// Python's standard library modules kernels import for host-side helpers: never files of the kernel.
bool isStandardModule(llvm::StringRef root) {
  static const std::set<std::string, std::less<>> names = {
      "__future__", "abc",       "argparse",  "collections", "contextlib", "copy",    "dataclasses", "datetime",
      "enum",       "fractions", "functools", "glob",        "inspect",    "io",      "itertools",   "json",
      "logging",    "math",      "numbers",   "operator",    "os",         "pathlib", "pickle",      "random",
      "re",         "shutil",    "string",    "struct",      "subprocess", "sys",     "tempfile",    "textwrap",
      "time",       "types",     "typing",    "unittest",    "warnings"};
  return names.count(root) != 0;
}

/// Modules the core knows (NKI in both dialects, numpy, math): their names are canonical paths.
bool isKnownModule(llvm::StringRef dotted) {
  llvm::StringRef root = dotted.split('.').first;
  return pycore::canonicalPath(dotted.str()) != dotted.str() || root == "neuronxcc" || root == "nki" ||
         isStandardModule(root);
}

std::string existingFile(const llvm::SmallString<256> &base, llvm::StringRef rel) {
  llvm::SmallString<256> file = base;
  if (!rel.empty()) llvm::sys::path::append(file, rel);
  llvm::SmallString<256> py = file;
  py += ".py";
  if (!rel.empty() && llvm::sys::fs::is_regular_file(py)) return std::string(py);
  llvm::SmallString<256> init = file;
  llvm::sys::path::append(init, "__init__.py");
  if (llvm::sys::fs::is_regular_file(init)) return std::string(init);
  return "";
}

} // namespace

struct ImportResolver {
  ModuleImports &Out;
  std::map<std::string, SiblingModule *> ByPath;

  /// The directory `level` dots up from the file's (1: the file's own; 0: absolute, also the file's).
  static llvm::SmallString<256> baseDir(llvm::StringRef file, int level) {
    llvm::SmallString<256> dir = llvm::sys::path::parent_path(file); // "": the working directory
    for (int i = 1; i < level; ++i) {
      if (dir.empty() || dir == "." || llvm::sys::path::filename(dir) == "..")
        llvm::sys::path::append(dir, "..");
      else
        dir = llvm::sys::path::parent_path(dir);
    }
    return dir;
  }

  SiblingModule *load(const std::string &path, const std::string &spelled, int depth) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(path, real)) real = path;
    std::string key(real);
    if (auto it = ByPath.find(key); it != ByPath.end()) return it->second; // cached; also breaks cycles
    auto source = syntax::SourceBuffer::fromFile(path);
    if (!source) {
      llvm::consumeError(source.takeError());
      return nullptr;
    }
    auto mod = std::make_unique<SiblingModule>();
    std::string name = llvm::StringRef(spelled).ltrim('.').str();
    if (name.empty()) name = llvm::sys::path::stem(path).str();
    std::string unique = name;
    for (int n = 2;
         std::any_of(Out.Modules.begin(), Out.Modules.end(), [&](const auto &m) { return m->name == unique; }); ++n)
      unique = name + "#" + std::to_string(n);
    mod->name = unique;
    mod->path = path;
    mod->module = syntax::Module::parse(std::move(*source));
    SiblingModule *raw = mod.get();
    Out.Modules.push_back(std::move(mod));
    ByPath[key] = raw;
    for (const syntax::Stmt *fn : raw->module->functions()) Out.Owner[fn] = raw;
    if (raw->module->errors().empty()) follow(*raw->module, path, depth + 1, &raw->aliases);
    return raw;
  }

  void unresolved(const syntax::Module &m, const std::string &local, llvm::StringRef module, llvm::StringRef file,
                  const std::string &looked) {
    Out.Unresolved[&m][local] = "module '" + module.str() + "' was not found next to " +
                                llvm::sys::path::filename(file).str() + " (looked for " + looked +
                                "), so accelopt does not follow it";
  }

  void follow(const syntax::Module &m, llvm::StringRef file, int depth, std::map<std::string, std::string> *aliases) {
    for (const syntax::Stmt *s : m.body()) {
      if (s->kind != syntax::StmtKind::Import && s->kind != syntax::StmtKind::ImportFrom) continue;
      if (aliases)
        for (auto &[local, canonical] : pycore::importBindings(*s)) (*aliases)[local] = canonical;
      if (s->kind == syntax::StmtKind::Import) {
        for (const auto &[dotted, alias] : s->imports) {
          if (isKnownModule(dotted)) continue;
          // `import a.b` binds `a` (a package): only `import x` and `import a.b as h` bind the module itself.
          if (alias.empty() && llvm::StringRef(dotted).contains('.')) continue;
          std::string local = alias.empty() ? dotted : alias;
          std::string rel = dotted;
          std::replace(rel.begin(), rel.end(), '.', '/');
          std::string path = existingFile(baseDir(file, 0), rel);
          SiblingModule *sib = path.empty() || depth > ModuleImports::kMaxDepth ? nullptr : load(path, dotted, depth);
          if (sib)
            Out.Bindings[&m][local] = {sib, ""};
          else
            unresolved(m, local, dotted, file, rel + ".py, " + rel + "/__init__.py");
        }
        continue;
      }
      llvm::StringRef spelled = s->name;
      int level = int(spelled.size() - spelled.ltrim('.').size());
      llvm::StringRef dotted = spelled.ltrim('.');
      if (level == 0 && isKnownModule(dotted)) continue;
      std::string rel = dotted.str();
      std::replace(rel.begin(), rel.end(), '.', '/');
      llvm::SmallString<256> base = baseDir(file, level);
      std::string path = existingFile(base, rel);
      SiblingModule *sib =
          path.empty() || depth > ModuleImports::kMaxDepth ? nullptr : load(path, spelled.str(), depth);
      for (const auto &imported : s->imports) {
        // Not a structured binding: clang 14 (the sanitizer build) cannot capture one in a lambda.
        const std::string &name = imported.first, &alias = imported.second;
        if (name == "*") continue;
        std::string local = alias.empty() ? name : alias;
        // `from . import utils`, `from pkg import mod`: a module file of the package, else a name of it.
        llvm::SmallString<256> pkg = base;
        if (!rel.empty()) llvm::sys::path::append(pkg, rel);
        std::string sub = existingFile(pkg, name);
        bool isName = sib && llvm::any_of(sib->module->body(), [&](const syntax::Stmt *x) {
                        if (x->kind == syntax::StmtKind::FunctionDef && x->name == name) return true;
                        if (pycore::classNameOf(*x) == name) return true;
                        return llvm::any_of(x->targets, [&](const syntax::Expr *t) {
                          return t->kind == syntax::ExprKind::Name && t->name == name;
                        });
                      });
        if (!isName && !sub.empty() && depth <= ModuleImports::kMaxDepth) {
          if (SiblingModule *m2 = load(sub, name, depth)) {
            Out.Bindings[&m][local] = {m2, ""};
            continue;
          }
        }
        if (sib)
          Out.Bindings[&m][local] = {sib, name};
        else
          unresolved(m, local, spelled, file, rel.empty() ? "__init__.py" : rel + ".py, " + rel + "/__init__.py");
      }
    }
    // A name bound to a followed module is that module's, not a dotted path.
    if (aliases)
      if (auto it = Out.Bindings.find(&m); it != Out.Bindings.end())
        for (const auto &[local, target] : it->second) aliases->erase(local);
  }
};

std::shared_ptr<const ModuleImports> ModuleImports::resolve(const syntax::Module &m) {
  auto out = std::make_shared<ModuleImports>();
  ImportResolver r{*out, {}};
  r.follow(m, m.source().path(), 0, nullptr);
  return out;
}

const std::map<std::string, ImportTarget> *ModuleImports::bindingsOf(const syntax::Module &m) const {
  auto it = Bindings.find(&m);
  return it == Bindings.end() ? nullptr : &it->second;
}

const std::map<std::string, std::string> *ModuleImports::unresolvedOf(const syntax::Module &m) const {
  auto it = Unresolved.find(&m);
  return it == Unresolved.end() ? nullptr : &it->second;
}

const SiblingModule *ModuleImports::moduleOf(const syntax::Stmt *def) const {
  auto it = Owner.find(def);
  return it == Owner.end() ? nullptr : it->second;
}

std::string inSiblingFunction(const SiblingModule &m, const syntax::Stmt &def, uint32_t offset,
                              const std::string &message) {
  return "in '" + def.name + "' at " + m.module->source().location(offset) + ": " + message;
}

} // namespace accelopt::nki
