// Reading a component's config.json: integers and integer lists with their defaults (the class's
// __init__ defaults), every error naming the file and the field (diffusion/*.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramplan::diffusion {

//! Largest value a dimension may take (vocabularies are ~2^18): keeps every product of two
//! dimensions far from 64-bit overflow; Tally checks the rest.
inline constexpr std::uint64_t kMaxDimension = std::uint64_t{1} << 24;

class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& config, const std::string& file) : config_(config), file_(file) {}
  //! A positive integer member, or `fallback` when absent / null (0 fallback: required).
  std::uint64_t count(std::string_view key, std::uint64_t fallback = 0) const;
  //! A non-negative integer member, or `fallback` when absent / null.
  std::uint64_t number(std::string_view key, std::uint64_t fallback) const;
  //! An integer list, or `n` copies of the integer when the member is a single integer.
  std::vector<std::uint64_t> counts(std::string_view key, std::size_t n) const;
  std::vector<std::string> strings(std::string_view key) const;
  //! `norm_num_groups` (default `fallback`) of the nn.GroupNorm layers over `channels`: torch
  //! raises for 0 groups (a ZeroDivisionError) or a count that does not divide the channels.
  void group_norm(std::string_view key, const std::vector<std::uint64_t>& channels, std::uint64_t fallback) const;
  std::optional<std::string> text(std::string_view key) const;
  bool flag(std::string_view key, bool fallback) const;
  [[noreturn]] void fail(std::string_view key, std::string_view message) const;
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& config_;
  const std::string& file_;
};

}  // namespace vramplan::diffusion
