#include "support/golden.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {

void expect_matches_schema(const nlohmann::json& doc, const std::string& schema_file) {
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / schema_file));
  const auto violations = schema_violations(doc, schema);
  EXPECT_TRUE(violations.empty()) << schema_file << ": " << (violations.empty() ? "" : violations.front());
}

void expect_golden(const std::string& text, const std::string& name) {
  const auto golden = source_dir() / "tests" / "golden" / name;
  if (std::getenv("VRAMPLAN_UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << text;
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " missing (VRAMPLAN_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(text, read_text(golden)) << golden << " (VRAMPLAN_UPDATE_GOLDEN=1 rewrites it)";
}

}  // namespace vramplan::test
