// `sweep --model <pipeline>` (plan/diffusion_sweep.cpp): GPUs x batches x memory modes planned
// with the diffusion plan, ranked by USD per 1000 images; misses say what they need; flags of the
// LLM sweep are refused naming those that apply.
#include <gtest/gtest.h>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

TEST(DiffusionSweepCli, RanksFittingGpusByTheCostOfAnImage) {
  ScratchDir dir;
  // $1/GPU-hour on the L40S, $3 on the H100: USD per 1000 images = price x seconds per image /
  // 3600 x 1000, with the seconds per image of `plan` for the same call (seconds per call / batch).
  const auto prices = dir.write("prices.json", R"({"schema":"vramplan.prices/1","prices":[
    {"gpu":"l40s","usd_per_gpu_hour":1.0,"as_of":"2026-12-02","source":"test quote"},
    {"gpu":"h100-sxm-80","usd_per_gpu_hour":3.0,"as_of":"2026-12-02","source":"test quote"}]})");
  const auto j = run_cli_json({"sweep", "--model", "sdxl-base-1.0", "--gpu", "l40s,h100-sxm-80,l4", "--batch", "1,4",
                               "--periods", "3d", "--prices", prices.string()});
  EXPECT_EQ(j["schema"], "vramplan.diffusion_sweep/1");
  EXPECT_EQ(j["evaluations"], 6);
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/diffusion-sweep.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
  const auto& rows = j["rows"];
  ASSERT_GE(rows.size(), 4u) << j.dump();
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (!rows[i]["usd_per_1000_images"].is_null()) {
      EXPECT_LE(rows[i - 1]["usd_per_1000_images"].get<double>(), rows[i]["usd_per_1000_images"].get<double>());
    }
  }
  for (const auto& row : rows) {
    if (row["gpu"] == "l4") continue;  // the catalogue's price, whatever it is today
    const auto plan = run_cli_json({"plan", "--model", "sdxl-base-1.0", "--gpu", row["gpu"].get<std::string>(), "--batch",
                                    std::to_string(row["batch"].get<int>())});
    const double per_image = plan["performance"]["seconds_per_call"].get<double>() / row["batch"].get<double>();
    const double usd = row["gpu"] == "l40s" ? 1.0 : 3.0;
    EXPECT_NEAR(row["seconds_per_image"].get<double>(), per_image, 1e-9);
    EXPECT_NEAR(row["usd_per_1000_images"].get<double>(), usd * per_image / 3600 * 1000, 1e-9);
    EXPECT_NEAR(row["cost_usd"][0].get<double>(), usd * 72, 1e-9);  // 3 days = 72 h x 1 GPU
  }
}

TEST(DiffusionSweepCli, MissesSayWhatTheyNeedAndOffloadFits) {
  // FLUX.1-dev (12 B transformer in bf16, ~33 GiB allocated) does not fit an L4 whole; sequential
  // offload keeps one leaf module per stage and fits (as `check` says, diffusion_cli_test.cpp).
  const auto j = run_cli_json({"sweep", "--model", "flux.1-dev", "--gpu", "l4", "--offload", "none,sequential"});
  ASSERT_EQ(j["not_fitting"].size(), 1u) << j.dump();
  EXPECT_EQ(j["not_fitting"][0]["offload"], "none");
  EXPECT_NE(j["not_fitting"][0]["why"].get<std::string>().find("needs"), std::string::npos);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["offload"], "sequential");
  EXPECT_NE(j["rows"][0]["note"].get<std::string>().find("lower bound"), std::string::npos);
}

TEST(DiffusionSweepCli, LlmSweepFlagsAreRefused) {
  const auto r = run_cli({"sweep", "--model", "sdxl-base-1.0", "--tp", "1,2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tp does not apply to a diffusion pipeline (sdxl-base-1.0: StableDiffusionXLPipeline)"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--offload"), std::string::npos) << r.err;
  const auto text = run_cli({"sweep", "--model", "sdxl-base-1.0", "--gpu", "l4,a10g"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("s/image"), std::string::npos) << text.out;
}

TEST(DiffusionSweepCli, ACommaSeparatedListRanksPipelinesTogether) {
  ScratchDir dir;
  const auto prices = dir.write("prices.json", R"({"schema":"vramplan.prices/1","prices":[
    {"gpu":"h100-sxm-80","usd_per_gpu_hour":3.0,"as_of":"2026-12-02","source":"test quote"}]})");
  const auto j = run_cli_json({"sweep", "--model", "sdxl-base-1.0,flux.1-schnell", "--gpu", "h100-sxm-80", "--batch",
                               "1,2", "--prices", prices.string()});
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/diffusion-sweep.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
  EXPECT_EQ(j["evaluations"], 4);  // 2 pipelines x 1 GPU x 2 batches
  EXPECT_EQ(j["pipeline"], "sdxl-base-1.0,flux.1-schnell");
  ASSERT_EQ(j["pipelines"].size(), 2u);
  EXPECT_EQ(j["pipelines"][0]["steps"], 50);  // each pipeline keeps its own defaults
  EXPECT_EQ(j["pipelines"][1]["steps"], 4);
  ASSERT_EQ(j["rows"].size(), 4u) << j.dump();
  // One ranking across both: each row is the plan of its own pipeline at $3 per GPU-hour.
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& row = j["rows"][i];
    if (i > 0) {
      EXPECT_LE(j["rows"][i - 1]["usd_per_1000_images"].get<double>(), row["usd_per_1000_images"].get<double>());
    }
    const auto plan = run_cli_json({"plan", "--model", row["pipeline"].get<std::string>(), "--gpu", "h100-sxm-80",
                                    "--batch", std::to_string(row["batch"].get<int>())});
    EXPECT_EQ(row["steps"], plan["run"]["steps"]) << row.dump();
    const double per_image = plan["performance"]["seconds_per_call"].get<double>() / row["batch"].get<double>();
    EXPECT_NEAR(row["usd_per_1000_images"].get<double>(), 3.0 * per_image / 3600 * 1000, 1e-9);
  }
  // The 4-step schnell makes the cheapest image.
  EXPECT_EQ(j["rows"][0]["pipeline"], "flux.1-schnell");
  const auto text = run_cli({"sweep", "--model", "sdxl-base-1.0,flux.1-schnell", "--gpu", "h100-sxm-80"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("pipeline"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2 pipelines, cheapest image first across them:\n  sdxl-base-1.0 (StableDiffusionXLPipeline), "
                          "1024x1024, 50 steps\n  flux.1-schnell (FluxPipeline), 1024x1024, 4 steps\n"),
            std::string::npos) << text.out;
}

TEST(DiffusionSweepCli, AListMixingPipelinesAndLlmsIsRefused) {
  const auto r = run_cli({"sweep", "--model", "sdxl-base-1.0,codellama-7b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--model mixes diffusion pipelines (sdxl-base-1.0) with LLMs (codellama-7b)"), std::string::npos)
      << r.err;
  const auto twice = run_cli({"sweep", "--model", "sdxl-base-1.0,sdxl-base-1.0", "--gpu", "l4"});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("names sdxl-base-1.0 twice"), std::string::npos) << twice.err;
}

}  // namespace
}  // namespace vramplan::test
