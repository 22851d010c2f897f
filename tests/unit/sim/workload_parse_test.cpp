// Workload flags as typed on the command line: accepted forms, and one-line errors naming the
// flag (Error(Usage)) or the file and field (Error(InputFile)) for everything else.
#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::sim {
namespace {

std::string usage(const std::function<void()>& f) { return test::error_message(f, ErrorKind::Usage); }

TEST(WorkloadParse, Rates) {
  EXPECT_EQ(parse_rate("5", "--rate"), 5);
  EXPECT_EQ(parse_rate("0.5", "--rate"), 0.5);
  EXPECT_TRUE(std::isinf(parse_rate("inf", "--rate")));
  EXPECT_TRUE(std::isinf(parse_rate("Infinity", "--rate")));
  EXPECT_EQ(usage([] { parse_rate("0", "--rate"); }),
            "--rate: expected requests per second > 0 (e.g. 5, 0.5) or 'inf', got '0'");
  for (const char* bad : {"-1", "nan", "abc", "", "5x", "1e999"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(usage([&] { parse_rate(bad, "--rate"); }).starts_with("--rate: "));
  }
}

TEST(WorkloadParse, Arrivals) {
  EXPECT_EQ(parse_arrivals("poisson", "--arrivals").process, ArrivalProcess::Poisson);
  EXPECT_EQ(parse_arrivals("constant", "--arrivals").process, ArrivalProcess::Constant);
  const auto g = parse_arrivals("gamma:2.5", "--arrivals");
  EXPECT_EQ(g.process, ArrivalProcess::Gamma);
  EXPECT_EQ(g.cv, 2.5);
  EXPECT_EQ(usage([] { parse_arrivals("gamma:0", "--arrivals"); }),
            "--arrivals: gamma:CV needs a coefficient of variation in [0.001, 100] (below, use constant), got 'gamma:0'");
  // 1e-300 had passed (0, 100] and hung the sampler: 1 / CV^2 is infinite.
  usage([] { parse_arrivals("gamma:1e-300", "--arrivals"); });
  EXPECT_EQ(parse_arrivals("gamma:0.001", "--arrivals").cv, 0.001);
  EXPECT_EQ(usage([] { parse_arrivals("bursty", "--arrivals"); }),
            "--arrivals: expected poisson, gamma:CV (e.g. gamma:2) or constant, got 'bursty'");
  usage([] { parse_arrivals("gamma:", "--arrivals"); });
  usage([] { parse_arrivals("gamma:-1", "--arrivals"); });
}

TEST(WorkloadParse, Durations) {
  EXPECT_EQ(parse_duration("600", "--duration"), 600);
  EXPECT_EQ(parse_duration("600s", "--duration"), 600);
  EXPECT_EQ(parse_duration("10m", "--duration"), 600);
  EXPECT_EQ(parse_duration("2h", "--duration"), 7200);
  EXPECT_EQ(parse_duration("1.5d", "--duration"), 129600);  // 1.5 * 86400
  for (const char* bad : {"0", "-5m", "10x", "m", "", "inf"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(usage([&] { parse_duration(bad, "--duration"); }).starts_with("--duration: expected a duration"));
  }
}

TEST(WorkloadParse, LengthForms) {
  const auto f = parse_length("512", "--input-len", test::source_root());
  EXPECT_EQ(f.kind, LengthSpec::Kind::Fixed);
  EXPECT_EQ(f.fixed, 512u);
  EXPECT_EQ(f.source, "512");
  const auto u = parse_length("uniform:128..2048", "--input-len", test::source_root());
  EXPECT_EQ(u.kind, LengthSpec::Kind::Uniform);
  EXPECT_EQ(u.low, 128u);
  EXPECT_EQ(u.high, 2048u);
  const auto l = parse_length("lognormal:512,0.8", "--output-len", test::source_root());
  EXPECT_EQ(l.kind, LengthSpec::Kind::Lognormal);
  EXPECT_EQ(l.mean, 512);
  EXPECT_EQ(l.sigma, 0.8);
  EXPECT_EQ(parse_length("uniform:7..7", "--input-len", test::source_root()).expected(), 7);
}

TEST(WorkloadParse, BadLengthsNameTheFlag) {
  EXPECT_EQ(usage([] { parse_length("uniform:5..2", "--input-len", test::source_root()); }),
            "--input-len: uniform:LOW..HIGH needs LOW <= HIGH, got 'uniform:5..2'");
  EXPECT_EQ(usage([] { parse_length("lognormal:-1,0", "--output-len", test::source_root()); }),
            "--output-len: lognormal MEAN must be between 1 and 2147483648 tokens, got 'lognormal:-1,0'");
  EXPECT_EQ(usage([] { parse_length("0", "--input-len", test::source_root()); }),
            "--input-len: a fixed length must be at least 1 token, got '0'");
  EXPECT_EQ(usage([] { parse_length("4294967296", "--input-len", test::source_root()); }),
            "--input-len: a fixed length must be at most 2147483648 tokens, got '4294967296'");
  EXPECT_EQ(usage([] { parse_length("lots", "--input-len", test::source_root()); }),
            "--input-len: expected a token count (512), uniform:LOW..HIGH, lognormal:MEAN,SIGMA, hist:FILE, "
            "sharegpt, sharegpt-sglang or sharegpt-multiturn, got 'lots'");
  for (const char* bad : {"-5", "5.5", "uniform:0..5", "uniform:1-5", "lognormal:512", "lognormal:512,-1",
                          "lognormal:512,11", "hist:", "sharegpt-vllm", "sharegpt:prompt", "sharegpt-sglang:"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(usage([&] { parse_length(bad, "--input-len", test::source_root()); }).starts_with("--input-len: "));
  }
}

TEST(WorkloadParse, SharegptHalvesFollowTheFlag) {
  const auto in = parse_length("sharegpt", "--input-len", test::source_root());
  const auto out = parse_length("sharegpt", "--output-len", test::source_root());
  EXPECT_EQ(in.kind, LengthSpec::Kind::Histogram);
  EXPECT_EQ(in.source, "sharegpt input lengths (data/workloads/sharegpt.json)");
  EXPECT_EQ(out.source, "sharegpt output lengths (data/workloads/sharegpt.json)");
  EXPECT_NE(in.expected(), out.expected());
  EXPECT_EQ(parse_length("sharegpt:output", "--input-len", test::source_root()).expected(), out.expected());
  const auto sgl = parse_length("SHAREGPT-SGLANG:output", "--input-len", test::source_root());
  EXPECT_EQ(sgl.source, "sharegpt-sglang output lengths (data/workloads/sharegpt-sglang.json)");
  EXPECT_EQ(parse_length("sharegpt-multiturn", "--input-len", test::source_root()).source,
            "sharegpt-multiturn input lengths (data/workloads/sharegpt-multiturn.json)");
}

TEST(WorkloadParse, HistogramFilesJsonAndCsv) {
  test::ScratchDir dir;
  const auto json = dir.write("h.json", R"({"note": "any", "upper_edges": [10, 20], "weights": [1, 3]})");
  const auto h = parse_length("hist:" + json.string(), "--input-len", test::source_root());
  EXPECT_EQ(h.kind, LengthSpec::Kind::Histogram);
  EXPECT_EQ(h.expected(), 13);  // (1 * 5.5 + 3 * 15.5) / 4
  EXPECT_EQ(h.source, "hist:" + json.string());
  const auto csv = dir.write("h.csv", "upper_edge,weight\n10,1\n20, 3\n");
  EXPECT_EQ(parse_length("hist:" + csv.string(), "--input-len", test::source_root()).expected(), 13);
}

std::string input_error(const std::filesystem::path& file) {
  return test::error_message([&] { read_length_histogram(file); }, ErrorKind::InputFile);
}

TEST(WorkloadParse, BadHistogramFilesNameFileAndField) {
  test::ScratchDir dir;
  const std::string d = dir.path().string();
  EXPECT_EQ(input_error(dir.write("a.json", R"({"upper_edges": [10, 10], "weights": [1, 1]})")),
            d + "/a.json: /upper_edges/1: upper edges must increase (previous 10)");
  EXPECT_EQ(input_error(dir.write("b.json", R"({"upper_edges": [10], "weights": [1, 2]})")),
            d + "/b.json: /weights: 2 weights for 1 upper edges");
  EXPECT_EQ(input_error(dir.write("c.json", R"({"upper_edges": [10], "weights": [-1]})")),
            d + "/c.json: /weights/0: a weight must be a finite number >= 0");
  EXPECT_EQ(input_error(dir.write("d.json", R"({"upper_edges": [10, 20], "weights": [0, 0]})")),
            d + "/d.json: /weights: the weights must not all be zero");
  EXPECT_EQ(input_error(dir.write("e.json", R"({"weights": [1]})")),
            d + "/e.json: /upper_edges: required field is missing");
  EXPECT_EQ(input_error(dir.write("f.csv", "edge,weight\n10,1\n")),
            d + "/f.csv:1: header: expected the header 'upper_edge,weight', got 'edge,weight'");
  EXPECT_EQ(input_error(dir.write("g.csv", "upper_edge,weight\n10,1\nx,2\n")),
            d + "/g.csv:3: upper_edge: expected an integer in 1..2147483648, got 'x'");
  EXPECT_EQ(input_error(dir.write("h.csv", "upper_edge,weight\n10,abc\n")),
            d + "/h.csv:2: weight: expected a number >= 0, got 'abc'");
  input_error(dir.write("i.json", "{not json"));
  test::error_message([&] { read_length_histogram(dir.path() / "missing.json"); }, ErrorKind::Io);
  test::error_message([&] { read_length_histogram(dir.path() / "missing.csv"); }, ErrorKind::Io);
}

TEST(WorkloadParse, HistogramBinCountIsCapped) {
  test::ScratchDir dir;
  std::string csv = "upper_edge,weight\n";
  for (std::size_t i = 1; i <= kMaxHistogramBins + 1; ++i) csv += std::to_string(i) + ",1\n";
  EXPECT_EQ(input_error(dir.write("big.csv", csv)),
            (dir.path() / "big.csv").string() + ":100002: more than 100000 bins");  // header is line 1
}

}  // namespace
}  // namespace vramplan::sim
