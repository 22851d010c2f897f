// Diffusion plan / check / sweep trust fixes (probe B items 1, 12-17, 21): malformed component
// configs refused with exit 3 naming the file and field, Gaudi refused, WIDTHxHEIGHT shown as
// typed, diffusers' own input checks (max_sequence_length, FLUX's floored sizes), --headroom and
// the MARGINAL verdict from the accuracy records' upper bound (data/diffusion.json).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "exit_codes.hpp"
#include "support/test_support.hpp"

namespace vramplan::cli {
namespace {

using test::run_cli;
using test::run_cli_json;

// A copy of a catalogue pipeline (without source.json) with one component's config edited.
std::string trust_pipeline_copy(const test::ScratchDir& dir, const std::string& model, const std::string& component,
                                const std::function<void(nlohmann::json&)>& edit) {
  const auto from = test::source_dir() / "models" / "diffusion" / model;
  const auto to = dir.path() / model;
  std::filesystem::create_directories(to);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  std::filesystem::remove(to / "source.json");
  const auto file = to / component / "config.json";
  auto c = nlohmann::json::parse(test::read_text(file));
  edit(c);
  std::ofstream(file) << c.dump(2);
  return to.string();
}

TEST(DiffusionTrust, EmptyVaeBlockOutChannelsIsRefusedNotACrash) {
  for (const char* model : {"sdxl-base-1.0", "flux.1-dev", "cogvideox-2b"}) {
    test::ScratchDir dir;
    const auto m = trust_pipeline_copy(dir, model, "vae", [](nlohmann::json& c) { c["block_out_channels"] = nlohmann::json::array(); });
    for (const auto& args : {std::vector<std::string>{"plan", "--model", m, "--gpu", "l4"},
                             std::vector<std::string>{"inspect", "--model", m}}) {
      const auto r = run_cli(args);
      EXPECT_EQ(r.exit_code, kExitInputFile) << model << " " << args[0] << ": " << r.err;
      EXPECT_NE(r.err.find("vae/config.json: /block_out_channels: expected a non-empty list of positive integers, got []"),
                std::string::npos) << r.err;
    }
  }
}

TEST(DiffusionTrust, GroupNormBlockListsAndSampleSizesAreChecked) {
  struct Case {
    const char* model;
    const char* component;
    const char* key;
    nlohmann::json value;
    const char* message;
  };
  const std::vector<Case> cases = {
      // torch.nn.GroupNorm: 128 % 7 != 0 raises; 0 groups is a ZeroDivisionError.
      {"sdxl-base-1.0", "vae", "norm_num_groups", 7,
       "vae/config.json: /norm_num_groups: 7 groups do not divide 128 channels (torch.nn.GroupNorm: num_channels must be divisible by num_groups)"},
      {"sdxl-base-1.0", "vae", "norm_num_groups", 0, "vae/config.json: /norm_num_groups: must be greater than zero"},
      {"sdxl-base-1.0", "unet", "norm_num_groups", 0, "unet/config.json: /norm_num_groups: must be greater than zero"},
      // SDXL's UNet channels 320, 640, 1280: 320 % 64 = 0, 320 % 100 = 20.
      {"sdxl-base-1.0", "unet", "norm_num_groups", 100, "unet/config.json: /norm_num_groups: 100 groups do not divide 320 channels"},
      {"cogvideox-2b", "vae", "norm_num_groups", 0, "vae/config.json: /norm_num_groups: must be greater than zero"},
      {"sdxl-base-1.0", "vae", "down_block_types", nlohmann::json::array(),
       "vae/config.json: /down_block_types: expected one block per block_out_channels entry"},
      {"sdxl-base-1.0", "vae", "sample_size", 0, "vae/config.json: /sample_size: must be greater than zero"},
      {"sdxl-base-1.0", "unet", "sample_size", 0, "unet/config.json: /sample_size: must be greater than zero"},
      // SD3: default height = sample_size x vae_scale_factor 8 = 0, not a multiple of 8 x patch 2.
      {"sd-3.5-medium", "transformer", "sample_size", 0,
       "transformer/config.json: /sample_size: x vae_scale_factor 8 gives the default resolution 0x0, not positive multiples of 16"},
  };
  for (const auto& c : cases) {
    test::ScratchDir dir;
    const auto m = trust_pipeline_copy(dir, c.model, c.component, [&](nlohmann::json& j) { j[c.key] = c.value; });
    const auto r = run_cli({"plan", "--model", m, "--gpu", "h100-sxm-80"});
    EXPECT_EQ(r.exit_code, kExitInputFile) << c.model << " " << c.key << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("--resolution"), std::string::npos) << r.err;  // no flag the user did not give
  }
  // A VAE tile smaller than 2 latent pixels has a stride of int(1 x 0.75) = 0: tiled_decode's
  // range() raises. sample_size 8 / vae_scale_factor 8 = 1.
  test::ScratchDir dir;
  const auto m = trust_pipeline_copy(dir, "sdxl-base-1.0", "vae", [](nlohmann::json& j) { j["sample_size"] = 8; });
  const auto r = run_cli({"plan", "--model", m, "--gpu", "h100-sxm-80", "--vae-tiling"});
  EXPECT_EQ(r.exit_code, kExitInputFile) << r.err;
  EXPECT_NE(r.err.find("/sample_size: 8 gives AutoencoderKL.tiled_decode latent tiles of 1 and a stride of 0"),
            std::string::npos) << r.err;
}

TEST(DiffusionTrust, GaudiIsRefusedByPlanAndCheckAsBySweep) {
  for (const char* cmd : {"plan", "check"}) {
    const auto r = run_cli({cmd, "--model", "sdxl-base-1.0", "--gpu", "gaudi2"});
    EXPECT_EQ(r.exit_code, kExitUsage) << cmd << ": " << r.out;
    EXPECT_NE(r.err.find("GPU 'gaudi2' is listed in the catalogue but cannot be planned"), std::string::npos) << r.err;
  }
}

TEST(DiffusionTrust, ResolutionIsShownAsWidthByHeight) {
  // CogVideoX-2b's default: sample_width 90 x 8 = 720 wide, sample_height 60 x 8 = 480 high.
  const auto text = run_cli({"plan", "--model", "cogvideox-2b", "--gpu", "h100-sxm-80"});
  ASSERT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("\n  720x480 (WxH), batch 1"), std::string::npos) << text.out;
  const auto j = run_cli_json({"plan", "--model", "cogvideox-2b", "--gpu", "h100-sxm-80"});
  EXPECT_EQ(j.at("run").at("width"), 720);
  EXPECT_EQ(j.at("run").at("height"), 480);
  // SD3 raises for sizes that are not multiples of 16 (1000 % 16 = 8): the error quotes what was typed.
  const auto r = run_cli({"plan", "--model", "sd-3.5-medium", "--gpu", "h100-sxm-80", "--resolution", "1024x1000"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_NE(r.err.find("--resolution 1024x1000: StableDiffusion3Pipeline needs height and width that are positive "
                       "multiples of 16"), std::string::npos) << r.err;
}

TEST(DiffusionTrust, MaxSequenceLengthAbove512IsRefusedWhereDiffusersRaises) {
  for (const char* model : {"flux.1-dev", "sd-3.5-large"}) {
    const auto r = run_cli({"plan", "--model", model, "--gpu", "h100-sxm-80", "--max-sequence-length", "513"});
    EXPECT_EQ(r.exit_code, kExitUsage) << model;
    EXPECT_NE(r.err.find("--max-sequence-length 513: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(".check_inputs raises \"`max_sequence_length` cannot be greater than 512\""), std::string::npos) << r.err;
    EXPECT_EQ(run_cli({"plan", "--model", model, "--gpu", "h100-sxm-80", "--max-sequence-length", "512"}).exit_code, kExitOk);
  }
  // WanPipeline has no such check: 1024 UMT5 tokens are planned.
  const auto wan = run_cli_json({"plan", "--model", "wan2.1-t2v-1.3b", "--gpu", "h100-sxm-80", "--max-sequence-length", "1024"});
  EXPECT_EQ(wan.at("run").at("context_tokens"), 1024);
}

TEST(DiffusionTrust, FluxFloorsSizesToMultiplesOf16AsPrepareLatentsDoes) {
  // 2 * (1000 // 16) = 124 latent pixels = 992 px; 1024 stays.
  const auto j = run_cli_json({"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--resolution", "1000x1024"});
  EXPECT_EQ(j.at("run").at("width"), 992);
  EXPECT_EQ(j.at("run").at("height"), 1024);
  bool noted = false;
  for (const auto& n : j.at("notes")) noted |= n.get<std::string>().find("floors it to 992x1024") != std::string::npos;
  EXPECT_TRUE(noted) << j.at("notes").dump();
  // 8 px floors to 0: refused.
  EXPECT_EQ(run_cli({"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--resolution", "8x1024"}).exit_code, kExitUsage);
}

TEST(DiffusionTrust, HeadroomIsTheShareOfTheCardKeptSpareInCheckAndSweep) {
  const auto j = run_cli_json({"check", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--headroom", "60%"}, kExitDoesNotFit);
  const auto total = j.at("gpu").at("reported_total_bytes").get<std::uint64_t>();
  // usable = total x (1 - 0.6), as the LLM check's margin = 0.6 x total of spare.
  EXPECT_EQ(j.at("capacity_bytes").get<std::uint64_t>(), static_cast<std::uint64_t>(static_cast<double>(total) * (1.0 - 0.6)));
  const auto sweep = run_cli_json({"sweep", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--headroom", "60%"});
  EXPECT_EQ(sweep.at("fitting"), 0);
  ASSERT_EQ(sweep.at("not_fitting").size(), 1u);
  const auto plain = run_cli_json({"sweep", "--model", "flux.1-dev", "--gpu", "h100-sxm-80"});
  EXPECT_EQ(plain.at("fitting"), 1);
}

TEST(DiffusionTrust, CheckIsMarginalWhereTheRecordsUpperBoundDoesNotFit) {
  // CogVideoX-5b, model offload + VAE tiling on a 16 GB card: the plan's peak (13.03 GiB allocated +
  // 0.5 context) fits 15.70 GiB; the cogvideo-readme record measured 20.70 GiB for this setup, so
  // the upper bound 13.03 x 1.589 + 0.5 = 21.2 GiB does not.
  const std::vector<std::string> args = {"check", "--model", "cogvideox-5b", "--gpu", "rtx-4080", "--offload", "model", "--vae-tiling"};
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, kExitMarginal) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("MARGINAL rtx-4080: needs ", 0), 0u) << r.out;
  auto with = [&](const char* flag) {
    auto a = args;
    a.push_back(flag);
    return run_cli(a).exit_code;
  };
  EXPECT_EQ(with("--accept-marginal"), kExitOk);
  EXPECT_EQ(with("--conservative"), kExitDoesNotFit);
  auto both = args;
  both.insert(both.end(), {"--conservative", "--accept-marginal"});
  EXPECT_EQ(run_cli(both).exit_code, kExitUsage);
  auto json_args = args;
  json_args.push_back("--json");
  const auto j = run_cli_json(json_args, kExitMarginal);
  EXPECT_EQ(j.at("verdict"), "MARGINAL");
  EXPECT_EQ(j.at("upper_bound").at("record"), "cogvideo-readme-5b-model-offload-tiling");
  const auto alloc = j.at("allocated_peak_bytes").get<std::uint64_t>(), ctx = j.at("cuda_context_bytes").get<std::uint64_t>();
  const double rel = j.at("upper_bound").at("relative").get<double>();
  EXPECT_EQ(j.at("upper_bound").at("required_bytes").get<std::uint64_t>(),
            static_cast<std::uint64_t>(std::ceil(static_cast<double>(alloc) * (1.0 + rel))) + ctx);

  // FLUX.1-dev on an H100: 33.56 GiB x 1.009 + 0.5 = 34.4 GiB of 79.19: FITS on both; the verdict is line 1.
  const auto flux = run_cli({"check", "--model", "flux.1-dev", "--gpu", "h100-sxm-80"});
  EXPECT_EQ(flux.exit_code, kExitOk);
  EXPECT_EQ(flux.out.rfind("FITS h100-sxm-80: needs ", 0), 0u) << flux.out;
  // A pipeline class without a record takes the largest margin of any.
  const auto wan = run_cli_json({"check", "--model", "wan2.1-t2v-1.3b", "--gpu", "h100-sxm-80"});
  EXPECT_NE(wan.at("upper_bound").at("basis").get<std::string>().find("no accuracy record of WanPipeline"), std::string::npos);

  // sweep --conservative leaves the MARGINAL point out; without it the row says MARGINAL.
  const std::vector<std::string> sweep = {"sweep", "--model", "cogvideox-5b", "--gpu", "rtx-4080", "--offload", "model", "--vae-tiling", "--json"};
  const auto s = run_cli_json(sweep);
  ASSERT_EQ(s.at("fitting"), 1);
  EXPECT_EQ(s.at("rows").at(0).at("note").get<std::string>().rfind("MARGINAL: ", 0), 0u);
  auto cons = sweep;
  cons.push_back("--conservative");
  EXPECT_EQ(run_cli_json(cons).at("fitting"), 0);
}

}  // namespace
}  // namespace vramplan::cli
