// html_escape (core/text.hpp): the one place text becomes markup (HTML tables, the report page, SVG).
#include "vramplan/core/text.hpp"

namespace vramplan {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t n = utf8_sequence(text, i, &c);
    if (n == 0) {  // not UTF-8 (the page declares charset utf-8): one U+FFFD per bad byte
      out += "\uFFFD";
      ++i;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters (C0, DEL, C1) are not allowed in HTML text (and NUL ends some parsers' input).
        if (is_control_code_point(c) && c != '\n' && c != '\t') out += "\uFFFD";
        else out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace vramplan
