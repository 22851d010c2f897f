// vramplan/train/step_replay.hpp — fragmentation of PyTorch's caching allocator over many
// training steps whose batches have different lengths, found by replaying the steps' tensor
// allocations through memory/torch_allocator.hpp (CUDACachingAllocator's rules).
//
// Why a replay: with padded variable-length batches every activation, logit and gradient tensor
// changes size from step to step. A request is served by the smallest cached free block that is at
// least as large (get_free_block), and every tensor of 10 MiB or more got a segment of its own
// (get_allocation_size), so a step longer than the ones before finds only smaller freed blocks and
// cudaMalloc's new segments, while the old ones stay cached (no empty_cache in a training loop).
// max_memory_reserved() therefore ends above max_memory_allocated() by an amount that depends on
// the order of lengths, which only a replay gives. Fixed-length runs fragment too, less: within one
// step, fp32 norm temporaries, MLP intermediates and the logits are freed and reallocated out of order.
//
// The replayed program: a Llama-style block (RMSNorm computed in fp32, q / k / v / o, RoPE in fp32,
// flash / SDPA attention, SwiGLU MLP, residual adds) under full activation checkpointing
// (torch.utils.checkpoint: the block runs without keeping its temporaries, only its input; backward
// re-runs it keeping what autograd saves and frees it op by op), LoRA branches (dropout with its
// mask, A and B outputs, the scaled sum) on the adapted linears, and the loss path of torchtune's
// recipe / transformers <= 4.45 (bf16 logits, their fp32 copy, the shifted .contiguous() copy,
// log_softmax, and in backward the nll gradient, the log_softmax gradient, the zero-padded slice
// gradient and its bf16 cast). Sources: torchtune recipes/lora_finetune_single_device.py train()
// and torchtune/modules (TransformerDecoderLayer, RMSNorm, RotaryPositionalEmbeddings,
// peft/lora.py LoRALinear) at 0914d5cf; transformers LlamaForCausalLM.forward (4.3x). Frozen
// weights are allocated first, tensor by tensor. Only the difference reserved - allocated of the
// replay is used (train_plan.cpp adds it to the analytic peak allocated): the program's own
// allocated peak is an approximation of activations.hpp's accounting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/model/spec.hpp"

namespace vramplan::train {

//! Sample lengths of the data set, log-normal: median and the log's standard deviation; each sample
//! is truncated at the run's max sequence length and a batch is padded to its longest sample
//! (torchtune utils.padded_collate, transformers DataCollatorForSeq2Seq).
struct LengthSchedule {
  double median_tokens = 0;
  double sigma = 0;
  //! Steps replayed per seed. Reserved only grows, and for torchtune's Llama-2-7B LoRA run the
  //! median over the seeds is the same after 200, 400 and 800 steps (1.225 / 1.225 / 1.224 GB).
  std::uint64_t steps = 200;
};

struct ReplayInput {
  ModelArch arch;
  std::uint64_t micro_batch = 1, max_len = 512;
  LengthSchedule lengths;
  //! Which linears carry a LoRA branch, and its rank.
  bool lora_q = false, lora_k = false, lora_v = false, lora_o = false, lora_mlp = false, lora_output = false;
  std::uint64_t rank = 8;
  //! The loop's `logits` variable outlives the step: it is freed only when the next forward
  //! returns and the name is rebound (torchtune lora_finetune_single_device.py train()).
  bool keeps_previous_logits = false;
};

struct ReplayResult {
  std::uint64_t peak_allocated = 0, peak_reserved = 0;
  std::uint64_t fragmentation = 0;  //!< median over the seeds of peak_reserved - peak_allocated
  std::string explain;
};

//! Replays `lengths.steps` steps for each of a fixed set of seeds (deterministic: its own
//! generator and normal transform, not <random>'s implementation-defined distributions).
ReplayResult replay_variable_length_steps(const ReplayInput& in);

}  // namespace vramplan::train
