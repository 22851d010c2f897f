// vramplan/plan/reconcile.hpp — an engine's start-up log against vramplan's plan of the same
// configuration: the configuration the log states (io/engine_log.hpp) is planned through
// memory::run_plan, the path of `vramplan plan`, and every figure the log prints is set beside
// the planned one with the difference and, when the difference exceeds the component's bound
// (data/accuracy_bounds.json), the likely cause. docs/reconcile.md.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/calib/calibration.hpp"

#include "vramplan/io/data_root.hpp"
#include "vramplan/io/engine_log.hpp"
#include "vramplan/memory/plan_request.hpp"

namespace vramplan::plan {

struct ReconcileOptions {
  std::optional<std::string> model;  //!< --model: overrides the model the log names
  std::optional<std::string> gpu;    //!< --gpu: the card (the log's total is kept as its total)
  std::optional<std::string> engine; //!< --engine: the profile ("vllm@0.11") instead of the log's version
  std::optional<std::string> weights;  //!< --weights: the weight format, when the log does not state it
  //! --engine-arg KEY=VALUE: engine flags the log does not print (a TensorRT engine's build flags,
  //! a quantization); they win over the log's.
  std::map<std::string, std::string> args;
};

struct ReconcileRow {
  std::string component;       //!< "weights", "activation peak", "non-torch", "CUDA graphs", "KV cache", ...
  std::string unit;            //!< "GiB" (vLLM), "MiB" (llama.cpp), "tokens", "x"
  double logged = 0;
  double planned = 0;
  std::size_t line = 0;        //!< log line of the figure
  double bound = 0;            //!< |logged - planned| allowed, in `unit`
  std::string bound_source;    //!< where the bound comes from
  bool outside = false;        //!< |difference| > bound
  std::string likely_cause;    //!< set when outside
  double difference() const { return logged - planned; }
  double difference_pct() const { return planned != 0 ? 100.0 * (logged - planned) / planned : 0; }
  //! Whether difference_pct() is defined: a planned figure of 0 has none (JSON null, text "-").
  bool has_difference_pct() const { return planned != 0; }
};

//! One figure of the engine's own estimate (ollama's "offload to cuda" line) and the plan's
//! figure for the same thing, when there is one.
struct EstimateRow {
  std::string key;                   //!< "memory.required.kv"
  double logged_gib = 0;             //!< as the engine printed it (one decimal)
  std::optional<double> planned_gib;
  std::string planned_as;            //!< what the planned figure is
  std::size_t line = 0;
};

struct Reconciliation {
  EngineLog log;
  memory::PlanRequest request;  //!< the configuration re-planned
  std::string model_basis;      //!< how the model was chosen ("--model", "catalogue id 'x' from ...")
  std::string gpu_basis;
  memory::PlanOutcome outcome;
  std::vector<ReconcileRow> rows;
  std::vector<EstimateRow> estimate;  //!< ollama: its own estimate beside the plan
  std::size_t outside() const;
  //! Where the planned model contradicts the model the log states (the HF id it names, mapped to
  //! its catalogue entry; the architecture llama.cpp prints): one sentence each, naming both.
  std::vector<std::string> model_mismatch{};
};

//! The model id of the catalogue an HF repository id names: the repository name lower-cased,
//! tried as is and without a trailing "-instruct" / "-it" / "-hf" / "-chat" (the catalogue keeps
//! a tuned variant under its base id when the architecture is the same). nullopt when none.
std::optional<std::string> catalogue_id_for(const std::string& hf_id, const std::vector<std::string>& ids);

//! Re-plans `log`'s configuration and compares. Throws Error(UnknownName) when the model the log
//! names is not in the catalogue (pass --model), Error(Usage) when the log names neither a model
//! nor a GPU total and the options do not give them.
Reconciliation reconcile(const EngineLog& log, const ReconcileOptions& options, const DataRoot& root);

//! The deployment figures of a reconciled log, for a calibration file: what the log stated of
//! the components the engine profile models (vLLM: non-torch, activation peak, CUDA graphs), keyed
//! by the model, engine profile, GPU and layout the log was planned as. Throws Error(Usage) for a
//! log of another engine (no plan takes their figures from a calibration yet) or without them.
calib::DeploymentFigures deployment_figures(const Reconciliation& r);

//! `vramplan plan` arguments that re-plan the reconciled configuration with `calibration`.
std::string replan_command(const Reconciliation& r, const std::string& calibration);

//! Adds deployment_figures(r) to the calibration `file` (created as a deployment-only file when
//! absent; an existing file keeps everything else) and returns the entry written.
calib::DeploymentFigures update_calibration(const Reconciliation& r, const std::filesystem::path& file);

//! vramplan.reconcile/1 (docs/schemas/reconcile.schema.json).
nlohmann::json reconcile_json(const Reconciliation& r);

}  // namespace vramplan::plan
