// vramplan/sim/simulate.hpp — `vramplan simulate` as a library call: plan the engine (the KV
// pool, non-KV memory and limits come from run_serving_plan, never recomputed), build its
// scheduler rules, time steps with the performance model, replay the workload, and render the
// vramplan.simulate/1 document (docs/schemas/simulate.schema.json) or the table.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/sim/serving_plan.hpp"
#include "vramplan/sim/scheduler_rules.hpp"
#include "vramplan/sim/simulator.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::sim {

struct SimulateRequest {
  memory::PlanRequest plan;  //!< model, GPU, engine and its flags, weights, calibration
  WorkloadSpec workload;
  SimOptions options;        //!< timeout, timeline sink, progress
};

//! One engine replica ready to replay workloads: its plan, scheduler rules and step clock.
//! Capacity searches prepare once and run many workloads on it.
struct PreparedEngine {
  ServingPlan plan;
  SchedulerRules rules;
  perf::PerfModelShape shape;
  perf::HardwareRates rates;  //!< the expected rates (calibrated when a calibration applies)
  std::string step_basis;     //!< where the step times come from
  bool calibrated = false;
  //! perf::mixed_step_seconds over `shape` and `rates`; valid while this object lives.
  StepClock clock() const;
};

//! Throws Error(DoesNotFit) when the engine would not start (the plan's reason) and
//! Error(Usage) when the engine or GPU has no step-time model.
PreparedEngine prepare_engine(const memory::PlanRequest& plan, const DataRoot& root);

struct SimulateOutcome {
  PreparedEngine engine;
  WorkloadSpec workload;
  double timeout_s = 0;
  SimResult result;
};

//! prepare_engine, then the workload through simulate(); throws what either throws and what
//! the workload source throws.
SimulateOutcome run_simulation(const SimulateRequest& request, const DataRoot& root);

nlohmann::json simulate_json(const SimulateOutcome& outcome);
std::string simulate_text(const SimulateOutcome& outcome);

}  // namespace vramplan::sim
