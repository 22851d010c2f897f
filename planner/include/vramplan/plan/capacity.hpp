// vramplan/plan/capacity.hpp — capacity answers on the serving simulator (docs/simulator.md,
// "Capacity answers"): the highest arrival rate one replica serves within latency targets, the
// replicas a target load needs and what they cost, and how long an offline batch job takes on
// K workers and which rental period covers it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vramplan/plan/prices.hpp"
#include "vramplan/plan/slo.hpp"
#include "vramplan/sim/simulate.hpp"

namespace vramplan::plan {

struct CapacityOptions {
  //! Requests simulated per probe. 3000 gives ~30 samples above the p99 and keeps the warm-up
  //! (the first requests see an empty engine) under a few percent of the run.
  std::uint64_t requests_per_probe = 3000;
  double precision = 0.02;  //!< stop when the bracket is narrower than this share of the rate
  sim::Router router = sim::Router::LeastOutstanding;  //!< in front of the replicas (--router)
};

//! --probe-requests within 100 (fewer and the p99 means nothing) .. 1,000,000 (a probe is one
//! run of that many requests, times the replicas); Error(Usage) naming the flag otherwise.
void check_probe_requests(std::uint64_t requests_per_probe);

//! "least-outstanding" / "round-robin" (--router); Error(Usage) otherwise.
sim::Router parse_router(const std::string& text);
std::string router_name(sim::Router router);

struct RateProbe {
  double rate_per_s = 0;
  bool met = false;
  bool overloaded = false;
  std::string binding;       //!< target nearest to / furthest past its limit
  double binding_ratio = 0;  //!< its value / limit
  double kv_usage_p99 = 0;
  double running_mean = 0;
};

struct MaxRateAnswer {
  bool found = false;           //!< some rate meets every target
  double rate_per_s = 0;        //!< the highest probed rate that met every target
  //! Completions per second of an offline run while requests still waited (its finishing tail
  //! left out; sim::Verdict::served_per_s), or its whole average when higher: where the search
  //! starts its bracket.
  double capacity_per_s = 0;
  //! What fails first above rate_per_s ("overloaded" or a target), always from a probe that
  //! failed; "" when no probe failed (every one up to the ceiling raised kRaises times met).
  std::string binding;
  std::vector<RateProbe> probes;  //!< in the order run
  sim::SimResult at_rate;       //!< the run at rate_per_s (or the lowest probe when none met)
  std::uint64_t requests_per_probe = 0;
  double offline_average_per_s = 0;  //!< the offline run's completions over its whole duration
};

//! Bisection on the arrival rate between a light load (5 % of the offline capacity) and that
//! capacity; a probe passes when the run is judged stable (not overloaded, nor inconclusive: too
//! short to tell) and meets every target. When every
//! probe passes, the capacity itself is probed and raised by a quarter while it passes (at most 4
//! times), so the answer is always bracketed by a probe that failed. `base` gives the arrival
//! process, lengths and seed (its rate and request count are replaced). Throws Error(Usage) for
//! a trace workload or no targets.
MaxRateAnswer find_max_rate(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base,
                            const std::vector<SloTarget>& targets, const CapacityOptions& options);

struct PeriodCost {
  std::string label;  //!< "7d"
  double usd = 0;
};

struct ReplicaAnswer {
  double target_rate_per_s = 0;
  std::uint64_t replicas = 0;
  std::uint64_t gpus = 0;                //!< replicas x GPUs per replica (tp x pp)
  std::string router;                    //!< "least-outstanding" or "round-robin"
  bool met = false;                      //!< false: even the largest count tried fails
  //! The replica furthest from (or past) the targets at the answer; every replica is simulated.
  sim::SimResult per_replica;
  std::optional<double> usd_per_hour;    //!< nullopt when the GPU has no price
  std::vector<PeriodCost> periods;
  //! The target rate x the output tokens a request asks for on average over every replica.
  std::optional<double> usd_per_million_output_tokens;
  std::string price_basis;
  std::uint64_t requests_simulated = 0;  //!< replicas x requests_per_probe, all replicas together
};

//! The most replicas a --target-rate answer simulates: K replicas are one run of K x
//! requests_per_probe requests, so the work grows with the count asked for.
inline constexpr std::uint64_t kMaxReplicas = 1000;

//! ceil(target / max rate): the fewest replicas that could serve `target_rate` (at least 1).
std::uint64_t replicas_at_least(double target_rate, const MaxRateAnswer& max_rate);

//! The fewest replicas that, behind options.router, all meet the targets at `target_rate`:
//! starting from ceil(target / max rate), removing one while the count below still meets them,
//! or adding one until they do (at most 4 either way). The K replicas are simulated together
//! (sim::simulate_replicas) on K x requests_per_probe requests. Error(Usage) when that start is
//! above kMaxReplicas.
ReplicaAnswer replicas_for(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base,
                           const std::vector<SloTarget>& targets, double target_rate, const MaxRateAnswer& max_rate,
                           const PriceBook& prices, const std::vector<RentalPeriod>& periods,
                           const CapacityOptions& options);

struct OfflineAnswer {
  std::uint64_t requests = 0, workers = 0;
  double makespan_s = 0;        //!< the slowest worker's time to finish its share
  double gpu_hours = 0;         //!< workers x GPUs per worker x makespan
  double output_tokens_per_s = 0;  //!< all workers together
  double margin_hours = 0;      //!< installation, checks and export on top of the makespan
  std::string period;           //!< the shortest rental period covering makespan + margin; "" if none
  std::optional<double> period_usd;
  std::string price_basis;
  std::uint64_t slowest_worker = 0;    //!< the worker whose share took the makespan (round-robin index)
  std::uint64_t slowest_requests = 0;  //!< its share of the requests
};

//! `base.requests` requests, all queued at t = 0, split round-robin over `workers` replicas;
//! each worker is simulated. Throws Error(Usage) without a request count, or with more workers
//! than requests or than kMaxReplicas.
OfflineAnswer offline_job(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base, std::uint64_t workers,
                          double margin_hours, const PriceBook& prices, const std::vector<RentalPeriod>& periods);

//! Worker `worker`'s share of that job (every `workers`-th request from the worker-th), simulated
//! on the engine's clock with `options` (a timeline, a timeout): the run `simulate --workers`
//! shows, the slowest worker's (OfflineAnswer::slowest_worker).
sim::SimResult offline_worker_run(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base, std::uint64_t workers,
                                  std::uint64_t worker, const sim::SimOptions& options);

}  // namespace vramplan::plan
