// vramplan/plan/throughput.hpp — the performance model (perf/*.hpp) wired to a decision: the
// per-GPU shape of the model in the precision the engine resolved, and the GPU's rates from the
// catalogue (datasheet x documented efficiencies, data/perf_defaults.json). A GPU without
// bandwidth / TFLOPS figures (custom:SIZE) has no throughput estimate, and says so.
#pragma once

#include <optional>
#include <string>

#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/perf/perf_model.hpp"
#include "vramplan/plan/session.hpp"

namespace vramplan::plan {

struct ThroughputModel {
  perf::PerfModelShape shape;
  std::optional<perf::PerfHardware> hardware;  //!< nullopt when the GPU has no rates
  //! The rates of decode steps (perf::decode_hardware: llama.cpp's MMVQ cap), set with `hardware`.
  std::optional<perf::PerfHardware> decode_hardware;
  std::string engine;                          //!< the engine plan's name ("llamacpp", "vllm", ...)
  double block_quantized_share = 0;            //!< share of streamed weight bytes block-quantized
  std::string unavailable;                     //!< why not, when hardware is nullopt
  std::string compute_dtype;                   //!< the engine's activation dtype ("bf16")
  std::uint64_t token_budget = 0;              //!< prefill chunk (engine's max_num_batched_tokens; 0 = whole prompt)
  //! The data/perf_defaults.json step_overhead entry the rates carry (perf::step_overhead_entry
  //! of the engine plan: "vllm-sync", "llamacpp-nograph", else the engine's name).
  std::string step_overhead_entry;
  //! vLLM V0 multi-step (engine_view num_scheduler_steps): decode steps a round, over which
  //! decode_hardware spreads the host's per-step work (perf::amortize_step_overhead); 1 otherwise.
  std::uint64_t decode_round_steps = 1;
};

//! `args` and `weights` as given to the engine (dtype, quantization, kv-cache-dtype are read);
//! `plan` is the engine's plan of that configuration (on any GPU): its engine_view says how the
//! engine schedules and launches a step, which picks the step overhead, and its KV bytes per token
//! and recurrent state per sequence are the traffic the step model moves.
ThroughputModel throughput_model(const PlanSession& session, const GpuSpec& gpu, const memory::EngineArgs& args,
                                 const std::optional<std::string>& weights, const perf::PerfDefaults& defaults,
                                 std::uint64_t token_budget, const memory::MemoryPlan& plan);

}  // namespace vramplan::plan
