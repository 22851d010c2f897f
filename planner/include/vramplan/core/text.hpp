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
//! The length of the well-formed UTF-8 sequence at `s[at]` (1-4; RFC 3629: no overlongs, no
//! surrogates, nothing above U+10FFFF) with its code point in `*code_point`; 0 when the bytes
//! there are not one.
std::size_t utf8_sequence(std::string_view s, std::size_t at, char32_t* code_point);
//! A control character: C0 (U+0000-U+001F), DEL (U+007F) or C1 (U+0080-U+009F, e.g. U+009B,
//! the 8-bit CSI a terminal obeys like ESC [).
bool is_control_code_point(char32_t c);
//! `s` with every control character (C0, DEL, C1) and every byte that is not part of valid UTF-8
//! written as "\xHH" (each of its bytes), so text taken from a file or a user's argument prints
//! as one line and cannot drive the terminal. A backslash stays as it is; other UTF-8 is kept.
std::string escape_control(std::string_view s);
//! escape_control keeping newline and tab: whole lines of output (the text a command prints).
std::string escape_control_keep_lines(std::string_view s);
//! & < > " ' as entities; control characters (C0 other than tab and newline, DEL, C1) and bytes
//! that are not valid UTF-8 as U+FFFD (a model name read from a user's file can hold anything):
//! text into HTML or SVG markup, which the page declares UTF-8.
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
