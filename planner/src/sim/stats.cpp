#include "vramplan/sim/stats.hpp"

#include <algorithm>
#include <cmath>

namespace vramplan::sim {
namespace {

// Bucket i holds values in (floor x r^(i-1), floor x r^i]; r = 1.005. 1e-9 .. 1e9 s is ~8300
// buckets (67 kB), reached only by a run that spans that range.
constexpr double kRatio = 1.005;
const double kLogRatio = std::log(kRatio);
constexpr std::size_t kMaxBuckets = 20000;  // values beyond floor x r^20000 (~1e43 x floor) clamp

}  // namespace

LogHistogram::LogHistogram(double floor) : floor_(floor) {}

// Whether `value` is in bucket i by at least 1e-9 of its edges: with the edges computed as
// below, that is far beyond the logarithm's rounding, so the formula would pick i as well.
bool LogHistogram::well_inside(double value, std::size_t i) const {
  return i >= 1 && i < upper_.size() && value > upper_[i - 1] * (1 + 1e-9) && value < upper_[i] * (1 - 1e-9);
}

std::size_t LogHistogram::bucket_of(double value) {
  const std::size_t last = last_bucket_;
  if (well_inside(value, last)) return last;
  if (well_inside(value, last + 1)) return last_bucket_ = last + 1;
  if (well_inside(value, last - 1)) return last_bucket_ = last - 1;  // last >= 1 when upper_ is set
  if (!(value > floor_)) return 0;
  // Whole numbers up to kWholeNumbers (counts of requests) look their bucket up once computed.
  constexpr double kWholeNumbers = 4096;
  if (value < kWholeNumbers && value == std::floor(value)) {
    const auto n = static_cast<std::size_t>(value);
    if (n >= whole_bucket_.size()) whole_bucket_.resize(n + 1, 0);
    if (whole_bucket_[n] == 0) whole_bucket_[n] = static_cast<std::uint32_t>(formula_bucket(value));
    return whole_bucket_[n];
  }
  return formula_bucket(value);
}

std::size_t LogHistogram::formula_bucket(double value) {
  const auto i = std::min(kMaxBuckets - 1, static_cast<std::size_t>(std::ceil(std::log(value / floor_) / kLogRatio)));
  if (i + 1 < kMaxBuckets) {
    while (upper_.size() < i + 2) upper_.push_back(floor_ * std::exp(kLogRatio * static_cast<double>(upper_.size())));
    last_bucket_ = i;
  }
  return i;
}

void LogHistogram::add(double value, double weight) {
  if (!(weight > 0) || !(value >= 0)) return;
  const std::size_t i = bucket_of(value);
  if (i >= buckets_.size()) buckets_.resize(i + 1, 0.0);
  buckets_[i] += weight;
  weight_ += weight;
  weighted_sum_ += weight * value;
  max_ = std::max(max_, value);
  ++count_;
  if (exact_ok_) keep_exact(value, weight == 1 ? 1 : 0);
}

void LogHistogram::add_samples(double value, std::uint64_t n) {
  if (n == 0) return;
  const bool was_ok = exact_ok_;
  exact_ok_ = false;  // add() must not keep one copy: the n copies are kept below
  add(value, static_cast<double>(n));
  count_ += n - 1;
  exact_ok_ = was_ok;
  if (exact_ok_) keep_exact(value, n);
}

// n copies of an unweighted sample (n = 0: a weighted one, which ends exact mode).
void LogHistogram::keep_exact(double value, std::uint64_t n) {
  if (n == 0 || exact_.size() + n > kExactSamples) {
    exact_ok_ = false;
    std::vector<double>().swap(exact_);
    return;
  }
  exact_.insert(exact_.end(), n, value);
}

double LogHistogram::quantile(double q) const {
  if (weight_ <= 0) return 0;
  if (exact_ok_ && !exact_.empty()) {
    // numpy.percentile(x, 100 q), method "linear" (its default).
    std::vector<double> s = exact_;
    std::sort(s.begin(), s.end());
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(s.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    if (lo + 1 >= s.size()) return s.back();
    return s[lo] + (pos - static_cast<double>(lo)) * (s[lo + 1] - s[lo]);
  }
  const double target = q * weight_;
  double seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= target * (1 - 1e-12)) {
      // The bucket's geometric middle, never above the largest sample.
      const double upper = floor_ * std::pow(kRatio, static_cast<double>(i));
      return std::min(max_, i == 0 ? floor_ : upper / std::sqrt(kRatio));
    }
  }
  return max_;
}

Summary LogHistogram::summary() const {
  Summary s;
  s.count = count_;
  if (weight_ <= 0) return s;
  s.mean = weighted_sum_ / weight_;
  s.p50 = quantile(0.5);
  s.p90 = quantile(0.9);
  s.p99 = quantile(0.99);
  s.max = max_;
  return s;
}

}  // namespace vramplan::sim
