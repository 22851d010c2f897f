// C1 control characters (U+0080-U+009F, e.g. U+009B, the 8-bit CSI a terminal obeys like ESC [)
// and bytes that are not UTF-8 are escaped like the C0 controls: "\xHH" in messages and text
// output, U+FFFD in HTML (docs/errors.md, docs/report.md).
#include <gtest/gtest.h>

#include <string>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan {
namespace {

TEST(EscapeC1, C1AndInvalidUtf8BecomeHexEscapes) {
  // U+009B is C2 9B in UTF-8: both bytes written.
  EXPECT_EQ(escape_control("a\xc2\x9b" "31mred"), "a\\xc2\\x9b31mred");
  // U+0085 (NEL) and U+009F, the ends of the C1 range; U+00A0 (no-break space) is not a control.
  EXPECT_EQ(escape_control("\xc2\x85|\xc2\x9f|\xc2\xa0"), "\\xc2\\x85|\\xc2\\x9f|\xc2\xa0");
  // Latin-1 'é' alone (E9), a stray continuation byte (80), FF FE, a truncated 3-byte sequence.
  EXPECT_EQ(escape_control("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(escape_control("x\x80y\xff\xfe"), "x\\x80y\\xff\\xfe");
  EXPECT_EQ(escape_control("\xe2\x82"), "\\xe2\\x82");
  // Overlong '/' (C0 AF) and a UTF-16 surrogate (ED A0 80) are not UTF-8 either.
  EXPECT_EQ(escape_control("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(escape_control("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // Valid UTF-8 stays: é, €, an emoji (4 bytes).
  EXPECT_EQ(escape_control("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  // The error a message becomes carries the escaped text.
  EXPECT_STREQ(Error(ErrorKind::Usage, "unknown model '\xc2\x9b" "1m'").what(), "unknown model '\\xc2\\x9b1m'");
}

TEST(EscapeC1, KeepLinesKeepsNewlineAndTabOnly) {
  EXPECT_EQ(escape_control_keep_lines("a\tb\nc\x1b[0m\xc2\x9b\r"), "a\tb\nc\\x1b[0m\\xc2\\x9b\\x0d");
}

TEST(EscapeC1, HtmlReplacesC1AndInvalidUtf8) {
  // <title>A ESC[31mB CSI C FF FE D</title> of the probe: every control and bad byte is U+FFFD,
  // one per bad byte, one per control character.
  EXPECT_EQ(html_escape("A\x1b[31mB\xc2\x9b" "C\xff\xfe" "D"), "A\uFFFD[31mB\uFFFDC\uFFFD\uFFFDD");
  EXPECT_EQ(html_escape("caf\xe9-model"), "caf\uFFFD-model");
  EXPECT_EQ(html_escape("caf\xc3\xa9 <b>"), "caf\xc3\xa9 &lt;b&gt;");
}

TEST(EscapeC1, Utf8SequenceLengths) {
  char32_t c = 0;
  EXPECT_EQ(utf8_sequence("\xc2\x9b", 0, &c), 2u);
  EXPECT_EQ(c, 0x9Bu);
  EXPECT_TRUE(is_control_code_point(c));
  EXPECT_EQ(utf8_sequence("\xf0\x9f\x98\x80", 0, &c), 4u);
  EXPECT_EQ(c, 0x1F600u);
  EXPECT_FALSE(is_control_code_point(c));
  EXPECT_EQ(utf8_sequence("\xf4\x90\x80\x80", 0, &c), 0u);  // above U+10FFFF
  EXPECT_EQ(utf8_sequence("\xe9", 0, &c), 0u);
}

}  // namespace
}  // namespace vramplan
