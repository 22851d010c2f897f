// hf_config_view.hpp (private) — typed reads of an HF config with transformers' key aliases.
//
// Multimodal configs keep the language model's dimensions in `text_config`; keys are looked up
// there first and then at the top level (torch_dtype, tie_word_embeddings often sit there).
// Every failure names the file and the JSON pointer of the field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "vramplan/io/json_file.hpp"

namespace vramplan::hf {

//! `value` as a non-negative integer within the plausibility limit of field `key`
//! (core/limits.hpp); Error(InputFile) located at `value` otherwise.
std::uint64_t checked_dimension(const JsonView& value, std::string_view key);

class ConfigView {
 public:
  ConfigView(const nlohmann::json& root, std::string origin);

  const std::string& origin() const { return origin_; }
  const JsonView& root() const { return root_; }
  const JsonView& text() const { return text_; }  //!< text_config, or the root
  bool nested() const { return nested_; }          //!< text_config present

  //! The first of `keys` present (not null) in text_config, then in the root.
  std::optional<JsonView> find(std::initializer_list<std::string_view> keys) const;

  //! Integer reads (u64, positive, positive_opt) apply the plausibility limit of the first key.
  std::optional<std::uint64_t> u64(std::initializer_list<std::string_view> keys) const;
  std::optional<double> number(std::initializer_list<std::string_view> keys) const;
  std::optional<bool> boolean(std::initializer_list<std::string_view> keys) const;
  std::optional<std::string> string(std::initializer_list<std::string_view> keys) const;

  //! A required count > 0; the error names the first key and says missing / zero / negative.
  std::uint64_t positive(std::initializer_list<std::string_view> keys) const;
  //! An optional count that must be > 0 when present.
  std::optional<std::uint64_t> positive_opt(std::initializer_list<std::string_view> keys) const;
  bool flag(std::string_view key, bool fallback) const;

  //! Throws Error(InputFile) located at `key` of the text config.
  [[noreturn]] void fail(std::string_view key, std::string_view message) const;

 private:
  std::string origin_;
  JsonView root_;
  JsonView text_;
  bool nested_ = false;
};

}  // namespace vramplan::hf
