// vramplan/sim/workload_spec.hpp — a serving workload as the user states it on the command line
// (`vramplan simulate --rate 5 --arrivals gamma:2 --input-len sharegpt ...`), parsed into plain
// values, and the RequestSource that produces its requests (workload.hpp).
//
// Parsing is separate from generation so that the CLI can reject a bad flag before loading a
// model, and so that tests can build specs without strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/io/data_root.hpp"
#include "vramplan/sim/workload.hpp"

namespace vramplan::sim {

//! How requests arrive in an open-loop run.
enum class ArrivalProcess {
  Poisson,   //!< exponential gaps, mean 1/rate (benchmark_serving's default, burstiness 1)
  Gamma,     //!< gamma gaps with mean 1/rate and coefficient of variation `cv` (bursty when cv > 1)
  Constant,  //!< gaps of exactly 1/rate
};

//! The coefficients of variation gamma:CV takes. Below 0.001 (shape 10^6) the gaps are the mean
//! within a tenth of a percent: `constant` is that process (and 1 / CV^2 overflows below 1e-154,
//! where the sampler never returned). Above 100 (shape 10^-4) nearly every gap is 0.
inline constexpr double kMinGammaCv = 0.001, kMaxGammaCv = 100;

struct ArrivalSpec {
  ArrivalProcess process = ArrivalProcess::Poisson;
  //! Requests per second; +infinity = every request queued at t = 0 (an offline batch job).
  double rate_per_s = std::numeric_limits<double>::infinity();
  double cv = 1;  //!< Gamma only: standard deviation / mean of the gaps (> 0)
};

//! A distribution of token counts (prompt or output). Samples are integers >= 1.
struct LengthSpec {
  enum class Kind { Fixed, Uniform, Lognormal, Histogram };
  Kind kind = Kind::Fixed;
  std::uint32_t fixed = 0;         //!< Fixed
  std::uint32_t low = 0, high = 0; //!< Uniform: integers in [low, high]
  double mean = 0, sigma = 0;      //!< Lognormal: mean of the samples (tokens) and sigma of log
  //! Histogram: bin upper edges (tokens, increasing) and weights; a sample is uniform inside
  //! its bin (lower edge = previous upper edge + 1, the first starts at 1).
  std::vector<std::uint32_t> upper_edges;
  std::vector<double> weights;
  std::string source;              //!< "512", "uniform:128..2048", "sharegpt (data/...)" — for output
  double expected() const;         //!< mean of the distribution in tokens (for reports)
};

//! A whole workload.
struct WorkloadSpec {
  ArrivalSpec arrivals;
  std::optional<std::uint64_t> requests;   //!< stop generating after this many
  std::optional<double> duration_s;        //!< stop generating arrivals after this time
  //! Closed loop: this many users, each sending its next request when its last one completes;
  //! the source's arrival times are then ignored (the simulator sets them).
  std::optional<std::uint64_t> concurrency;
  LengthSpec input, output;
  //! Requests from a trace file instead of the generators (arrivals and lengths both).
  std::optional<std::filesystem::path> trace;
  //! A trace row with more input + output tokens is bad input (the engine's max_model_len,
  //! set by the simulator from the engine's rules); 0 = no limit.
  std::uint64_t trace_max_total_tokens = 0;
  std::uint64_t seed = 0;
};

//! The most requests one run replays (--requests): about 15 s of simulation (1,000,000 take
//! about 1.5 s, docs/performance.md).
inline constexpr std::uint64_t kMaxRequests = 10'000'000;
//! The most requests queued at t = 0 (--rate inf without a concurrency limit): every one is in
//! the system at once, so memory grows with the count (about 240 B a request).
inline constexpr std::uint64_t kMaxQueuedAtOnce = 1'000'000;

//! The lowest arrival rate accepted (one request in 11.6 days).
inline constexpr double kMinRatePerS = 1e-6;

//! "5", "0.5", "inf" -> requests / s; Error(Usage) naming `flag` for 0, negatives, NaN, garbage
//! and rates below kMinRatePerS.
double parse_rate(std::string_view text, std::string_view flag);
//! "poisson", "gamma:CV", "constant" -> the process (cv in the returned spec; rate not set).
ArrivalSpec parse_arrivals(std::string_view text, std::string_view flag);
//! Caps that keep the work bounded by the input (Error when exceeded).
inline constexpr std::uint32_t kMaxTokens = std::uint32_t{1} << 31;  //!< a length or a bin edge
inline constexpr std::size_t kMaxHistogramBins = 100000;

//! Which half of a two-sided built-in distribution ("sharegpt") a length flag means.
enum class LengthRole { Input, Output };

//! "512", "uniform:128..2048", "lognormal:MEAN,SIGMA", "hist:FILE" or a built-in of
//! data/workloads/: "sharegpt" (first turns as vLLM's benchmark_serving samples them),
//! "sharegpt-sglang" (as SGLang 0.5's bench_serving does), "sharegpt-multiturn" (LLMServingSim's
//! multi-turn replay). A built-in is its prompt-length half for LengthRole::Input, the output half
//! for Output; "NAME:input" / "NAME:output" name a half explicitly.
LengthSpec parse_length(std::string_view text, std::string_view flag, const DataRoot& root, LengthRole role);
//! As above, the role taken from the flag's name: Output when it contains "output", else Input.
LengthSpec parse_length(std::string_view text, std::string_view flag, const DataRoot& root);
//! A histogram file (JSON {"upper_edges": [...], "weights": [...]} or CSV "upper_edge,weight"
//! rows; docs/simulator.md). Error(Io) when unreadable, Error(InputFile) naming file + field.
LengthSpec read_length_histogram(const std::filesystem::path& path);
//! The longest duration any flag or trace gives: 1e9 s (31.7 years). Beyond it figures stop being
//! printable (2^64 s had printed a margin of 5e15 hours).
inline constexpr double kMaxDurationS = 1e9;

//! "600", "600s", "10m", "2h", "1.5d" -> seconds (at most 1e9); Error(Usage) naming `flag` otherwise.
//! Above 0, or at least 0 with `zero_allowed` (a margin that may be none).
double parse_duration(std::string_view text, std::string_view flag, bool zero_allowed = false);

//! The requests of `spec`, in arrival order, lazily. Same spec and seed -> same requests.
//! A trace is opened here (Error(Io) when it cannot be) and read line by line as next() is called.
std::unique_ptr<RequestSource> make_request_source(const WorkloadSpec& spec);

}  // namespace vramplan::sim
