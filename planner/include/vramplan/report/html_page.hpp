// vramplan/report/html_page.hpp — one self-contained HTML document: inline CSS (screen and
// print), no script, no external resource. Every text given here is escaped; only the SVG of
// svg_chart.hpp and the tables of Table::render_html go in as markup.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramplan/core/text.hpp"  // html_escape

namespace vramplan::report {

class HtmlPage {
 public:
  explicit HtmlPage(std::string title) : title_(std::move(title)) {}
  //! <h2> (level 2) or <h3>, with an id for the table of contents when level is 2.
  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text);
  //! A paragraph in smaller grey type (bases, sources).
  void note(const std::string& text);
  //! A two-column table of item / value.
  void key_values(const std::vector<std::pair<std::string, std::string>>& rows);
  //! Markup from Table::render_html().
  void table_html(std::string html);
  //! An SVG from svg_chart.hpp under a caption.
  void figure(std::string svg, const std::string& caption);
  void bullets(const std::vector<std::string>& items);
  //! Monospace, pre-formatted (a launch command).
  void code(const std::string& text);
  //! The whole document; `generator` goes in the footer and a <meta name="generator">.
  std::string render(const std::string& generator) const;

 private:
  std::string title_;
  std::vector<std::pair<std::string, std::string>> toc_;  // (id, heading)
  std::string body_;
};

}  // namespace vramplan::report
