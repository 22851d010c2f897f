// vramplan/io/json_skim.hpp — finding the parts of a JSON text without parsing all of it.
//
// `vramplan check` needs one GPU out of a catalogue of dozens; parsing the whole catalogue into a
// document was a third of the command's time. The skimmer walks the text once, only tracking
// strings and nesting, and hands back the text of each member or element, so that the caller
// parses (and validates) only what it uses. It does not validate scalars: a caller that needs a
// value parses its text with parse_json_text, which reports faults with line and column.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramplan/io/json_file.hpp"

namespace vramplan {

//! Where skimmed text comes from: the file name for errors, and the whole file's text, of which
//! every skimmed `text` is a part (errors give line and column in the file).
struct SkimSource {
  std::string_view origin;
  std::string_view document;
};

//! The members of the JSON object `text` (leading/trailing whitespace allowed), in order:
//! decoded key -> the value's text. Throws Error(InputFile) naming the file, line and column when
//! the text is not an object or its structure (quotes, brackets, commas, colons) is broken.
std::vector<std::pair<std::string, std::string_view>> skim_object(std::string_view text, const SkimSource& source);
//! The elements of the JSON array `text`, in order, as their texts. Errors as skim_object.
std::vector<std::string_view> skim_array(std::string_view text, const SkimSource& source);
//! The value of a top-level string member `key` of the object `text`, decoded; "" when absent or
//! not a string.
std::string skim_string_member(std::string_view text, std::string_view key, const SkimSource& source);

//! A JSON file whose top level is an object, read and skimmed: its members' texts, for the caller
//! to parse one by one. Copies share the text, so the views stay valid while any copy lives.
class SkimmedFile {
 public:
  //! Errors as read_json_file: Error(Io) for an unreadable file; broken JSON is Error(InputFile)
  //! worded by the full parser (line, column); a top level that is not an object names
  //! `expected_top` ("an object with \"gpus\"").
  static SkimmedFile read(const std::filesystem::path& path, std::string_view expected_top);

  const std::string& file() const { return file_; }
  SkimSource source() const { return {file_, *text_}; }
  //! The text of a top-level member; absent or null -> nullopt.
  std::optional<std::string_view> member(std::string_view key) const;
  //! As member(); absent -> Error(InputFile) "<file>: /<key>: required field is missing".
  std::string_view required(std::string_view key) const;
  //! Parses a part of the file (a member's or element's text); faults give the line and column
  //! in the file.
  nlohmann::json parse(std::string_view part) const { return parse_json_text(part, file_, *text_); }

 private:
  std::string file_;
  std::shared_ptr<const std::string> text_;
  std::vector<std::pair<std::string, std::string_view>> members_;
};

}  // namespace vramplan
