#include "vramplan/core/table.hpp"

#include <gtest/gtest.h>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

TEST(Table, TextAlignsColumns) {
  Table t({{"gpu", Align::Left}, {"memory", Align::Right}});
  t.add_row({"h100-sxm-80", "79.19 GiB"});
  t.add_row({"l4", "22.03 GiB"});
  EXPECT_EQ(t.render_text(),
            "gpu             memory\n"
            "-----------  ---------\n"
            "h100-sxm-80  79.19 GiB\n"
            "l4           22.03 GiB\n");
}

TEST(Table, MarkdownEscapesPipes) {
  Table t({{"a", Align::Left}, {"b", Align::Right}});
  t.add_row({"x|y", "1"});
  EXPECT_EQ(t.render_markdown(), "| a | b |\n| --- | ---: |\n| x\\|y | 1 |\n");
}

TEST(Table, WrapColumnFitsTheTextWidth) {
  // Width 40: "name" (4) + 2 + "size" (8) + 2 leaves 24 for the wrapped column.
  set_text_width(40);
  Table t({{"name", Align::Left}, {"size", Align::Right}, {"how", Align::Wrap}});
  t.add_row({"kv", "1.00 GiB", "27716 blocks x 2,097,152 B per block of 16 tokens"});
  EXPECT_EQ(t.render_text(),
            "name      size  how\n"
            "----  --------  ------------------------\n"
            "kv    1.00 GiB  27716 blocks x 2,097,152\n"
            "                B per block of 16 tokens\n");
  set_text_width(100);
}

TEST(Table, WrapWordsBreaksAtSpacesWithAHangingIndent) {
  EXPECT_EQ(wrap_words("note: the KV pool is what vLLM holds", 16, 6),
            (std::vector<std::string>{"note: the KV", "      pool is", "      what vLLM", "      holds"}));
  // A word longer than a line is cut; an empty text is one empty line.
  EXPECT_EQ(wrap_words("https://example.org/a/very/long/path", 12),
            (std::vector<std::string>{"https://exam", "ple.org/a/ve", "ry/long/path"}));
  EXPECT_EQ(wrap_words("", 20), std::vector<std::string>{""});
  EXPECT_EQ(wrap_paragraph("alpha beta gamma", 10), "alpha beta\ngamma");
}

TEST(Table, WrongCellCountIsABug) {
  Table t({{"a", Align::Left}});
  EXPECT_THROW(t.add_row({"1", "2"}), Error);
}

}  // namespace
}  // namespace vramplan
