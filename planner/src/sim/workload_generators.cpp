// Generated workloads: arrival processes and length distributions (workload_spec.hpp), and
// make_request_source, which picks between them and a trace.
//
// Arrivals follow vLLM's benchmark client (benchmarks/benchmark_serving.py, get_request): the
// first request is sent at t = 0 and each later one after a gap drawn from a gamma distribution
// with shape = burstiness and scale = 1 / (rate * burstiness); burstiness 1 is Poisson, and
// cv = 1 / sqrt(burstiness). With an infinite rate every request is queued at t = 0.
//
// The arrival gaps, prompt lengths and output lengths come from three generators seeded from the
// one seed, so changing the rate or the arrival process leaves the lengths of request i
// unchanged: a rate sweep compares the same requests.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/sim/sampling.hpp"
#include "vramplan/sim/trace_reader.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::sim {
namespace {

// SplitMix64 (Steele, Lea & Flood 2014): spreads nearby seeds (0, 1, 2, ...) over the engine's
// state so the three streams of one seed, and the streams of neighbouring seeds, are unrelated.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) { return splitmix64(splitmix64(seed) + stream); }

// Lower edge of histogram bin i: the first bin starts at 1, each later one after the previous edge.
std::uint32_t bin_low(const LengthSpec& spec, std::size_t i) { return i == 0 ? 1 : spec.upper_edges[i - 1] + 1; }

void check_length(const LengthSpec& spec, std::string_view flag) {
  auto fail = [&](const std::string& message) { throw_usage(std::string(flag) + ": " + message); };
  switch (spec.kind) {
    case LengthSpec::Kind::Fixed:
      if (spec.fixed < 1 || spec.fixed > kMaxTokens) fail("a fixed length must be in 1.." + std::to_string(kMaxTokens));
      break;
    case LengthSpec::Kind::Uniform:
      if (spec.low < 1 || spec.low > spec.high || spec.high > kMaxTokens)
        fail("uniform:LOW..HIGH needs 1 <= LOW <= HIGH <= " + std::to_string(kMaxTokens));
      break;
    case LengthSpec::Kind::Lognormal:
      if (!(spec.mean >= 1) || spec.mean > kMaxTokens || !(spec.sigma >= 0) || spec.sigma > 10)
        fail("lognormal needs 1 <= MEAN <= " + std::to_string(kMaxTokens) + " and 0 <= SIGMA <= 10");
      break;
    case LengthSpec::Kind::Histogram: {
      const auto& e = spec.upper_edges;
      const bool shape_ok = !e.empty() && e.size() <= kMaxHistogramBins && spec.weights.size() == e.size();
      const bool edges_ok = shape_ok && e.front() >= 1 && e.back() <= kMaxTokens && std::is_sorted(e.begin(), e.end()) &&
                            std::adjacent_find(e.begin(), e.end()) == e.end();
      const bool weights_ok =
          shape_ok && std::all_of(spec.weights.begin(), spec.weights.end(), [](double w) { return w >= 0 && std::isfinite(w); }) &&
          std::accumulate(spec.weights.begin(), spec.weights.end(), 0.0) > 0;
      if (!edges_ok || !weights_ok)
        fail("a histogram needs 1..100000 increasing upper edges in 1.." + std::to_string(kMaxTokens) +
             " and as many finite weights >= 0, not all zero");
      break;
    }
  }
}

class LengthSampler {
 public:
  LengthSampler(const LengthSpec& spec, std::uint64_t seed) : spec_(spec), rng_(seed) {
    if (spec.kind == LengthSpec::Kind::Lognormal) mu_ = std::log(spec.mean) - spec.sigma * spec.sigma / 2;
    if (spec.kind == LengthSpec::Kind::Histogram) {
      cumulative_.resize(spec.weights.size());
      std::partial_sum(spec.weights.begin(), spec.weights.end(), cumulative_.begin());
    }
  }

  std::uint32_t sample() {
    switch (spec_.kind) {
      case LengthSpec::Kind::Fixed: return spec_.fixed;
      case LengthSpec::Kind::Uniform: return static_cast<std::uint32_t>(rng_.uniform_int(spec_.low, spec_.high));
      case LengthSpec::Kind::Lognormal: {
        // exp(mu + sigma Z) has mean exp(mu + sigma^2 / 2) = MEAN; rounded to whole tokens.
        const double x = std::floor(std::exp(mu_ + spec_.sigma * rng_.normal()) + 0.5);
        return static_cast<std::uint32_t>(std::clamp(x, 1.0, static_cast<double>(kMaxTokens)));
      }
      case LengthSpec::Kind::Histogram: {
        // The first bin whose cumulative weight exceeds U * total; zero-weight bins are never it.
        const double target = rng_.uniform() * cumulative_.back();
        const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), target);
        const std::size_t bin = std::min<std::size_t>(static_cast<std::size_t>(it - cumulative_.begin()), cumulative_.size() - 1);
        return static_cast<std::uint32_t>(rng_.uniform_int(bin_low(spec_, bin), spec_.upper_edges[bin]));
      }
    }
    return 1;
  }

 private:
  const LengthSpec& spec_;
  Rng rng_;
  double mu_ = 0;
  std::vector<double> cumulative_;
};

class GeneratedSource final : public RequestSource {
 public:
  explicit GeneratedSource(const WorkloadSpec& spec)
      : spec_(spec),
        gaps_(stream_seed(spec.seed, 0)),
        input_(spec_.input, stream_seed(spec.seed, 1)),
        output_(spec_.output, stream_seed(spec.seed, 2)) {}

  std::optional<Request> next() override {
    if (spec_.requests && next_id_ >= *spec_.requests) return std::nullopt;
    const double arrival = arrival_of_next();
    if (spec_.duration_s && !(arrival < *spec_.duration_s)) return std::nullopt;
    Request r;
    r.id = next_id_++;
    r.arrival_s = arrival;
    r.input_tokens = input_.sample();
    r.output_tokens = output_.sample();
    return r;
  }

  std::optional<std::uint64_t> expected_count() const override {
    if (spec_.requests && (!spec_.duration_s || std::isinf(spec_.arrivals.rate_per_s))) return spec_.requests;
    return std::nullopt;
  }

 private:
  double arrival_of_next() {
    // An infinite rate queues everything at 0 (with a concurrency limit, a closed loop: the
    // simulator sends each request when a user is free). A finite rate with a limit arrives as
    // benchmark_serving's --request-rate with --max-concurrency: a request waits for a free slot.
    if (std::isinf(spec_.arrivals.rate_per_s)) return 0;
    const double rate = spec_.arrivals.rate_per_s;
    // Constant: i / rate exactly, not a running sum that accumulates rounding.
    if (spec_.arrivals.process == ArrivalProcess::Constant) return static_cast<double>(next_id_) / rate;
    if (next_id_ > 0) {
      const double gap = spec_.arrivals.process == ArrivalProcess::Poisson
                             ? gaps_.exponential() / rate
                             : gaps_.gamma(shape_) / (rate * shape_);
      clock_ += gap;
    }
    return clock_;
  }

  const WorkloadSpec spec_;
  // Gamma shape from the coefficient of variation: cv^2 = 1 / shape.
  const double shape_ = 1 / (spec_.arrivals.cv * spec_.arrivals.cv);
  Rng gaps_;
  LengthSampler input_, output_;
  std::uint64_t next_id_ = 0;
  double clock_ = 0;
};

// A trace cut short by --requests / --duration.
class LimitedSource final : public RequestSource {
 public:
  LimitedSource(std::unique_ptr<RequestSource> inner, std::optional<std::uint64_t> requests, std::optional<double> duration_s)
      : inner_(std::move(inner)), requests_(requests), duration_s_(duration_s) {}

  std::optional<Request> next() override {
    if (requests_ && produced_ >= *requests_) return std::nullopt;
    auto r = inner_->next();
    if (!r || (duration_s_ && !(r->arrival_s < *duration_s_))) return std::nullopt;
    ++produced_;
    return r;
  }

 private:
  std::unique_ptr<RequestSource> inner_;
  std::optional<std::uint64_t> requests_;
  std::optional<double> duration_s_;
  std::uint64_t produced_ = 0;
};

void check_bounds(const WorkloadSpec& spec) {
  if (spec.requests && *spec.requests == 0) throw_usage("--requests: must be at least 1");
  // The run's time grows with the count; an offline batch's memory too (every request queued).
  if (spec.requests && *spec.requests > kMaxRequests)
    throw_usage("--requests: at most " + std::to_string(kMaxRequests) + ", got " + std::to_string(*spec.requests));
  if (spec.requests && *spec.requests > kMaxQueuedAtOnce && !spec.trace && !spec.concurrency &&
      std::isinf(spec.arrivals.rate_per_s))
    throw_usage("--requests: --rate inf queues every request at once: at most " + std::to_string(kMaxQueuedAtOnce) +
                " (split a larger job with --workers, or give --concurrency C), got " + std::to_string(*spec.requests));
  if (spec.duration_s && !(*spec.duration_s > 0 && std::isfinite(*spec.duration_s)))
    throw_usage("--duration: must be a finite time > 0");
  if (spec.concurrency && *spec.concurrency == 0) throw_usage("--concurrency: must be at least 1");
}

}  // namespace

double LengthSpec::expected() const {
  switch (kind) {
    case Kind::Fixed: return fixed;
    case Kind::Uniform: return (static_cast<double>(low) + high) / 2;
    case Kind::Lognormal: return mean;
    case Kind::Histogram: {
      double total = 0, sum = 0;
      for (std::size_t i = 0; i < upper_edges.size() && i < weights.size(); ++i) {
        total += weights[i];
        sum += weights[i] * (static_cast<double>(bin_low(*this, i)) + upper_edges[i]) / 2;
      }
      return total > 0 ? sum / total : 0;
    }
  }
  return 0;
}

std::unique_ptr<RequestSource> make_request_source(const WorkloadSpec& spec) {
  check_bounds(spec);
  if (spec.trace) {
    auto trace = open_trace(*spec.trace, spec.trace_max_total_tokens);
    if (!spec.requests && !spec.duration_s) return trace;
    return std::make_unique<LimitedSource>(std::move(trace), spec.requests, spec.duration_s);
  }
  const double rate = spec.arrivals.rate_per_s;
  if (!(rate >= kMinRatePerS))
    throw_usage("--rate: must be at least " + format_number("%g", kMinRatePerS) + " requests per second, or inf");
  if (spec.arrivals.process == ArrivalProcess::Gamma && !(spec.arrivals.cv >= kMinGammaCv && spec.arrivals.cv <= kMaxGammaCv))
    throw_usage("--arrivals: gamma:CV needs a coefficient of variation in [0.001, 100] (below, use constant)");
  check_length(spec.input, "--input-len");
  check_length(spec.output, "--output-len");
  if (!spec.requests) {
    if (!spec.duration_s)
      throw_usage("the workload is unbounded: give --requests N or --duration T (or --trace FILE)");
    if (!spec.concurrency && std::isinf(rate))
      throw_usage("--rate inf queues every request at t = 0, so --duration cannot end the workload: give --requests N");
  }
  return std::make_unique<GeneratedSource>(spec);
}

}  // namespace vramplan::sim
