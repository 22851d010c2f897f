// html_escape (core/text.hpp): the one place text becomes markup (HTML tables, the report page, SVG).
#include "vramplan/core/text.hpp"

namespace vramplan {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: {
        const auto c = static_cast<unsigned char>(ch);
        // Control characters are not allowed in HTML text (and NUL ends some parsers' input).
        if ((c < 0x20 && ch != '\n' && ch != '\t') || c == 0x7F) out += "\uFFFD";
        else out += ch;
      }
    }
  }
  return out;
}

}  // namespace vramplan
