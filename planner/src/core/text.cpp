#include "vramplan/core/text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <cctype>
#include <utility>

#include "vramplan/core/error.hpp"

namespace vramplan {

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& names,
                                       std::size_t max) {
  const std::string w = to_lower(wanted);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& name : names) {
    const std::string n = to_lower(name);
    const bool contains = n.find(w) != std::string::npos || w.find(n) != std::string::npos;
    const std::size_t d = contains ? 0 : edit_distance(w, n);
    if (d <= std::max<std::size_t>(3, w.size() / 3)) scored.emplace_back(d, name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& entry : scored) {
    if (out.size() == max) break;
    out.push_back(entry.second);
  }
  return out;
}

std::size_t utf8_sequence(std::string_view s, std::size_t at, char32_t* code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(at);
  std::size_t n = 0;
  char32_t c = 0, min = 0;
  if (lead < 0x80) {
    n = 1;
    c = lead;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
    c = lead & 0x1Fu;
    min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    c = lead & 0x0Fu;
    min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    c = lead & 0x07u;
    min = 0x10000;
  } else {
    return 0;  // a continuation byte, 0xC0 / 0xC1 (overlong leads) or 0xF5-0xFF
  }
  if (at + n > s.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(at + i) & 0xC0u) != 0x80u) return 0;
    c = (c << 6) | (byte(at + i) & 0x3Fu);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  if (code_point) *code_point = c;
  return n;
}

bool is_control_code_point(char32_t c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F); }

namespace {

std::string escape_control_except(std::string_view s, bool keep_lines) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  auto hex = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  };
  for (std::size_t i = 0; i < s.size();) {
    char32_t c = 0;
    const std::size_t n = utf8_sequence(s, i, &c);
    if (n == 0) {  // not UTF-8: the byte alone
      hex(static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (is_control_code_point(c) && !(keep_lines && (c == '\n' || c == '\t')))
      for (std::size_t k = 0; k < n; ++k) hex(static_cast<unsigned char>(s[i + k]));
    else
      out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

std::string escape_control(std::string_view s) { return escape_control_except(s, false); }

std::string escape_control_keep_lines(std::string_view s) { return escape_control_except(s, true); }

std::string format_number(const char* spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string excerpt(std::string_view text, std::size_t max) {
  return "'" + std::string(text.substr(0, max)) + (text.size() > max ? "...'" : "'");
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(double fraction, int decimals) { return fixed(fraction * 100.0, decimals) + "%"; }

double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

double parse_gbps(const std::string& text, const std::string& flag) {
  std::string t = text;
  for (const std::string unit : {"GB/s", "gb/s", "GBps"})
    if (t.size() > unit.size() && t.ends_with(unit)) t.resize(t.size() - unit.size());
  while (!t.empty() && t.back() == ' ') t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v > 0) || !std::isfinite(v))
    throw_usage(flag + " " + excerpt(text) + ": expected a bandwidth in GB/s (10^9 B/s), e.g. 60 or 60GB/s");
  return v;
}

}  // namespace vramplan
