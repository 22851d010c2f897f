// vramplan/memory/plan_request.hpp — the memory side of `vramplan plan` as a library call:
// resolve the model, the GPU, the calibration and the engine, and run the engine's plan. The
// accuracy tests go through run_plan(); sim/serving_plan.hpp adds the performance figures on top
// (resolve_plan keeps what they need) and plan/plan_output.hpp renders the vramplan.plan/1 JSON and
// the text.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "vramplan/calib/calibration.hpp"
#include "vramplan/compat/compat.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::memory {

struct PlanRequest {
  std::string model;                //!< catalogue id or path (load_model)
  std::string gpu;                  //!< GPU catalogue id or custom:<size>
  std::optional<Bytes> gpu_memory;  //!< --gpu-memory: runtime-reported total per GPU
  ClusterShape cluster;             //!< --node-gpus / --network-gbit (with_cluster)
  std::string engine = "vllm";      //!< "vllm", "vllm@0.17", ...
  EngineArgs args;
  std::optional<std::string> weights;
  Workload workload;
  //! --calibration FILE; without it a calibration for the GPU under data/calibration/ is used
  //! when one exists (calib::find_calibration).
  std::optional<std::filesystem::path> calibration;
  //! --prompt-len: prompt tokens for the TTFT estimate (default perf::kDefaultPromptTokens; read by
  //! sim/serving_plan.hpp, not by the memory plan).
  std::optional<std::uint64_t> prompt_tokens;
  //! --spec-accept-length: with speculative decoding, the mean tokens one verify keeps (the
  //! accepted drafts + the target's own token; SGLang's bench_serving prints it as "Accept
  //! length"). A property of the model and the text, not of the engine: read by the simulator
  //! (sim/simulate.hpp), not by the memory plan.
  std::optional<double> spec_accept_length;
  //! The model `model` names, already loaded by a caller that plans it many times (trial plans
  //! every cell): a 50 MB config.json parsed per cell had made a trial take 19 s. nullptr: load it.
  std::shared_ptr<const ModelSpec> loaded_model;
};

//! Which calibration a plan used, and for what (every output names its basis).
struct CalibrationUse {
  std::optional<std::string> file;  //!< the calibration file; nullopt = none
  std::string selected;             //!< "--calibration", "matched to <gpu> in data/calibration", "none"
  std::string memory;               //!< what the memory side took from it, or "documented defaults"
};

struct PlanOutcome {
  ModelSpec model;
  GpuTarget gpu;
  std::string gpu_memory_note;  //!< where the GPU total comes from
  MemoryPlan plan;
  CalibrationUse calibration;
  std::uint64_t tp = 1, pp = 1;  //!< tensor / pipeline parallel degrees the engine used
  compat::Verdict compat;        //!< data/compat: unsupported / fallback findings, shown first
};

//! What an engine plan was computed from, kept for the layers that add figures on top of it
//! (sim/serving_plan.hpp times its steps on the same card, calibration and weight bytes).
struct PlanBasis {
  GpuSpec gpu;  //!< the card as planned (--gpu-memory applied; "cpu" for a CPU plan)
  std::optional<calib::Calibration> calibration;
  QuantCatalog quant;
  WeightRequest weights;  //!< the request the engine resolved its weights from
  bool pooling = false;   //!< an encoder or a TEI plan: no decode, inputs per second instead
};

struct ResolvedPlan {
  PlanOutcome outcome;
  PlanBasis basis;
};

//! The engine plan of a request and what it was computed from.
ResolvedPlan resolve_plan(const PlanRequest& request, const DataRoot& root);

//! The engine plan alone (resolve_plan().outcome).
PlanOutcome run_plan(const PlanRequest& request, const DataRoot& root);

}  // namespace vramplan::memory
