// vramplan/report/svg_chart.hpp — charts (chart.hpp) drawn as inline SVG for the HTML report.
//
// Layout is computed, not left to the browser: labels use a monospace font whose advance is
// 0.6 em (DejaVu Sans Mono: 1233 / 2048 units), so a label's width is known here and labels are
// placed (and cut with "…", the full text in a <title>) so that no two overlap at any zoom: the
// SVG scales as a whole through its viewBox. Every text is HTML-escaped.
#pragma once

#include <string>
#include <vector>

#include "vramplan/report/chart.hpp"

namespace vramplan::report {

//! The width of the drawing in SVG user units (the page shows it at up to this many CSS px).
inline constexpr double kChartWidth = 960;

//! Axis ticks from `lo` to `hi` (both inside [first, last]): multiples of the smallest step of
//! 1, 2, 2.5 or 5 x 10^k that needs at most `max_ticks` ticks. nice_ticks(0, 73, 6) ==
//! {0, 20, 40, 60, 80}.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
//! Powers of two covering [lo, hi] (lo >= 1), every k-th one so that at most `max_ticks` remain.
std::vector<double> log2_ticks(double lo, double hi, int max_ticks);
//! A tick's label with as many decimals as `step` needs: (20, 20) -> "20", (0.25, 0.05) -> "0.25".
std::string tick_label(double value, double step);

//! Bar length in user units: value / axis_max x plot_width (0 for a non-positive value).
double bar_length(double value, double axis_max, double plot_width);

std::string svg_stacked_bars(const StackedBarChart& chart, const std::string& aria_label);
std::string svg_line_chart(const LineChart& chart, const std::string& aria_label);

}  // namespace vramplan::report
