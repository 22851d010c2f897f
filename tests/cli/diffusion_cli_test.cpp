// `plan` / `check` / `inspect` with a diffusion pipeline (planner/cli/diffusion_commands.cpp).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "exit_codes.hpp"
#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::cli {
namespace {

using test::run_cli;
using test::run_cli_json;

TEST(DiffusionCli, PlanReportsStagesAndTime) {
  const auto j = run_cli_json({"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--resolution", "1024x1024",
                               "--batch", "2", "--steps", "28"});
  EXPECT_EQ(j.at("schema"), "vramplan.diffusion_plan/1");
  EXPECT_EQ(j.at("run").at("denoiser_batch"), 2);
  EXPECT_EQ(j.at("peak_stage"), "decode (vae)");
  EXPECT_TRUE(j.at("fits").get<bool>());
  EXPECT_GT(j.at("performance").at("images_per_s").get<double>(), 0.0);
  const auto text = run_cli({"plan", "--model", "sdxl-base-1.0", "--gpu", "l4", "--offload", "model"});
  EXPECT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("denoise (unet)"), std::string::npos) << text.out;
}

TEST(DiffusionCli, JsonMatchesTheSchemas) {
  const auto plan_schema = nlohmann::json::parse(test::read_text(test::source_dir() / "docs/schemas/diffusion-plan.schema.json"));
  for (const char* model : {"sdxl-base-1.0", "flux.1-schnell", "sd-3.5-medium"}) {
    const auto j = run_cli_json({"plan", "--model", model, "--gpu", "a100-sxm-80", "--offload", "model"});
    EXPECT_EQ(test::schema_violations(j, plan_schema), std::vector<std::string>{}) << model;
  }
  // A custom GPU has no datasheet: the step time is null and a note says why.
  const auto custom = run_cli_json({"check", "--model", "flux.1-dev", "--gpu", "custom:80GiB"});
  EXPECT_EQ(test::schema_violations(custom, plan_schema), std::vector<std::string>{});
  EXPECT_TRUE(custom.at("performance").at("step_s").is_null());
  const auto inspect_schema = nlohmann::json::parse(test::read_text(test::source_dir() / "docs/schemas/pipeline.schema.json"));
  EXPECT_EQ(test::schema_violations(run_cli_json({"inspect", "sd-3.5-large"}), inspect_schema), std::vector<std::string>{});
}

TEST(DiffusionCli, CheckExitsOneWhenItDoesNotFit) {
  EXPECT_EQ(run_cli({"check", "--model", "flux.1-dev", "--gpu", "l4"}).exit_code, kExitDoesNotFit);
  EXPECT_EQ(run_cli({"check", "--model", "flux.1-dev", "--gpu", "l4", "--offload", "sequential"}).exit_code, kExitOk);
}

TEST(DiffusionCli, LlmFlagsAreRefusedNamingThoseThatApply) {
  const auto r = run_cli({"plan", "--model", "sdxl-base-1.0", "--gpu", "l4", "--max-model-len", "4096"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_NE(r.err.find("--max-model-len does not apply to a diffusion pipeline (sdxl-base-1.0: StableDiffusionXLPipeline)"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--resolution"), std::string::npos) << r.err;
  const auto kv = run_cli({"check", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--kv-cache-dtype", "fp8"});
  EXPECT_EQ(kv.exit_code, kExitUsage);
  const auto engine = run_cli({"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--engine", "vllm"});
  EXPECT_EQ(engine.exit_code, kExitUsage);
  EXPECT_NE(engine.err.find("diffusers"), std::string::npos) << engine.err;
}

TEST(DiffusionCli, InspectListsComponentsWithExactCounts) {
  const auto j = run_cli_json({"inspect", "sdxl-base-1.0"});
  EXPECT_EQ(j.at("schema"), "vramplan.pipeline/1");
  EXPECT_EQ(j.at("total_params"), 123'060'480ull + 694'659'840 + 2'567'463'684 + 83'653'863);
  const auto text = run_cli({"inspect", "--model", "flux.1-dev"});
  EXPECT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("11,901,408,320"), std::string::npos) << text.out;
}

TEST(DiffusionCli, UnsupportedPipelineDirectorySaysWhatIsSupported) {
  const auto dir = std::filesystem::temp_directory_path() / "vramplan_cli_kandinsky";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "model_index.json") << R"({"_class_name": "KandinskyV22Pipeline"})";
  const auto r = run_cli({"plan", "--model", dir.string(), "--gpu", "l4"});
  EXPECT_EQ(r.exit_code, kExitUnknownName);
  EXPECT_NE(r.err.find("supported pipelines: StableDiffusionXLPipeline"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vramplan::cli

namespace vramplan::cli {
namespace {

TEST(DiffusionCli, WanPipelinePlansWithFramesGuidanceAndOffload) {
  const auto plan_schema = nlohmann::json::parse(test::read_text(test::source_dir() / "docs/schemas/diffusion-plan.schema.json"));
  const auto j = run_cli_json({"plan", "--model", "wan2.1-t2v-1.3b", "--gpu", "rtx-4090", "--frames", "81",
                               "--resolution", "832x480", "--offload", "model", "--vae-tiling", "--guidance", "6"});
  EXPECT_EQ(test::schema_violations(j, plan_schema), std::vector<std::string>{});
  EXPECT_EQ(j.at("model").at("pipeline"), "WanPipeline");
  EXPECT_EQ(j.at("run").at("frames"), 81);
  EXPECT_EQ(j.at("run").at("latent_frames"), 21);      // (81 - 1) / 4 + 1
  EXPECT_EQ(j.at("run").at("denoiser_batch"), 1);      // CFG as two passes, not a doubled batch
  EXPECT_EQ(j.at("run").at("denoiser_passes"), 2);
  EXPECT_EQ(j.at("run").at("context_tokens"), 512);    // UMT5 max_sequence_length
  EXPECT_EQ(j.at("run").at("vae_dtype"), "fp32");
  // Model offload: the UMT5 stage (5,680,910,336 x 2 B of weights) is the peak.
  EXPECT_EQ(j.at("peak_stage"), "encode (text_encoder)");
  EXPECT_TRUE(j.at("fits").get<bool>());
  const auto text = run_cli({"plan", "--model", "wan2.1-t2v-1.3b", "--gpu", "h100-sxm-80"});
  EXPECT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("denoiser batch 1 x 2 passes per step"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("81 frames -> 21 latent frames"), std::string::npos) << text.out;
  // --frames must be 1 + a multiple of the VAE's scale_factor_temporal.
  EXPECT_EQ(run_cli({"plan", "--model", "wan2.1-t2v-1.3b", "--gpu", "h100-sxm-80", "--frames", "80"}).exit_code,
            kExitUsage);
  const auto inspect = run_cli_json({"inspect", "wan2.1-t2v-1.3b"});
  EXPECT_EQ(inspect.at("total_params"), 5'680'910'336ull + 1'418'996'800 + 126'892'531);
}

}  // namespace
}  // namespace vramplan::cli
