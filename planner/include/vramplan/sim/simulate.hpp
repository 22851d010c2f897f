// vramplan/sim/simulate.hpp — `vramplan simulate` as a library call: plan the engine (the KV
// pool, non-KV memory and limits come from run_serving_plan, never recomputed), build its
// scheduler rules, time steps with the performance model, replay the workload, and render the
// vramplan.simulate/1 document (docs/schemas/simulate.schema.json) or the table.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/sim/cold_start.hpp"
#include "vramplan/sim/serving_plan.hpp"
#include "vramplan/sim/scheduler_rules.hpp"
#include "vramplan/sim/simulator.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::sim {

//! `--cold-start`: the server has just started, and a step whose forward launches a kernel
//! variant not compiled yet stalls for the compile (cold_start.hpp; vLLM only).
struct ColdStartRequest {
  bool enabled = false;
  std::optional<double> compile_s;        //!< one first use; unset: data/cold_start.json
  std::set<FusedMoeVariant> compiled;     //!< compiled by earlier runs on the same server
};

struct SimulateRequest {
  memory::PlanRequest plan;  //!< model, GPU, engine and its flags, weights, calibration
  WorkloadSpec workload;
  SimOptions options;        //!< timeout, timeline sink, progress
  ColdStartRequest cold_start;
};

//! One engine replica ready to replay workloads: its plan, scheduler rules and step clock.
//! Capacity searches prepare once and run many workloads on it.
struct PreparedEngine {
  ServingPlan plan;
  SchedulerRules rules;
  perf::PerfModelShape shape;
  //! Speculative decoding: the draft's shape (PlanPerformance::draft_shape); the clock then
  //! times every step as a whole iteration (perf::speculative_step_seconds).
  std::optional<perf::PerfModelShape> draft;
  perf::HardwareRates rates;  //!< the expected rates (calibrated when a calibration applies)
  std::string step_basis;     //!< where the step times come from
  bool calibrated = false;
  //! SGLang DP attention or vLLM data parallelism: the server's ranks (1 = a plain engine), which
  //! step in lockstep (lockstep_clock) and are simulated by simulate_dp_attention.
  std::uint64_t dp_ranks() const { return rules.dp_ranks; }
  //! perf::mixed_step_seconds over `shape` and `rates` (with a draft, speculative_step_seconds);
  //! valid while this object lives.
  StepClock clock() const;
  //! perf::lockstep_step_seconds (SGLang DP attention or vLLM data parallelism; with a draft,
  //! speculative_lockstep_step_seconds) over `shape` and `rates`; valid while this object lives.
  LockstepClock lockstep_clock() const;
};

//! A workload through `engine`: simulate() with `clock` (normally engine.clock()), or for a
//! DP-attention server simulate_dp_attention() with its lockstep clock.
SimResult simulate_on(const PreparedEngine& engine, const StepClock& clock, RequestSource& source,
                      const SimOptions& options);

//! Throws Error(DoesNotFit) when the engine would not start (the plan's reason) and
//! Error(Usage) when the engine or GPU has no step-time model.
PreparedEngine prepare_engine(const memory::PlanRequest& plan, const DataRoot& root);

//! The refusal of --spec-accept-length on a plan without speculative decoding.
inline constexpr const char* kAcceptLengthWithoutSpeculation =
    "--spec-accept-length: the plan runs no speculative decoding (give the engine's speculative flags)";

struct SimulateOutcome {
  PreparedEngine engine;
  WorkloadSpec workload;
  double timeout_s = 0;
  SimResult result;
  std::optional<ColdStartState> cold;  //!< with --cold-start: what the server compiled, stalls paid
};

//! The step clock of one run: `engine.clock()`, or with `request.cold_start` enabled that clock
//! plus the first-use stalls of the returned state (which the run updates). Error(Usage) for
//! --cold-start on an engine other than vLLM.
std::pair<StepClock, std::shared_ptr<ColdStartState>> step_clock_for(const PreparedEngine& engine,
                                                                     const SimulateRequest& request,
                                                                     const DataRoot& root);

//! `options` with what the workload sets on the client: its concurrency limit, and with one, its
//! --duration as the time after which no request is sent.
SimOptions client_options(const WorkloadSpec& workload, SimOptions options);

//! prepare_engine, then the workload through simulate(); throws what either throws and what
//! the workload source throws.
SimulateOutcome run_simulation(const SimulateRequest& request, const DataRoot& root);

nlohmann::json simulate_json(const SimulateOutcome& outcome);
//! A held-back limit as JSON: its key (kHeldLimitKeys), null for none.
nlohmann::json held_limit_json(const std::optional<HeldLimit>& limit);
std::string simulate_text(const SimulateOutcome& outcome);

}  // namespace vramplan::sim
