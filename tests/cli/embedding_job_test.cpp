// `vramplan plan --documents N --input-len DIST` on a pooling model (plan/embedding_job.cpp):
// duration, GPU-hours, rental period and cost of an offline embedding job, hand-computed; the
// embeddings kept on the GPU under hf; the flags refused where they do not apply.
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// bge-large-en-v1.5 under TEI (fp16) on an L4, every document 512 tokens:
// FLOPs per input = 512 x (2 x P_layers 302,309,376 + 4 x 512 x 1024 x 24 layers)
//                 = 512 x 654,950,400 = 335,334,604,800;
// L4 dense fp16 125.34 TFLOPS (data/gpus.json) x tensor efficiency 0.65 (data/perf_defaults.json,
// no L4 calibration) = 81.471 TFLOPS -> 242.954 inputs/s; 10,000,000 documents -> 41,160.0 s =
// 11.4333 h = 11.4333 GPU-hours; + 24 h margin = 35.43 h -> the 3d period (72 h): at $0.80 per
// GPU-hour 72 x 0.80 = $57.60; the GPU-hours alone 11.4333 x 0.80 = $9.1467.
TEST(EmbeddingJobCli, FixedLengthJobOnAnL4) {
  ScratchDir dir;
  const auto prices = dir.write("prices.json", R"({"schema":"vramplan.prices/1","prices":[
    {"gpu":"l4","usd_per_gpu_hour":0.80,"as_of":"2026-12-02","source":"test quote"}]})");
  const auto j = run_cli_json({"plan", "--model", "bge-large-en-v1.5", "--gpu", "l4", "--engine", "tei", "--documents",
                               "10000000", "--input-len", "512", "--prices", prices.string()});
  ASSERT_TRUE(j.contains("embedding_job")) << j.dump();
  const auto& job = j["embedding_job"];
  EXPECT_DOUBLE_EQ(job["flops_per_input"].get<double>(), 335'334'604'800.0);
  EXPECT_NEAR(job["inputs_per_s"]["expected"].get<double>(), 242.954, 0.001);
  EXPECT_NEAR(job["duration_s"]["expected"].get<double>(), 41'160.0, 0.5);
  EXPECT_NEAR(job["gpu_hours"].get<double>(), 11.4333, 1e-4);
  EXPECT_EQ(job["rental_period"], "3d");
  EXPECT_NEAR(job["rental_usd"].get<double>(), 57.60, 1e-9);
  EXPECT_NEAR(job["gpu_hours_usd"].get<double>(), 9.1467, 1e-4);
  EXPECT_EQ(job["truncated_share"].get<double>(), 0.0);
  // The slow / fast ends use tensor efficiencies 0.5 / 0.8: 186.888 and 299.021 inputs/s.
  EXPECT_NEAR(job["inputs_per_s"]["low"].get<double>(), 186.888, 0.001);
  EXPECT_NEAR(job["inputs_per_s"]["high"].get<double>(), 299.021, 0.001);
}

TEST(EmbeddingJobCli, LengthsAboveTheInputLengthAreTruncated) {
  // uniform:257..768 against TEI's 512-token input length: half the draws (513..768) are cut to
  // 512; the mean of the truncated draws is 0.5 x (257+512)/2 + 0.5 x 512 = 448.25 tokens
  // (sampling error of 100,000 draws well under 1 token).
  const auto j = run_cli_json({"plan", "--model", "bge-large-en-v1.5", "--gpu", "l4", "--engine", "tei", "--documents",
                               "1000000", "--input-len", "uniform:257..768"});
  const auto& job = j["embedding_job"];
  EXPECT_EQ(job["samples"], 100000);
  EXPECT_NEAR(job["truncated_share"].get<double>(), 0.5, 0.01);
  EXPECT_NEAR(job["mean_tokens"].get<double>(), 448.25, 1.0);
  EXPECT_EQ(job["max_input_tokens"], 512);
}

TEST(EmbeddingJobCli, KeptEmbeddingsAreCountedUnderHf) {
  // bge-large-en-v1.5 under hf (fp32), batch 32 x 512: one batch's forward 603,979,776 (MLP) +
  // 131,072 (pooled) = 604,110,848 B, plus the caching allocator's replay, which stays (a plan that
  // keeps embeddings never plans less than the plain one). 100,000 embeddings x 1024 x 4 B =
  // 409,600,000 B are kept beside it; 1,000,000 (4,096,000,000 B) exceed the forward and the
  // replay, whose place the torch.stack copy takes at the end: 2 x 4,096,000,000 B.
  const auto plain = run_cli_json({"plan", "--model", "bge-large-en-v1.5", "--gpu", "h100-sxm-80", "--engine", "hf"});
  const auto small = run_cli_json({"plan", "--model", "bge-large-en-v1.5", "--gpu", "h100-sxm-80", "--engine", "hf",
                                   "--documents", "100000", "--keep-embeddings-on-gpu"});
  EXPECT_GT(plain["per_gpu"]["activation_bytes"].get<std::uint64_t>(), 604'110'848ull);  // the replay on top
  EXPECT_EQ(small["per_gpu"]["activation_bytes"].get<std::uint64_t>(),
            plain["per_gpu"]["activation_bytes"].get<std::uint64_t>() + 409'600'000ull)
      << small["per_gpu"].dump();
  const auto big = run_cli_json({"plan", "--model", "bge-large-en-v1.5", "--gpu", "h100-sxm-80", "--engine", "hf",
                                 "--documents", "1000000", "--keep-embeddings-on-gpu"});
  EXPECT_EQ(big["per_gpu"]["activation_bytes"], 2ull * 4'096'000'000ull);
}

TEST(EmbeddingJobCli, FlagsThatDoNotApplyAreRefused) {
  const auto gen = run_cli({"plan", "--model", "qwen3-8b", "--gpu", "h100-sxm-80", "--documents", "1000"});
  EXPECT_EQ(gen.exit_code, 2);
  EXPECT_NE(gen.err.find("not a pooling plan"), std::string::npos) << gen.err;
  const auto keep = run_cli({"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--documents", "1000",
                             "--keep-embeddings-on-gpu"});
  EXPECT_EQ(keep.exit_code, 2);
  EXPECT_NE(keep.err.find("--keep-embeddings-on-gpu applies to --engine hf"), std::string::npos) << keep.err;
  const auto len = run_cli({"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--input-len", "512"});
  EXPECT_EQ(len.exit_code, 2);
  EXPECT_NE(len.err.find("give --documents N"), std::string::npos) << len.err;
}

TEST(EmbeddingJobCli, Qwen3EmbeddingIsAPoolingModelUnderHf) {
  // The pooling view: no lm_head (7,567,295,488 parameters x 2 B bf16), inputs/s, no decode.
  const auto j = run_cli_json({"plan", "--model", "qwen3-embedding-8b", "--gpu", "h100-sxm-80", "--engine", "hf",
                               "--documents", "1000", "--input-len", "512"});
  EXPECT_EQ(j["engine_view"]["runner"], "pooling");
  EXPECT_EQ(j["per_gpu"]["weights_bytes"], 7'567'295'488ull * 2);
  EXPECT_GT(j["embedding_job"]["inputs_per_s"]["expected"].get<double>(), 0.0);
}

}  // namespace
}  // namespace vramplan::test
