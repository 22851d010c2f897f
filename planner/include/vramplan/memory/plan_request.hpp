// vramplan/memory/plan_request.hpp — `vramplan plan` as a library call: resolve the model, the
// GPU and the engine, run the engine's plan, and render the vramplan.plan/1 JSON. The CLI and
// the accuracy tests both go through run_plan().
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/engine.hpp"

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
};

struct PlanOutcome {
  ModelSpec model;
  GpuTarget gpu;
  std::string gpu_memory_note;  //!< where the GPU total comes from
  MemoryPlan plan;
};

PlanOutcome run_plan(const PlanRequest& request, const DataRoot& root);

//! The vramplan.plan/1 document (docs/schemas/plan.schema.json).
nlohmann::json plan_json(const PlanOutcome& outcome);

//! The human-readable table.
std::string plan_text(const PlanOutcome& outcome);

}  // namespace vramplan::memory
