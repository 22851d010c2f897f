// vramplan/train/train_plan.hpp — `vramplan train`: peak GPU memory of one training step per GPU,
// put together from model states (model_states.hpp), adapters (adapters.hpp) and activations
// (activations.hpp), in three phases:
//   resident          weights, frozen base, master weights, optimizer states (and the gradients
//                     when they outlive a step: gradient accumulation > 1)
//   forward/backward  saved activations, logits and loss, the rematerialised block, dequant buffer
//   optimizer step    gradients + the step's temporaries
// Peak allocated = resident + max(forward/backward, optimizer step). Gradients are created during
// backward as activations are freed and dropped by zero_grad(set_to_none=True) (the torch >= 2.0
// default), so the two phases do not add up. That figure is PyTorch's max_memory_allocated();
// `reserved` is the allocator view, max_memory_reserved() (train/reserved.hpp); `peak_device` adds
// the CUDA context (what nvidia-smi shows). FITS compares peak allocated with the GPU's total, or
// peak_device with it under fit_on_device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/core/bytes.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/component.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/train/activations.hpp"
#include "vramplan/train/adapters.hpp"
#include "vramplan/train/model_states.hpp"
#include "vramplan/train/reserved.hpp"
#include "vramplan/train/step_replay.hpp"
#include "vramplan/train/train_speed.hpp"

namespace vramplan::train {

struct TrainRequest {
  std::string model;  //!< catalogue id, config.json, directory (as for `plan`)
  std::string gpu;    //!< GPU catalogue id or custom:<size>
  std::optional<Bytes> gpu_memory;
  Method method = Method::Full;
  PrecisionRecipe precision = PrecisionRecipe::PureBf16;
  Optimizer optimizer = Optimizer::AdamW;
  bool foreach_step = true;  //!< torch's default multi-tensor (foreach) step; false = fused
  Sharding sharding = Sharding::None;
  Offload offload;
  Parallelism parallel;
  bool sequence_parallel = false;
  std::uint64_t micro_batch = 1, seq_len = 2048, grad_accum = 1;
  Recompute recompute = Recompute::None;
  bool selective_op = false;  //!< torchtitan's op-level selective policy (--grad-checkpointing selective-op)
  AttentionImpl attention = AttentionImpl::Flash;
  std::uint64_t loss_chunks = 1;
  LossImpl loss = LossImpl::Fp32;
  AdapterSetup adapter;  //!< used for LoRA / DoRA / QLoRA
  //! The FITS verdict (and so every limit) on the device view — peak reserved + the CUDA context
  //! <= the GPU's total, what decides a real out-of-memory (--fit-on device) — instead of the
  //! default peak allocated <= total (--fit-on allocated).
  bool fit_on_device = false;
  //! A model with tied embeddings trained with a separate lm_head: LitGPT's convert_hf_checkpoint
  //! copies the embedding into lm_head.weight when the checkpoint has none (litgpt/scripts/
  //! convert_hf_checkpoint.py copy_weights_hf_llama), and GPT builds lm_head as its own Linear.
  bool untie_head = false;
  //! The training loop keeps the previous micro-batch's graph alive through the next forward:
  //! LitGPT's fit() holds `logits = model(...)` (whose grad_fn reaches the whole graph) until the
  //! next iteration's forward returns (litgpt/finetune/lora.py fit). backward has released every
  //! tensor autograd saved, but not what a custom Function keeps as a ctx attribute: bitsandbytes'
  //! MatMul4Bit stores ctx.tensors = (A, B) (bnb/autograd/_functions.py, 0.41-0.43), so the input
  //! of every bnb-quantized linear stays, with the logits the list holds. Component
  //! `previous_graph`, in forward / backward.
  bool holds_previous_graph = false;
  //! Tokens of that previous micro-batch; 0 = micro_batch x seq_len (every batch padded alike).
  std::uint64_t previous_tokens = 0;
  //! Batches of variable length (padded to their longest sample, truncated at seq_len): the
  //! allocator's fragmentation over many steps is replayed (train/step_replay.hpp) and added to the
  //! peak reserved. Modelled for LoRA on a bf16 base with full recomputation, one GPU.
  std::optional<LengthSchedule> lengths;
  //! With `lengths`: the loop's `logits` outlives the step (torchtune's recipe; step_replay.hpp).
  bool keeps_previous_logits = false;
  //! Tokens the run trains on (--tokens, or --epochs x --dataset-tokens): its duration is planned.
  std::optional<double> run_tokens;
};

struct PhasedComponent {
  memory::Component part;
  std::string phase;  //!< "resident", "forward_backward", "optimizer_step"
};

struct TrainPlan {
  TrainRequest request;
  std::string model_id;
  std::string gpu_id, gpu_name;
  Bytes capacity;  //!< the GPU's usable total
  std::uint64_t total_params = 0, trainable_params = 0, frozen_params = 0;
  std::uint64_t pp_stage = 0, shard_degree = 1, dp = 1;
  std::vector<PhasedComponent> gpu;
  std::vector<memory::Component> cpu, unified;
  Bytes resident, forward_backward, optimizer_step, peak_allocated;
  std::string peak_phase;
  ReservedView reserved;  //!< the allocator view: peak reserved (train/reserved.hpp)
  //! The PyTorch process's CUDA context + cuBLAS workspace (data/engines/hf.json cuda_context_gib),
  //! outside the caching allocator but inside the GPU's total.
  Bytes cuda_context;
  Bytes peak_device;  //!< peak reserved + cuda_context: what nvidia-smi shows at the peak
  std::int64_t headroom = 0;
  bool fits = false;
  std::vector<std::string> notes;
  //! Step time and token rate (train_speed.hpp); absent with the reason when not estimable.
  std::optional<TrainSpeed> speed;
  std::string speed_unavailable;
  std::optional<TrainRun> run;  //!< when request.run_tokens is set and the speed is known
  //! Legal but suspicious settings, one line each ("warnings" in JSON, "warning:" in the text):
  //! a sequence longer than a rotary model's max_position_embeddings (context extension).
  std::vector<std::string> warnings{};
};

//! What every plan of one model reads from disk: the catalogues, the model and the defaults.
//! Searches that plan dozens of times (plan/train_limits, plan/train_sweep) load it once: a
//! 50 MB config.json parsed per probe had made `train` take 15 s.
struct TrainInputs {
  QuantCatalog quant;
  GpuCatalog gpus;
  ModelSpec model;
  Bytes cuda_context;                //!< PyTorch's (data/engines/hf.json cuda_context_gib)
  perf::PerfDefaults perf_defaults;  //!< data/perf_defaults.json, for the step time
};
//! Throws Error(Usage) when `model` is empty.
TrainInputs load_train_inputs(const std::string& model, const DataRoot& root);
//! Error(Usage) when the request names no model or no GPU: what plan_training asks first, before
//! any file is read.
void require_model_and_gpu(const TrainRequest& request);

//! Throws Error(Usage) for missing --model / --gpu and impossible settings, among them a sequence
//! longer than a learned absolute position table (max_position_embeddings).
TrainPlan plan_training(const TrainRequest& request, const DataRoot& root);
//! The same on inputs already loaded; `inputs.model` must be the one `request.model` names.
TrainPlan plan_training(const TrainRequest& request, const TrainInputs& inputs);

//! The vramplan.train/1 document (docs/schemas/train.schema.json).
nlohmann::json train_json(const TrainPlan& plan);

}  // namespace vramplan::train
