// Digging a JSON value out of an LLM answer that may wrap it in prose.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

namespace accelopt::agent {

enum class JsonShape { Any, Object, Array };

/// Tries, in order: the whole text; each fenced code block (```json ... ```,
/// ``` ... ```); each balanced {...} / [...] region (string- and
/// escape-aware), first one first. Returns the first candidate that parses and
/// has the wanted shape, or an error that says what was wrong.
llvm::Expected<nlohmann::json> extractJson(llvm::StringRef text, JsonShape shape = JsonShape::Any);

} // namespace accelopt::agent
