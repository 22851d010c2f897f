// Command-line workload flags -> WorkloadSpec pieces (workload_spec.hpp). Every rejection is one
// line naming the flag (Error(Usage)) or, for files, the file and field (Error(InputFile)).
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "text_fields.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::sim {
namespace {

// A histogram file is a few thousand bins at most in practice; 100,000 bins of JSON fit easily.
constexpr std::uintmax_t kMaxHistogramFileBytes = 16u << 20;
// exp(10 * z) overflows no double for the z the sampler draws; larger sigmas put nearly every
// sample at 1 or at the cap.
constexpr double kMaxSigma = 10;

[[noreturn]] void flag_error(std::string_view flag, std::string_view message) {
  throw_usage(std::string(flag) + ": " + std::string(message));
}

// A token count written on the command line: an integer in [1, kMaxTokens].
std::uint32_t token_count(std::string_view text, std::string_view flag, std::string_view what) {
  const auto value = parse_unsigned(text);
  if (!value) flag_error(flag, std::string(what) + " must be a whole number of tokens, got " + excerpt(text));
  if (*value < 1) flag_error(flag, std::string(what) + " must be at least 1 token, got " + excerpt(text));
  if (*value > kMaxTokens)
    flag_error(flag, std::string(what) + " must be at most " + std::to_string(kMaxTokens) + " tokens, got " + excerpt(text));
  return static_cast<std::uint32_t>(*value);
}

void check_bins(const LengthSpec& spec, const JsonView& where) {
  if (spec.upper_edges.empty()) where.fail_at("upper_edges", "a histogram needs at least one bin");
  double total = 0;
  for (const double w : spec.weights) total += w;
  if (!(total > 0)) where.fail_at("weights", "the weights must not all be zero");
}

// {"upper_edges": [...], "weights": [...]} of the same length (other members are ignored, so a
// file can carry its source and statistics).
LengthSpec histogram_from_json(const JsonView& view) {
  if (!view.is_object()) view.fail("expected an object with \"upper_edges\" and \"weights\"");
  const JsonView edges = view.at("upper_edges");
  const JsonView weights = view.at("weights");
  if (!edges.is_array()) edges.fail("expected an array of bin upper edges (tokens)");
  if (!weights.is_array()) weights.fail("expected an array of bin weights");
  if (edges.raw().size() > kMaxHistogramBins)
    edges.fail("at most " + std::to_string(kMaxHistogramBins) + " bins, got " + std::to_string(edges.raw().size()));
  if (weights.raw().size() != edges.raw().size())
    weights.fail(std::to_string(weights.raw().size()) + " weights for " + std::to_string(edges.raw().size()) +
                 " upper edges");
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::Histogram;
  for (std::size_t i = 0; i < edges.raw().size(); ++i) {
    const JsonView edge = edges.at(i);
    const std::uint64_t e = edge.as_u64();
    const std::uint64_t previous = spec.upper_edges.empty() ? 0 : spec.upper_edges.back();
    if (e < 1 || e > kMaxTokens) edge.fail("an upper edge must be in 1.." + std::to_string(kMaxTokens));
    if (e <= previous) edge.fail("upper edges must increase (previous " + std::to_string(previous) + ")");
    spec.upper_edges.push_back(static_cast<std::uint32_t>(e));
    const JsonView weight = weights.at(i);
    const double w = weight.as_number();
    if (!(w >= 0) || !std::isfinite(w)) weight.fail("a weight must be a finite number >= 0");
    spec.weights.push_back(w);
  }
  check_bins(spec, view);
  return spec;
}

// CSV: a header "upper_edge,weight", then one bin per row.
LengthSpec histogram_from_csv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot read " + path.string());
  skip_utf8_bom(in);
  const std::string file = path.string();
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::Histogram;
  std::string line;
  bool too_long = false, header = true;
  std::uint64_t number = 0;
  while (read_line(in, line, 4096, too_long)) {
    ++number;
    const std::string where = file_line(file, number);
    if (too_long) throw_input(where, "", "line longer than 4096 bytes");
    if (trim(line).empty() || trim(line).front() == '#') continue;
    const auto cells = split_csv(line);
    if (header) {
      if (cells.size() != 2 || to_lower(cells[0]) != "upper_edge" || to_lower(cells[1]) != "weight")
        throw_input(where, "header", "expected the header 'upper_edge,weight', got " + excerpt(line));
      header = false;
      continue;
    }
    if (cells.size() != 2) throw_input(where, "", "expected 2 cells (upper_edge,weight), got " + std::to_string(cells.size()));
    if (spec.upper_edges.size() == kMaxHistogramBins)
      throw_input(where, "", "more than " + std::to_string(kMaxHistogramBins) + " bins");
    const auto edge = parse_unsigned(cells[0]);
    const std::uint64_t previous = spec.upper_edges.empty() ? 0 : spec.upper_edges.back();
    if (!edge || *edge < 1 || *edge > kMaxTokens)
      throw_input(where, "upper_edge", "expected an integer in 1.." + std::to_string(kMaxTokens) + ", got " + excerpt(cells[0]));
    if (*edge <= previous)
      throw_input(where, "upper_edge", "upper edges must increase (previous " + std::to_string(previous) + ")");
    const auto weight = parse_number(cells[1]);
    if (!weight || *weight < 0) throw_input(where, "weight", "expected a number >= 0, got " + excerpt(cells[1]));
    spec.upper_edges.push_back(static_cast<std::uint32_t>(*edge));
    spec.weights.push_back(*weight);
  }
  if (header) throw_input(file, "header", "no header row 'upper_edge,weight'");
  if (spec.upper_edges.empty()) throw_input(file, "upper_edge", "a histogram needs at least one bin");
  double total = 0;
  for (const double w : spec.weights) total += w;
  if (!(total > 0)) throw_input(file, "weight", "the weights must not all be zero");
  return spec;
}

bool is_csv(const std::filesystem::path& path) { return to_lower(path.extension().string()) == ".csv"; }

// The built-in length distributions, data/workloads/<name>.json (data/workloads/README.md).
constexpr std::array<std::string_view, 3> kBuiltinLengths = {"sharegpt", "sharegpt-sglang", "sharegpt-multiturn"};

// "NAME", "NAME:input" or "NAME:output" of a built-in; nullopt for anything else.
std::optional<std::pair<std::string_view, std::optional<LengthRole>>> builtin_length_name(std::string_view lower) {
  for (const std::string_view name : kBuiltinLengths) {
    if (!lower.starts_with(name)) continue;
    const std::string_view rest = lower.substr(name.size());
    if (rest.empty()) return std::pair{name, std::optional<LengthRole>{}};
    if (rest == ":input") return std::pair{name, std::optional<LengthRole>{LengthRole::Input}};
    if (rest == ":output") return std::pair{name, std::optional<LengthRole>{LengthRole::Output}};
  }
  return std::nullopt;
}

LengthSpec builtin_lengths(const DataRoot& root, std::string_view name, LengthRole role) {
  const std::string file = "workloads/" + std::string(name) + ".json";
  const auto path = root.data_file(file);
  const auto doc = read_json_file(path, kMaxHistogramFileBytes);
  const JsonView view(doc, path.string());
  const char* half = role == LengthRole::Input ? "input" : "output";
  LengthSpec spec = histogram_from_json(view.at(half));
  spec.source = std::string(name) + " " + half + " lengths (data/" + file + ")";
  return spec;
}

}  // namespace

double parse_rate(std::string_view text, std::string_view flag) {
  const std::string t = to_lower(trim(text));
  if (t == "inf" || t == "infinity") return std::numeric_limits<double>::infinity();
  const auto rate = parse_number(t);
  if (!rate || !(*rate > 0))
    flag_error(flag, "expected requests per second > 0 (e.g. 5, 0.5) or 'inf', got " + excerpt(text));
  // A floor of one request in 11.6 days: below it the gaps between arrivals (1 / rate) leave
  // the range in which simulated times stay finite and distinct.
  if (*rate < kMinRatePerS)
    flag_error(flag, "must be at least " + format_number("%g", kMinRatePerS) + " requests per second, got " + excerpt(text));
  return *rate;
}

ArrivalSpec parse_arrivals(std::string_view text, std::string_view flag) {
  const std::string t = to_lower(trim(text));
  ArrivalSpec spec;
  if (t == "poisson") {
    spec.process = ArrivalProcess::Poisson;
  } else if (t == "constant") {
    spec.process = ArrivalProcess::Constant;
  } else if (t.starts_with("gamma:")) {
    const auto cv = parse_number(std::string_view(t).substr(6));
    if (!cv || !(*cv >= kMinGammaCv && *cv <= kMaxGammaCv))
      flag_error(flag, "gamma:CV needs a coefficient of variation in [0.001, 100] (below, use constant), got " + excerpt(text));
    spec.process = ArrivalProcess::Gamma;
    spec.cv = *cv;
  } else {
    flag_error(flag, "expected poisson, gamma:CV (e.g. gamma:2) or constant, got " + excerpt(text));
  }
  return spec;
}

LengthSpec parse_length(std::string_view text, std::string_view flag, const DataRoot& root, LengthRole role) {
  const std::string_view t = trim(text);
  const std::string lower = to_lower(t);
  LengthSpec spec;
  if (lower.starts_with("uniform:")) {
    const std::string_view range = t.substr(8);
    const std::size_t dots = range.find("..");
    if (dots == std::string_view::npos) flag_error(flag, "expected uniform:LOW..HIGH (e.g. uniform:128..2048), got " + excerpt(text));
    spec.kind = LengthSpec::Kind::Uniform;
    spec.low = token_count(range.substr(0, dots), flag, "uniform LOW");
    spec.high = token_count(range.substr(dots + 2), flag, "uniform HIGH");
    if (spec.low > spec.high) flag_error(flag, "uniform:LOW..HIGH needs LOW <= HIGH, got " + excerpt(text));
  } else if (lower.starts_with("lognormal:")) {
    const std::string_view args = t.substr(10);
    const std::size_t comma = args.find(',');
    const auto mean = comma == std::string_view::npos ? std::nullopt : parse_number(trim(args.substr(0, comma)));
    const auto sigma = comma == std::string_view::npos ? std::nullopt : parse_number(trim(args.substr(comma + 1)));
    if (!mean || !sigma) flag_error(flag, "expected lognormal:MEAN,SIGMA (e.g. lognormal:512,0.8), got " + excerpt(text));
    if (!(*mean >= 1) || *mean > kMaxTokens)
      flag_error(flag, "lognormal MEAN must be between 1 and " + std::to_string(kMaxTokens) + " tokens, got " + excerpt(text));
    if (!(*sigma >= 0) || *sigma > kMaxSigma)
      flag_error(flag, "lognormal SIGMA must be between 0 and 10, got " + excerpt(text));
    spec.kind = LengthSpec::Kind::Lognormal;
    spec.mean = *mean;
    spec.sigma = *sigma;
  } else if (lower.starts_with("hist:")) {
    const std::string_view file = t.substr(5);
    if (file.empty()) flag_error(flag, "expected hist:FILE, got " + excerpt(text));
    spec = read_length_histogram(std::filesystem::path(std::string(file)));
  } else if (const auto builtin = builtin_length_name(lower)) {
    return builtin_lengths(root, builtin->first, builtin->second.value_or(role));
  } else if (!t.empty() && parse_unsigned(t)) {
    spec.kind = LengthSpec::Kind::Fixed;
    spec.fixed = token_count(t, flag, "a fixed length");
  } else {
    flag_error(flag,
               "expected a token count (512), uniform:LOW..HIGH, lognormal:MEAN,SIGMA, hist:FILE, sharegpt, sharegpt-sglang "
               "or sharegpt-multiturn, got " +
                   excerpt(text));
  }
  spec.source = std::string(t);
  return spec;
}

LengthSpec parse_length(std::string_view text, std::string_view flag, const DataRoot& root) {
  const bool output = to_lower(flag).find("output") != std::string::npos;
  return parse_length(text, flag, root, output ? LengthRole::Output : LengthRole::Input);
}

LengthSpec read_length_histogram(const std::filesystem::path& path) {
  if (is_csv(path)) return histogram_from_csv(path);
  const auto doc = read_json_file(path, kMaxHistogramFileBytes);
  return histogram_from_json(JsonView(doc, path.string()));
}

double parse_duration(std::string_view text, std::string_view flag, bool zero_allowed) {
  std::string_view t = trim(text);
  double unit = 1;
  if (!t.empty()) {
    switch (t.back()) {
      case 's': unit = 1; t.remove_suffix(1); break;
      case 'm': unit = 60; t.remove_suffix(1); break;
      case 'h': unit = 3600; t.remove_suffix(1); break;
      case 'd': unit = 86400; t.remove_suffix(1); break;
      default: break;
    }
  }
  const auto value = parse_number(t);
  if (!value || !(zero_allowed ? *value >= 0 : *value > 0))
    flag_error(flag, std::string(zero_allowed ? "expected a duration >= 0 such as 0, 600, 600s, 10m, 2h or 1.5d"
                                              : "expected a duration > 0 such as 600, 600s, 10m, 2h or 1.5d") +
                         ", got " + excerpt(text));
  // 1e9 s is 31.7 years: past it no run, timeout or rental margin is meant.
  if (!(*value * unit <= kMaxDurationS)) flag_error(flag, "at most 1e9 seconds (31.7 years), got " + excerpt(text));
  return *value * unit;
}

}  // namespace vramplan::sim
