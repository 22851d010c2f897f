// json_schema.hpp — the JSON Schema subset docs/schemas/ uses, enough for tests to check that a
// document the CLI or library writes is valid against its schema: type (one or a list), const,
// enum, minimum, required, properties, items, oneOf and local $ref ("#/$defs/name").
// Keywords outside the subset are ignored.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramplan::test {

//! The violations of `doc` against `schema`, each "<json pointer>: <what>"; empty when valid.
std::vector<std::string> schema_violations(const nlohmann::json& doc, const nlohmann::json& schema);

}  // namespace vramplan::test
