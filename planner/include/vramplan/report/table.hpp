// vramplan/report/table.hpp — plain-text tables for terminal output (and Markdown for quotes).
#pragma once

#include <string>
#include <vector>

namespace vramplan {

enum class Align { Left, Right };

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

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace vramplan
