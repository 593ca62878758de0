// Prompt templates compiled into the library (generated EmbeddedPrompts.cpp,
// see lib/Agent/CMakeLists.txt). Internal to the Agent layer.
#pragma once

#include "llvm/ADT/ArrayRef.h"

namespace accelopt::agent::embedded {

struct PromptFile {
  const char *name; ///< file name without extension ("planner")
  const char *text;
};

/// prompts/*.txt
llvm::ArrayRef<PromptFile> promptFiles();

} // namespace accelopt::agent::embedded
