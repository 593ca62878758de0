#include "Syntax/TextLayout.h"

#include <algorithm>
#include <cctype>

namespace accelopt::syntax {

uint32_t lineBegin(llvm::StringRef text, uint32_t offset) {
  offset = std::min<uint32_t>(offset, text.size());
  while (offset > 0 && text[offset - 1] != '\n') --offset;
  return offset;
}

uint32_t nextLineBegin(llvm::StringRef text, uint32_t offset) {
  size_t nl = text.find('\n', offset);
  return nl == llvm::StringRef::npos ? text.size() : nl + 1;
}

std::string indentAt(llvm::StringRef text, uint32_t offset) {
  uint32_t b = lineBegin(text, offset), e = b;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t')) ++e;
  return text.slice(b, e).str();
}

bool startsLine(llvm::StringRef text, uint32_t offset) {
  for (uint32_t i = lineBegin(text, offset); i < offset; ++i)
    if (text[i] != ' ' && text[i] != '\t') return false;
  return true;
}

bool endsLine(llvm::StringRef text, uint32_t offset) {
  for (uint32_t i = offset; i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == '#') return true;
    if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r') return false;
  }
  return true;
}

std::vector<uint32_t> nonBlankLineStarts(llvm::StringRef text, uint32_t begin, uint32_t end) {
  std::vector<uint32_t> out;
  for (uint32_t ls = lineBegin(text, begin); ls < end && ls < text.size(); ls = nextLineBegin(text, ls)) {
    uint32_t i = ls;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i < text.size() && text[i] != '\n') out.push_back(ls);
  }
  return out;
}

std::set<std::string> identifiersIn(llvm::StringRef text) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = text[i];
    if (std::isalpha(c) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum((unsigned char)text[j]) || text[j] == '_')) ++j;
      out.insert(text.slice(i, j).str());
      i = j;
    } else if (std::isdigit(c)) {
      while (i < text.size() && (std::isalnum((unsigned char)text[i]) || text[i] == '_')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

std::string freshName(const std::set<std::string> &taken, const std::string &base) {
  if (!taken.count(base)) return base;
  for (int i = 2;; ++i) {
    std::string n = base + std::to_string(i);
    if (!taken.count(n)) return n;
  }
}

} // namespace accelopt::syntax
