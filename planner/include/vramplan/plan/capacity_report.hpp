// vramplan/plan/capacity_report.hpp — everything `vramplan simulate` answers in one call: the
// run itself, the latency targets checked on it, and on request the capacity answers
// (capacity.hpp), rendered as the vramplan.simulate/1 document (docs/schemas/simulate.schema.json)
// or the table.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/io/data_root.hpp"
#include "vramplan/plan/capacity.hpp"
#include "vramplan/plan/launch_command.hpp"
#include "vramplan/plan/slo.hpp"

namespace vramplan::plan {

struct SimulateQuestions {
  sim::SimulateRequest request;
  std::vector<SloTarget> slo;                 //!< --slo
  bool find_max_rate = false;                 //!< --find-max-rate
  std::optional<double> target_rate;          //!< --target-rate: replicas for this load
  std::optional<std::uint64_t> workers;       //!< --workers: an offline job on K replicas
  double margin_hours = 24;                   //!< --margin: installation, checks, export
  std::vector<RentalPeriod> periods;          //!< --periods
  std::optional<std::filesystem::path> prices_file;  //!< --prices
  CapacityOptions options;                    //!< --probe-requests
};

struct SimulateAnswers {
  sim::SimulateOutcome run;  //!< the workload as given (or the run at the answer, see below)
  std::vector<SloTarget> slo;
  std::optional<SloReport> slo_report;
  std::optional<MaxRateAnswer> max_rate;
  std::optional<ReplicaAnswer> replicas;
  std::optional<OfflineAnswer> offline;
  std::vector<RentalPeriod> periods;
  LaunchCommand launch;  //!< the command that starts the engine as simulated
  bool run_is_slowest_worker = false;  //!< --workers alone: `run` is the slowest worker's share
};

//! With --find-max-rate / --target-rate the main run is the one at the answer (the max-rate
//! probe, or one replica's share of the target load); with --workers alone, the slowest
//! worker's share of the job; otherwise the workload as given.
//! Throws Error(Usage) for combinations that do not make sense (--find-max-rate without --slo,
//! --workers without an infinite rate).
SimulateAnswers answer_simulate(const SimulateQuestions& q, const DataRoot& root);

nlohmann::json simulate_answers_json(const SimulateAnswers& a);
std::string simulate_answers_text(const SimulateAnswers& a);
//! `simulate --format markdown`: a quote section — the configuration, the workload, the latency
//! targets, the rate, the replicas and the offline-job duration when they were asked for, the
//! latency figures, and the command that starts the engine (golden tests/golden/offline_quote.md).
std::string simulate_answers_markdown(const SimulateAnswers& a);

}  // namespace vramplan::plan
