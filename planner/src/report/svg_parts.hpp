// svg_parts.hpp — the pieces both chart kinds draw with: text of known width, the palette, the
// legend. Internal to the report layer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace vramplan::report::svg {

inline constexpr double kFontSize = 13;  //!< labels, user units (= CSS px at full width)
//! Advance of one character: 0.6 em in DejaVu Sans Mono (1233 / 2048 units) and Liberation Mono
//! (1229 / 2048), rounded up so an estimate is never short.
inline constexpr double kCharWidth = 0.61 * kFontSize;
inline constexpr double kLineHeight = 18;

//! Characters (UTF-8 code points) of `s`.
std::size_t char_count(const std::string& s);
double text_width(const std::string& s);
//! `s` cut to at most `max_chars` characters, the last one "…" when cut.
std::string fit_chars(const std::string& s, std::size_t max_chars);
//! A coordinate or length: at most one decimal, no trailing ".0".
std::string coord(double v);
//! <text> at (x, y) with `anchor` (start, middle, end), escaped, cut to `max_chars` (full text in
//! a <title> when cut); `extra` goes into the tag as written.
std::string text(double x, double y, const std::string& s, const char* anchor, std::size_t max_chars = 200,
                 const std::string& extra = "");

//! Okabe-Ito colours (distinguishable with the common colour-vision deficiencies), cycled.
const char* colour(std::size_t i);
//! Dash pattern of line series i ("" = solid): tells lines apart in a grey print too.
const char* dash(std::size_t i);

struct LegendEntry {
  std::string name;
  std::string colour;
  enum class Mark { Box, Line, DashedLine } mark = Mark::Box;
  std::string dasharray;  //!< Line: its pattern
};

//! Entries left to right from (x, y) (y = the first row's top), wrapping before `width` is
//! exceeded; returns the markup and sets `height` to the rows' total height.
std::string legend(const std::vector<LegendEntry>& entries, double x, double y, double width, double& height);

//! <svg> with a viewBox of kChartWidth x `height` and an accessible name.
std::string open_svg(double height, const std::string& aria_label);

}  // namespace vramplan::report::svg
