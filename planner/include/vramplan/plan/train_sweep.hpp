// vramplan/plan/train_sweep.hpp — `sweep --mode train`: training layouts (GPU x GPU count x
// sharding x recomputation) for one run, ranked by what the run costs (docs/training.md "Sweep").
//
// Each layout is a full train::plan_training() of the base request with the layout's GPU, count,
// sharding and recomputation (TP / PP / CP, micro-batch, sequence length and the rest stay as
// given). A layout that fits gets its step time from train_speed (train/train_speed.hpp), the run's
// hours for the request's tokens, and the cost of those hours: billed GPUs (the card's rental lots,
// plan/prices.hpp) x USD per GPU-hour x hours; plus the shortest rental period covering hours +
// margin (cover_hours, as `train` prints). Order: fitting layouts by run cost (unpriced ones after
// the priced, then the shorter run), then every layout that does not fit with its reason. The
// search space is bounded (kMaxTrainSweepLayouts): a larger one is refused, naming its size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/io/data_root.hpp"
#include "vramplan/plan/prices.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::plan {

//! Most layouts one train sweep plans (each a few milliseconds: a bound of seconds).
inline constexpr std::uint64_t kMaxTrainSweepLayouts = 4096;

struct RecomputeChoice {
  train::Recompute recompute = train::Recompute::None;
  bool selective_op = false;
  std::string label;  //!< none, selective, selective-op, full
};

struct TrainSweepRequest {
  train::TrainRequest base;  //!< model and setup; gpu, parallel.gpus, sharding, recompute per layout
  std::string gpus;          //!< comma list of GPU ids; "" = every plannable card of the catalogue
  std::vector<std::uint64_t> counts = {1, 2, 4, 8};
  std::vector<train::Sharding> shardings = {train::Sharding::None, train::Sharding::Zero3};
  std::vector<RecomputeChoice> recomputes = {{train::Recompute::None, false, "none"}, {train::Recompute::Full, false, "full"}};
  double run_tokens = 0;  //!< required (> 0)
  double margin_h = 24;
  std::vector<RentalPeriod> periods;
  std::optional<std::filesystem::path> prices_file;
};

struct TrainSweepRow {
  std::string gpu, sharding, recompute;
  std::uint64_t gpus = 1, billed_gpus = 1;
  Bytes peak_allocated, peak_reserved, capacity;
  std::optional<double> hours, tokens_per_s;  //!< nullopt: no dense tensor figure for this GPU
  std::optional<double> cost_usd;             //!< billed GPUs x $/GPU-hour x hours
  std::string rental_period;                  //!< shortest period covering hours + margin ("" = none)
  std::optional<double> rental_usd;
  std::string price_basis;
};

struct TrainSweepMiss {
  std::string gpu, sharding, recompute;
  std::uint64_t gpus = 1;
  std::string why;
};

struct TrainSweepResult {
  std::string model;
  std::vector<TrainSweepRow> rows;      //!< fitting, cheapest run first
  std::vector<TrainSweepMiss> misses;   //!< not fitting or refused, each with why
  std::uint64_t layouts = 0;            //!< planned (GPUs x counts x shardings x recomputes)
  std::vector<std::string> gpus;        //!< the GPU ids searched
};

TrainSweepResult run_train_sweep(const TrainSweepRequest& request, const DataRoot& root);

//! "none,full,selective-op" -> choices; Error(Usage) on an unknown name.
std::vector<RecomputeChoice> recompute_choices(const std::vector<std::string>& names);

//! The vramplan.train-sweep/1 document (docs/schemas/train-sweep.schema.json), first `top` rows.
nlohmann::json train_sweep_json(const TrainSweepRequest& request, const TrainSweepResult& result, std::size_t top);
//! The ranked table, the misses and the price bases.
std::string train_sweep_text(const TrainSweepRequest& request, const TrainSweepResult& result, std::size_t top);

}  // namespace vramplan::plan
