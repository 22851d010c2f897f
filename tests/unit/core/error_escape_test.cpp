// Error messages print as one harmless line: control characters quoted from files or arguments
// (NUL in a GGUF string, ESC sequences in a user's model name, newlines) are escaped, so what()
// keeps the whole message and the terminal is never driven by input.
#include <gtest/gtest.h>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan {
namespace {

TEST(EscapeControl, ControlCharactersBecomeHexEscapes) {
  using namespace std::string_literals;
  // NUL -> \x00, ESC (0x1b) -> \x1b, newline -> \x0a, DEL -> \x7f; printable ASCII and UTF-8 kept.
  EXPECT_EQ(escape_control("a\0b"s), "a\\x00b");
  EXPECT_EQ(escape_control("\x1b[31mred\n"), "\\x1b[31mred\\x0a");
  EXPECT_EQ(escape_control("del\x7f"), "del\\x7f");
  EXPECT_EQ(escape_control("caf\xc3\xa9 \\ ok"), "caf\xc3\xa9 \\ ok");
}

TEST(EscapeControl, ErrorKeepsTheWholeMessageAfterNul) {
  using namespace std::string_literals;
  // what() is a C string: an unescaped NUL would cut "tail" off.
  const Error e(ErrorKind::InputFile, "name 'a\0b' tail"s);
  EXPECT_EQ(std::string(e.what()), "name 'a\\x00b' tail");
  EXPECT_EQ(e.kind(), ErrorKind::InputFile);
}

}  // namespace
}  // namespace vramplan
