#include "Memory/Hash.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

namespace accelopt::memory {

std::string sha256Hex(llvm::StringRef data) {
  llvm::SHA256 h;
  h.update(data);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

// Strips a '#' comment unless it is inside a string literal. Triple-quoted
// strings spanning lines are tracked so a '#' inside a docstring stays.
std::string normalizeSource(llvm::StringRef text) {
  std::string out;
  llvm::StringRef rest = text;
  std::string triple; // the open triple quote, if any
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    std::string kept;
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      char c = line[i];
      if (!triple.empty()) {
        if (line.substr(i).startswith(triple)) {
          kept += triple;
          i += 2;
          triple.clear();
          continue;
        }
        kept += c;
        continue;
      }
      if (quote) {
        kept += c;
        if (c == '\\' && i + 1 < line.size())
          kept += line[++i];
        else if (c == quote)
          quote = 0;
        continue;
      }
      if (c == '#') break;
      if ((c == '"' || c == '\'') && line.substr(i).startswith(std::string(3, c))) {
        triple = std::string(3, c);
        kept += triple;
        i += 2;
        continue;
      }
      if (c == '"' || c == '\'') quote = c;
      kept += c;
    }
    llvm::StringRef trimmed = llvm::StringRef(kept).rtrim();
    if (trimmed.empty() && triple.empty()) continue;
    out += trimmed.str();
    out += '\n';
  }
  return out;
}

std::string sourceHash(llvm::StringRef text) { return sha256Hex(normalizeSource(text)); }

std::string opsHash(const nlohmann::json &ops) { return sha256Hex(ops.dump()); }

} // namespace accelopt::memory
