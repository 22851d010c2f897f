// `--offload group:...` (diffusers group offloading) through plan / check / sweep, and its refusal
// where it does not apply.
#include <gtest/gtest.h>

#include "exit_codes.hpp"
#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::cli {
namespace {

using test::run_cli;
using test::run_cli_json;

TEST(DiffusionGroupOffloadCli, PlanJsonNamesTheModeAndMatchesTheSchema) {
  const auto schema = nlohmann::json::parse(test::read_text(test::source_dir() / "docs/schemas/diffusion-plan.schema.json"));
  const auto j = run_cli_json({"plan", "--model", "cogvideox-5b", "--gpu", "rtx-4090", "--offload",
                               "group:leaf+stream/text_encoder=block:2/vae=leaf"});
  EXPECT_EQ(test::schema_violations(j, schema), std::vector<std::string>{});
  EXPECT_EQ(j.at("run").at("offload"), "group:leaf+stream/text_encoder=block:2/vae=leaf");
  bool named = false;
  for (const auto& s : j.at("stages"))
    named = named || s.at("detail").get<std::string>().find("group leaf+stream") != std::string::npos;
  EXPECT_TRUE(named) << j.at("stages").dump();
  // FLUX.1-dev does not fit a 24 GB card all on the GPU; one block at a time with a stream does.
  EXPECT_EQ(run_cli({"check", "--model", "flux.1-dev", "--gpu", "rtx-4090"}).exit_code, kExitDoesNotFit);
  const auto fits = run_cli({"check", "--model", "flux.1-dev", "--gpu", "rtx-4090", "--offload", "group:block:1+stream"});
  EXPECT_EQ(fits.exit_code, kExitOk) << fits.err;
}

TEST(DiffusionGroupOffloadCli, SweepTakesGroupModesInItsList) {
  const auto schema = nlohmann::json::parse(test::read_text(test::source_dir() / "docs/schemas/diffusion-sweep.schema.json"));
  const auto j = run_cli_json({"sweep", "--model", "sdxl-base-1.0", "--gpu", "l4", "--offload", "model,group:block:1"});
  EXPECT_EQ(test::schema_violations(j, schema), std::vector<std::string>{});
  EXPECT_NE(j.dump().find("\"group:block:1\""), std::string::npos);
}

TEST(DiffusionGroupOffloadCli, BadValuesAndOtherModelsAreRefusedInOneLine) {
  for (const char* bad : {"group:block:0", "group:leaf+record", "group:tiles", "group:leaf/unet=leaf"}) {
    const auto r = run_cli({"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--offload", bad});
    EXPECT_EQ(r.exit_code, kExitUsage) << bad;
    EXPECT_NE(r.err.find("--offload"), std::string::npos) << r.err;
  }
  // An LLM: --offload is a diffusion (and train) flag, refused by `plan` for a decoder model.
  const auto llm = run_cli({"plan", "--model", "qwen2.5-7b-instruct", "--gpu", "h100-sxm-80", "--offload", "group:leaf"});
  EXPECT_EQ(llm.exit_code, kExitUsage) << llm.out;
  EXPECT_NE(llm.err.find("offload"), std::string::npos) << llm.err;
}

}  // namespace
}  // namespace vramplan::cli
