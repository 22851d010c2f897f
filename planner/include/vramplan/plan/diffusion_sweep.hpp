// vramplan/plan/diffusion_sweep.hpp — `vramplan sweep` for diffusion pipelines: every pipeline of
// the --model list x GPU (or the --gpu list) x batch x memory mode planned with diffusion::plan_diffusion (one call of the
// pipeline at one resolution), the fitting points ranked by USD per 1000 images (the GPU's hourly
// price / images per hour; plan/prices.hpp), then by seconds per image; each with the cost of
// renting the GPU for --periods (billed in the card's lots).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/core/bytes.hpp"
#include "vramplan/diffusion/diffusion_plan.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/plan/prices.hpp"

namespace vramplan::plan {

struct DiffusionSweepRequest {
  diffusion::DiffusionRequest base;          //!< model, resolution, steps, dtype, ...; gpu / batch / offload swept
  std::vector<std::string> models;           //!< pipelines swept (catalogue ids / directories); empty = base.model
  std::string gpus;                          //!< comma-separated ids; "" = every plannable card
  bool include_mig = false;                  //!< without gpus: MIG slices too
  std::vector<std::uint64_t> batches = {1};
  std::vector<diffusion::OffloadMode> offloads = {diffusion::OffloadMode{}};
  std::vector<RentalPeriod> periods;
  std::optional<std::filesystem::path> prices_file;
  bool conservative{};                       //!< MARGINAL points (expected peak fits, upper bound not) left out
};

struct DiffusionSweepRow {
  std::string pipeline;
  std::uint64_t steps = 0;
  std::string gpu;
  std::uint64_t batch = 1;
  diffusion::Offload offload = diffusion::Offload::None;
  std::string offload_text = "none";         //!< the mode as --offload spells it ("group:leaf+stream")
  std::string weights;                       //!< the denoiser's format ("bf16", "nf4 linear + bf16", ...)
  Bytes required, capacity;                  //!< allocated peak + CUDA context; the card's usable memory
  double spare_fraction = 0;
  std::optional<double> seconds_per_image;   //!< seconds per call / batch (expected)
  std::optional<double> images_per_s;
  std::optional<double> usd_per_1000_images;
  std::vector<double> cost_usd;              //!< per period; empty = no price
  std::uint64_t billed_gpus = 1;
  std::string price_basis;
  std::string note;                          //!< e.g. sequential offload's time is a lower bound
};

struct DiffusionSweepMiss {
  std::string pipeline;
  std::string gpu;
  std::uint64_t batch = 1;
  diffusion::Offload offload = diffusion::Offload::None;
  std::string offload_text = "none";
  std::string why;
};

//! One swept pipeline as planned (its defaults may differ: SDXL 50 steps, FLUX 28).
struct DiffusionSweepPipeline {
  std::string id, class_name;
  std::uint64_t width = 0, height = 0, steps = 0;
};

struct DiffusionSweepResult {
  std::string pipeline, class_name;          //!< the pipelines' ids / classes, comma-joined
  std::uint64_t width = 0, height = 0, steps = 0;  //!< the first pipeline's
  std::vector<DiffusionSweepPipeline> pipelines;
  std::vector<RentalPeriod> periods;
  std::size_t evaluations = 0;
  std::vector<DiffusionSweepRow> rows;       //!< cheapest per 1000 images first, unpriced last
  std::vector<DiffusionSweepMiss> misses;
};

DiffusionSweepResult run_diffusion_sweep(const DiffusionSweepRequest& request, const DataRoot& root);
nlohmann::json diffusion_sweep_json(const DiffusionSweepResult& result, std::size_t top);
std::string diffusion_sweep_text(const DiffusionSweepResult& result, std::size_t top);

}  // namespace vramplan::plan
