#include "vramplan/report/table.hpp"

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

TEST(Table, WrongCellCountIsABug) {
  Table t({{"a", Align::Left}});
  EXPECT_THROW(t.add_row({"1", "2"}), Error);
}

}  // namespace
}  // namespace vramplan
