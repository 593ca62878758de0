// Output of the engine: unified diffs and atomic file writes.
#include "Rewrite/Rewrite.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace accelopt::rewrite {

namespace {

std::vector<llvm::StringRef> splitLines(llvm::StringRef text) {
  std::vector<llvm::StringRef> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == llvm::StringRef::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.take_front(nl + 1));
    text = text.drop_front(nl + 1);
  }
  return lines;
}

struct DiffLine {
  char tag; // ' ', '-', '+'
  llvm::StringRef text;
  size_t oldLine, newLine; // 0-based positions before this line
};

} // namespace

std::string unifiedDiff(llvm::StringRef oldText, llvm::StringRef newText, llvm::StringRef oldName,
                        llvm::StringRef newName) {
  if (oldText == newText) return "";
  auto a = splitLines(oldText), b = splitLines(newText);
  // Trim the common prefix and suffix, then a longest-common-subsequence table on the rest.
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
  std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[pre + i] == b[pre + j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<DiffLine> script;
  for (size_t i = 0; i < pre; ++i) script.push_back({' ', a[i], i, i});
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[pre + i] == b[pre + j]) {
      script.push_back({' ', a[pre + i], pre + i, pre + j});
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      script.push_back({'-', a[pre + i], pre + i, pre + j});
      ++i;
    } else {
      script.push_back({'+', b[pre + j], pre + i, pre + j});
      ++j;
    }
  }
  for (size_t s = 0; s < suf; ++s) script.push_back({' ', a[pre + n + s], pre + n + s, pre + m + s});

  std::string out;
  llvm::raw_string_ostream os(out);
  os << "--- " << oldName << "\n+++ " << newName << "\n";
  const size_t ctx = 3;
  size_t k = 0;
  while (k < script.size()) {
    if (script[k].tag == ' ') {
      ++k;
      continue;
    }
    // A hunk: from ctx lines before this change to ctx lines after the last change
    // that is at most 2*ctx unchanged lines away.
    size_t begin = k >= ctx ? k - ctx : 0;
    size_t end = k;
    while (true) {
      while (end < script.size() && script[end].tag != ' ') ++end;
      size_t next = end;
      while (next < script.size() && script[next].tag == ' ' && next - end < 2 * ctx + 1) ++next;
      if (next < script.size() && script[next].tag != ' ' && next - end <= 2 * ctx) {
        end = next;
        continue;
      }
      break;
    }
    size_t stop = std::min(script.size(), end + ctx);
    size_t oldStart = script[begin].oldLine, newStart = script[begin].newLine;
    size_t oldCount = 0, newCount = 0;
    for (size_t x = begin; x < stop; ++x) {
      if (script[x].tag != '+') ++oldCount;
      if (script[x].tag != '-') ++newCount;
    }
    os << "@@ -" << (oldCount ? oldStart + 1 : oldStart);
    if (oldCount != 1) os << "," << oldCount;
    os << " +" << (newCount ? newStart + 1 : newStart);
    if (newCount != 1) os << "," << newCount;
    os << " @@\n";
    for (size_t x = begin; x < stop; ++x) {
      os << script[x].tag << script[x].text;
      if (!script[x].text.endswith("\n")) os << "\n\\ No newline at end of file\n";
    }
    k = stop;
  }
  return os.str();
}

} // namespace accelopt::rewrite
