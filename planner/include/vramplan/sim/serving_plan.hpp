// vramplan/sim/serving_plan.hpp — an engine plan (memory::resolve_plan) with the performance
// model's figures beside it: decode / TTFT / throughput knee (docs/performance.md §5), or inputs
// per second for a pooling model. `vramplan plan` renders it (plan/plan_output.hpp) and the
// serving simulator times its steps with the same shape and rates (sim/simulate.hpp).
#pragma once

#include <optional>
#include <string>

#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/perf/serving.hpp"

namespace vramplan {
struct GpuSpec;  // hardware/gpu_catalog.hpp
}  // namespace vramplan

namespace vramplan::sim {

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
  //! With speculative decoding from the checkpoint's MTP layer (memory/mtp_draft.hpp): the
  //! draft's step shape per GPU (perf::one_layer_draft_shape), for the simulator's iterations.
  std::optional<perf::PerfModelShape> draft_shape;
  //! With --spec-accept-length on a speculative plan: decode at the query's batch and context as
  //! the simulator steps it (perf::speculative_step_seconds), each step keeping the accept length.
  struct Speculative {
    double accept_length = 1;
    std::uint64_t verify_tokens = 1;  //!< tokens a sequence runs through the target per step
    perf::Range step_s;               //!< one step: the verify and the draft's forwards
    perf::Range tpot_s;               //!< step_s / accept_length
    perf::Range tokens_per_s;         //!< batch x accept_length / step_s, whole replica
  };
  std::optional<Speculative> speculative;
};

//! An engine plan and its performance (a memory::PlanOutcome wherever only memory is asked).
struct ServingPlan : memory::PlanOutcome {
  PlanPerformance performance;
};

//! The performance model's per-GPU view of a planned engine (the one construction `plan`'s batch
//! table, the sweep and the simulator share): the plan's tp / pp, its expert-parallel and SGLang
//! DP-attention layout (engine_view ep_size, dp_size, attn_tp_size, enable_dp_lm_head), its KV and
//! recurrent-state bytes, the weights as resolved, and the engine's kernel counts for this GPU
//! (data/perf_defaults.json step_overhead[entry]). `kv_element_bytes` stays the default: a caller
//! that knows the KV dtype sets it.
perf::ShapeOptions plan_shape_options(const memory::MemoryPlan& plan, const memory::ResolvedWeights& weights,
                                      std::uint64_t tp, std::uint64_t pp, const GpuSpec& gpu, const ModelArch& arch,
                                      const perf::PerfDefaults& defaults, const std::string& entry);

//! `vramplan plan` as a library call: the engine plan of `request`, then its performance figures.
//! A pooling plan also gets its inputs/s in engine_view "inputs_per_s" and a note.
ServingPlan run_serving_plan(const memory::PlanRequest& request, const DataRoot& root);

}  // namespace vramplan::sim
