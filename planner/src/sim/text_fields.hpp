// text_fields.hpp — the pieces the workload parsers share: whole-string number parsing (so "5x"
// and "" are errors, not 5 and 0) and reading one line of a text file with a length cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::sim {

//! The whole of `text` as a double (decimal or exponent form; "inf" / "nan" are NOT accepted
//! here, callers decide about infinity); nullopt when any character is left over.
std::optional<double> parse_number(std::string_view text);
//! The whole of `text` as a non-negative decimal integer; nullopt otherwise (or on overflow).
std::optional<std::uint64_t> parse_unsigned(std::string_view text);

//! Reads the next line of `in` into `line` (without the '\n' or a trailing '\r'). Returns false
//! at end of input. A line longer than `max_bytes` sets `too_long` and stops the read there (the
//! caller refuses the file), so that memory and time stay bounded whatever the input holds.
bool read_line(std::istream& in, std::string& line, std::size_t max_bytes, bool& too_long);

//! Consumes a UTF-8 byte-order mark at the start of `in` (spreadsheets write one before CSV).
void skip_utf8_bom(std::istream& in);

//! `line` split at commas, each cell trimmed of spaces (CSV without quoting: the trace and
//! histogram files hold numbers only).
std::vector<std::string_view> split_csv(std::string_view line);

//! "FILE:LINE" — the location prefix of line-oriented input errors.
std::string file_line(const std::string& file, std::uint64_t line);

}  // namespace vramplan::sim
