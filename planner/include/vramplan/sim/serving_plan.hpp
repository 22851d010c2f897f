// vramplan/sim/serving_plan.hpp — an engine plan (memory::resolve_plan) with the performance
// model's figures beside it: decode / TTFT / throughput knee (docs/performance.md §5), or inputs
// per second for a pooling model. `vramplan plan` renders it (plan/plan_output.hpp) and the
// serving simulator times its steps with the same shape and rates (sim/simulate.hpp).
#pragma once

#include <optional>
#include <string>

#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/perf/serving.hpp"

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

//! `vramplan plan` as a library call: the engine plan of `request`, then its performance figures.
//! A pooling plan also gets its inputs/s in engine_view "inputs_per_s" and a note.
ServingPlan run_serving_plan(const memory::PlanRequest& request, const DataRoot& root);

}  // namespace vramplan::sim
