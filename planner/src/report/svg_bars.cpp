// Horizontal stacked bars (svg_chart.hpp): one row per bar, grouped under headings, totals at
// the bars' ends, limits as dashed lines across their group, the value axis at the bottom.
#include <algorithm>

#include "svg_parts.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/report/html_page.hpp"
#include "vramplan/report/svg_chart.hpp"

namespace vramplan::report {

std::string svg_stacked_bars(const StackedBarChart& c, const std::string& aria_label) {
  using namespace svg;
  for (const auto& s : c.stacks)
    if (s.values.size() != c.bars.size()) throw_internal("stacked bars: series '" + s.name + "' has the wrong length");
  for (const auto& b : c.bars)
    if (b.group >= c.groups.size()) throw_internal("stacked bars: bar '" + b.label + "' names no group");

  constexpr double pad = 12, bar_h = 18, bar_gap = 6, group_gap = 12;
  constexpr std::size_t max_label_chars = 24;
  std::vector<double> totals(c.bars.size(), 0);
  double axis_hi = 0;
  for (std::size_t i = 0; i < c.bars.size(); ++i) {
    for (const auto& s : c.stacks) totals[i] += std::max(0.0, s.values[i]);
    axis_hi = std::max(axis_hi, totals[i]);
  }
  for (const auto& g : c.groups) axis_hi = std::max(axis_hi, g.limit);

  std::vector<LegendEntry> entries;
  for (std::size_t k = 0; k < c.stacks.size(); ++k) entries.push_back({c.stacks[k].name, colour(k), LegendEntry::Mark::Box, ""});
  const bool any_limit = std::any_of(c.groups.begin(), c.groups.end(), [](const auto& g) { return g.limit > 0; });
  if (any_limit) entries.push_back({c.limit_label, "#B00020", LegendEntry::Mark::DashedLine, ""});
  double legend_h = 0;
  const std::string legend_svg = legend(entries, pad, pad, kChartWidth - 2 * pad, legend_h);

  std::size_t label_chars = 0;
  for (const auto& b : c.bars) label_chars = std::max(label_chars, std::min(char_count(b.label), max_label_chars));
  const double plot_left = pad + static_cast<double>(label_chars) * kCharWidth + 10;
  const double plot_right = kChartWidth - pad - text_width("00000.0 " + c.unit) - 8;
  const double plot_w = plot_right - plot_left;
  // As many ticks as fit with a label's width plus 24 units between neighbours.
  const int max_ticks = std::clamp(static_cast<int>(plot_w / (text_width("0000.0") + 24)), 2, 10);
  const std::vector<double> ticks = nice_ticks(0, axis_hi, max_ticks);
  const double axis_max = ticks.back(), step = ticks.size() > 1 ? ticks[1] - ticks[0] : ticks.back();

  std::string body;
  double y = pad + legend_h + 10;
  const double plot_top = y;
  const std::size_t heading_chars = static_cast<std::size_t>((kChartWidth - 2 * pad) / kCharWidth);
  for (std::size_t g = 0; g < c.groups.size(); ++g) {
    body += text(pad, y + kFontSize, c.groups[g].name, "start", heading_chars, "font-weight=\"bold\"");
    y += kLineHeight + 2;
    const double group_top = y;
    for (std::size_t i = 0; i < c.bars.size(); ++i) {
      if (c.bars[i].group != g) continue;
      body += text(plot_left - 8, y + bar_h / 2 + kFontSize * 0.35, c.bars[i].label, "end", max_label_chars);
      double x = plot_left;
      for (std::size_t k = 0; k < c.stacks.size(); ++k) {
        const double w = bar_length(c.stacks[k].values[i], axis_max, plot_w);
        if (w <= 0) continue;
        body += "<rect class=\"bar\" x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(w) +
                "\" height=\"" + coord(bar_h) + "\" fill=\"" + colour(k) + "\"><title>" +
                html_escape(c.bars[i].label + " - " + c.stacks[k].name + ": " + fixed(c.stacks[k].values[i], 2) + " " + c.unit) +
                "</title></rect>";
        x += w;
      }
      // The total after the bar's end, or after the limit line when the line would cross it.
      const std::string total = fixed(totals[i], 1) + " " + c.unit;
      double tx = x + 6;
      const double lx = plot_left + bar_length(c.groups[g].limit, axis_max, plot_w);
      if (c.groups[g].limit > 0 && lx >= x - 1 && lx <= tx + text_width(total) + 4) tx = lx + 6;
      body += text(tx, y + bar_h / 2 + kFontSize * 0.35, total, "start");
      y += bar_h + bar_gap;
    }
    if (c.groups[g].limit > 0) {
      const double lx = plot_left + bar_length(c.groups[g].limit, axis_max, plot_w);
      body += "<line class=\"limit\" x1=\"" + coord(lx) + "\" y1=\"" + coord(group_top - 3) + "\" x2=\"" + coord(lx) +
              "\" y2=\"" + coord(y - bar_gap + 3) + "\" stroke=\"#B00020\" stroke-width=\"2\" stroke-dasharray=\"4 2\"><title>" +
              html_escape(c.limit_label + ": " + fixed(c.groups[g].limit, 2) + " " + c.unit) + "</title></line>";
    }
    y += group_gap;
  }
  const double plot_bottom = y - group_gap + 4;

  std::string grid;
  for (double t : ticks) {
    const double x = plot_left + bar_length(t, axis_max, plot_w);
    grid += "<line class=\"grid\" x1=\"" + coord(x) + "\" y1=\"" + coord(plot_top) + "\" x2=\"" + coord(x) + "\" y2=\"" +
            coord(plot_bottom) + "\" stroke=\"#dddddd\"/>";
    grid += text(x, plot_bottom + 16, tick_label(t, step), "middle");
  }
  grid += "<line x1=\"" + coord(plot_left) + "\" y1=\"" + coord(plot_bottom) + "\" x2=\"" + coord(plot_right) + "\" y2=\"" +
          coord(plot_bottom) + "\" stroke=\"#444444\"/>";
  const auto title_chars = static_cast<std::size_t>(plot_w / kCharWidth);
  grid += text(plot_left + plot_w / 2, plot_bottom + 36, c.value_label, "middle", title_chars, "class=\"axis-title\"");
  const double height = plot_bottom + 36 + pad;
  return open_svg(height, aria_label) + legend_svg + grid + body + "</svg>";
}

}  // namespace vramplan::report
