#include "vramplan/report/table.hpp"

#include <algorithm>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

// Display width of a UTF-8 string: counts code points, not bytes (good enough for the
// symbols vramplan prints: ×, ≤, –).
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string pad(const std::string& s, std::size_t width, Align align) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return align == Align::Left ? s + fill : fill + s;
}

}  // namespace

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size())
    throw_internal("table row has " + std::to_string(cells.size()) + " cells for " +
                   std::to_string(columns_.size()) + " columns");
  rows_.push_back(std::move(cells));
}

std::string Table::render_text() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    width[c] = display_width(columns_[c].header);
    for (const auto& row : rows_) width[c] = std::max(width[c], display_width(row[c]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) text += "  ";
      text += pad(cells[c], width[c], columns_[c].align);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  std::vector<std::string> header;
  for (const auto& col : columns_) header.push_back(col.header);
  line(header);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < columns_.size(); ++c) rule.emplace_back(width[c], '-');
  line(rule);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string Table::render_markdown() const {
  std::string out = "|";
  for (const auto& col : columns_) out += " " + col.header + " |";
  out += "\n|";
  for (const auto& col : columns_) out += col.align == Align::Right ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : rows_) {
    out += "|";
    for (const auto& cell : row) {
      std::string escaped;
      for (char ch : cell) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
      out += " " + escaped + " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace vramplan
