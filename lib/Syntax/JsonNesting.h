// How deeply a JSON text nests, measured on the text before it is parsed. nlohmann::json copies
// values recursively, so untrusted JSON (op lists, pattern files, memory imports, LLM answers) nested
// tens of thousands deep overflowed the stack (reliability report D13); it is refused first.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace accelopt::syntax {

/// Far deeper than any op list, pattern or memory export accelopt writes.
constexpr unsigned MaxJsonNesting = 64;

/// The deepest nesting of '[' and '{' outside JSON strings.
size_t jsonNestingDepth(llvm::StringRef text);

/// An error "WHAT: error: JSON nested N levels deep; at most 64 are accepted" when the text nests deeper
/// than MaxJsonNesting, else success.
llvm::Error checkJsonNesting(llvm::StringRef text, llvm::StringRef what);

} // namespace accelopt::syntax
