// param_count.hpp — parameter counts as people write them ("8.03B", "494M", "7e9").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vramplan::cli {

//! 8030261248 -> "8.03B", 494032768 -> "494M" (three significant digits; decimal units).
std::string format_params(std::uint64_t n);
//! "7B", "0.5b", "500M", "1.2T", "7e9", "7000000000" -> count. Throws Error(Usage) naming
//! `option` when the text is not a non-negative count.
std::uint64_t parse_params(std::string_view text, std::string_view option);

}  // namespace vramplan::cli
