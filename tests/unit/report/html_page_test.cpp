// The HTML page builder and the escaping every text goes through (report/html_page.hpp), and
// Table::render_html.
#include "vramplan/report/html_page.hpp"

#include <gtest/gtest.h>

#include "vramplan/core/table.hpp"

namespace vramplan::report {
namespace {

TEST(HtmlPage, EscapeTurnsMarkupIntoText) {
  EXPECT_EQ(html_escape("<a href=\"x\">Tom & Jerry's</a>"), "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  // Control characters (NUL, ESC) cannot appear in HTML text: U+FFFD; tab, newline and UTF-8 stay.
  EXPECT_EQ(html_escape(std::string("a\0b\x1b[31m\t\n\xc3\x97", 12)), "a\uFFFDb\uFFFD[31m\t\n\xc3\x97");
}

TEST(HtmlPage, RendersOneSelfContainedDocument) {
  HtmlPage page("Quote for <model> & co");
  page.heading("Inputs");
  page.key_values({{"model", "evil</td><script>x</script>"}});
  page.heading("Detail", 3);
  page.paragraph("5 < 6");
  page.code("vllm serve 'a b'");
  const std::string html = page.render("vramplan test");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(html.find("<title>Quote for &lt;model&gt; &amp; co</title>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // nothing runs, nothing is loaded
  for (const char* external : {"src=", "href=\"http", "@import", "url("}) EXPECT_EQ(html.find(external), std::string::npos) << external;
  EXPECT_NE(html.find("evil&lt;/td&gt;&lt;script&gt;x&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  // Level-2 headings get an id and a table-of-contents entry; level 3 does not.
  EXPECT_NE(html.find("<li><a href=\"#s1\">Inputs</a></li>"), std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"s1\">Inputs</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h3>Detail</h3>"), std::string::npos);
  EXPECT_NE(html.find("<pre>vllm serve &#39;a b&#39;</pre>"), std::string::npos);
}

TEST(HtmlPage, TablesEscapeCellsAndMarkTheRecommendedRow) {
  Table t({{"gpu", Align::Left}, {"$ 7d", Align::Right}});
  t.add_row({"h100 <sxm>", "1,234"});
  t.add_row({"l40s", "99"});
  EXPECT_EQ(t.render_html(0),
            "<table><thead><tr><th>gpu</th><th class=\"num\">$ 7d</th></tr></thead><tbody>"
            "<tr class=\"pick\"><td>h100 &lt;sxm&gt;</td><td class=\"num\">1,234</td></tr>"
            "<tr><td>l40s</td><td class=\"num\">99</td></tr></tbody></table>");
}

}  // namespace
}  // namespace vramplan::report
