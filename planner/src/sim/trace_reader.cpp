// Request traces (trace_reader.hpp): JSONL or CSV, one request per line, read as the simulator
// asks for requests. Both formats turn each field into its text first (a JSON number into the
// text it was written as), so one set of checks, and one wording of every error, serves both.
#include "vramplan/sim/trace_reader.hpp"

#include <array>
#include <cmath>
#include <fstream>
#include <string>

#include "text_fields.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/input_file.hpp"
#include "vramplan/io/json_skim.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::sim {
namespace {

enum Field : std::size_t { ArrivalS, InputTokens, OutputTokens, PrefixId, PrefixTokens, kFieldCount };
constexpr std::array<const char*, kFieldCount> kFieldNames = {"arrival_s", "input_tokens", "output_tokens", "prefix_id",
                                                              "prefix_tokens"};

// The fields of one record as text; nullopt = absent (or an empty CSV cell).
using RawRecord = std::array<std::optional<std::string>, kFieldCount>;

class TraceSource final : public RequestSource {
 public:
  // The file is read front to back once, never seeked: a pipe (--trace <(zcat t.jsonl.gz)) is
  // read as a file is, and "-" is standard input (errors name it "stdin").
  TraceSource(const std::filesystem::path& path, std::uint64_t max_total)
      : file_(path == "-" ? "stdin" : path.string()), max_total_(max_total) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Error(ErrorKind::Io, "trace " + file_ + ": is a directory, expected a file");
    in_.open(path == "-" ? std::filesystem::path("/dev/stdin") : path, std::ios::binary);
    if (!in_) {  // why: a missing file or a broken link is named as such
      std::error_code sec;
      const auto status = std::filesystem::status(path, sec);
      const bool missing = path != "-" && (sec || !std::filesystem::exists(status));
      throw Error(ErrorKind::Io, "trace " + file_ + ": " + (missing ? missing_file_reason(path, sec) : "cannot be read"));
    }
    csv_ = detect_csv(path);
    if (csv_) read_header();
  }

  std::optional<Request> next() override {
    while (next_line()) {
      const std::string_view text = trim(line_);
      if (text.empty() || (csv_ && text.front() == '#')) continue;
      ++records_;
      return to_request(csv_ ? csv_record(line_) : json_record(text));
    }
    if (records_ == 0) throw_input(file_, "", "empty trace: no requests");
    return std::nullopt;
  }

 private:
  //! "FILE:LINE" of the line being read, for errors.
  std::string where() const { return file_line(file_, line_number_); }

  //! The next line into line_ (a line held back by detect_csv first), without a UTF-8 byte-order
  //! mark at the start of the file; false at the end.
  bool next_line() {
    if (held_) {
      held_ = false;
      return true;
    }
    bool too_long = false;
    if (!read_line(in_, line_, kMaxTraceLineBytes, too_long)) return false;
    ++line_number_;
    if (too_long) throw_input(where(), "", "line longer than " + std::to_string(kMaxTraceLineBytes) + " bytes");
    if (line_number_ == 1 && line_.starts_with("\xEF\xBB\xBF")) line_.erase(0, 3);
    return true;
  }

  bool detect_csv(const std::filesystem::path& path) {
    const std::string ext = to_lower(path.extension().string());
    if (ext == ".csv") return true;
    if (ext == ".jsonl" || ext == ".json" || ext == ".ndjson") return false;
    // Any other name: JSON objects start with '{'; anything else is taken as a CSV header. The
    // first line with text is held for the reader.
    while (next_line()) {
      const std::string_view text = trim(line_);
      if (text.empty()) continue;
      held_ = true;
      return text.front() != '{';
    }
    return false;  // no text at all: next() says the trace is empty
  }

  void read_header() {
    while (next_line()) {
      if (trim(line_).empty() || trim(line_).front() == '#') continue;
      const auto cells = split_csv(line_);
      column_of_.fill(-1);
      for (std::size_t c = 0; c < cells.size(); ++c)
        for (std::size_t f = 0; f < kFieldCount; ++f)
          if (to_lower(cells[c]) == kFieldNames[f]) column_of_[f] = static_cast<int>(c);
      columns_ = cells.size();
      for (const Field f : {ArrivalS, InputTokens, OutputTokens})
        if (column_of_[f] < 0)
          throw_input(where(), kFieldNames[f], "missing column in the header row (CSV traces start with a header naming "
                                              "arrival_s, input_tokens, output_tokens)");
      return;
    }
    throw_input(file_, "", "empty trace: no CSV header row");
  }

  RawRecord csv_record(std::string_view line) const {
    const auto cells = split_csv(line);
    if (cells.size() != columns_)
      throw_input(where(), "", std::to_string(cells.size()) + " cells, the header has " + std::to_string(columns_));
    RawRecord raw;
    for (std::size_t f = 0; f < kFieldCount; ++f)
      if (column_of_[f] >= 0 && !cells[static_cast<std::size_t>(column_of_[f])].empty())
        raw[f] = std::string(cells[static_cast<std::size_t>(column_of_[f])]);
    return raw;
  }

  // The members' texts found by the skimmer (json_skim.hpp), not a parsed document: a number
  // stays the text it was written as, and a line costs a quarter of a full parse (1,000,000
  // lines: 0.8 s against 3.0 s with nlohmann::json::parse).
  RawRecord json_record(std::string_view text) const {
    std::vector<std::pair<std::string, std::string_view>> members;
    try {
      members = skim_object(text, SkimSource{where(), text});
    } catch (const Error&) {
      throw_input(where(), "", "expected one JSON object per line, got " + excerpt(text));
    }
    RawRecord raw;
    for (const auto& [key, value] : members) {
      for (std::size_t f = 0; f < kFieldCount; ++f) {
        if (key != kFieldNames[f] || value == "null") continue;
        const char c = value.front();
        if (c == '"' || c == '{' || c == '[' || c == 't' || c == 'f')
          throw_input(where(), kFieldNames[f],
                      std::string("expected a number, got ") +
                          (c == '"' ? "string" : c == '{' ? "object" : c == '[' ? "array" : "boolean"));
        raw[f] = std::string(value);
      }
    }
    return raw;
  }

  const std::string& required(const RawRecord& raw, Field f) const {
    if (!raw[f]) throw_input(where(), kFieldNames[f], "missing");
    return *raw[f];
  }

  // A token count: a whole number in [minimum, kMaxTokens] ("512" or "512.0").
  std::uint32_t tokens(const std::string& text, Field f, std::uint32_t minimum) const {
    const auto value = parse_number(text);
    if (!value) throw_input(where(), kFieldNames[f], "expected a whole number of tokens, got " + excerpt(text));
    if (*value != std::floor(*value)) throw_input(where(), kFieldNames[f], "not a whole number of tokens: " + text);
    if (*value < minimum)
      throw_input(where(), kFieldNames[f], "must be at least " + std::to_string(minimum) + ", got " + text);
    if (*value > kMaxTokens) throw_input(where(), kFieldNames[f], "must be at most " + std::to_string(kMaxTokens) + ", got " + text);
    return static_cast<std::uint32_t>(*value);
  }

  Request to_request(const RawRecord& raw) {
    Request r;
    const std::string& arrival = required(raw, ArrivalS);
    const auto t = parse_number(arrival);
    if (!t) throw_input(where(), "arrival_s", "expected seconds as a finite number, got " + excerpt(arrival));
    if (*t < 0) throw_input(where(), "arrival_s", "must be >= 0, got " + arrival);
    if (*t > kMaxDurationS) throw_input(where(), "arrival_s", "at most 1e9 seconds (31.7 years), got " + excerpt(arrival));
    if (*t < previous_arrival_)
      throw_input(where(), "arrival_s",
                  arrival + " is earlier than the previous request's; a trace must be in arrival order");
    r.arrival_s = previous_arrival_ = *t;
    r.input_tokens = tokens(required(raw, InputTokens), InputTokens, 1);
    r.output_tokens = tokens(required(raw, OutputTokens), OutputTokens, 1);
    const std::uint64_t total = static_cast<std::uint64_t>(r.input_tokens) + r.output_tokens;
    if (max_total_ && total > max_total_)
      throw_input(where(), "input_tokens + output_tokens",
                  std::to_string(total) + " exceeds the engine's max_model_len " + std::to_string(max_total_));
    if (raw[PrefixId]) {
      const auto id = parse_unsigned(*raw[PrefixId]);
      if (!id) throw_input(where(), "prefix_id", "expected an integer >= 0, got " + excerpt(*raw[PrefixId]));
      r.prefix_id = *id;
    }
    if (r.prefix_id != 0) {
      r.prefix_tokens = tokens(required(raw, PrefixTokens), PrefixTokens, 1);
      if (r.prefix_tokens > r.input_tokens)
        throw_input(where(), "prefix_tokens",
                    std::to_string(r.prefix_tokens) + " is more than input_tokens " + std::to_string(r.input_tokens));
    } else if (raw[PrefixTokens] && tokens(*raw[PrefixTokens], PrefixTokens, 0) != 0) {
      throw_input(where(), "prefix_id",
                  raw[PrefixId] ? "0 means no shared prefix, yet prefix_tokens is " + *raw[PrefixTokens] +
                                      ": give the prefix an id >= 1"
                                : "missing (prefix_tokens is given; requests share a prefix through its id)");
    }
    r.id = next_id_++;
    return r;
  }

  std::string file_;
  std::ifstream in_;
  bool csv_ = false;
  std::array<int, kFieldCount> column_of_{};
  std::size_t columns_ = 0;
  std::string line_;
  bool held_ = false;  // line_ is a line read ahead and not yet consumed
  std::uint64_t line_number_ = 0;
  std::uint64_t records_ = 0;
  double previous_arrival_ = 0;
  std::uint64_t next_id_ = 0;
  std::uint64_t max_total_ = 0;
};

}  // namespace

std::unique_ptr<RequestSource> open_trace(const std::filesystem::path& path, std::uint64_t max_total_tokens) {
  return std::make_unique<TraceSource>(path, max_total_tokens);
}

}  // namespace vramplan::sim
