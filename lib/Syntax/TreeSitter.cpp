#include "Syntax/TreeSitter.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::syntax {

llvm::Expected<ParserPtr> makePythonParser() {
  ParserPtr parser(ts_parser_new());
  const TSLanguage *python = tree_sitter_python();
  if (!ts_parser_set_language(parser.get(), python))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("error: tree-sitter-python grammar has ABI version {0}, but the tree-sitter "
                      "runtime accepts {1}..{2}; pin a compatible grammar in grammars/package.json",
                      ts_language_version(python), TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
                      TREE_SITTER_LANGUAGE_VERSION));
  return parser;
}

} // namespace accelopt::syntax
