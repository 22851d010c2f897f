// `vramplan train`: the phases of one training step on one GPU (train/train_plan.hpp).
#include "vramplan/train/train_plan.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/model/inventory.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::train {
namespace {

using memory::Component;
using memory::grouped;

bool is_adapter(Method m) { return m != Method::Full; }

// transformers' Adafactor.step (src/transformers/optimization.py) loops parameter by parameter
// (`for p in group["params"]`), so its temporaries exist for one tensor at a time: the largest
// trainable tensor on this GPU (after TP and sharding). fp32 tensors of its size alive at once:
// grad.float() when the gradient is 16-bit, p.float() (p_data_fp32) when the stepped parameter is
// (the fp32 master where there is one), and two update-sized ones — `update = (grad**2) + eps`
// while grad**2 is alive; `update = self._approx_sq_grad(...)` (torch.mul(r_factor, c_factor);
// 1-D: exp_avg_sq.rsqrt()) while the previous update is; `p_data_fp32.add_(-update)` beside update.
struct AdafactorTemporaries {
  std::uint64_t elements = 0;  //!< of the largest trainable tensor on this GPU
  std::uint64_t count = 0;     //!< fp32 tensors of that size alive at once
};
AdafactorTemporaries adafactor_temporaries(const TrainRequest& r, const std::vector<ParamTensor>& tensors,
                                           std::uint64_t shard_degree) {
  const RecipeBytes rb = recipe_bytes(r.precision);
  AdafactorTemporaries t;
  for (const auto& p : tensors) {
    if (!p.trainable) continue;
    const std::uint64_t local = p.tp_split ? ceil_div(p.elements(), r.parallel.tp) : p.elements();
    t.elements = std::max(t.elements, ceil_div(local, std::max<std::uint64_t>(shard_degree, 1)));
  }
  const std::uint64_t stepped_param_bytes = rb.master > 0 ? rb.master : rb.weight;
  t.count = 2 + (rb.grad < 4 ? 1 : 0) + (stepped_param_bytes < 4 ? 1 : 0);
  return t;
}

// Temporaries of the optimizer step on the GPU. torch's foreach AdamW computes
// exp_avg_sq.sqrt() out of place for every tensor at once (torch/optim/adamw.py
// _multi_tensor_adamw: torch._foreach_sqrt) — one state's size; the fused kernel and the
// bitsandbytes kernels update in place. Adafactor: adafactor_temporaries() above.
std::optional<Component> step_temporaries(const TrainRequest& r, const std::vector<Component>& gpu_states,
                                          const std::vector<ParamTensor>& tensors, std::uint64_t shard_degree) {
  if (r.offload.optimizer) return std::nullopt;
  std::uint64_t states = 0;
  for (const auto& c : gpu_states)
    if (c.name == "optimizer_states") states = c.bytes.count();
  if (r.optimizer == Optimizer::AdamW && r.foreach_step && states > 0)
    return Component{"step_temporaries", Bytes(states / 2), "foreach AdamW: sqrt(exp_avg_sq) for all tensors = half the states"};
  if (r.optimizer == Optimizer::Adafactor) {
    const AdafactorTemporaries t = adafactor_temporaries(r, tensors, shard_degree);
    if (t.elements == 0) return std::nullopt;
    return Component{"step_temporaries", Bytes(checked_mul(checked_mul(t.elements, t.count), 4)),
                     "Adafactor steps one tensor at a time: the largest, " + grouped(t.elements) + " values here, x " +
                         std::to_string(t.count) + " fp32 temporaries alive at once (" +
                         (t.count > 2 ? "16-bit grad / param upcast, " : "") + "update and the next) x 4 B"};
  }
  return std::nullopt;
}

// What the allocator view needs (train/reserved.hpp): the step's tensors one by one (each
// trainable tensor's gradient when it is transient, and the foreach AdamW / Adafactor temporary
// of step_temporaries() per tensor), on this GPU after TP and sharding; and the largest block
// forward / backward frees: one MLP intermediate (b s ffn / tp) or the logits of one loss chunk.
ReservedInput reserved_input(const TrainPlan& plan, const TrainRequest& r, const ModelSpec& spec,
                             const ModelStatesInput& states_in, std::uint64_t act_bytes) {
  ReservedInput in{plan.resident, plan.forward_backward, plan.optimizer_step, plan.capacity, {}, 0};
  const RecipeBytes rb = recipe_bytes(r.precision);
  const bool foreach_temporaries = !r.offload.optimizer && r.optimizer == Optimizer::AdamW && r.foreach_step;
  const std::uint64_t temp_bytes = rb.master > 0 ? 4 : rb.state;
  for (const auto& t : states_in.tensors) {
    if (!t.trainable) continue;
    const std::uint64_t n = t.elements() / (t.tp_split ? r.parallel.tp : 1) / std::max<std::uint64_t>(plan.shard_degree, 1);
    if (r.grad_accum == 1) in.step_tensors.push_back(n * rb.grad);
    if (foreach_temporaries) in.step_tensors.push_back(n * temp_bytes);
  }
  // Adafactor's temporaries exist for one tensor at a time; a later, smaller tensor's reuse the
  // blocks the largest one's left cached (best fit), so only the largest tensor's count.
  if (!r.offload.optimizer && r.optimizer == Optimizer::Adafactor) {
    const AdafactorTemporaries a = adafactor_temporaries(r, states_in.tensors, plan.shard_degree);
    for (std::uint64_t i = 0; i < a.count; ++i) in.step_tensors.push_back(a.elements * 4);
  }
  const std::uint64_t tokens = r.micro_batch * r.seq_len / r.parallel.cp;
  const std::uint64_t logit_bytes = r.loss == LossImpl::Bf16 ? act_bytes : 4;
  in.largest_forward_block = std::max(tokens * (spec.arch.intermediate_size / r.parallel.tp) * act_bytes,
                                      tokens * (spec.arch.vocab_size / r.parallel.tp) * logit_bytes /
                                          std::max<std::uint64_t>(r.loss_chunks, 1));
  return in;
}

// The CUDA context of a PyTorch process: the figure of the default profile of data/engines/hf.json
// (PyTorch PR #86509: 287-667 MB, + the cuBLAS workspace), the same process a training script
// runs in; the profile is chosen as the hf engine chooses it.
Bytes pytorch_cuda_context(const DataRoot& root) {
  return Bytes::from_gib(memory::EngineProfileData::load(root.data(), "hf", "").number("cuda_context_gib"));
}

// A separate lm_head {vocab, hidden}, stored as the embedding is (TrainRequest::untie_head).
void untie(ModelSpec& spec) {
  for (const auto& t : spec.tensors)
    if (t.role == TensorRole::Output) return;
  for (const auto& t : spec.tensors)
    if (t.role == TensorRole::TokenEmbedding && t.shape.size() == 2) {
      TensorInfo head = t;
      head.name = "lm_head.weight";
      head.role = TensorRole::Output;
      head.layer.reset();
      spec.tensors.push_back(std::move(head));
      spec.arch.tied_embeddings = false;
      return;
    }
}

// What the previous micro-batch's graph still holds during the next forward
// (TrainRequest::holds_previous_graph): per token, the inputs bitsandbytes keeps on ctx — those of
// the quantized block linears (counted without recomputation only: under checkpointing what a ctx
// keeps depends on the checkpoint implementation, not modelled) and of a quantized lm_head — and the
// logits the loop's list holds.
Component previous_graph(const TrainRequest& r, const ModelArch& a, const SavedLinearInputs& bnb, bool bnb_head,
                         std::uint64_t act_bytes) {
  const std::uint64_t tp = r.parallel.tp, b = act_bytes, h = a.hidden_size;
  const std::uint64_t tokens = r.previous_tokens ? r.previous_tokens : checked_mul(r.micro_batch, r.seq_len);
  std::uint64_t layer = 0;
  if (r.recompute == Recompute::None) {
    if (bnb.qkv) layer += b * h;
    if (bnb.o) layer += b * ceil_div(a.num_heads * a.head_dim, tp);
    if (bnb.gate_up) layer += b * h;
    if (bnb.down) layer += b * ceil_div(a.intermediate_size, tp);
  }
  const std::uint64_t head = bnb_head ? b * h : 0;
  const std::uint64_t logit_bytes = r.loss == LossImpl::HfLegacy ? 4 : b;
  const std::uint64_t logits = logit_bytes * ceil_div(a.vocab_size, tp);
  const std::uint64_t per_token = checked_add(checked_add(checked_mul(layer, a.num_layers), head), logits);
  return {"previous_graph", Bytes(checked_mul(per_token, tokens)),
          "the previous micro-batch's graph, held by the loop through this forward: " + grouped(tokens) + " tokens x (" +
              std::to_string(a.num_layers) + " layers x " + grouped(layer) + " B bitsandbytes ctx inputs + " + grouped(head) +
              " B lm_head input + " + grouped(logits) + " B logits)"};
}

// The variable-length replay's input (train/step_replay.hpp) from the request; Error(Usage) for a
// setup the replayed program does not cover.
ReplayInput replay_input(const TrainRequest& r, const ModelSpec& spec, bool gated) {
  const bool one_gpu = r.parallel.gpus == 1 && r.parallel.tp == 1 && r.parallel.pp == 1 && r.parallel.cp == 1;
  if (r.method != Method::Lora || quantized_base(r.adapter) || r.recompute != Recompute::Full || !gated ||
      spec.arch.num_experts > 0 || !one_gpu || r.sharding != Sharding::None || r.loss == LossImpl::Bf16)
    throw Error(ErrorKind::Usage, "variable-length batches are replayed for LoRA on a bf16 base with full "
                                  "recomputation, a dense gated MLP, fp32 logits and one GPU only");
  ReplayInput in;
  in.arch = spec.arch;
  in.micro_batch = r.micro_batch;
  in.max_len = r.seq_len;
  in.lengths = *r.lengths;
  in.rank = r.adapter.rank;
  in.keeps_previous_logits = r.keeps_previous_logits;
  for (const TensorRole role : lora_target_roles(r.adapter.targets)) {
    in.lora_q |= role == TensorRole::AttnQ || role == TensorRole::AttnQKV;
    in.lora_k |= role == TensorRole::AttnK || role == TensorRole::AttnQKV;
    in.lora_v |= role == TensorRole::AttnV || role == TensorRole::AttnQKV;
    in.lora_o |= role == TensorRole::AttnOutput;
    in.lora_mlp |= role == TensorRole::FfnGate || role == TensorRole::FfnUp || role == TensorRole::FfnDown;
    in.lora_output |= role == TensorRole::Output;
  }
  return in;
}

}  // namespace

TrainInputs load_train_inputs(const std::string& model, const DataRoot& root) {
  if (model.empty()) throw Error(ErrorKind::Usage, "--model is required");
  QuantCatalog quant = QuantCatalog::load(root.data_file("quant_formats.json"));
  GpuCatalog gpus = GpuCatalog::load(root.data_file("gpus.json"));
  ModelSpec spec = load_model(model, root, quant);
  return {std::move(quant), std::move(gpus), std::move(spec), pytorch_cuda_context(root),
          perf::load_perf_defaults(root.data_file("perf_defaults.json"))};
}

void require_model_and_gpu(const TrainRequest& r) {
  if (r.model.empty()) throw Error(ErrorKind::Usage, "--model is required");
  if (r.gpu.empty()) throw Error(ErrorKind::Usage, "--gpu is required");
}

TrainPlan plan_training(const TrainRequest& r, const DataRoot& root) {
  require_model_and_gpu(r);
  return plan_training(r, load_train_inputs(r.model, root));
}

TrainPlan plan_training(const TrainRequest& r, const TrainInputs& inputs) {
  require_model_and_gpu(r);
  if (r.grad_accum == 0) throw Error(ErrorKind::Usage, "--grad-accum must be > 0");
  if (r.method == Method::Qlora && r.adapter.base_format == "bf16")
    throw Error(ErrorKind::Usage, "QLoRA needs a quantized base (--base-format nf4 / nf4-dq)");
  const QuantCatalog& quant = inputs.quant;
  GpuSpec gpu = inputs.gpus.resolve_one(r.gpu);
  require_plannable(gpu);
  if (r.gpu_memory) gpu = with_reported_total(gpu, *r.gpu_memory);
  // The loaded model as it is, or an untied copy: a search plans dozens of times on one load, and
  // a copy of a large inventory each time would undo much of what loading once saves.
  std::optional<ModelSpec> untied;
  if (r.untie_head && inputs.model.arch.tied_embeddings) untie(untied.emplace(inputs.model));
  const ModelSpec& spec = untied ? *untied : inputs.model;
  if (spec.arch.num_layers == 0 || spec.arch.hidden_size == 0)
    throw Error(ErrorKind::Usage, "model " + spec.id + " has no decoder layers vramplan can size for training");

  // Positions past max_position_embeddings: a learned absolute table (BERT, GPT-2, OPT: an
  // nn.Embedding indexed by position) has no row for them, so the forward fails; rotary (and
  // ALiBi) positions are computed, so a longer sequence runs (context extension), untrained.
  // DeBERTa's relative table (encoder.rel_embeddings) is indexed by clipped distance, not position.
  const std::uint64_t max_pos = spec.arch.max_position_embeddings;
  const bool learned_positions = std::any_of(spec.tensors.begin(), spec.tensors.end(), [](const TensorInfo& t) {
    return t.role == TensorRole::PositionEmbedding && t.name.find("rel_embeddings") == std::string::npos;
  });
  std::vector<std::string> warnings;
  if (max_pos > 0 && r.seq_len > max_pos) {
    if (learned_positions)
      throw Error(ErrorKind::Usage, "--seq-len " + std::to_string(r.seq_len) + " exceeds " + spec.id + "'s " +
                                        std::to_string(max_pos) + " learned absolute positions (max_position_embeddings)");
    warnings.push_back("--seq-len " + std::to_string(r.seq_len) + " exceeds " + spec.id + "'s max_position_embeddings " +
                       std::to_string(max_pos) + ": its positions are computed (RoPE), so it runs as context extension, "
                       "at a length the model was not trained on");
  }

  TrainPlan plan;
  plan.request = r;
  plan.warnings = std::move(warnings);
  plan.model_id = spec.id;
  plan.gpu_id = gpu.id;
  plan.gpu_name = gpu.name;
  plan.capacity = gpu.reported_total;
  plan.total_params = count_params(spec).total;
  plan.dp = r.parallel.dp();

  const RecipeBytes rb = recipe_bytes(r.precision);
  const std::uint64_t act_bytes = r.precision == PrecisionRecipe::Fp32 ? 4 : 2;
  ModelStatesInput states_in;
  states_in.num_layers = spec.arch.num_layers;
  states_in.precision = r.precision;
  states_in.optimizer = r.optimizer;
  states_in.sharding = r.sharding;
  states_in.offload = r.offload;
  states_in.parallel = r.parallel;
  ActivationInput act_in;
  act_in.arch = spec.arch;
  act_in.gated_mlp = has_gated_mlp(spec);
  norm_layout(spec, act_in);
  act_in.micro_batch = r.micro_batch;
  act_in.seq_len = r.seq_len;
  act_in.recompute = r.recompute;
  act_in.selective_op = r.selective_op;
  act_in.attention = r.attention;
  act_in.act_bytes = act_bytes;
  act_in.parallel = r.parallel;
  act_in.sequence_parallel = r.sequence_parallel;
  act_in.loss_chunks = r.loss_chunks;
  act_in.loss = r.loss;
  act_in.micro_batches = r.grad_accum;
  // PEFT's fp32 upcast of what it does not quantize makes the hidden states fp32 (activations.hpp).
  if (is_adapter(r.method) && r.adapter.upcast_unquantized && quantized_base(r.adapter))
    act_in.residual_bytes = 4;

  std::uint64_t dequant_buffer = 0;
  SavedLinearInputs bnb_saved{false, false, false, false};
  bool bnb_head = false;
  if (is_adapter(r.method)) {
    AdapterSetup setup = r.adapter;
    setup.method = r.method;
    setup.base_bytes = rb.weight;
    const auto adapters = adapter_plan(spec, setup, quant, act_bytes);
    states_in.tensors = adapters.tensors;
    act_in.saved = adapters.saved;
    act_in.adapter_bytes_per_token_layer = adapters.adapter_bytes_per_token_layer;
    dequant_buffer = adapters.dequant_buffer;
    bnb_saved = adapters.bnb_saved;
    bnb_head = adapters.bnb_head;
  } else {
    states_in.tensors = full_model_tensors(spec);
  }
  // A tied embedding: under PP the last stage keeps a copy for its lm_head (model_states.hpp).
  if (spec.arch.tied_embeddings &&
      std::none_of(spec.tensors.begin(), spec.tensors.end(), [](const TensorInfo& t) { return t.role == TensorRole::Output; }))
    for (const auto& t : spec.tensors)
      if (t.role == TensorRole::TokenEmbedding && t.shape.size() == 2) {
        states_in.tied_embedding = t.name;
        break;
      }
  const ModelStates states = model_states(states_in);
  const Activations acts = activations(act_in);
  plan.trainable_params = states.trainable_params;
  plan.frozen_params = states.frozen_params;
  plan.pp_stage = states.pp_stage;
  plan.shard_degree = states.shard_degree;
  plan.cpu = states.cpu;
  plan.unified = states.unified;

  for (const auto& c : states.gpu) {
    const bool grads_transient = c.name == "gradients" && r.grad_accum == 1;
    const bool gathered = c.name == "gathered_units";
    plan.gpu.push_back({c, grads_transient ? "optimizer_step" : gathered ? "forward_backward" : "resident"});
  }
  for (const auto& c : acts.parts) plan.gpu.push_back({c, "forward_backward"});
  if (dequant_buffer > 0)
    plan.gpu.push_back({{"dequant_buffer", Bytes(dequant_buffer),
                         "largest quantized linear dequantized to " + std::to_string(act_bytes) + " B: " + grouped(dequant_buffer) + " B"},
                        "forward_backward"});
  // Autocast over an fp32 frozen lm_head (PEFT's upcast of what bitsandbytes left unquantized, HF
  // Trainer bf16=True): F.linear is on autocast's lower-precision list, so the head weight is cast to
  // bf16 at every forward — not cached, since autocast caches only leaves that require grad
  // (aten/src/ATen/autocast_mode.cpp cached_cast) — and mm saves that copy for the gradient of its
  // input (derivatives.yaml mm: mat1 grad = grad x mat2^T), alive from the head's forward to its
  // backward, at the loss peak.
  if (is_adapter(r.method) && quantized_base(r.adapter) && r.adapter.upcast_unquantized && !r.adapter.quantize_head &&
      r.precision == PrecisionRecipe::AmpFp32Params) {
    const std::uint64_t copy = checked_mul(checked_mul(ceil_div(spec.arch.vocab_size, r.parallel.tp), spec.arch.hidden_size), 2);
    plan.gpu.push_back({{"autocast_head_copy", Bytes(copy),
                         "bf16 copy of the fp32 lm_head autocast makes for its matmul, saved for backward: " +
                             grouped(spec.arch.vocab_size) + " x " + grouped(spec.arch.hidden_size) + " x 2 B"},
                        "forward_backward"});
  }
  if (auto t = step_temporaries(r, states.gpu, states_in.tensors, states.shard_degree)) plan.gpu.push_back({*t, "optimizer_step"});
  if (r.holds_previous_graph)
    plan.gpu.push_back({previous_graph(r, spec.arch, bnb_saved, bnb_head, act_bytes), "forward_backward"});

  for (const auto& p : plan.gpu) {
    Bytes& phase = p.phase == "resident" ? plan.resident : p.phase == "forward_backward" ? plan.forward_backward : plan.optimizer_step;
    phase += p.part.bytes;
  }
  const bool step_peak = plan.optimizer_step > plan.forward_backward;
  plan.peak_phase = step_peak ? "optimizer_step" : "forward_backward";
  plan.peak_allocated = plan.resident + (step_peak ? plan.optimizer_step : plan.forward_backward);
  plan.headroom = signed_difference(plan.capacity, plan.peak_allocated);
  plan.reserved = reserved_view(reserved_input(plan, r, spec, states_in, act_bytes));
  if (r.lengths) {
    // Fragmentation over variable-length steps (step_replay.hpp) on top of the analytic allocated peak.
    const ReplayResult replay = replay_variable_length_steps(replay_input(r, spec, act_in.gated_mlp));
    const Bytes with_frag = std::min(plan.capacity, plan.peak_allocated + Bytes(replay.fragmentation));
    if (with_frag > plan.reserved.peak_reserved) {
      plan.reserved.peak_reserved = with_frag;
      plan.reserved.explain = "peak allocated + fragmentation over variable-length steps: " + replay.explain;
    }
  }
  plan.cuda_context = inputs.cuda_context;
  plan.peak_device = plan.reserved.peak_reserved + plan.cuda_context;
  if (r.fit_on_device) plan.headroom = signed_difference(plan.capacity, plan.peak_device);
  plan.fits = plan.headroom >= 0;

  plan.notes.push_back("peak allocated is PyTorch max_memory_allocated(); peak reserved (max_memory_reserved()) adds the "
                       "caching allocator's segments that the step could not reuse; the CUDA context (in nvidia-smi) comes on top");
  if (!states.unified.empty())
    plan.notes.push_back("paged optimizer states live in CUDA unified memory, outside PyTorch's allocator: they use GPU "
                         "memory while it is free and page to the host under pressure");
  if (r.parallel.pp > 1)
    plan.notes.push_back("pipeline stage " + std::to_string(states.pp_stage) + " has the most model states; activations are "
                         "the larger of the first stage (min(PP, micro-batches per step) in flight) and the last (one, plus the logits)" +
                         std::string(states_in.tied_embedding.empty() ? "" : "; the last stage keeps its own copy of the tied embedding as lm_head"));
  try {
    const TrainFlops flops = training_flops(spec, r, r.method == Method::Full ? 0 : plan.trainable_params);
    plan.speed = training_speed(flops, r, gpu, inputs.perf_defaults, plan.speed_unavailable);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    plan.speed_unavailable = e.what();  // the step model lacks a dimension this model needs
  }
  if (r.run_tokens && !(*r.run_tokens > 0)) throw Error(ErrorKind::Usage, "--tokens must be > 0");
  if (plan.speed && r.run_tokens) plan.run = training_run(*plan.speed, *r.run_tokens);
  return plan;
}

nlohmann::json train_json(const TrainPlan& p) {
  using nlohmann::json;
  auto gib = [](Bytes b) { return std::round(b.gib() * 1e4) / 1e4; };
  auto parts = [&](const std::vector<Component>& cs) {
    json a = json::array();
    for (const auto& c : cs) a.push_back({{"name", c.name}, {"bytes", c.bytes.count()}, {"gib", gib(c.bytes)}, {"explain", c.explain}});
    return a;
  };
  const auto& r = p.request;
  json gpu_parts = json::array();
  for (const auto& c : p.gpu)
    gpu_parts.push_back({{"name", c.part.name}, {"phase", c.phase}, {"bytes", c.part.bytes.count()},
                         {"gib", gib(c.part.bytes)}, {"explain", c.part.explain}});
  json setup = {{"method", method_name(r.method)},
                {"precision", precision_name(r.precision)},
                {"optimizer", optimizer_name(r.optimizer)},
                {"sharding", sharding_name(r.sharding)},
                {"offload", {{"optimizer", r.offload.optimizer}, {"params", r.offload.params}}},
                {"gpus", r.parallel.gpus},
                {"tp", r.parallel.tp},
                {"pp", r.parallel.pp},
                {"cp", r.parallel.cp},
                {"dp", p.dp},
                {"shard_degree", p.shard_degree},
                {"sequence_parallel", r.sequence_parallel},
                {"micro_batch", r.micro_batch},
                {"seq_len", r.seq_len},
                {"grad_accum", r.grad_accum},
                {"recompute", r.recompute == Recompute::Selective && r.selective_op ? std::string_view("selective-op") : recompute_name(r.recompute)},
                {"attention", attention_name(r.attention)},
                {"loss_chunks", r.loss_chunks},
                {"loss", loss_name(r.loss)}};
  if (r.method != Method::Full)
    setup["adapter"] = {{"rank", r.adapter.rank}, {"targets", r.adapter.targets}, {"base_format", r.adapter.base_format},
                        {"dropout", r.adapter.dropout}, {"quantize_targets_only", r.adapter.quantize_targets_only},
                        {"upcast_unquantized", r.adapter.upcast_unquantized}};
  json speed = nullptr, run = nullptr;
  if (p.speed) {
    const TrainSpeed& sp = *p.speed;
    speed = {{"flops_per_token", {{"matmul_forward", sp.flops.matmul},
                                  {"attention_forward", sp.flops.attention},
                                  {"adapter_forward", sp.flops.adapter},
                                  {"executed", sp.flops.executed},
                                  {"formula", sp.flops.formula}}},
             {"peak_tflops_per_gpu", sp.peak_tflops},
             {"peak_basis", sp.peak_label},
             {"efficiency", {{"min", sp.efficiency.min}, {"expected", sp.efficiency.expected}, {"max", sp.efficiency.max}}},
             {"tokens_per_step", sp.tokens_per_step},
             {"step_s", {{"expected", sp.step_s}, {"fast", sp.step_s_fast}, {"slow", sp.step_s_slow}}},
             {"tokens_per_s", {{"expected", sp.tokens_per_s}, {"slow", sp.tokens_per_s_slow}, {"fast", sp.tokens_per_s_fast}}},
             {"notes", sp.notes}};
  }
  if (p.run)
    run = {{"tokens", p.run->tokens},
           {"hours", {{"expected", p.run->hours}, {"fast", p.run->hours_fast}, {"slow", p.run->hours_slow}}},
           {"gpu_hours", p.run->gpu_hours}};
  return {{"schema", "vramplan.train/1"},
          {"model", p.model_id},
          {"gpu", {{"id", p.gpu_id}, {"name", p.gpu_name}, {"capacity_gib", gib(p.capacity)}}},
          {"setup", setup},
          {"params", {{"total", p.total_params}, {"trainable", p.trainable_params}, {"frozen", p.frozen_params}}},
          {"pp_stage", p.pp_stage},
          {"per_gpu", gpu_parts},
          {"phases_gib", {{"resident", gib(p.resident)}, {"forward_backward", gib(p.forward_backward)}, {"optimizer_step", gib(p.optimizer_step)}}},
          {"peak_allocated_gib", gib(p.peak_allocated)},
          {"peak_allocated_bytes", p.peak_allocated.count()},
          {"peak_phase", p.peak_phase},
          {"measured_quantity", "allocated"},
          {"peak_reserved_gib", gib(p.reserved.peak_reserved)},
          {"peak_reserved_bytes", p.reserved.peak_reserved.count()},
          {"reserved_explain", p.reserved.explain},
          {"cuda_context_gib", gib(p.cuda_context)},
          {"peak_device_gib", gib(p.peak_device)},
          {"fit_on", p.request.fit_on_device ? "device" : "allocated"},
          {"headroom_gib", std::round(static_cast<double>(p.headroom) / static_cast<double>(kGiB) * 1e4) / 1e4},
          {"fits", p.fits},
          {"cpu_per_rank", parts(p.cpu)},
          {"unified_memory", parts(p.unified)},
          {"notes", p.notes},
          {"warnings", p.warnings},
          {"speed", speed},
          {"speed_unavailable", p.speed ? nlohmann::json(nullptr) : nlohmann::json(p.speed_unavailable)},
          {"run", run}};
}

}  // namespace vramplan::train
