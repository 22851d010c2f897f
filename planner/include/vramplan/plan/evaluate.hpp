// vramplan/plan/evaluate.hpp — one configuration (GPU, engine flags, parallel layout, replicas,
// workload) judged end to end: the engine's plan plus the fit decision.
#pragma once

#include <algorithm>

#include <cstdint>
#include <optional>
#include <string>

#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/plan/bounds.hpp"
#include "vramplan/plan/fit.hpp"
#include "vramplan/plan/session.hpp"

namespace vramplan::plan {

struct Scenario {
  GpuSpec gpu;
  memory::EngineArgs args;               //!< engine flags, TP / PP included
  std::optional<std::string> weights;    //!< --weights
  std::uint64_t replicas = 1;            //!< data-parallel engine instances (model copies)
  std::optional<std::uint64_t> batch;    //!< concurrent sequences over all replicas (default 1 each)
  std::optional<std::uint64_t> context;  //!< tokens per sequence (default: the engine's max length)
};

struct Evaluation {
  memory::MemoryPlan plan;  //!< with the workload
  FitResult fit;
  Parallel parallel;
  std::uint64_t replicas = 1;
  std::string capped_context;  //!< why the default context is shorter than the engine's length ("" = not)
  //! The engine's own GPUs: its plan's count (vLLM's --data-parallel-size engines included).
  std::uint64_t gpus_per_replica() const { return std::max(parallel.gpus(), plan.gpu_count); }
  //! gpus_per_replica() x replicas.
  std::uint64_t gpus_total() const { return gpus_per_replica() * replicas; }
};

//! Batch per replica: ceil(batch / replicas), at least 1.
std::uint64_t batch_per_replica(const Scenario& s);

//! Plans the scenario with its batch and judges the fit; when the engine refuses it, plans the
//! configuration alone too (without a batch) for the engine's own refusal. Throws what the
//! engine throws for invalid flags.
Evaluation evaluate(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                    const ErrorBounds& bounds);

}  // namespace vramplan::plan
