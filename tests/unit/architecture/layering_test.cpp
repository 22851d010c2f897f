// The layering rule of docs/architecture.md, checked on the sources: a file under
// planner/src/<layer>/ or planner/include/vramplan/<layer>/ includes only its own layer and the
// layers its row of the "Layers" table lists under "may use". The table is read from the
// document itself, so the rule and the check cannot drift apart; a layer directory without a row
// fails too.
//
// On main at 5a284da (before the split of memory/plan_request and the format table's move to
// io/) this test failed: memory/plan_request.{hpp,cpp} included perf/ and report/, io/gguf.hpp
// and io/safetensors.hpp included model/ and quant/, model/ included quant/format.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan {
namespace {

namespace fs = std::filesystem;
using LayerRules = std::map<std::string, std::set<std::string>>;  // layer -> layers it may use

std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  std::getline(in, cell, '|');  // before the first '|'
  while (std::getline(in, cell, '|')) cells.emplace_back(trim(cell));
  return cells;
}

// The rows of the table whose header is "| layer | input → output | may use |". A "may use" cell is
// "—" or layer names separated by commas, each optionally followed by a note in parentheses.
LayerRules read_layer_table(const fs::path& doc) {
  std::ifstream in(doc);
  LayerRules rules;
  std::map<std::string, std::vector<std::string>> listed;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("| layer | input")) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    const auto cells = table_cells(line);
    if (cells.size() < 3 || cells[0].starts_with("---")) continue;
    auto& uses = listed[cells[0]];
    if (cells.back() == "—") continue;
    std::stringstream names(cells.back());
    for (std::string name; std::getline(names, name, ',');) {
      const std::string word(trim(name.substr(0, name.find('('))));
      uses.push_back(word);
    }
  }
  for (const auto& [layer, uses] : listed) {
    auto& allowed = rules[layer];
    for (const auto& u : uses) {
      EXPECT_TRUE(listed.count(u)) << doc << ": layer " << layer << " may use '" << u << "', which is not a layer of the table";
      allowed.insert(u);
    }
  }
  return rules;
}

// Every include of `file` that names a layer: "vramplan/<layer>/..." (public headers) or
// "<layer>/..." (a layer's private headers under planner/src).
std::vector<std::pair<int, std::string>> included_layers(const fs::path& file, const LayerRules& rules) {
  static const std::regex include(R"(^\s*#\s*include\s*[<"](vramplan/)?([A-Za-z_]+)/)");
  std::vector<std::pair<int, std::string>> out;
  std::ifstream in(file);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    std::smatch m;
    if (std::regex_search(line, m, include) && rules.count(m[2].str())) out.emplace_back(n, m[2].str());
  }
  return out;
}

// "file:line: from -> to" for every include of a layer not in the including layer's row.
std::vector<std::string> layer_violations(const fs::path& planner, const LayerRules& rules) {
  std::vector<std::string> bad;
  for (const fs::path& base : {planner / "src", planner / "include" / "vramplan"}) {
    if (!fs::is_directory(base)) continue;
    for (const auto& dir : fs::directory_iterator(base)) {
      if (!dir.is_directory()) continue;
      const std::string layer = dir.path().filename().string();
      const auto row = rules.find(layer);
      if (row == rules.end()) {
        bad.push_back(dir.path().string() + ": a layer without a row in docs/architecture.md");
        continue;
      }
      for (const auto& f : fs::recursive_directory_iterator(dir.path())) {
        if (!f.is_regular_file()) continue;
        for (const auto& [line, used] : included_layers(f.path(), rules))
          if (used != layer && !row->second.count(used))
            bad.push_back(fs::relative(f.path(), planner).string() + ":" + std::to_string(line) + ": " + layer + " -> " + used);
      }
    }
  }
  return bad;
}

std::string violation_list(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "\n  " + l;
  return s;
}

TEST(Layering, EveryIncludePointsToALayerTheTableAllows) {
  const LayerRules rules = read_layer_table(test::source_dir() / "docs" / "architecture.md");
  ASSERT_GE(rules.size(), 13u) << "the layer table of docs/architecture.md was not found";
  const auto bad = layer_violations(test::source_dir() / "planner", rules);
  EXPECT_TRUE(bad.empty()) << bad.size() << " includes break the layering of docs/architecture.md:" << violation_list(bad);
}

TEST(Layering, TheTableListsOnlyLayersToTheLeft) {
  // Every layer a row may use has its own row above it: the table is an order, arrows point left.
  std::ifstream in(test::source_dir() / "docs" / "architecture.md");
  const LayerRules rules = read_layer_table(test::source_dir() / "docs" / "architecture.md");
  std::vector<std::string> order;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("| layer | input")) in_table = true;
    else if (in_table && !line.starts_with("|")) break;
    else if (in_table && !line.starts_with("|---")) order.push_back(table_cells(line).at(0));
  }
  for (std::size_t i = 0; i < order.size(); ++i)
    for (const auto& used : rules.at(order[i])) {
      const auto at = std::find(order.begin(), order.end(), used);
      EXPECT_LT(at - order.begin(), static_cast<std::ptrdiff_t>(i)) << order[i] << " may use " << used << ", listed below it";
    }
}

TEST(Layering, AnIncludeToTheRightIsReported) {
  // A tree with io including model: the check must see it (and nothing else).
  test::ScratchDir dir;
  fs::create_directories(dir.path() / "src" / "io");
  fs::create_directories(dir.path() / "src" / "model");
  std::ofstream(dir.path() / "src" / "io" / "reader.cpp") << "#include \"vramplan/core/bytes.hpp\"\n"
                                                            << "#include \"vramplan/model/spec.hpp\"\n";
  std::ofstream(dir.path() / "src" / "model" / "spec.cpp") << "#include \"model/private.hpp\"\n#include <vramplan/io/x.hpp>\n";
  const LayerRules rules = {{"core", {}}, {"io", {"core"}}, {"model", {"core", "io"}}};
  const auto bad = layer_violations(dir.path(), rules);
  ASSERT_EQ(bad.size(), 1u) << violation_list(bad);
  EXPECT_EQ(bad[0], "src/io/reader.cpp:2: io -> model");
}

}  // namespace
}  // namespace vramplan
