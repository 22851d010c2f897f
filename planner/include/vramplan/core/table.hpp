// vramplan/core/table.hpp — plain-text tables for terminal output (and Markdown for quotes).
#pragma once

#include <string>
#include <vector>

namespace vramplan {

//! Wrap: left-aligned free text ("how", "formula") that render_text() wraps at spaces so every
//! line fits text_width(); the other columns keep their widths.
enum class Align { Left, Right, Wrap };

//! Width (in characters) text output is fitted to. The CLI sets it once at start-up
//! (cli/main.cpp: COLUMNS, else the terminal's width, else 100); the library default is 100.
void set_text_width(std::size_t columns);
std::size_t text_width();

//! `text` broken at spaces into lines of at most `width` characters, the lines after the first
//! starting with `indent` (a word longer than a line is cut). "" stays one empty line.
std::vector<std::string> wrap_words(const std::string& text, std::size_t width, std::size_t indent = 0);
//! wrap_words joined with newlines (no trailing newline).
std::string wrap_paragraph(const std::string& text, std::size_t width, std::size_t indent = 0);

class Table {
 public:
  struct Column {
    std::string header;
    Align align = Align::Left;
  };

  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  //! Adds a row; it must have one cell per column (throws Error(Internal) otherwise).
  void add_row(std::vector<std::string> cells);
  std::size_t rows() const { return rows_.size(); }

  //! Columns padded with spaces, a dashed rule under the header.
  std::string render_text() const;
  //! A GitHub-flavoured Markdown table.
  std::string render_markdown() const;
  //! An HTML <table>, every cell escaped; right-aligned columns get class "num". Row `pick`
  //! (0-based; npos = none) gets class "pick": the recommended one.
  std::string render_html(std::size_t pick = static_cast<std::size_t>(-1)) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace vramplan
