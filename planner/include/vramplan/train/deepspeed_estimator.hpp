// vramplan/train/deepspeed_estimator.hpp — DeepSpeed's own ZeRO memory estimators, reproduced
// bit for bit, so that a user who has run `estimate_zero2/3_model_states_mem_needs_all_live` can
// compare its printout with vramplan's accounting (docs/training.md § DeepSpeed estimators).
//
// These are the estimators' formulas, not vramplan's model: they count model states only (no
// activations, no allocator) and their multipliers are DeepSpeed's ("18 = 2 grads_16bit +
// 4 grads_32bit + 4 params_32bit + 8 optimizer_states_32bit", stage_1_and_2.py). Python's float
// arithmetic is repeated in the same order in double, and int() truncation where Python has it.
//
// Sources (deepspeedai/DeepSpeed):
//   ZeRO-2: deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs
//     before commit f4cb866c2 (2021-06-23 .. 2024-06-04): gpu = 4P + int(16P / total_gpus)
//     since then:                                         gpu = 2P + int(18P / total_gpus)
//     offload (both):  gpu = 2P, cpu = P x max(4 total_gpus, 16) x buf
//     no offload:      cpu = P x 4 x gpus_per_node x buf
//   ZeRO-3: deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs, L = 4 x
//     largest_layer_params, f = 1 / num_nodes:
//     offload params + optimizer: gpu = L; cpu = P x 18 f x buf (zero_init) else P x max(4 gpn, 18 f) x buf
//     offload optimizer only:     gpu = L + int(2P / total_gpus); cpu = P x 16 f x buf (zero_init)
//                                 else P x max(4 gpn, 16 f) x buf
//     no offload:                 gpu = L + int(18P / total_gpus); cpu = largest x 4 gpn x buf
//                                 (zero_init) else P x 4 gpn x buf
//   Both return int(cpu), int(gpu); the _all_live printers show x / 2**30 with "%.2f" and a "GB" label.
#pragma once

#include <cstdint>
#include <string>

namespace vramplan::train {

//! Which ZeRO-2 GPU formula: the one before DeepSpeed commit f4cb866c2 (June 2024) or the current.
enum class Zero2Formula { Before2024_06, Current };

struct DeepSpeedEstimate {
  std::uint64_t cpu_bytes = 0;
  std::uint64_t gpu_bytes = 0;
};

struct DeepSpeedCluster {
  std::uint64_t gpus_per_node = 1;
  std::uint64_t nodes = 1;
  double additional_buffer_factor = 1.5;  //!< the estimators' default
};

//! estimate_zero2_model_states_mem_needs(total_params, ..., cpu_offload). Throws Error(Usage) for
//! zero parameters, GPUs or nodes.
DeepSpeedEstimate deepspeed_zero2_estimate(std::uint64_t total_params, const DeepSpeedCluster& cluster,
                                           bool cpu_offload, Zero2Formula formula);

struct Zero3Offload {
  bool optimizer = false;  //!< offload_optimizer=cpu
  bool params = false;     //!< offload_param=cpu (DeepSpeed counts it only with the optimizer offloaded)
  bool zero_init = true;   //!< deepspeed.zero.Init: each process holds only its shard on the CPU
};

//! estimate_zero3_model_states_mem_needs(total_params, largest_layer_params, ...).
DeepSpeedEstimate deepspeed_zero3_estimate(std::uint64_t total_params, std::uint64_t largest_layer_params,
                                           const DeepSpeedCluster& cluster, const Zero3Offload& offload);

//! How the _all_live printers show a byte count: bytes / 2**30 with two decimals ("15.93").
std::string deepspeed_gib_text(std::uint64_t bytes);

}  // namespace vramplan::train
