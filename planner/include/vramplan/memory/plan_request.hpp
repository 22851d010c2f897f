// vramplan/memory/plan_request.hpp — `vramplan plan` as a library call: resolve the model, the
// GPU and the engine, run the engine's plan, and render the vramplan.plan/1 JSON. The CLI and
// the accuracy tests both go through run_plan().
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/calib/rehearsal.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/perf/serving.hpp"

namespace vramplan::memory {

struct PlanRequest {
  std::string model;                //!< catalogue id or path (load_model)
  std::string gpu;                  //!< GPU catalogue id or custom:<size>
  std::optional<Bytes> gpu_memory;  //!< --gpu-memory: runtime-reported total per GPU
  std::string engine = "vllm";      //!< "vllm", "vllm@0.17", ...
  EngineArgs args;
  std::optional<std::string> weights;
  Workload workload;
  //! --calibration FILE; without it a calibration for the GPU under data/calibration/ is used
  //! when one exists (calib::find_calibration).
  std::optional<std::filesystem::path> calibration;
  //! --prompt-len: prompt tokens for the TTFT estimate (default perf::kDefaultPromptTokens).
  std::optional<std::uint64_t> prompt_tokens;
};

//! Which calibration a plan used, and for what (every output names its basis).
struct CalibrationUse {
  std::optional<std::string> file;  //!< the calibration file; nullopt = none
  std::string selected;             //!< "--calibration", "matched to <gpu> in data/calibration", "none"
  std::string memory;               //!< what the memory side took from it, or "documented defaults"
};

//! The performance figures of a plan (docs/performance.md §5). `estimate` is nullopt when the
//! model cannot say (a GPU without bandwidth / TFLOPS figures, an engine it does not model), and
//! `unavailable` says why: never a guess.
struct PlanPerformance {
  perf::ServingQuery query;
  std::optional<perf::ServingEstimate> estimate;
  bool calibrated = false;   //!< bandwidth and tensor throughput both measured on the card
  std::string tensor_dtype;  //!< the tensor-core rate used ("bf16", "fp8")
  std::string unavailable;
  //! The step model's inputs behind `estimate` (set whenever it is): the serving simulator
  //! times its steps with them.
  std::optional<perf::PerfModelShape> shape;
  std::optional<perf::PerfHardware> hardware;
};

struct PlanOutcome {
  ModelSpec model;
  GpuTarget gpu;
  std::string gpu_memory_note;  //!< where the GPU total comes from
  MemoryPlan plan;
  CalibrationUse calibration;
  PlanPerformance performance;
  std::uint64_t tp = 1, pp = 1;  //!< tensor / pipeline parallel degrees the engine used
};

PlanOutcome run_plan(const PlanRequest& request, const DataRoot& root);

//! The vramplan.plan/1 document (docs/schemas/plan.schema.json).
nlohmann::json plan_json(const PlanOutcome& outcome);

//! The human-readable table.
std::string plan_text(const PlanOutcome& outcome);

//! The fit-rehearsal input of a plan (docs/calibration.md#fit-rehearsal): the per-GPU weight bytes,
//! the KV cache as the engine's blocks, the activation workspace, and the GEMMs of one decoder
//! layer at the engine's prefill token budget, for `vramplan plan --emit-rehearsal FILE`.
//! Throws Error(Usage) when the plan has nothing to rehearse (no KV cache, a CPU plan).
calib::RehearsalInput rehearsal_input(const PlanOutcome& outcome);

}  // namespace vramplan::memory
