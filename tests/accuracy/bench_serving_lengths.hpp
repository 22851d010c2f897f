// bench_serving_lengths.hpp — the exact per-request lengths of a `bench_serving --dataset-name random`
// run, re-drawn as the benchmark drew them, so that a re-simulated record replays the run's own
// requests instead of a sample of its distribution (10 one-user requests of uniform 1..1000
// lengths differ from any other 10 by ~20 % in their total).
//
// SGLang's python/sglang/bench_serving.py, sample_random_requests (RandomLoader.load in later
// releases), after np.random.seed(args.seed) with --seed defaulting to 1:
//     input_lens  = np.random.randint(max(int(input_len * range_ratio), 1), input_len + 1, size=n)
//     output_lens = np.random.randint(int(output_len * range_ratio), output_len + 1, size=n)
// (--random-range-ratio defaults to 0.0, so outputs are drawn from [0, output_len]; from 0.5.6.post2
// compute_random_lens draws them from [1, output_len], the inputs unchanged). Requests are sent in
// list order. A record's printed "Total input tokens" equal to the sum of the re-drawn input lengths
// is the evidence that the run drew from this stream; only then are they used. Its "Total
// generated tokens" says which output range it drew from (the cookbook's 0.5.6 / 0.5.6.post1 runs
// print the [0, O] sums, its 0.5.6.post2-0.5.9 runs the [1, O] ones: 4,210 and 4,220 for 10 prompts).
//
// The prompts themselves (sglang 0.5.3-0.5.9 bench_serving.py sample_random_requests, read
// 2026-12-04; not yet simulated): prompt i is the first input_lens[i] tokens of the i-th first human
// turn of ShareGPT_V3_unfiltered_cleaned_split.json after random.shuffle under random.seed(1),
// repeated when shorter. So across the runs one server sees (no /flush_cache by default, a warmup
// that sends the run's prompt 0):
//   - the first N1 prompts of a run with the same input_len and N2 > N1 prompts are identical, and
//     output length and concurrency do not change the prompts (the cookbook's 1,000 / 8,000 runs
//     resend prompts 0..N-1 of its 1,000 / 1,000 runs);
//   - prompt i of an 8,000-token run shares min(l_1000, l_8000) tokens with prompt i of a 1,000-token
//     run (the same turn), minus a few at the cut after re-tokenising.
// A radix cache kept from the runs before would turn much of a later run's prefill into cache hits
// (the measured first waves of the 64-user 8,000-token runs, docs/accuracy-sim.md "warm" / "burst").
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace vramplan::test {

//! numpy's legacy RandomState.randint(low, high) (high exclusive) for ranges below 2^32 as
//! np.random.seed(seed) then randint(..., size=n) draws them: MT19937 seeded by init_genrand (the
//! same as std::mt19937(seed)); each value one 32-bit output masked to the smallest all-ones mask
//! covering the range, redrawn until within it (numpy/random/src/distributions/distributions.c,
//! buffered_bounded_masked_uint32, the masked path RandomState uses).
class NumpyLegacyRandint {
 public:
  explicit NumpyLegacyRandint(std::uint32_t seed) : mt_(seed) {}
  std::vector<std::uint32_t> draw(std::uint32_t low, std::uint32_t high_exclusive, std::size_t n) {
    const std::uint32_t range = high_exclusive - 1 - low;
    std::uint32_t mask = range;
    for (int s = 1; s < 32; s *= 2) mask |= mask >> s;
    std::vector<std::uint32_t> out(n);
    for (auto& v : out) {
      std::uint32_t x;
      while ((x = static_cast<std::uint32_t>(mt_()) & mask) > range) {
      }
      v = low + x;
    }
    return out;
  }

 private:
  std::mt19937 mt_;
};

struct DrawnLengths {
  std::vector<std::uint32_t> input, output;
};

//! The lengths bench_serving's random dataset drew for n prompts of input_len / output_len with
//! range ratio 0 and seed 1; outputs from [output_low, output_len] (0 up to SGLang 0.5.6.post1, 1 from
//! 0.5.6.post2).
inline DrawnLengths bench_serving_random_lengths(std::uint32_t input_len, std::uint32_t output_len, std::size_t n,
                                                 std::uint32_t output_low = 0) {
  NumpyLegacyRandint rng(1);
  DrawnLengths d;
  d.input = rng.draw(1, input_len + 1, n);
  d.output = rng.draw(output_low, output_len + 1, n);
  return d;
}

inline std::uint64_t total(const std::vector<std::uint32_t>& v) {
  std::uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

}  // namespace vramplan::test
