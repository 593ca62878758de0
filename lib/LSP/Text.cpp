#include "LSP/Text.h"
#include "Syntax/Errors.h"

#include <algorithm>

namespace accelopt::lsp {

namespace {

/// Bytes of the UTF-8 sequence starting with `lead` (1 for malformed bytes).
unsigned sequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0 && lead <= 0xF7) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC0) return 2;
  return 1; // a stray continuation byte
}

/// The sequence at `i` in `text`, clipped to `end` and to its continuation bytes.
unsigned sequenceAt(llvm::StringRef text, uint32_t i, uint32_t end) {
  unsigned n = sequenceLength(static_cast<unsigned char>(text[i]));
  unsigned k = 1;
  while (k < n && i + k < end && (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80) ++k;
  return k;
}

} // namespace

uint32_t utf16Length(llvm::StringRef utf8) {
  uint32_t units = 0;
  for (uint32_t i = 0, e = static_cast<uint32_t>(utf8.size()); i < e;) {
    unsigned k = sequenceAt(utf8, i, e);
    units += k == 4 ? 2 : 1;
    i += k;
  }
  return units;
}

LineIndex::LineIndex(llvm::StringRef text) : Text(text) {
  Starts.push_back(0);
  for (uint32_t i = 0, e = static_cast<uint32_t>(text.size()); i < e; ++i) {
    if (text[i] == '\n') {
      Starts.push_back(i + 1);
    } else if (text[i] == '\r') {
      if (i + 1 < e && text[i + 1] == '\n') ++i;
      Starts.push_back(i + 1);
    }
  }
}

uint32_t LineIndex::lineEnd(uint32_t line) const {
  uint32_t end = line + 1 < Starts.size() ? Starts[line + 1] : static_cast<uint32_t>(Text.size());
  uint32_t begin = Starts[line];
  if (end > begin && line + 1 < Starts.size()) {
    --end; // "\n" or lone "\r"
    if (end > begin && Text[end] == '\n' && Text[end - 1] == '\r') --end;
  }
  return end;
}

uint32_t LineIndex::offset(Position p) const {
  if (p.line >= Starts.size()) return static_cast<uint32_t>(Text.size());
  uint32_t i = Starts[p.line];
  uint32_t end = lineEnd(p.line);
  uint32_t units = 0;
  while (i < end) {
    unsigned k = sequenceAt(Text, i, end);
    unsigned w = k == 4 ? 2 : 1;
    if (units + w > p.character) break;
    units += w;
    i += k;
  }
  return i;
}

Position LineIndex::position(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(Text.size()));
  auto it = std::upper_bound(Starts.begin(), Starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - Starts.begin()) - 1;
  // An offset between "\r" and "\n" belongs to the end of the line.
  uint32_t end = std::min(offset, lineEnd(line));
  uint32_t units = 0;
  for (uint32_t i = Starts[line]; i < end;) {
    unsigned k = sequenceAt(Text, i, static_cast<uint32_t>(Text.size()));
    if (i + k > end) break; // inside a sequence: its start
    units += k == 4 ? 2 : 1;
    i += k;
  }
  return {line, units};
}

Position positionFromJson(const nlohmann::json &j) {
  int64_t line = j.at("line").get<int64_t>();
  int64_t character = j.at("character").get<int64_t>();
  auto clamp = [](int64_t v) { return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, UINT32_MAX)); };
  return {clamp(line), clamp(character)};
}

nlohmann::json toJson(Position p) { return {{"line", p.line}, {"character", p.character}}; }

nlohmann::json rangeJson(const LineIndex &index, uint32_t begin, uint32_t end) {
  return {{"start", toJson(index.position(begin))}, {"end", toJson(index.position(std::max(begin, end)))}};
}

llvm::Error applyContentChange(std::string &text, const nlohmann::json &change) {
  if (!change.is_object()) return stringError("content change is not an object");
  auto t = change.find("text");
  if (t == change.end() || !t->is_string()) return stringError("content change without \"text\"");
  auto r = change.find("range");
  if (r == change.end() || r->is_null()) {
    text = t->get<std::string>();
    return llvm::Error::success();
  }
  Position start, end;
  try {
    start = positionFromJson(r->at("start"));
    end = positionFromJson(r->at("end"));
  } catch (const nlohmann::json::exception &e) {
    return stringError(llvm::Twine("malformed range in content change: ") + e.what());
  }
  if (end.line < start.line || (end.line == start.line && end.character < start.character))
    return stringError("content change range ends before it starts");
  LineIndex index(text);
  uint32_t b = index.offset(start), e = index.offset(end);
  if (e < b) e = b;
  text.replace(b, e - b, t->get_ref<const std::string &>());
  return llvm::Error::success();
}

} // namespace accelopt::lsp
