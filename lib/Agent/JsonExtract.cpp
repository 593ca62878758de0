#include "Agent/JsonExtract.h"
#include "Syntax/JsonNesting.h"

#include <vector>

namespace accelopt::agent {

namespace {

bool fits(const nlohmann::json &j, JsonShape shape) {
  switch (shape) {
  case JsonShape::Any: return j.is_object() || j.is_array();
  case JsonShape::Object: return j.is_object();
  case JsonShape::Array: return j.is_array();
  }
  return false;
}

/// Fenced blocks: the text between a ``` line (optionally with a language tag)
/// and the next ```.
std::vector<llvm::StringRef> fencedBlocks(llvm::StringRef text) {
  std::vector<llvm::StringRef> out;
  size_t pos = 0;
  while ((pos = text.find("```", pos)) != llvm::StringRef::npos) {
    size_t bodyStart = text.find('\n', pos + 3);
    if (bodyStart == llvm::StringRef::npos) break;
    llvm::StringRef tag = text.slice(pos + 3, bodyStart).trim();
    size_t close = text.find("```", bodyStart + 1);
    if (close == llvm::StringRef::npos) close = text.size(); // unterminated fence: take the rest
    if (tag.empty() || tag.equals_insensitive("json") || tag.equals_insensitive("jsonc") ||
        tag.equals_insensitive("javascript"))
      out.push_back(text.slice(bodyStart + 1, close));
    pos = close + 3;
    if (pos >= text.size()) break;
  }
  return out;
}

/// End (one past) of the balanced region opening at text[begin], or npos.
size_t balancedEnd(llvm::StringRef text, size_t begin) {
  std::vector<char> stack;
  bool inString = false, escape = false;
  for (size_t i = begin; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '{' || c == '[')
      stack.push_back(c == '{' ? '}' : ']');
    else if (c == '}' || c == ']') {
      if (stack.empty() || stack.back() != c) return llvm::StringRef::npos;
      stack.pop_back();
      if (stack.empty()) return i + 1;
    }
  }
  return llvm::StringRef::npos;
}

nlohmann::json tryParse(llvm::StringRef s) {
  if (syntax::jsonNestingDepth(s) > syntax::MaxJsonNesting) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(s.begin(), s.end(), nullptr, /*allow_exceptions=*/false);
}

} // namespace

llvm::Expected<nlohmann::json> extractJson(llvm::StringRef text, JsonShape shape) {
  const char *want = shape == JsonShape::Object  ? "a JSON object"
                     : shape == JsonShape::Array ? "a JSON array"
                                                 : "a JSON object or array";
  bool sawWrongShape = false;
  auto accept = [&](llvm::StringRef candidate, nlohmann::json &out) {
    nlohmann::json j = tryParse(candidate.trim());
    if (j.is_discarded()) return false;
    if (!fits(j, shape)) {
      sawWrongShape = true;
      return false;
    }
    out = std::move(j);
    return true;
  };

  nlohmann::json out;
  if (text.trim().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the answer is empty; expected %s", want);
  if (accept(text, out)) return out;
  for (llvm::StringRef block : fencedBlocks(text))
    if (accept(block, out)) return out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '{' && c != '[') continue;
    if ((c == '{' && shape == JsonShape::Array) || (c == '[' && shape == JsonShape::Object)) {
      // Still skip over the region so that a nested match is not taken alone.
      if (size_t end = balancedEnd(text, i); end != llvm::StringRef::npos) {
        nlohmann::json j = tryParse(text.slice(i, end));
        if (!j.is_discarded()) {
          sawWrongShape = true;
          i = end - 1;
        }
      }
      continue;
    }
    size_t end = balancedEnd(text, i);
    if (end == llvm::StringRef::npos) continue;
    if (accept(text.slice(i, end), out)) return out;
  }
  if (sawWrongShape)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the answer holds JSON, but not %s", want);
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "the answer holds no valid JSON; expected %s (parse error or unbalanced brackets)",
                                 want);
}

} // namespace accelopt::agent
