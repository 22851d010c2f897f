// The SVG chart builders: axis ticks and bar lengths by hand, escaping, cut labels, legend
// wrapping and the shape of the drawing (report/svg_chart.hpp).
#include "vramplan/report/svg_chart.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>
#include <algorithm>
#include <string>
#include <vector>

#include "report/svg_parts.hpp"

namespace vramplan::report {
namespace {

// Every value of attribute `attr` on elements matching `tag_pattern` (e.g. "rect class=\"bar\"").
std::vector<double> svg_attr_values(const std::string& svg, const std::string& tag_pattern, const std::string& attr) {
  std::vector<double> out;
  const std::regex tag("<" + tag_pattern + "[^>]*>");
  const std::regex value(" " + attr + "=\"([-0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
    std::smatch m;
    const std::string element = it->str();
    if (std::regex_search(element, m, value)) out.push_back(std::stod(m[1]));
  }
  return out;
}

TEST(SvgChart, NiceTicksPickTheSmallestStepThatFits) {
  // 0..73 in at most 6 ticks: (73 - 0) / 5 = 14.6 -> magnitude 10; step 10 needs 0..80 = 9
  // ticks, too many; step 20 needs 0, 20, 40, 60, 80 = 5.
  EXPECT_EQ(nice_ticks(0, 73, 6), (std::vector<double>{0, 20, 40, 60, 80}));
  // 0..0.37 in 5: 0.37 / 4 = 0.0925 -> magnitude 0.01; steps 0.01 (38 ticks), 0.02 (20),
  // 0.025 (16), 0.05 (9) are too many; 0.1 gives 0, 0.1, ..., 0.4 = 5.
  const auto t = nice_ticks(0, 0.37, 5);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_NEAR(t[3], 0.3, 1e-12);
  EXPECT_NEAR(t.back(), 0.4, 1e-12);
  // One value: an axis one unit above it (1 / 5 = 0.2 -> magnitude 0.1; 0.1 needs 11 ticks,
  // 0.2 needs 0, 0.2, ..., 1 = 6).
  EXPECT_EQ(nice_ticks(0, 0, 6).size(), 6u);
  EXPECT_NEAR(nice_ticks(0, 0, 6).back(), 1, 1e-12);
  // 0..80 in 10: 80 / 9 = 8.9 -> magnitude 1; 1 (81), 2 (41), 2.5 (33), 5 (17) too many; 10 -> 9.
  EXPECT_EQ(nice_ticks(0, 80, 10).size(), 9u);
}

TEST(SvgChart, Log2TicksStayWithinTheirCount) {
  // 1..300: log2 300 = 8.2 -> 2^0 .. 2^9, 10 ticks, all fit in 12.
  EXPECT_EQ(log2_ticks(1, 300, 12), (std::vector<double>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
  // 1..1024 in at most 4: 10 octaves, stride ceil(10 / 3) = 4 -> 2^0, 2^4, 2^8, 2^12.
  EXPECT_EQ(log2_ticks(1, 1024, 4), (std::vector<double>{1, 16, 256, 4096}));
  EXPECT_EQ(log2_ticks(1, 1, 8), (std::vector<double>{1, 2}));
}

TEST(SvgChart, TickLabelsShowTheDecimalsTheStepNeeds) {
  EXPECT_EQ(tick_label(20, 20), "20");
  EXPECT_EQ(tick_label(0.25, 0.05), "0.25");
  EXPECT_EQ(tick_label(7.5, 2.5), "7.5");
  EXPECT_EQ(tick_label(0.3, 0.1), "0.3");
  EXPECT_EQ(tick_label(0.75, 0.25), "0.75");
}

TEST(SvgChart, BarLengthIsProportionalToTheValue) {
  EXPECT_DOUBLE_EQ(bar_length(20, 80, 700), 175);  // 20 / 80 x 700
  EXPECT_DOUBLE_EQ(bar_length(-1, 80, 700), 0);
  EXPECT_DOUBLE_EQ(bar_length(5, 0, 700), 0);
}

StackedBarChart one_card(const std::string& group_name, const std::string& bar_label) {
  StackedBarChart c;
  c.value_label = "GiB per GPU";
  c.unit = "GiB";
  c.limit_label = "capacity";
  c.groups = {{group_name, 80}};
  c.bars = {{bar_label, 0}};
  c.stacks = {{"weights", {16}}, {"KV cache", {24}}};
  return c;
}

TEST(SvgChart, StackedSegmentsAreDrawnToTheAxisScale) {
  const std::string svg = svg_stacked_bars(one_card("h100", "needed"), "test");
  const auto widths = svg_attr_values(svg, "rect class=\"bar\"", "width");
  const auto xs = svg_attr_values(svg, "rect class=\"bar\"", "x");
  ASSERT_EQ(widths.size(), 2u);
  // Gridlines at the ticks 0..80 (the capacity 80 is the largest value): the first and last
  // vertical grid lines span the axis.
  const auto grid = svg_attr_values(svg, "line class=\"grid\"", "x1");
  ASSERT_GE(grid.size(), 2u);
  const double axis = grid[grid.size() - 1] - grid[0];  // user units for 80 GiB
  // 16 GiB of 80 = 0.2 of the axis, 24 GiB = 0.3; coordinates are rounded to 0.1 unit.
  EXPECT_NEAR(widths[0], 0.2 * axis, 0.15);
  EXPECT_NEAR(widths[1], 0.3 * axis, 0.15);
  EXPECT_NEAR(xs[1], xs[0] + widths[0], 0.15);  // stacked: the second starts where the first ends
  // The capacity line sits at 80 GiB, the axis' end.
  const auto limit = svg_attr_values(svg, "line class=\"limit\"", "x1");
  ASSERT_EQ(limit.size(), 1u);
  EXPECT_NEAR(limit[0], grid.back(), 0.15);
  EXPECT_NE(svg.find(">40.0 GiB</text>"), std::string::npos);  // the total at the bar's end
}

TEST(SvgChart, TextFromFilesIsEscaped) {
  const std::string svg = svg_stacked_bars(one_card("<script>alert('x')</script> & co", "needed\"/><b>"), "a \"quote\"");
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"), std::string::npos);
  EXPECT_NE(svg.find("aria-label=\"a &quot;quote&quot;\""), std::string::npos);
}

TEST(SvgChart, LongLabelsAreCutWithTheFullTextInATitle) {
  const std::string label(60, 'm');
  const std::string svg = svg_stacked_bars(one_card("card", label), "test");
  // Bar labels keep 23 characters and an ellipsis (24 at most).
  EXPECT_NE(svg.find("<title>" + label + "</title>" + std::string(23, 'm') + "\u2026</text>"), std::string::npos);
}

TEST(SvgChart, LegendWrapsBeforeTheRightEdge) {
  LineChart c{"x", "y", {1, 2, 3}, {}, false};
  for (int i = 0; i < 12; ++i) c.series.push_back({"a rather long series name number " + std::to_string(i), {1, 2, 3}});
  const std::string svg = svg_line_chart(c, "test");
  // Each legend text starts after its swatch; its estimated width must end inside 960 - 12.
  const std::regex text("<text x=\"([0-9.]+)\" y=\"([0-9.]+)\" text-anchor=\"start\">(a rather long[^<]*)</text>");
  std::set<double> rows;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]);
    EXPECT_LE(x + svg::text_width((*it)[3]), kChartWidth - 12 + 0.1) << (*it)[3];
    rows.insert(std::stod((*it)[2]));
  }
  // An entry: swatch 14 + 6 + 34 characters x 7.93 = 290 units, then 22 to the next: entries at
  // 12, 324, 635 end by 925 <= 948; a fourth would start at 947 -> 3 per row, 4 rows for 12.
  EXPECT_EQ(rows.size(), 4u);
}

TEST(SvgChart, LinesBreakAtMissingValues) {
  const double nan = std::nan("");
  LineChart c{"batch", "tokens/s", {1, 2, 4, 8}, {{"expected", {10, nan, 30, 40}}}, true};
  const std::string svg = svg_line_chart(c, "test");
  const std::regex path("<path class=\"series\" d=\"([^\"]*)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, path));
  const std::string d = m[1];
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2);  // 1 alone, then 4 -> 8
  EXPECT_EQ(std::count(d.begin(), d.end(), 'L'), 1);
  EXPECT_EQ(svg_attr_values(svg, "circle", "cx").size(), 3u);  // a marker per value
  // y ticks 0..40 (40 / 5 = 8 -> step 10: 0, 10, 20, 30, 40), labelled at the left.
  for (const char* label : {">0</text>", ">10</text>", ">40</text>"}) EXPECT_NE(svg.find(label), std::string::npos) << label;
}

}  // namespace
}  // namespace vramplan::report
