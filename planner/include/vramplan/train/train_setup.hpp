// vramplan/train/train_setup.hpp — what a training run is, in the words the frameworks use:
// method (full / LoRA / DoRA / QLoRA), precision recipe, optimizer, sharding (DDP, ZeRO, FSDP),
// offload and the TP / PP / CP sizes. Parsing of the user's spellings lives here too, so the CLI
// and the tests name things the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vramplan::train {

enum class Method { Full, Lora, Dora, Qlora };

//! Which copies of the parameters exist and in which dtype (docs/training.md § Precision).
enum class PrecisionRecipe {
  //! torchtune / torchtitan "dtype: bf16": params, grads and (torch) optimizer states all bf16.
  PureBf16,
  //! torch.autocast over fp32 params (HF Trainer bf16=True, LitGPT bf16-mixed): params, grads
  //! and optimizer states fp32; bf16 exists only in activations.
  AmpFp32Params,
  //! DeepSpeed / Megatron mixed precision: bf16 params and grads, fp32 master copy + fp32 states.
  Bf16WithFp32Master,
  Fp32,  //!< everything fp32
};

enum class Optimizer {
  AdamW,           //!< torch.optim.AdamW: exp_avg, exp_avg_sq in the param dtype
  AdamW8bit,       //!< bitsandbytes AdamW8bit: 2 uint8 states, fp32 absmax per 256-value block
  PagedAdamW,      //!< bitsandbytes PagedAdamW (32-bit): fp32 states in CUDA unified memory
  PagedAdamW8bit,  //!< bitsandbytes PagedAdamW8bit: the 8-bit states in unified memory
  Adafactor,       //!< transformers Adafactor (beta1 None): factored second moment only
  SgdMomentum,     //!< torch.optim.SGD(momentum>0): one momentum buffer
  Lion,            //!< Lion: one exp_avg buffer
};

//! How data-parallel ranks split model states (ZeRO stage / FSDP sharding strategy).
enum class Sharding {
  None,           //!< single GPU, or DDP: every rank holds everything
  Zero1,          //!< optimizer states (and master weights) sharded
  Zero2,          //!< + gradients (FSDP SHARD_GRAD_OP is the same split)
  Zero3,          //!< + parameters (FSDP / FSDP2 FULL_SHARD)
  HybridShard,    //!< FSDP HYBRID_SHARD: ZeRO-3 inside a node, replicated across nodes
};

struct Offload {
  bool optimizer = false;  //!< optimizer states (and master weights) on the CPU
  bool params = false;     //!< parameters on the CPU (ZeRO-3 / FSDP only)
};

struct Parallelism {
  std::uint64_t gpus = 1;           //!< GPUs in the run
  std::uint64_t gpus_per_node = 8;  //!< for hybrid sharding
  std::uint64_t tp = 1, pp = 1, cp = 1;
  //! Data-parallel ranks = gpus / (tp x pp x cp). Throws Error(Usage) unless it divides.
  std::uint64_t dp() const;
  //! Ranks that share one copy of the sharded states: FSDP / ZeRO shard over dp x cp (torchtitan
  //! folds CP into the FSDP mesh); hybrid sharding stops at the node (gpus_per_node / (tp x cp)).
  //! Error(Usage) for hybrid sharding over GPUs that are not whole nodes, or 0 GPUs per node.
  std::uint64_t shard_degree(Sharding sharding) const;
};

Method method_from_name(std::string_view name);              //!< full, lora, dora, qlora
PrecisionRecipe precision_from_name(std::string_view name);  //!< bf16, amp, mixed, fp32
Optimizer optimizer_from_name(std::string_view name);        //!< adamw, adamw-8bit, paged-adamw, ...
Sharding sharding_from_name(std::string_view name);          //!< none, ddp, zero1..3, fsdp, hsdp

std::string_view method_name(Method m);
std::string_view precision_name(PrecisionRecipe p);
std::string_view optimizer_name(Optimizer o);
std::string_view sharding_name(Sharding s);

}  // namespace vramplan::train
