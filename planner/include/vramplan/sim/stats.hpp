// vramplan/sim/stats.hpp — percentiles in memory that does not grow with the run: a histogram
// with logarithmic buckets (relative width 0.5 %, so a percentile is within 0.25 % of the exact
// order statistic) plus an exact mean. A million requests cost the same few kilobytes as ten.
// Up to kExactSamples unweighted samples are also kept as they are, and while they are all there
// a percentile is computed as the load generators compute it: numpy's np.percentile / np.median
// (linear interpolation between the order statistics at q x (n - 1)), which is what
// benchmark_serving.py / bench_serving.py calculate_metrics print. On a benchmark of 10 or 80
// requests that is not the histogram's nearest rank: the p99 of 80 TTFTs is s[78] + 0.21 x
// (s[79] - s[78]), close to the second largest, where the nearest rank is the largest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vramplan::sim {

//! mean / p50 / p90 / p99 of a set of samples; all 0 when there were none.
struct Summary {
  std::uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

//! Non-negative samples, optionally weighted (time-weighted figures: KV usage over a step).
class LogHistogram {
 public:
  //! Samples below `floor` share the first bucket (reported as `floor`); 1 ns for latencies.
  explicit LogHistogram(double floor = 1e-9);
  //! One sample with a weight (a time-weighted state: count grows by one).
  void add(double value, double weight = 1);
  //! `n` equal samples (every sequence of a step had the same gap: count grows by n).
  void add_samples(double value, std::uint64_t n);
  //! Unweighted samples kept exactly (32 kB): the published closed-loop runs (10-500 requests)
  //! are inside; longer runs (3,000-12,000 requests) use the buckets, within 0.25 %.
  static constexpr std::size_t kExactSamples = 4096;
  //! With every sample unweighted and at most kExactSamples of them: numpy's linear
  //! interpolation at q x (n - 1) over the sorted samples. Otherwise the smallest bucket value v
  //! with weight(samples <= v) >= q x total weight. 0 < q <= 1.
  double quantile(double q) const;
  Summary summary() const;
  double total_weight() const { return weight_; }

 private:
  double floor_;
  double weight_ = 0, weighted_sum_ = 0, max_ = 0;
  std::uint64_t count_ = 0;
  std::vector<double> buckets_;  // grows to the largest bucket seen, at most a few thousand
  //! Most samples of a run (a step's duration, the running count, the KV share) land in the
  //! bucket the one before did or next to it: comparing with those buckets' edges saves the
  //! logarithm (BM_Simulate1M takes four samples a step).
  std::size_t bucket_of(double value);
  bool well_inside(double value, std::size_t i) const;
  std::size_t formula_bucket(double value);  // ceil(log(value / floor) / log r), for value > floor
  std::size_t last_bucket_ = 0;
  std::vector<double> upper_;  // upper_[i] = floor x r^i, the top of bucket i, as far as seen
  //! The bucket of each small whole number seen (a count of requests moves by one, which at
  //! 0.5 % a bucket is a jump of several buckets); 0 where not yet computed.
  std::vector<std::uint32_t> whole_bucket_;
  void keep_exact(double value, std::uint64_t n);
  std::vector<double> exact_;    // the samples while all are unweighted and <= kExactSamples
  bool exact_ok_ = true;
};

}  // namespace vramplan::sim
