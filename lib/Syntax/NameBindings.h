// Which names a Python file binds anywhere, for "name 'x' is not defined" (pyflakes' F821) without
// modelling Python's scopes: a name bound nowhere in the file and not a builtin is undefined in
// every scope, so reporting it is never a false error.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <set>
#include <string>

namespace accelopt::syntax {

struct FileBindings {
  std::set<std::string> names; // every identifier in a binding position, in any scope
  bool starImport = false;     // `from m import *` binds names the file does not spell
};

/// Names bound anywhere in `source`: assignment, for and comprehension targets, parameters,
/// def/class names, imports and their aliases, `as` targets, walrus names, global/nonlocal names.
FileBindings namesBoundInFile(llvm::StringRef source);

/// A name Python's builtins module defines (len, range, ValueError, __name__, ...).
bool isPythonBuiltinName(llvm::StringRef name);

} // namespace accelopt::syntax
