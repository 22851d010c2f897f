// The re-drawn bench_serving lengths (bench_serving_lengths.hpp) against numpy itself and against
// the totals the runs printed.
#include <gtest/gtest.h>

#include <tuple>

#include "accuracy/bench_serving_lengths.hpp"
#include "accuracy/serving_records.hpp"
#include "support/sanitizer.hpp"

namespace vramplan::test {
namespace {

// numpy 2.x: np.random.seed(1); np.random.randint(1, 1001, size=10) then
// np.random.randint(0, 1001, size=10) in the same stream.
TEST(BenchServingLengths, DrawsAsNumpyLegacyRandint) {
  NumpyLegacyRandint rng(1);
  EXPECT_EQ(rng.draw(1, 1001, 10), (std::vector<std::uint32_t>{38, 236, 909, 73, 768, 906, 716, 646, 848, 961}));
  EXPECT_EQ(rng.draw(0, 1001, 10), (std::vector<std::uint32_t>{144, 129, 972, 583, 749, 508, 390, 281, 178, 276}));
  // np.random.seed(1); np.random.randint(1, 1914, size=3): a range that is not a power of two less one.
  EXPECT_EQ(NumpyLegacyRandint(1).draw(1, 1914, 3), (std::vector<std::uint32_t>{1062, 236, 1097}));
}

// The printed totals of the SGLang cookbook's DeepSeek-R1 runs (serving_records.jsonl, "Total input
// tokens" / "Total generated tokens") are the sums of the re-drawn lengths, inputs and outputs.
TEST(BenchServingLengths, ReproducesPrintedTotals) {
  struct Case {
    std::uint32_t in, out;
    std::size_t n;
    std::uint64_t total_in, total_out;
  };
  for (const Case& c : {Case{1000, 1000, 10, 6101, 4210}, Case{1000, 1000, 80, 39668, 40725},
                        Case{1000, 1000, 500, 249831, 252162}, Case{1000, 8000, 320, 158939, 1300705},
                        Case{8000, 1000, 80, 300020, 41589}, Case{1913, 162, 960, 931890, 76078}}) {
    const DrawnLengths d = bench_serving_random_lengths(c.in, c.out, c.n);
    EXPECT_EQ(total(d.input), c.total_in) << c.in << "/" << c.out << " x " << c.n;
    EXPECT_EQ(total(d.output), c.total_out) << c.in << "/" << c.out << " x " << c.n;
  }
}

// From SGLang 0.5.6.post2 bench_serving draws outputs from [1, O] (compute_random_lens): the
// cookbook's 0.5.6.post2-0.5.9 runs print those totals, the input totals unchanged (Kimi-K2.5 on
// 0.5.6.post2: 6,101 input and 4,220 generated tokens over 10 prompts; 80 prompts 39,668 / 40,805).
TEST(BenchServingLengths, OutputsFromOneInLaterReleases) {
  for (auto [n, total_in, total_out] : {std::tuple{std::size_t{10}, 6101u, 4220u}, std::tuple{std::size_t{80}, 39668u, 40805u}}) {
    const DrawnLengths d = bench_serving_random_lengths(1000, 1000, n, 1);
    EXPECT_EQ(total(d.input), total_in) << n;
    EXPECT_EQ(total(d.output), total_out) << n;
  }
}

// Every bench_serving random-dataset record replays its own lengths but two, which keep the
// generated sample: the cookbook's Llama-4-Scout runs at 16 and 100 users print 49,668 and 249,841
// input tokens where the same commands' draw (and every other 80- and 500-prompt run of the
// cookbook) gives 39,668 and 249,831. A run printing one token fewer a prompt than the draw is
// replayed with the draw (serving_records.hpp bench_serving_trace: bench_serving takes the
// tokenizer's special tokens off each length and the server adds them back): MiniMax-M2.5's three
// 1,000 / 1,000-token runs (6,091 / 39,588 / 249,331 against 6,101 / 39,668 / 249,831; its
// 8,000-token runs match the draw exactly, which that rule does not explain) and Step-3.5-Flash's
// three (the same totals), kept as generated samples until 2026-12-06.
TEST(BenchServingLengths, UsedForEveryMatchingRecord) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();  // SimAccuracy.EveryRecordRunsToCompletion simulates the same records there
  std::size_t redrawn = 0, uniform = 0;
  for (const auto& c : serving_comparisons()) {
    if (c.workload.find("uniform") == std::string::npos) continue;
    ++uniform;
    if (c.workload.find("own lengths") != std::string::npos) ++redrawn;
    else EXPECT_TRUE(c.id == "sglcookbook-llama4-01" || c.id == "sglcookbook-llama4-02") << c.id;
  }
  // 93 until Kimi-K2.5's two MI350X runs joined (2026-12-04), 95 until GLM-5's two EAGLE runs
  // did (2026-12-05: 6,101 / 4,220 and 502,493 / 500,251 tokens printed, the draw from one), 97 / 92
  // until Nemotron-3-Super's run did (2026-12-06: 2,081,726 input tokens, as Nemotron-3-Nano's), 98 / 93
  // until Gemma 4's four did (2026-12-06: 6,101 / 4,220 and 512,842 / 510,855 tokens, the draw at 1,024),
  // 102 / 97 until Ministral-3's three did (2026-12-06: 6,101, 39,668 and 249,831 input tokens),
  // 105 / 100 until Kimi-Linear's three did (the same day, the same totals), 108 / 103 until
  // Step-3.5-Flash's three did and the one-token-short runs were replayed with the draw.
  EXPECT_EQ(uniform, 111u);
  EXPECT_EQ(redrawn, 109u);
}

}  // namespace
}  // namespace vramplan::test
