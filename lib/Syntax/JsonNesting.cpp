#include "Syntax/JsonNesting.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::syntax {

size_t jsonNestingDepth(llvm::StringRef text) {
  size_t depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return deepest;
}

llvm::Error checkJsonNesting(llvm::StringRef text, llvm::StringRef what) {
  size_t depth = jsonNestingDepth(text);
  if (depth <= MaxJsonNesting) return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 llvm::formatv("{0}{1}error: JSON nested {2} levels deep; at most {3} are accepted",
                                               what, what.empty() ? "" : ": ", depth, MaxJsonNesting));
}

} // namespace accelopt::syntax
