#include "vramplan/core/table.hpp"

#include <algorithm>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"

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
  return align == Align::Right ? fill + s : s + fill;
}

std::size_t g_text_width = 100;  // set once by the CLI before any output

}  // namespace

void set_text_width(std::size_t columns) { g_text_width = std::max<std::size_t>(columns, 40); }
std::size_t text_width() { return g_text_width; }

std::vector<std::string> wrap_words(const std::string& text, std::size_t width, std::size_t indent) {
  width = std::max<std::size_t>(width, indent + 8);
  if (display_width(text) <= width) return {text};  // kept as written, runs of spaces included
  // The text's own leading spaces stay on its first line; runs of spaces between words are kept
  // within a line ("  basis    bandwidth") and dropped where a line breaks.
  const std::size_t lead_n = std::min(text.find_first_not_of(' '), text.size());
  std::vector<std::string> lines{text.substr(0, lead_n)};
  const std::string lead(indent, ' ');
  bool fresh = true;    // the current line holds no word yet
  std::size_t gap = 0;  // spaces between the previous word and this one
  std::size_t at = lead_n;
  while (at < text.size()) {
    const std::size_t space = text.find(' ', at);
    std::string word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    ++gap;
    if (word.empty()) continue;
    for (;;) {
      std::string& line = lines.back();
      const std::size_t sep = fresh ? 0 : gap;
      const std::size_t used = display_width(line);
      if (used + sep + display_width(word) <= width) {
        line += std::string(sep, ' ') + word;
        fresh = false;
        break;
      }
      if (!fresh || used >= width) {  // start a new line and try again
        lines.push_back(lead);
        fresh = true;
        continue;
      }
      // A word longer than a whole line: cut it (bytes; the words that long are URLs and paths).
      line += word.substr(0, width - used);
      word = word.substr(width - used);
      lines.push_back(lead);
    }
    gap = 0;
  }
  return lines;
}

std::string wrap_paragraph(const std::string& text, std::size_t width, std::size_t indent) {
  std::string out;
  for (const auto& l : wrap_words(text, width, indent)) out += (out.empty() ? "" : "\n") + l;
  return out;
}

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
  // Wrapped columns share what the others leave of text_width() (at least 24 characters each).
  std::size_t fixed = 0, wrapped = 0;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (c) fixed += 2;
    if (columns_[c].align == Align::Wrap) ++wrapped;
    else fixed += width[c];
  }
  if (wrapped > 0) {
    const std::size_t share = std::max<std::size_t>(24, (text_width() > fixed ? text_width() - fixed : 0) / wrapped);
    for (std::size_t c = 0; c < columns_.size(); ++c)
      if (columns_[c].align == Align::Wrap) width[c] = std::min(width[c], share);
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    // Each wrapped cell becomes several lines; the other cells sit on the first.
    std::vector<std::vector<std::string>> parts(cells.size());
    std::size_t height = 1;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      parts[c] = columns_[c].align == Align::Wrap ? wrap_words(cells[c], width[c]) : std::vector<std::string>{cells[c]};
      height = std::max(height, parts[c].size());
    }
    for (std::size_t k = 0; k < height; ++k) {
      std::string text;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        if (c) text += "  ";
        text += pad(k < parts[c].size() ? parts[c][k] : "", width[c], columns_[c].align);
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
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

std::string Table::render_html(std::size_t pick) const {
  const auto cell = [&](const char* tag, std::size_t col, const std::string& text) {
    const bool num = columns_[col].align == Align::Right;
    return std::string("<") + tag + (num ? " class=\"num\"" : "") + ">" + html_escape(text) + "</" + tag + ">";
  };
  std::string out = "<table><thead><tr>";
  for (std::size_t c = 0; c < columns_.size(); ++c) out += cell("th", c, columns_[c].header);
  out += "</tr></thead><tbody>";
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    out += r == pick ? "<tr class=\"pick\">" : "<tr>";
    for (std::size_t c = 0; c < rows_[r].size(); ++c) out += cell("td", c, rows_[r][c]);
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace vramplan
