#include "vramplan/io/json_file.hpp"

#include <cmath>
#include <fstream>

#include "vramplan/core/error.hpp"
#include "vramplan/io/input_file.hpp"

namespace vramplan {
namespace {

// Escapes a key for a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// Appends to `path` the JSON-pointer tokens leading from `node` to `target`; false when `target`
// is not under `node`. Only errors call this, so a depth-first search is fast enough.
bool find_path(const nlohmann::json& node, const nlohmann::json* target, std::string& path) {
  if (&node == target) return true;
  const std::size_t keep = path.size();
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      path += "/" + escape_pointer_token(it.key());
      if (find_path(it.value(), target, path)) return true;
      path.resize(keep);
    }
  } else if (node.is_array()) {
    for (std::size_t k = 0; k < node.size(); ++k) {
      path += "/" + std::to_string(k);
      if (find_path(node[k], target, path)) return true;
      path.resize(keep);
    }
  }
  return false;
}

}  // namespace

nlohmann::json read_json_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  return parse_json_text(read_json_text(path, max_bytes), path.string());
}

std::string read_json_text(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  require_regular_file(path);  // before opening: a FIFO would block forever
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ErrorKind::Io, path.string() + ": cannot read file size: " + ec.message());
  if (size > max_bytes)
    throw_input(path.string(), "", "file is " + std::to_string(size) + " bytes, more than the " +
                                       std::to_string(max_bytes) + " accepted for a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, path.string() + ": cannot open for reading");
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)))
    throw Error(ErrorKind::Io, path.string() + ": cannot read " + std::to_string(size) + " bytes");
  return text;
}

void check_json_depth(std::string_view text, std::string_view origin) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (in_string) {
      if (c == '\\') ++k;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth)
        throw_input(origin, "", "objects and arrays nested deeper than " + std::to_string(kMaxJsonDepth) +
                                    " levels (at byte " + std::to_string(k) + ")");
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
}

nlohmann::json parse_json_text(std::string_view text, std::string_view origin) {
  return parse_json_text(text, origin, text);
}

nlohmann::json parse_json_text(std::string_view text, std::string_view origin, std::string_view document) {
  // Where `text` starts in `document` (0 when it is not a part of it).
  std::size_t base = 0;
  if (document.data() && text.data() >= document.data() && text.data() + text.size() <= document.data() + document.size())
    base = static_cast<std::size_t>(text.data() - document.data());
  else
    document = text;
  check_json_depth(text, origin);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the failure; turn it into line:column of the document.
    std::size_t line = 1, column = 1;
    const std::size_t stop = std::min<std::size_t>(base + (e.byte == 0 ? 0 : e.byte - 1), document.size());
    for (std::size_t k = 0; k < stop; ++k) {
      if (document[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw_input(origin, "", "invalid JSON at line " + std::to_string(line) + ", column " +
                                std::to_string(column));
  } catch (const nlohmann::json::exception& e) {
    // Out-of-range numbers (1e400) and invalid UTF-8 land here.
    throw_input(origin, "", std::string("invalid JSON: ") + e.what());
  }
}

std::string_view json_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "number";
    case nlohmann::json::value_t::binary: return "binary";
    case nlohmann::json::value_t::discarded: return "discarded";
  }
  return "unknown";
}

JsonView::JsonView(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(&value), origin_(std::make_shared<const Origin>(Origin{std::move(file), std::move(pointer), &value})) {}

std::string JsonView::pointer() const {
  std::string path = origin_->pointer;
  find_path(*origin_->root, value_, path);
  return path;
}

std::string JsonView::path() const {
  std::string p = pointer();
  return p.empty() ? "/" : p;
}

void JsonView::fail(std::string_view message) const { throw_input(file(), path(), message); }

void JsonView::fail_at(std::string_view key, std::string_view message) const {
  throw_input(file(), pointer() + "/" + escape_pointer_token(key), message);
}

bool JsonView::has(std::string_view key) const {
  if (!value_->is_object()) return false;
  const auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

JsonView JsonView::at(std::string_view key) const {
  if (!value_->is_object()) fail("expected an object, got " + std::string(json_type_name(*value_)));
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) fail_at(key, "required field is missing");
  return child(*it);
}

JsonView JsonView::at(std::size_t index) const {
  if (!value_->is_array()) fail("expected an array, got " + std::string(json_type_name(*value_)));
  if (index >= value_->size()) fail("index " + std::to_string(index) + " out of range");
  return child((*value_)[index]);
}

std::optional<JsonView> JsonView::get(std::string_view key) const {
  if (!value_->is_object()) fail("expected an object, got " + std::string(json_type_name(*value_)));
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return child(*it);
}

std::vector<JsonView> JsonView::items() const {
  if (!value_->is_array()) fail("expected an array, got " + std::string(json_type_name(*value_)));
  std::vector<JsonView> out;
  out.reserve(value_->size());
  for (std::size_t k = 0; k < value_->size(); ++k)
    out.push_back(child((*value_)[k]));
  return out;
}

std::vector<std::pair<std::string, JsonView>> JsonView::members() const {
  if (!value_->is_object()) fail("expected an object, got " + std::string(json_type_name(*value_)));
  std::vector<std::pair<std::string, JsonView>> out;
  for (auto it = value_->begin(); it != value_->end(); ++it)
    out.emplace_back(it.key(), child(it.value()));
  return out;
}

std::string JsonView::as_string() const {
  if (!value_->is_string()) fail("expected a string, got " + std::string(json_type_name(*value_)));
  return value_->get<std::string>();
}

double JsonView::as_number() const {
  if (!value_->is_number()) fail("expected a number, got " + std::string(json_type_name(*value_)));
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("number is not finite");
  return v;
}

std::uint64_t JsonView::as_u64() const {
  if (value_->is_number_unsigned()) return value_->get<std::uint64_t>();
  if (value_->is_number_integer()) {
    const auto v = value_->get<std::int64_t>();
    if (v < 0) fail("expected a non-negative integer, got " + std::to_string(v));
    return static_cast<std::uint64_t>(v);
  }
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    if (std::isfinite(v) && v >= 0 && v < 1.8e19 && std::floor(v) == v)
      return static_cast<std::uint64_t>(v);
    fail("expected a non-negative integer, got " + value_->dump());
  }
  fail("expected a non-negative integer, got " + std::string(json_type_name(*value_)));
}

std::int64_t JsonView::as_i64() const {
  if (value_->is_number_integer() && !value_->is_number_unsigned()) return value_->get<std::int64_t>();
  if (value_->is_number_unsigned()) {
    const auto v = value_->get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(INT64_MAX)) fail("integer too large");
    return static_cast<std::int64_t>(v);
  }
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    if (std::isfinite(v) && std::fabs(v) < 9.2e18 && std::floor(v) == v)
      return static_cast<std::int64_t>(v);
  }
  fail("expected an integer, got " + std::string(json_type_name(*value_)));
}

bool JsonView::as_bool() const {
  if (!value_->is_boolean()) fail("expected true or false, got " + std::string(json_type_name(*value_)));
  return value_->get<bool>();
}

std::optional<std::string> JsonView::opt_string(std::string_view key) const {
  auto v = get(key);
  return v ? std::optional(v->as_string()) : std::nullopt;
}
std::optional<double> JsonView::opt_number(std::string_view key) const {
  auto v = get(key);
  return v ? std::optional(v->as_number()) : std::nullopt;
}
std::optional<std::uint64_t> JsonView::opt_u64(std::string_view key) const {
  auto v = get(key);
  return v ? std::optional(v->as_u64()) : std::nullopt;
}
std::optional<std::int64_t> JsonView::opt_i64(std::string_view key) const {
  auto v = get(key);
  return v ? std::optional(v->as_i64()) : std::nullopt;
}
std::optional<bool> JsonView::opt_bool(std::string_view key) const {
  auto v = get(key);
  return v ? std::optional(v->as_bool()) : std::nullopt;
}

std::uint64_t JsonView::req_count(std::string_view key) const {
  const std::uint64_t n = req_u64(key);
  if (n == 0) fail_at(key, "must be greater than zero");
  return n;
}

double JsonView::req_positive(std::string_view key) const {
  const double v = req_number(key);
  if (!(v > 0)) fail_at(key, "must be positive, got " + at(key).raw().dump());
  return v;
}

}  // namespace vramplan
