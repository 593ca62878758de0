// RAII ownership of tree-sitter parser and tree objects.
#pragma once

#include "llvm/Support/Error.h"

#include <memory>
#include <tree_sitter/api.h>

extern "C" const TSLanguage *tree_sitter_python(void);

namespace accelopt::syntax {

struct ParserDeleter {
  void operator()(TSParser *p) const { ts_parser_delete(p); }
};
struct TreeDeleter {
  void operator()(TSTree *t) const { ts_tree_delete(t); }
};
using ParserPtr = std::unique_ptr<TSParser, ParserDeleter>;
using TreePtr = std::unique_ptr<TSTree, TreeDeleter>;

/// A parser for the pinned Python grammar; fails clearly when the grammar's ABI
/// does not match the tree-sitter runtime.
llvm::Expected<ParserPtr> makePythonParser();

} // namespace accelopt::syntax
