// log_text.hpp — small readers the engine-log parsers share (vllm_log.cpp, vllm_v0_log.cpp,
// sglang_log.cpp); private to io/, not part of its offer.
#pragma once

#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vramplan::log_text {

//! The number at the start of `s`, thousands separators allowed: "476,016 tokens" -> 476016;
//! nullopt when `s` does not start with a digit or the number overflows.
inline std::optional<std::uint64_t> leading_count(std::string_view s) {
  std::string digits;
  for (const char c : s) {
    if (c == ',') continue;
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    digits += c;
  }
  std::uint64_t v = 0;
  if (digits.empty() || std::from_chars(digits.data(), digits.data() + digits.size(), v).ec != std::errc{})
    return std::nullopt;
  return v;
}

//! A command line split on spaces, quotes dropped (a container's quoted argument list
//! '--model' 'X' reads as --model X).
inline std::vector<std::string> command_words(std::string_view m) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : std::string(m) + " ") {
    if (c == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else if (c != '\'' && c != '"') {
      word += c;
    }
  }
  return words;
}

//! The `--flag value`, `--flag=value` and bare `--switch` ("True") arguments of `words`, the
//! flag's dashes as underscores (tensor_parallel_size); other words are skipped.
inline std::vector<std::pair<std::string, std::string>> command_flags(const std::vector<std::string>& words) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!words[i].starts_with("--")) continue;
    std::string key = words[i].substr(2), value = "True";
    if (const auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < words.size() && !words[i + 1].starts_with("--")) {
      value = words[++i];
    }
    for (auto& c : key)
      if (c == '-') c = '_';
    flags.emplace_back(std::move(key), std::move(value));
  }
  return flags;
}

}  // namespace vramplan::log_text
