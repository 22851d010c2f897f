// vramplan/io/json_file.hpp — reading JSON files and validating their fields.
//
// JsonView wraps one JSON value together with the file it came from and its JSON-pointer path,
// so every validation error says exactly where the fault is:
//   "data/gpus.json: /gpus/3/memory_bandwidth_gbps: expected a number, got string"
// Catalogue loaders (GPUs, models, quant formats, engine profiles, prices, calibration) all read
// through it: required fields use req_*, optional ones opt_*.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramplan {

//! Reads and parses a JSON file. Throws Error(Io) if it cannot be read, Error(InputFile) naming
//! the file, line and column if it is not valid JSON. Files over `max_bytes` are refused.
nlohmann::json read_json_file(const std::filesystem::path& path,
                              std::uintmax_t max_bytes = 64ull << 20);
//! Reads a JSON file's text with read_json_file's checks (Error(Io) / size limit), unparsed.
std::string read_json_text(const std::filesystem::path& path, std::uintmax_t max_bytes = 64ull << 20);
//! Deepest nesting of objects and arrays accepted. Real documents stay under 8 levels (an HF
//! quantization_config is the deepest seen: 5); the cap keeps recursive copies, destructors and
//! error-path searches of a hostile document within the stack.
inline constexpr std::size_t kMaxJsonDepth = 64;
//! Throws Error(InputFile) naming `origin` when `text` nests objects / arrays deeper than
//! kMaxJsonDepth (a linear scan; strings and their escapes are skipped).
void check_json_depth(std::string_view text, std::string_view origin);
//! Parses JSON text (after check_json_depth); `origin` names where it came from in error messages.
nlohmann::json parse_json_text(std::string_view text, std::string_view origin);
//! As parse_json_text for `text` that is a part of `document` (a member's text found by the
//! skimmer): an error's line and column are those in the whole document.
nlohmann::json parse_json_text(std::string_view text, std::string_view origin, std::string_view document);

//
// Views are cheap to make: a child shares its root's origin (file name, root value) and its
// JSON-pointer path is only worked out when an error needs it, by finding the value under the
// root. Catalogue loaders read thousands of fields per run; building a path string for each one
// was a tenth of `vramplan check`'s time.
class JsonView {
 public:
  //! A view of `value` read from `file`; `pointer` is the path of `value` inside that file
  //! ("" when it is the document root).
  JsonView(const nlohmann::json& value, std::string file, std::string pointer = "");

  const nlohmann::json& raw() const { return *value_; }
  const std::string& file() const { return origin_->file; }
  //! JSON-pointer path of this value ("/" for the document root).
  std::string path() const;

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool has(std::string_view key) const;  //!< present and not null

  JsonView at(std::string_view key) const;  //!< required member (throws if absent)
  JsonView at(std::size_t index) const;
  std::optional<JsonView> get(std::string_view key) const;  //!< absent or null -> nullopt
  std::vector<JsonView> items() const;  //!< elements of an array (throws if not an array)
  std::vector<std::pair<std::string, JsonView>> members() const;  //!< of an object

  // Typed reads of this value.
  std::string as_string() const;
  double as_number() const;
  std::uint64_t as_u64() const;  //!< non-negative integer (a float with no fraction is accepted)
  std::int64_t as_i64() const;
  bool as_bool() const;

  // Required members.
  std::string req_string(std::string_view key) const { return at(key).as_string(); }
  double req_number(std::string_view key) const { return at(key).as_number(); }
  std::uint64_t req_u64(std::string_view key) const { return at(key).as_u64(); }
  bool req_bool(std::string_view key) const { return at(key).as_bool(); }
  // Optional members (absent or null -> nullopt; present with the wrong type -> error).
  std::optional<std::string> opt_string(std::string_view key) const;
  std::optional<double> opt_number(std::string_view key) const;
  std::optional<std::uint64_t> opt_u64(std::string_view key) const;
  std::optional<std::int64_t> opt_i64(std::string_view key) const;
  std::optional<bool> opt_bool(std::string_view key) const;

  //! A positive number (> 0) — for sizes, bandwidths, counts that cannot be zero.
  double req_positive(std::string_view key) const;
  //! A required integer count > 0 ("must be greater than zero" otherwise).
  std::uint64_t req_count(std::string_view key) const;
  //! Throws an InputFile error located at this value.
  [[noreturn]] void fail(std::string_view message) const;
  //! Throws an InputFile error located at member `key` of this value.
  [[noreturn]] void fail_at(std::string_view key, std::string_view message) const;

 private:
  struct Origin {
    std::string file;
    std::string pointer;  //!< path of `root` in the file
    const nlohmann::json* root;
  };
  JsonView(const nlohmann::json& value, std::shared_ptr<const Origin> origin)
      : value_(&value), origin_(std::move(origin)) {}
  JsonView child(const nlohmann::json& value) const { return JsonView(value, origin_); }
  std::string pointer() const;  //!< "" for the document root

  const nlohmann::json* value_;
  std::shared_ptr<const Origin> origin_;
};

//! Type name of a JSON value as a user reads it ("string", "number", "object", ...).
std::string_view json_type_name(const nlohmann::json& value);

}  // namespace vramplan
