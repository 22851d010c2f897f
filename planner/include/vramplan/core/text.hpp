// vramplan/core/text.hpp — small string helpers shared by every name lookup (catalogue ids,
// GPU ids, format names): case folding, trimming, and "did you mean" suggestions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

std::string to_lower(std::string_view s);         //!< ASCII lower case
std::string_view trim(std::string_view s);        //!< without leading/trailing whitespace
//! Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);
//! Up to `max` names nearest to `wanted` (compared in lower case): names containing it (or
//! contained in it) first, then by edit distance, keeping only plausible ones (distance at most
//! max(3, |wanted| / 3)). Ties keep the order of `names`.
std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& names,
                                       std::size_t max = 5);
//! `s` with every ASCII control character (0x00-0x1F, 0x7F) written as "\xHH", so text taken from
//! a file or a user's argument prints as one line and cannot drive the terminal. A backslash
//! stays as it is; bytes >= 0x80 (UTF-8) are kept.
std::string escape_control(std::string_view s);
//! & < > " ' as entities; ASCII control characters other than tab and newline as U+FFFD (a
//! model name read from a user's file can hold anything): text into HTML or SVG markup.
std::string html_escape(std::string_view text);
//! `text` in single quotes for an error message, cut to its first `max` characters ("...'" marks
//! a cut): a garbage cell or flag value can be a whole megabyte line.
std::string excerpt(std::string_view text, std::size_t max = 40);
//! One number through a printf conversion ("%.2f", "%+.1f %%", "%.4g"), for tables and lines.
std::string format_number(const char* spec, double v);
//! `v` with exactly `decimals` places ("%.*f"), for table cells.
std::string fixed(double v, int decimals);
//! A fraction as a percentage with `decimals` places: percent(0.1234, 1) == "12.3%".
std::string percent(double fraction, int decimals);
//! `v` rounded to `decimals` places, for JSON figures that should not show float noise.
double rounded(double v, int decimals);
//! A bandwidth in decimal GB/s from "60", "60GB/s" or "60 GB/s"; Error(Usage) naming `flag` for
//! anything else, including 0, a negative, inf and nan.
double parse_gbps(const std::string& text, const std::string& flag);

}  // namespace vramplan
