#include "model/hf_config_view.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"

namespace vramplan::hf {
namespace {

const nlohmann::json& text_part(const nlohmann::json& root) {
  if (root.is_object()) {
    const auto it = root.find("text_config");
    if (it != root.end() && it->is_object()) return *it;
  }
  return root;
}

}  // namespace

std::uint64_t checked_dimension(const JsonView& value, std::string_view key) {
  const std::uint64_t n = value.as_u64();  // rejects negative and fractional values, naming the field
  const auto& limit = config_field_limit(key);
  if (n > limit.max)
    value.fail(std::to_string(n) + " is above the plausibility limit " + std::to_string(limit.max) + " for " +
               std::string(limit.kind) + " (largest public model: " + std::string(limit.largest) + ")");
  return n;
}

ConfigView::ConfigView(const nlohmann::json& root, std::string origin)
    : origin_(std::move(origin)),
      root_(root, origin_),
      text_(text_part(root), origin_, &text_part(root) == &root ? "" : "/text_config"),
      nested_(&text_part(root) != &root) {
  if (!root.is_object()) root_.fail("expected a JSON object (an HF config.json)");
}

std::optional<JsonView> ConfigView::find(std::initializer_list<std::string_view> keys) const {
  for (auto key : keys)
    if (auto v = text_.get(key)) return v;
  if (nested_)
    for (auto key : keys)
      if (auto v = root_.get(key)) return v;
  return std::nullopt;
}

std::optional<std::uint64_t> ConfigView::u64(std::initializer_list<std::string_view> keys) const {
  auto v = find(keys);
  return v ? std::optional(checked_dimension(*v, *keys.begin())) : std::nullopt;
}

std::optional<double> ConfigView::number(std::initializer_list<std::string_view> keys) const {
  auto v = find(keys);
  return v ? std::optional(v->as_number()) : std::nullopt;
}

std::optional<bool> ConfigView::boolean(std::initializer_list<std::string_view> keys) const {
  auto v = find(keys);
  return v ? std::optional(v->as_bool()) : std::nullopt;
}

std::optional<std::string> ConfigView::string(std::initializer_list<std::string_view> keys) const {
  auto v = find(keys);
  return v ? std::optional(v->as_string()) : std::nullopt;
}

std::uint64_t ConfigView::positive(std::initializer_list<std::string_view> keys) const {
  auto v = find(keys);
  if (!v) fail(*keys.begin(), "required field is missing");
  const auto n = checked_dimension(*v, *keys.begin());
  if (n == 0) v->fail("must be greater than zero");
  return n;
}

std::optional<std::uint64_t> ConfigView::positive_opt(
    std::initializer_list<std::string_view> keys) const {
  auto v = find(keys);
  if (!v) return std::nullopt;
  const auto n = checked_dimension(*v, *keys.begin());
  if (n == 0) v->fail("must be greater than zero");
  return n;
}

bool ConfigView::flag(std::string_view key, bool fallback) const {
  auto v = find({key});
  return v ? v->as_bool() : fallback;
}

void ConfigView::fail(std::string_view key, std::string_view message) const {
  text_.fail_at(key, message);
}

}  // namespace vramplan::hf
