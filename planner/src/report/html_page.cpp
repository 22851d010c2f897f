// HtmlPage (html_page.hpp): headings, text, tables and figures into one document with its CSS.
// The print rules keep a figure or a table row on one page and let wide tables shrink instead
// of being cut.
#include "vramplan/report/html_page.hpp"

namespace vramplan::report {
namespace {

constexpr const char* kPageCss = R"CSS(
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; font-size: 15px; line-height: 1.45;
       color: #1a1a1a; background: #ffffff; margin: 0; }
main { max-width: 1000px; margin: 0 auto; padding: 24px 20px 40px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 32px 0 10px; padding-top: 8px; border-top: 2px solid #e3e3e3; }
h3 { font-size: 16px; margin: 20px 0 8px; }
p.note { color: #555555; font-size: 13px; }
nav ol { columns: 2; font-size: 14px; }
.table-wrap { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #d0d0d0; padding: 3px 7px; vertical-align: top; }
th { background: #f2f4f7; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.pick td { background: #e8f3ea; font-weight: bold; }
table.kv th { width: 30%; }
figure { margin: 10px 0 22px; }
figcaption { font-weight: bold; font-size: 14px; margin-bottom: 4px; }
svg.chart { display: block; width: 100%; height: auto; max-width: 960px; }
pre { background: #f6f6f6; padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-all;
      font-size: 12.5px; }
footer { color: #666666; font-size: 12px; margin-top: 36px; border-top: 1px solid #e3e3e3; padding-top: 8px; }
@media print {
  @page { size: A4; margin: 14mm 12mm; }
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  nav { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  h3 { break-after: avoid; page-break-after: avoid; }
  figure, tr, pre, table.kv { break-inside: avoid; page-break-inside: avoid; }
  .table-wrap { overflow: visible; }
  table { font-size: 7.5pt; width: 100%; }
  th, td { padding: 2px 3px; }
  td.num, th.num { white-space: normal; }
  svg.chart { max-width: 100%; }
}
)CSS";

std::string anchor_id(std::size_t n) { return "s" + std::to_string(n + 1); }

}  // namespace

void HtmlPage::heading(const std::string& text, int level) {
  if (level <= 2) {
    const std::string id = anchor_id(toc_.size());
    toc_.emplace_back(id, text);
    body_ += "<h2 id=\"" + id + "\">" + html_escape(text) + "</h2>\n";
  } else {
    body_ += "<h3>" + html_escape(text) + "</h3>\n";
  }
}

void HtmlPage::paragraph(const std::string& text) { body_ += "<p>" + html_escape(text) + "</p>\n"; }

void HtmlPage::note(const std::string& text) { body_ += "<p class=\"note\">" + html_escape(text) + "</p>\n"; }

void HtmlPage::key_values(const std::vector<std::pair<std::string, std::string>>& rows) {
  body_ += "<div class=\"table-wrap\"><table class=\"kv\">";
  for (const auto& [k, v] : rows) body_ += "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(v) + "</td></tr>";
  body_ += "</table></div>\n";
}

void HtmlPage::table_html(std::string html) { body_ += "<div class=\"table-wrap\">" + std::move(html) + "</div>\n"; }

void HtmlPage::figure(std::string svg, const std::string& caption) {
  body_ += "<figure><figcaption>" + html_escape(caption) + "</figcaption>" + std::move(svg) + "</figure>\n";
}

void HtmlPage::bullets(const std::vector<std::string>& items) {
  body_ += "<ul>";
  for (const auto& i : items) body_ += "<li>" + html_escape(i) + "</li>";
  body_ += "</ul>\n";
}

void HtmlPage::code(const std::string& text) { body_ += "<pre>" + html_escape(text) + "</pre>\n"; }

std::string HtmlPage::render(const std::string& generator) const {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"" + html_escape(generator) + "\">\n"
                    "<title>" + html_escape(title_) + "</title>\n<style>" + kPageCss + "</style>\n</head>\n<body>\n<main>\n"
                    "<h1>" + html_escape(title_) + "</h1>\n";
  if (!toc_.empty()) {
    out += "<nav><ol>";
    for (const auto& [id, text] : toc_) out += "<li><a href=\"#" + id + "\">" + html_escape(text) + "</a></li>";
    out += "</ol></nav>\n";
  }
  return out + body_ + "<footer>" + html_escape(generator) + "</footer>\n</main>\n</body>\n</html>\n";
}

}  // namespace vramplan::report
