#include "vramplan/io/json_skim.hpp"

#include <array>
#include <cstring>

#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The characters that matter while skipping over a nested value: quotes and brackets.
constexpr auto kStructural = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view("\"{}[]")) t[c] = true;
  return t;
}();

class Skimmer {
 public:
  Skimmer(std::string_view text, const SkimSource& source) : text_(text), source_(source) {}

  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  char peek() {
    skip_space();
    if (pos_ == text_.size()) fail("unexpected end of text");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  // The raw text of one string token, quotes included.
  std::string_view string_token() {
    expect('"');
    const std::size_t start = pos_ - 1;
    for (;;) {
      const void* q = pos_ < text_.size() ? std::memchr(text_.data() + pos_, '"', text_.size() - pos_) : nullptr;
      if (!q) fail("unterminated string");
      pos_ = static_cast<std::size_t>(static_cast<const char*>(q) - text_.data());
      // A quote ends the string unless an odd number of backslashes escapes it.
      std::size_t slashes = 0;
      while (pos_ - slashes > start + 1 && text_[pos_ - slashes - 1] == '\\') ++slashes;
      ++pos_;
      if (slashes % 2 == 0) return text_.substr(start, pos_ - start);
    }
  }

  // The text of one value: a string, an object or array with everything nested in it, or a
  // scalar (its characters up to the next delimiter; parse_json_text checks them when used).
  std::string_view value() {
    const char c = peek();
    const std::size_t start = pos_;
    if (c == '"') return string_token();
    if (c == '{' || c == '[') {
      std::string closers;
      while (pos_ < text_.size()) {
        const char d = text_[pos_];
        if (!kStructural[static_cast<unsigned char>(d)]) {
          ++pos_;
          continue;
        }
        if (d == '"') {
          string_token();
          continue;
        }
        if (d == '{') closers.push_back('}');
        else if (d == '[') closers.push_back(']');
        else if (d == '}' || d == ']') {
          if (closers.empty() || closers.back() != d) fail(std::string("unexpected '") + d + "'");
          closers.pop_back();
          if (closers.empty()) return text_.substr(start, ++pos_ - start);
        }
        ++pos_;
      }
      fail("unterminated " + std::string(c == '{' ? "object" : "array"));
    }
    while (pos_ < text_.size() && !is_space(text_[pos_]) && text_[pos_] != ',' && text_[pos_] != '}' &&
           text_[pos_] != ']')
      ++pos_;
    if (pos_ == start) fail(std::string("unexpected '") + c + "'");
    return text_.substr(start, pos_ - start);
  }

  // Calls each(...) for the members of an object / elements of an array, then checks nothing
  // follows. A member callback returns false to stop early (the rest is then not checked).
  template <typename Each>
  void members(Each&& each) {
    expect('{');
    if (peek() != '}') {
      for (;;) {
        const std::string_view key = string_token();
        expect(':');
        if (!each(decode(key), value())) return;
        if (peek() != ',') break;
        ++pos_;
      }
    }
    expect('}');
    if (!at_end()) fail("text after the object");
  }
  template <typename Each>
  void elements(Each&& each) {
    expect('[');
    if (peek() != ']') {
      for (;;) {
        each(value());
        if (peek() != ',') break;
        ++pos_;
      }
    }
    expect(']');
    if (!at_end()) fail("text after the array");
  }

  std::string decode(std::string_view token) const {
    if (token.find('\\') == std::string_view::npos) return std::string(token.substr(1, token.size() - 2));
    return parse_json_text(token, source_.origin).get<std::string>();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    // The position in the whole file when `text_` lies inside source_.document.
    std::string_view doc = text_;
    std::size_t at = pos_;
    const auto* begin = source_.document.data();
    if (begin && text_.data() >= begin && text_.data() + text_.size() <= begin + source_.document.size()) {
      doc = source_.document;
      at += static_cast<std::size_t>(text_.data() - begin);
    }
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < at && k < doc.size(); ++k) {
      if (doc[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw_input(source_.origin, "", "invalid JSON (" + what + ") at line " + std::to_string(line) + ", column " +
                                        std::to_string(column));
  }

  std::string_view text_;
  SkimSource source_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::pair<std::string, std::string_view>> skim_object(std::string_view text, const SkimSource& source) {
  std::vector<std::pair<std::string, std::string_view>> out;
  Skimmer s(text, source);
  s.members([&](std::string key, std::string_view value) {
    out.emplace_back(std::move(key), value);
    return true;
  });
  return out;
}

std::vector<std::string_view> skim_array(std::string_view text, const SkimSource& source) {
  std::vector<std::string_view> out;
  Skimmer s(text, source);
  s.elements([&](std::string_view value) { out.push_back(value); });
  return out;
}

std::string skim_string_member(std::string_view text, std::string_view key, const SkimSource& source) {
  std::string found;
  Skimmer s(text, source);
  s.members([&](const std::string& k, std::string_view value) {
    if (k != key) return true;
    if (!value.empty() && value.front() == '"') found = s.decode(value);
    return false;
  });
  return found;
}

SkimmedFile SkimmedFile::read(const std::filesystem::path& path, std::string_view expected_top) {
  SkimmedFile f;
  f.file_ = path.string();
  f.text_ = std::make_shared<const std::string>(read_json_text(path));
  try {
    f.members_ = skim_object(*f.text_, f.source());
  } catch (const Error&) {
    // Not an object, or broken JSON: the full parser words a syntax fault best (line, column).
    if (parse_json_text(*f.text_, f.file_).is_object()) throw;
    throw_input(f.file_, "/", "expected " + std::string(expected_top));
  }
  return f;
}

std::optional<std::string_view> SkimmedFile::member(std::string_view key) const {
  for (const auto& [k, v] : members_)
    if (k == key && v != "null") return v;
  return std::nullopt;
}

std::string_view SkimmedFile::required(std::string_view key) const {
  const auto v = member(key);
  if (!v) throw_input(file_, "/" + std::string(key), "required field is missing");
  return *v;
}

}  // namespace vramplan
