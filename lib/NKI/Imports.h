// Imports of Python files next to the kernel (`from common import f`, `from .utils import g`,
// `import helpers as h`): each module resolved relative to the importing file's directory (package
// dots go up), parsed once per path, cycle-safe and depth-limited. The front end evaluates their
// plain-number helpers, the interpreter runs their functions; nothing edits them.
#pragma once

#include "Syntax/PyAST.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace accelopt::nki {

struct SiblingModule;

/// What a name bound by an import denotes in a sibling module: the module itself (`import helpers as h`)
/// or one of its names (`from common import f`).
struct ImportTarget {
  const SiblingModule *module = nullptr;
  std::string attr; // "" = the module itself
};

struct SiblingModule {
  std::string name; // unique among the followed modules ("common", "utils", "utils#2")
  std::string path;
  std::unique_ptr<syntax::Module> module;
  std::map<std::string, std::string> aliases; // its other imports: local name -> canonical dotted path
};

class ModuleImports {
public:
  /// Follows the module-level imports of `m` (the file at m.source().path()) and of the modules they reach.
  static std::shared_ptr<const ModuleImports> resolve(const syntax::Module &m);

  /// The names `m` (the kernel's file or a followed module) binds to followed modules; null if none.
  const std::map<std::string, ImportTarget> *bindingsOf(const syntax::Module &m) const;
  /// Local names of `m` bound by an import of a module that is neither known nor found next to the file,
  /// with the message that names it ("module 'common' was not found next to kernel.py (...)").
  const std::map<std::string, std::string> *unresolvedOf(const syntax::Module &m) const;
  /// The followed module whose text holds function `def` (at any depth); null for any other.
  const SiblingModule *moduleOf(const syntax::Stmt *def) const;
  const std::vector<std::unique_ptr<SiblingModule>> &modules() const { return Modules; }

  /// Follow chains of imports at most this deep.
  static constexpr int kMaxDepth = 8;

private:
  std::vector<std::unique_ptr<SiblingModule>> Modules;
  std::map<const syntax::Module *, std::map<std::string, ImportTarget>> Bindings;
  std::map<const syntax::Module *, std::map<std::string, std::string>> Unresolved;
  std::map<const syntax::Stmt *, const SiblingModule *> Owner;
  friend struct ImportResolver;
};

/// "in 'f' at common.py:4:10: MESSAGE": a problem found inside a function of a followed module, said at
/// the call in the kernel's file.
std::string inSiblingFunction(const SiblingModule &m, const syntax::Stmt &def, uint32_t offset,
                              const std::string &message);

} // namespace accelopt::nki
