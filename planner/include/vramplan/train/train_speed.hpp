// vramplan/train/train_speed.hpp — how long a training step and a whole run take (docs/training.md
// "Time"): the FLOPs a step executes, from the model's own shapes, over the GPUs' dense tensor
// peak times a training efficiency (data/perf_defaults.json training_efficiency: published
// utilisation figures, not fitted), as an expected value inside a range.
//
// FLOPs per trained token (f = forward GEMM FLOPs = 2 x the parameters a token multiplies, the
// embedding gather excluded and routed experts counted at k/E; a = forward attention FLOPs, QK^T
// and PV over the causal positions; t = forward FLOPs of trainable adapters):
//   full training         3 (f + a)         backward = 2 x forward (input and weight gradients)
//   frozen base (LoRA)    2 f + 3 a + 3 t   the frozen GEMMs need input gradients only
//   recomputation         + (f + a + t) full, + a selective, + f/2 torchtitan's op-level selective
//                         (one more forward of what is recomputed)
// One optimizer step trains micro_batch x seq_len x grad_accum tokens on each data-parallel
// replica; the FLOPs spread over every GPU of the run (tensor / pipeline / context parallel split
// the work, the efficiency absorbs their communication).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/train/train_setup.hpp"

namespace vramplan::train {

struct TrainRequest;  // train_plan.hpp

struct TrainFlops {
  double matmul = 0;      //!< f: forward GEMM FLOPs per token
  double attention = 0;   //!< a: forward attention FLOPs per token, averaged over the sequence
  double adapter = 0;     //!< t: forward FLOPs of the trainable adapters per token
  double executed = 0;    //!< per trained token: forward + backward + recomputation
  std::string formula;    //!< which of the sums above, e.g. "3 (f + a)"
};

struct TrainSpeed {
  TrainFlops flops;
  std::string peak_label;      //!< which datasheet figure: "bf16", "fp32", MIG scaling
  double peak_tflops = 0;      //!< dense, one GPU
  perf::DefaultRange efficiency;
  std::uint64_t gpus = 1;
  std::uint64_t tokens_per_step = 0;  //!< trained tokens per optimizer step, all replicas
  //! One optimizer step and the run's token rate: at the expected efficiency and at the range's
  //! ends (slow = the low efficiency).
  double step_s = 0, step_s_fast = 0, step_s_slow = 0;
  double tokens_per_s = 0, tokens_per_s_slow = 0, tokens_per_s_fast = 0;
  std::vector<std::string> notes;  //!< what the estimate leaves out for this setup
};

//! A run of `tokens` trained tokens (epochs x dataset tokens) at `speed`.
struct TrainRun {
  double tokens = 0;
  double hours = 0, hours_fast = 0, hours_slow = 0;
  double gpu_hours = 0;  //!< expected hours x GPUs
};

//! FLOPs per trained token of `spec` under the request's method and recomputation.
//! `adapter_params`: trainable adapter parameters (0 for full training).
TrainFlops training_flops(const ModelSpec& spec, const TrainRequest& r, std::uint64_t adapter_params);

//! Step time and token rate on `gpu`; nullopt with `why` set when the catalogue has no dense
//! tensor figure for the compute dtype.
std::optional<TrainSpeed> training_speed(const TrainFlops& flops, const TrainRequest& r, const GpuSpec& gpu,
                                         const perf::PerfDefaults& defaults, std::string& why);

TrainRun training_run(const TrainSpeed& speed, double tokens);

}  // namespace vramplan::train
