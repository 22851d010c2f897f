// vramplan/plan/slo_sweep.hpp — `vramplan sweep --rate R --slo ...`: layouts (GPU x TP x PP x
// weights) ranked by what it costs to serve R requests/s within latency targets. The static
// sweep (sweep.hpp) prunes first — a layout whose engine cannot start never reaches the
// simulator — then each remaining layout is simulated once (capacity.hpp: its max rate per
// replica and the replicas R needs) and priced.
#pragma once

#include <optional>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/plan/capacity.hpp"
#include "vramplan/plan/launch_command.hpp"
#include "vramplan/plan/sweep.hpp"

namespace vramplan::plan {

struct SloSweepRequest {
  SweepRequest sweep;          //!< models, weights, GPUs, TP / PP, context, engine and flags, prices
  double rate_per_s = 0;       //!< the load to serve
  std::vector<SloTarget> slo;
  sim::WorkloadSpec workload;  //!< arrival process and lengths (rate and count set per probe)
  CapacityOptions options;
  //! --spec-accept-length: with speculative decoding, the mean tokens a verify keeps.
  std::optional<double> spec_accept_length;
};

struct SloSweepRow {
  std::string model, weights, gpu;
  std::uint64_t tp = 1, pp = 1, replicas = 0, gpus = 0;
  double max_rate_per_replica = 0;
  std::string binding;                //!< what limits one replica's rate
  std::optional<sim::HeldLimit> queue_held_by;  //!< at that rate, the engine limit that held sent
                                               //!< requests waiting longest (none: none did)
  double p99_ttft_s = 0, p99_tpot_s = 0, kv_usage_p99 = 0;  //!< one replica at its share of the load
  std::vector<double> cost_usd;       //!< per period; empty = no price
  std::optional<double> usd_per_million_output_tokens;
  std::string price_basis;
  LaunchCommand launch;  //!< one replica's engine, as simulated
};

struct SloSweepMiss {
  std::string model, weights, gpu;
  std::uint64_t tp = 1, pp = 1;
  std::string why;  //!< "memory: ...", "SLO: ...", "overloaded at every replica count tried"
};

struct SloSweepResult {
  std::vector<SloSweepRow> rows;  //!< cheapest first (first period), then fewest GPUs
  std::vector<SloSweepMiss> misses;
  std::vector<RentalPeriod> periods;
  std::uint64_t simulated_layouts = 0;
};

//! `progress(done, total)` between layouts (may be empty).
SloSweepResult run_slo_sweep(const SloSweepRequest& request, const DataRoot& root,
                             const std::function<void(std::size_t, std::size_t)>& progress = {});

//! The vramplan.sweep-slo/1 document (docs/schemas/sweep-slo.schema.json) and the table; `top`
//! rows at most.
nlohmann::json slo_sweep_json(const SloSweepRequest& request, const SloSweepResult& result, std::size_t top);
//! The table for a terminal, or with `markdown` a quote: the load, the targets, the router, the
//! ranked layouts with replicas and costs, the command that starts the cheapest, and why the
//! others were rejected.
std::string slo_sweep_text(const SloSweepRequest& request, const SloSweepResult& result, std::size_t top,
                           bool markdown = false);

}  // namespace vramplan::plan
