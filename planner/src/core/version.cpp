// core/version.cpp — engine release numbers (vramplan/core/version.hpp).
#include "vramplan/core/version.hpp"

#include <string>

#include "vramplan/core/error.hpp"

namespace vramplan {

std::vector<std::uint64_t> version_numbers(std::string_view v) {
  std::vector<std::uint64_t> parts;
  std::uint64_t cur = 0;
  bool have_digit = false;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      cur = cur * 10 + static_cast<std::uint64_t>(c - '0');
      have_digit = true;
      if (cur > 1000000) throw_usage("engine version '" + std::string(v) + "' is not a version");
    } else if (c == '.' && have_digit) {
      parts.push_back(cur);
      cur = 0;
      have_digit = false;
    } else if (((c >= 'a' && c <= 'z') || c == '+') && (have_digit || !parts.empty())) {
      break;  // suffix: "post1", "dev169+g...", "rc1"
    } else {
      throw_usage("engine version '" + std::string(v) + "': expected dotted numbers like 0.17.1");
    }
  }
  if (have_digit) parts.push_back(cur);
  if (parts.empty()) throw_usage("engine version '" + std::string(v) + "': expected dotted numbers");
  return parts;
}

bool released_before(const std::vector<std::uint64_t>& numbers, const std::vector<std::uint64_t>& first) {
  return !numbers.empty() && numbers < first;
}

std::vector<std::uint64_t> release_numbers(std::string_view release) {
  if (release.empty()) return {};
  try {
    return version_numbers(release);
  } catch (const Error&) {
    return {};
  }
}

}  // namespace vramplan
