// vramplan/train/model_states.hpp — the memory of the parameters and everything kept per
// parameter during training: weights, fp32 master weights, gradients, optimizer states, and the
// unsharded units a ZeRO-3 / FSDP rank gathers; per GPU after TP, PP and data-parallel sharding,
// with what offload moves to the CPU and what paged optimizers keep in CUDA unified memory.
//
// The accounting is the ZeRO paper's (Rajbhandari et al. 2020, §3.1: 2 + 2 + K bytes per
// parameter for mixed-precision Adam, K = 12: fp32 params, momentum, variance), generalised by
// the per-tensor rules of each optimizer's own code (see optimizer_state_bytes). DeepSpeed's
// estimator uses other multipliers; it is reproduced separately in deepspeed_estimator.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/train/train_setup.hpp"

namespace vramplan::train {

//! One parameter tensor as training sees it.
struct ParamTensor {
  std::string name;
  std::vector<std::uint64_t> shape;  //!< outermost first, as in ModelSpec
  //! Position for pipeline stages and FSDP units: the decoder block; -1 before the first block
  //! (embeddings), num_layers after the last (final norm, lm_head).
  int layer = -1;
  bool tp_split = true;   //!< tensor parallelism splits it (linear / embedding); norms replicated
  bool trainable = true;
  //! Bytes of a frozen tensor as stored (bf16, int8, NF4 with its scales); unused when trainable.
  std::uint64_t frozen_bytes = 0;

  std::uint64_t elements() const;
};

//! Every tensor of the model, trainable (full fine-tuning / pretraining). The MTP module
//! (TensorRole::Mtp) is not trained by the frameworks vramplan models and is left out.
std::vector<ParamTensor> full_model_tensors(const ModelSpec& spec);

//! Optimizer state bytes of one trainable tensor of `elements` values and `shape` whose state
//! dtype (torch optimizers: the dtype of the parameter they step) is `state_bytes` wide.
//!   AdamW:       2 n s (exp_avg, exp_avg_sq)                        torch/optim/adamw.py _init_group
//!   SGD/Lion:    n s (momentum_buffer / exp_avg)
//!   Adafactor:   2-D and up: (rows + cols) s — exp_avg_sq_row over shape[:-1], _col over
//!                shape[:-2] + shape[-1:]; 1-D: n s  (transformers/optimization.py Adafactor.step,
//!                beta1 None, the default); s = 4: the states are made .to(grad) after
//!                grad = grad.float(), so fp32 for every recipe
//!   8-bit Adam:  n >= 4096: 2 (n + 4 ceil(n / 256)) — uint8 state1/state2 plus fp32 absmax per
//!                256-value block; smaller tensors keep 32-bit states 2 x 4 n (bitsandbytes
//!                optim/optimizer.py Optimizer2State.init_state, min_8bit_size 4096, blocksize 256)
//!   paged 32-bit: 2 x 4 n regardless of the param dtype (init_state: dtype=torch.float32)
std::uint64_t optimizer_state_bytes(Optimizer optimizer, const std::vector<std::uint64_t>& shape,
                                    std::uint64_t elements, std::uint64_t state_bytes);

struct ModelStatesInput {
  std::vector<ParamTensor> tensors;
  std::uint64_t num_layers = 0;
  PrecisionRecipe precision = PrecisionRecipe::PureBf16;
  Optimizer optimizer = Optimizer::AdamW;
  Sharding sharding = Sharding::None;
  Offload offload;
  Parallelism parallel;
  //! Name of a tied embedding (the model has no separate lm_head): under pipeline parallelism the
  //! last stage keeps a copy of it as its lm_head, with its own gradient and optimizer states,
  //! and the two copies' gradients are all-reduced over the embedding group (Megatron-LM
  //! megatron/core/models/common/language_module/language_module.py
  //! setup_embeddings_and_output_layer; finalize_model_grads.py _allreduce_word_embedding_grads).
  //! Empty: nothing tied.
  std::string tied_embedding{};
};

//! Memory by place. `gpu` is what one GPU of the heaviest pipeline stage holds.
struct ModelStates {
  std::vector<memory::Component> gpu;
  std::vector<memory::Component> cpu;      //!< per rank, offloaded states
  std::vector<memory::Component> unified;  //!< paged optimizer states (CUDA unified memory)
  std::uint64_t trainable_params = 0;      //!< whole model, before any split
  std::uint64_t frozen_params = 0;
  std::uint64_t pp_stage = 0;              //!< the stage shown (0-based)
  std::uint64_t shard_degree = 1;
};

//! Throws Error(Usage) for parameter offload without ZeRO-3 / FSDP, optimizer offload without
//! ZeRO / FSDP, more pipeline stages than layers, or a layout the GPU count does not divide.
ModelStates model_states(const ModelStatesInput& in);

//! Bytes per value of the weights, gradients and optimizer states under a recipe (torch
//! optimizers' states take the dtype of the tensor they step: the fp32 master under Bf16WithFp32Master).
struct RecipeBytes {
  std::uint64_t weight = 2, grad = 2, master = 0, state = 2;
};
RecipeBytes recipe_bytes(PrecisionRecipe precision);

}  // namespace vramplan::train
