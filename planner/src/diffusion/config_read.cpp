#include "diffusion/config_read.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::diffusion {

namespace {
bool absent(const nlohmann::json& c, std::string_view key) {
  const auto it = c.find(std::string(key));
  return it == c.end() || it->is_null();
}
}  // namespace

void ConfigReader::fail(std::string_view key, std::string_view message) const {
  throw_input(file_, "/" + std::string(key), message);
}

std::uint64_t ConfigReader::number(std::string_view key, std::uint64_t fallback) const {
  if (absent(config_, key)) return fallback;
  const auto& v = config_.at(std::string(key));
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0))
    fail(key, "expected a non-negative integer, got " + std::string(json_type_name(v)));
  const std::uint64_t n = v.get<std::uint64_t>();
  if (n > kMaxDimension) fail(key, "implausibly large (over 2^24): not a model dimension");
  return n;
}

std::uint64_t ConfigReader::count(std::string_view key, std::uint64_t fallback) const {
  if (absent(config_, key)) {
    if (fallback == 0) fail(key, "required field is missing");
    return fallback;
  }
  const std::uint64_t n = number(key, fallback);
  if (n == 0) fail(key, "must be greater than zero");
  return n;
}

std::vector<std::uint64_t> ConfigReader::counts(std::string_view key, std::size_t n) const {
  if (absent(config_, key)) fail(key, "required field is missing");
  const auto& v = config_.at(std::string(key));
  if (!v.is_array()) return std::vector<std::uint64_t>(n, count(key));
  // Every list read here is indexed by its first and last entry (block_out_channels[0], [-1]):
  // diffusers' own __init__ does the same, so an empty list is no layout (a Python IndexError).
  if (v.empty()) fail(key, "expected a non-empty list of positive integers, got []");
  std::vector<std::uint64_t> out;
  for (const auto& e : v) {
    if (!e.is_number_integer() || e.get<std::int64_t>() <= 0) fail(key, "expected a list of positive integers");
    if (e.get<std::uint64_t>() > kMaxDimension) fail(key, "implausibly large (over 2^24): not a model dimension");
    out.push_back(e.get<std::uint64_t>());
  }
  if (n && out.size() != n) fail(key, "expected " + std::to_string(n) + " entries, one per block");
  return out;
}

std::vector<std::string> ConfigReader::strings(std::string_view key) const {
  if (absent(config_, key)) fail(key, "required field is missing");
  const auto& v = config_.at(std::string(key));
  std::vector<std::string> out;
  if (!v.is_array()) fail(key, "expected a list of block names");
  for (const auto& e : v) {
    if (!e.is_string()) fail(key, "expected a list of block names");
    out.push_back(e.get<std::string>());
  }
  return out;
}

void ConfigReader::group_norm(std::string_view key, const std::vector<std::uint64_t>& channels,
                              std::uint64_t fallback) const {
  const std::uint64_t groups = count(key, fallback);
  // torch/nn/modules/normalization.py GroupNorm.__init__: "num_channels must be divisible by num_groups".
  for (const auto ch : channels)
    if (ch % groups)
      fail(key, std::to_string(groups) + " groups do not divide " + std::to_string(ch) +
                    " channels (torch.nn.GroupNorm: num_channels must be divisible by num_groups)");
}

std::optional<std::string> ConfigReader::text(std::string_view key) const {
  if (absent(config_, key)) return std::nullopt;
  const auto& v = config_.at(std::string(key));
  if (!v.is_string()) fail(key, "expected a string, got " + std::string(json_type_name(v)));
  return v.get<std::string>();
}

bool ConfigReader::flag(std::string_view key, bool fallback) const {
  if (absent(config_, key)) return fallback;
  const auto& v = config_.at(std::string(key));
  if (!v.is_boolean()) fail(key, "expected true or false");
  return v.get<bool>();
}

}  // namespace vramplan::diffusion
