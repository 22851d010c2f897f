#include "support/json_schema.hpp"

#include <algorithm>

namespace vramplan::test {
namespace {

bool has_type(const nlohmann::json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  return false;
}

class Validator {
 public:
  explicit Validator(const nlohmann::json& root) : root_(root) {}

  void check(const nlohmann::json& v, const nlohmann::json& s, const std::string& at, std::vector<std::string>& out) const {
    if (!s.is_object()) return;
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"];
      const std::string prefix = "#/";
      if (ref.rfind(prefix, 0) != 0) {
        out.push_back(at + ": unsupported $ref " + ref);
        return;
      }
      check(v, root_.at(nlohmann::json::json_pointer(ref.substr(1))), at, out);
    }
    if (s.contains("type")) {
      const auto& t = s["type"];
      bool ok = false;
      if (t.is_string()) ok = has_type(v, t);
      else
        for (const auto& one : t) ok = ok || has_type(v, one);
      if (!ok) {
        out.push_back(at + ": expected type " + t.dump() + ", got " + v.dump().substr(0, 80));
        return;
      }
    }
    if (s.contains("const") && v != s["const"]) out.push_back(at + ": expected " + s["const"].dump());
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
      out.push_back(at + ": " + v.dump() + " not in " + s["enum"].dump());
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>())
      out.push_back(at + ": " + v.dump() + " below the minimum " + s["minimum"].dump());
    if (v.is_object()) {
      if (s.contains("required"))
        for (const auto& key : s["required"])
          if (!v.contains(key.get<std::string>())) out.push_back(at + ": missing required '" + key.get<std::string>() + "'");
      if (s.contains("properties"))
        for (const auto& [key, sub] : s["properties"].items())
          if (v.contains(key)) check(v[key], sub, at + "/" + key, out);
    }
    if (v.is_array() && s.contains("items"))
      for (std::size_t k = 0; k < v.size(); ++k) check(v[k], s["items"], at + "/" + std::to_string(k), out);
    if (s.contains("oneOf")) {
      std::size_t matching = 0;
      for (const auto& option : s["oneOf"]) {
        std::vector<std::string> sub;
        check(v, option, at, sub);
        matching += sub.empty();
      }
      if (matching != 1) out.push_back(at + ": matches " + std::to_string(matching) + " of the oneOf schemas, not 1");
    }
  }

 private:
  const nlohmann::json& root_;
};

}  // namespace

std::vector<std::string> schema_violations(const nlohmann::json& doc, const nlohmann::json& schema) {
  std::vector<std::string> out;
  Validator(schema).check(doc, schema, "", out);
  return out;
}

}  // namespace vramplan::test
