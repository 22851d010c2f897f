#include "vramplan/compat/version_range.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include "vramplan/core/error.hpp"

namespace vramplan::compat {
namespace {

std::optional<std::vector<int>> parse_dotted(std::string_view s) {
  std::vector<int> out;
  while (!s.empty()) {
    const auto dot = s.find('.');
    const std::string_view part = s.substr(0, dot);
    int value = 0;
    const auto r = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || r.ec != std::errc() || r.ptr != part.data() + part.size()) return std::nullopt;
    out.push_back(value);
    if (dot == std::string_view::npos) break;
    s = s.substr(dot + 1);
    if (s.empty()) return std::nullopt;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// <0, 0, >0 over the components both sides have.
int compare_shared(const std::vector<int>& a, const std::vector<int>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

}  // namespace

VersionRange VersionRange::parse(std::string_view text) {
  VersionRange r;
  r.text_ = std::string(text);
  if (text == "*") return r;
  std::string_view rest = text;
  bool any = false;
  while (!rest.empty()) {
    const auto space = rest.find(' ');
    const std::string_view bound = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    std::vector<int>* slot = nullptr;
    std::string_view number;
    if (bound.starts_with(">=")) slot = &r.at_least_, number = bound.substr(2);
    else if (bound.starts_with("<")) slot = &r.below_, number = bound.substr(1);
    const auto parsed = parse_dotted(number);
    if (!slot || !parsed || !slot->empty())
      throw_usage("version range '" + std::string(text) + "': expected \"*\", \">=X\", \"<X\" or \">=X <Y\"");
    *slot = *parsed;
    any = true;
  }
  if (!any) throw_usage("version range is empty (use \"*\" for every version)");
  return r;
}

bool VersionRange::contains(std::string_view version) const {
  if (at_least_.empty() && below_.empty()) return true;
  if (version.empty()) return below_.empty();
  const auto v = parse_dotted(version);
  if (!v) return false;
  if (!at_least_.empty() && compare_shared(*v, at_least_) < 0) return false;
  if (!below_.empty() && compare_shared(*v, below_) >= 0) return false;
  return true;
}

}  // namespace vramplan::compat
