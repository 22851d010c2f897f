#include "text_fields.hpp"

#include <charconv>
#include <cmath>

#include "vramplan/core/text.hpp"

namespace vramplan::sim {

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  // from_chars takes no leading '+'; accept it as users write "+5".
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool read_line(std::istream& in, std::string& line, std::size_t max_bytes, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* buffer = in.rdbuf();
  bool any = false;
  for (;;) {
    const int c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      break;
    }
    any = true;
    if (c == '\n') break;
    if (line.size() == max_bytes) {  // stop here: a stream with no newline (/dev/zero) has no end
      too_long = true;
      return true;
    }
    line.push_back(static_cast<char>(c));
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return any;
}

void skip_utf8_bom(std::istream& in) {
  char head[3] = {};
  in.read(head, 3);
  if (in.gcount() == 3 && head[0] == '\xEF' && head[1] == '\xBB' && head[2] == '\xBF') return;
  in.clear();
  in.seekg(0);
}

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> cells;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    cells.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cells;
}

std::string file_line(const std::string& file, std::uint64_t line) { return file + ":" + std::to_string(line); }

}  // namespace vramplan::sim
