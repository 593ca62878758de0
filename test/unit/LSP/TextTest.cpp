// UTF-16 position conversion and incremental document edits (lib/LSP/Text.h).
#include "LSP/Text.h"

#include <gtest/gtest.h>

using namespace accelopt::lsp;
using nlohmann::json;

namespace {

Position pos(uint32_t line, uint32_t character) { return {line, character}; }

json change(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1, const std::string &text) {
  return {{"range", {{"start", {{"line", l0}, {"character", c0}}}, {"end", {{"line", l1}, {"character", c1}}}}},
          {"text", text}};
}

std::string applyEdit(std::string text, const json &c) {
  if (auto err = applyContentChange(text, c)) ADD_FAILURE() << llvm::toString(std::move(err));
  return text;
}

TEST(LineIndex, AsciiLinesRoundTrip) {
  std::string text = "ab\ncde\n\nf";
  LineIndex index(text);
  EXPECT_EQ(index.lineCount(), 4u);
  for (uint32_t off = 0; off <= text.size(); ++off) EXPECT_EQ(index.offset(index.position(off)), off) << off;
  EXPECT_EQ(index.position(3), pos(1, 0));
  EXPECT_EQ(index.position(6), pos(1, 3)); // the newline itself ends the line
  EXPECT_EQ(index.position(7), pos(2, 0));
  EXPECT_EQ(index.position(9), pos(3, 1));
  EXPECT_EQ(index.offset(pos(1, 2)), 5u);
}

TEST(LineIndex, ClampsPastLineAndTextEnd) {
  std::string text = "ab\ncde\n";
  LineIndex index(text);
  EXPECT_EQ(index.offset(pos(0, 99)), 2u); // end of "ab", before its newline
  EXPECT_EQ(index.offset(pos(2, 0)), 7u);  // the empty last line
  EXPECT_EQ(index.offset(pos(2, 5)), 7u);
  EXPECT_EQ(index.offset(pos(40, 0)), 7u); // past the last line: end of text
  EXPECT_EQ(index.position(1000), pos(2, 0));
}

TEST(LineIndex, CrLfAndLoneCr) {
  std::string text = "ab\r\ncd\ref";
  LineIndex index(text);
  EXPECT_EQ(index.lineCount(), 3u);
  EXPECT_EQ(index.offset(pos(0, 5)), 2u); // before "\r\n"
  EXPECT_EQ(index.offset(pos(1, 0)), 4u);
  EXPECT_EQ(index.offset(pos(1, 9)), 6u); // before the lone "\r"
  EXPECT_EQ(index.offset(pos(2, 1)), 8u);
  EXPECT_EQ(index.position(3), pos(0, 2)); // between "\r" and "\n": end of line 0
  EXPECT_EQ(index.position(7), pos(2, 0));
}

TEST(LineIndex, Utf16CodeUnits) {
  // "é" is 2 bytes / 1 unit, "€" 3 bytes / 1 unit, "😀" 4 bytes / 2 units (a surrogate pair).
  std::string text = "x = \"é€😀\" + y\n# 😀😀z";
  LineIndex index(text);
  uint32_t quote = 4;
  EXPECT_EQ(index.offset(pos(0, 5)), quote + 1);  // é
  EXPECT_EQ(index.offset(pos(0, 6)), quote + 3);  // €
  EXPECT_EQ(index.offset(pos(0, 7)), quote + 6);  // 😀
  EXPECT_EQ(index.offset(pos(0, 9)), quote + 10); // closing quote after the pair
  EXPECT_EQ(index.offset(pos(0, 8)), quote + 6);  // inside the pair: start of the code point
  EXPECT_EQ(index.position(quote + 10), pos(0, 9));
  EXPECT_EQ(index.position(quote + 7), pos(0, 7)); // inside the UTF-8 sequence: its start
  size_t line1 = text.find('#');
  EXPECT_EQ(index.offset(pos(1, 6)), line1 + 10); // "# " + 2 pairs = 6 units -> 'z'
  EXPECT_EQ(text[index.offset(pos(1, 6))], 'z');
  EXPECT_EQ(index.position(static_cast<uint32_t>(text.size())), pos(1, 7));
}

TEST(LineIndex, Utf16Length) {
  EXPECT_EQ(utf16Length(""), 0u);
  EXPECT_EQ(utf16Length("abc"), 3u);
  EXPECT_EQ(utf16Length("é€"), 2u);
  EXPECT_EQ(utf16Length("😀"), 2u);
  EXPECT_EQ(utf16Length("\xff"
                        "a"),
            2u); // a malformed byte counts one unit
}

TEST(ContentChange, InsertDeleteReplace) {
  std::string text = "for i in nl.affine_range(4):\n  x = 1\n";
  EXPECT_EQ(applyEdit(text, change(1, 6, 1, 6, "2")), "for i in nl.affine_range(4):\n  x = 21\n");
  EXPECT_EQ(applyEdit(text, change(0, 25, 0, 26, "8")), "for i in nl.affine_range(8):\n  x = 1\n");
  EXPECT_EQ(applyEdit(text, change(0, 28, 1, 7, "")), "for i in nl.affine_range(4):\n");
  EXPECT_EQ(applyEdit(text, change(2, 0, 2, 0, "y = 2\n")), text + "y = 2\n");
}

TEST(ContentChange, RangesCountUtf16) {
  std::string text = "s = '😀'; t = 1\n";
  // Replace "t" (after a surrogate pair: UTF-16 column 10, byte 12).
  EXPECT_EQ(applyEdit(text, change(0, 10, 0, 11, "u")), "s = '😀'; u = 1\n");
  // Delete the emoji (2 units).
  EXPECT_EQ(applyEdit(text, change(0, 5, 0, 7, "")), "s = ''; t = 1\n");
}

TEST(ContentChange, SequenceOfEditsLikeTyping) {
  std::string text = "a\n";
  std::string typed = "nl.load(x)";
  for (uint32_t i = 0; i < typed.size(); ++i) text = applyEdit(text, change(1, i, 1, i, std::string(1, typed[i])));
  EXPECT_EQ(text, "a\nnl.load(x)");
  text = applyEdit(text, change(0, 0, 1, 3, "")); // across the line break
  EXPECT_EQ(text, "load(x)");
}

TEST(ContentChange, FullReplacementAndErrors) {
  std::string text = "old";
  EXPECT_FALSE(applyContentChange(text, json{{"text", "new text"}}));
  EXPECT_EQ(text, "new text");
  llvm::Error err = applyContentChange(text, json{{"range", nullptr}});
  EXPECT_TRUE(bool(err)) << "missing text";
  llvm::consumeError(std::move(err));
  err = applyContentChange(text, change(0, 5, 0, 2, "x"));
  EXPECT_TRUE(bool(err)) << "end before start";
  llvm::consumeError(std::move(err));
  err = applyContentChange(text, json{{"range", {{"start", 1}}}, {"text", ""}});
  EXPECT_TRUE(bool(err)) << "malformed range";
  llvm::consumeError(std::move(err));
  EXPECT_EQ(text, "new text");
  // Positions past the end clamp instead of failing.
  EXPECT_FALSE(applyContentChange(text, change(7, 0, 9, 0, "!")));
  EXPECT_EQ(text, "new text!");
}

} // namespace
