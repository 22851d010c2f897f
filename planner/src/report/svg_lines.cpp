// Line charts (svg_chart.hpp): series over a shared x axis (linear, or log2 for batch sizes),
// y from zero, gridlines at the ticks, markers on short series, a gap where a value is NaN.
#include <algorithm>
#include <cmath>

#include "svg_parts.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/report/html_page.hpp"
#include "vramplan/report/svg_chart.hpp"

namespace vramplan::report {

std::string svg_line_chart(const LineChart& c, const std::string& aria_label) {
  using namespace svg;
  for (const auto& s : c.series)
    if (s.values.size() != c.x.size()) throw_internal("line chart: series '" + s.name + "' has the wrong length");
  constexpr double pad = 12, plot_h = 220;

  double y_lo = 0, y_hi = 0;
  for (const auto& s : c.series)
    for (double v : s.values)
      if (std::isfinite(v)) y_lo = std::min(y_lo, v), y_hi = std::max(y_hi, v);
  const std::vector<double> y_ticks = nice_ticks(y_lo, y_hi, 6);
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  std::size_t y_label_chars = 1;
  for (double t : y_ticks) y_label_chars = std::max(y_label_chars, tick_label(t, y_step).size());

  std::vector<LegendEntry> entries;
  for (std::size_t k = 0; k < c.series.size(); ++k)
    entries.push_back({c.series[k].name, colour(k), LegendEntry::Mark::Line, dash(k)});
  double legend_h = 0;
  const std::string legend_svg = legend(entries, pad, pad, kChartWidth - 2 * pad, legend_h);

  const double plot_top = pad + legend_h + 12, plot_bottom = plot_top + plot_h;
  const double plot_left = pad + kLineHeight + 6 + static_cast<double>(y_label_chars) * kCharWidth + 8;
  const double x_lo = c.x.empty() ? 0 : c.x.front(), x_hi = c.x.empty() ? 1 : c.x.back();
  // x tick labels are centred on their tick: the last one needs half its width inside the edge.
  const double plot_right = kChartWidth - pad - text_width("000000") / 2;
  const double plot_w = plot_right - plot_left;
  const int max_x_ticks = std::clamp(static_cast<int>(plot_w / (text_width("000000") + 24)), 2, 12);
  const std::vector<double> x_ticks = c.log2_x ? log2_ticks(x_lo, x_hi, max_x_ticks) : nice_ticks(x_lo, x_hi, max_x_ticks);
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
  const double x0 = x_ticks.front(), x1 = x_ticks.back(), y0 = y_ticks.front(), y1 = y_ticks.back();
  const auto px = [&](double x) {
    const double f = c.log2_x ? (std::log2(x) - std::log2(x0)) / (std::log2(x1) - std::log2(x0)) : (x - x0) / (x1 - x0);
    return plot_left + f * plot_w;
  };
  const auto py = [&](double y) { return plot_bottom - (y - y0) / (y1 - y0) * plot_h; };

  std::string out = open_svg(plot_bottom + 40 + pad, aria_label) + legend_svg;
  for (double t : y_ticks) {
    out += "<line class=\"grid\" x1=\"" + coord(plot_left) + "\" y1=\"" + coord(py(t)) + "\" x2=\"" + coord(plot_right) + "\" y2=\"" +
           coord(py(t)) + "\" stroke=\"#dddddd\"/>";
    out += text(plot_left - 6, py(t) + kFontSize * 0.35, tick_label(t, y_step), "end");
  }
  for (double t : x_ticks) {
    out += "<line class=\"grid\" x1=\"" + coord(px(t)) + "\" y1=\"" + coord(plot_top) + "\" x2=\"" + coord(px(t)) + "\" y2=\"" +
           coord(plot_bottom) + "\" stroke=\"#eeeeee\"/>";
    out += text(px(t), plot_bottom + 16, tick_label(t, c.log2_x ? 1 : x_step), "middle");
  }
  out += "<path d=\"M" + coord(plot_left) + " " + coord(plot_top) + "V" + coord(plot_bottom) + "H" + coord(plot_right) +
         "\" fill=\"none\" stroke=\"#444444\"/>";
  const double mid_y = (plot_top + plot_bottom) / 2, title_x = pad + kFontSize;
  out += text(title_x, mid_y, c.y_label, "middle", static_cast<std::size_t>(plot_h / kCharWidth),
              "class=\"axis-title\" transform=\"rotate(-90 " + coord(title_x) + " " + coord(mid_y) + ")\"");
  out += text(plot_left + plot_w / 2, plot_bottom + 36, c.x_label, "middle", static_cast<std::size_t>(plot_w / kCharWidth),
              "class=\"axis-title\"");

  const bool markers = c.x.size() <= 40;
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const auto& v = c.series[k].values;
    std::string d, dots;
    bool pen_down = false;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) {
        pen_down = false;
        continue;
      }
      d += (pen_down ? "L" : "M") + coord(px(c.x[i])) + " " + coord(py(v[i]));
      pen_down = true;
      // A value between two gaps is no line: it always gets its marker.
      const bool alone = (i == 0 || !std::isfinite(v[i - 1])) && (i + 1 == v.size() || !std::isfinite(v[i + 1]));
      if (markers || alone)
        dots += "<circle cx=\"" + coord(px(c.x[i])) + "\" cy=\"" + coord(py(v[i])) + "\" r=\"3\" fill=\"" + colour(k) +
                "\"><title>" + html_escape(c.series[k].name + " at " + tick_label(c.x[i], c.log2_x ? 1 : x_step / 10) +
                                           ": " + format_number("%.4g", v[i])) +
                "</title></circle>";
    }
    if (d.empty()) continue;
    out += "<path class=\"series\" d=\"" + d + "\" fill=\"none\" stroke=\"" + colour(k) + "\" stroke-width=\"2\"" +
           (*dash(k) ? std::string(" stroke-dasharray=\"") + dash(k) + "\"" : std::string()) + "/>" + dots;
  }
  return out + "</svg>";
}

}  // namespace vramplan::report
