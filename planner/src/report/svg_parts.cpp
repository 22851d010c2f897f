#include "svg_parts.hpp"

#include <cmath>
#include <cstdio>

#include "vramplan/report/html_page.hpp"
#include "vramplan/report/svg_chart.hpp"

namespace vramplan::report::svg {

std::size_t char_count(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

double text_width(const std::string& s) { return static_cast<double>(char_count(s)) * kCharWidth; }

std::string fit_chars(const std::string& s, std::size_t max_chars) {
  if (max_chars == 0) return "";
  if (char_count(s) <= max_chars) return s;
  std::string out;
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80 && ++n == max_chars) break;  // keep max_chars - 1, then the ellipsis
    out += static_cast<char>(c);
  }
  return out + "\u2026";
}

std::string coord(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", std::round(v * 10) / 10);
  std::string s = b;
  if (s.size() > 2 && s.ends_with(".0")) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

std::string text(double x, double y, const std::string& s, const char* anchor, std::size_t max_chars,
                 const std::string& extra) {
  const std::string shown = fit_chars(s, max_chars);
  std::string out = "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" text-anchor=\"" + anchor + "\"" +
                    (extra.empty() ? "" : " " + extra) + ">";
  if (shown != s) out += "<title>" + html_escape(s) + "</title>";
  return out + html_escape(shown) + "</text>";
}

const char* colour(std::size_t i) {
  static const char* const palette[] = {"#0072B2", "#E69F00", "#CC79A7", "#009E73", "#56B4E9",
                                        "#D55E00", "#F0E442", "#999999", "#000000"};
  return palette[i % (sizeof palette / sizeof palette[0])];
}

const char* dash(std::size_t i) {
  static const char* const patterns[] = {"", "6 3", "2 3", "8 3 2 3"};
  return patterns[i % 4];
}

std::string legend(const std::vector<LegendEntry>& entries, double x, double y, double width, double& height) {
  constexpr double swatch = 14, gap_after_swatch = 6, gap_between = 22;
  constexpr std::size_t max_chars = 48;
  std::string out = "<g class=\"legend\">";
  double cx = x, row_top = y;
  for (const auto& e : entries) {
    const std::string name = fit_chars(e.name, max_chars);
    const double w = swatch + gap_after_swatch + text_width(name);
    if (cx > x && cx + w > x + width) {  // wrap: the entry would cross the right edge
      cx = x;
      row_top += kLineHeight + 4;
    }
    const double mid = row_top + kLineHeight / 2;
    if (e.mark == LegendEntry::Mark::Box)
      out += "<rect x=\"" + coord(cx) + "\" y=\"" + coord(mid - swatch / 2) + "\" width=\"" + coord(swatch) +
             "\" height=\"" + coord(swatch) + "\" fill=\"" + e.colour + "\"/>";
    else
      out += "<line x1=\"" + coord(cx) + "\" y1=\"" + coord(mid) + "\" x2=\"" + coord(cx + swatch) + "\" y2=\"" +
             coord(mid) + "\" stroke=\"" + e.colour + "\" stroke-width=\"2.5\"" +
             (e.mark == LegendEntry::Mark::DashedLine ? " stroke-dasharray=\"4 2\""
              : e.dasharray.empty()                   ? ""
                                                      : " stroke-dasharray=\"" + e.dasharray + "\"") +
             "/>";
    out += text(cx + swatch + gap_after_swatch, mid + kFontSize * 0.35, e.name, "start", max_chars);
    cx += w + gap_between;
  }
  height = entries.empty() ? 0 : row_top - y + kLineHeight;
  return out + "</g>";
}

std::string open_svg(double height, const std::string& aria_label) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " + coord(kChartWidth) + " " +
         coord(height) + "\" width=\"" + coord(kChartWidth) + "\" height=\"" + coord(height) +
         "\" role=\"img\" aria-label=\"" + html_escape(aria_label) + "\" font-size=\"" + coord(kFontSize) +
         "\" font-family=\"'DejaVu Sans Mono', 'Liberation Mono', monospace\">";
}

}  // namespace vramplan::report::svg
