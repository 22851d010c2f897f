// golden.hpp — checks shared by the CLI tests of documents: a JSON document against its
// published schema, and an output against its golden file under tests/golden/.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vramplan::test {

//! Expects `doc` to be valid against docs/schemas/<schema_file> (the first violation reported).
void expect_matches_schema(const nlohmann::json& doc, const std::string& schema_file);

//! Expects `text` to equal tests/golden/<name>; with VRAMPLAN_UPDATE_GOLDEN set, rewrites the
//! file instead and skips the test (review the diff before committing it).
void expect_golden(const std::string& text, const std::string& name);

}  // namespace vramplan::test
