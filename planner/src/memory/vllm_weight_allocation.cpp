#include "vramplan/memory/vllm_weight_allocation.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/torch_allocator.hpp"

namespace vramplan::memory {

namespace {

using R = TensorRole;

// Where a decoder-layer tensor lands among the parameters vLLM creates for that layer: the
// construction rank (smaller = earlier in __init__) and the module it belongs to. Tensors of the
// same module and the same last name component ("weight", "bias", "..._scales") are one
// parameter: q/k/v -> qkv_proj, gate/up -> gate_up_proj, stacked gate/up experts -> w13.
// Sources: vllm/model_executor/models/llama.py (LlamaAttention: qkv_proj, o_proj, rotary_emb;
// LlamaDecoderLayer: self_attn, mlp, input_layernorm, post_attention_layernorm), qwen3.py (q_norm,
// k_norm after rotary_emb), deepseek_v2.py (DeepseekV2MLAAttention: fused_qkv_a_proj or
// kv_a_proj_with_mqa, q_a_layernorm, q_b_proj or q_proj, kv_a_layernorm, kv_b_proj, o_proj,
// rotary_emb; DeepseekV2MoE: gate, shared_experts, experts), layers/fused_moe (create_weights:
// w13_weight [E, 2I, H], w2_weight [E, H, I]).
struct Slot {
  int rank;
  const char* module;  // nullptr: the tensor is a parameter of its own, named as in the checkpoint
};

constexpr int kRopeRank = 25;  // get_rope() runs right after o_proj in every attention __init__

Slot slot_of(R role, const ModelArch& a) {
  const bool mla = a.kv_lora_rank > 0;
  switch (role) {
    case R::AttnQKV:
    case R::AttnK:
    case R::AttnV: return {10, "self_attn.qkv_proj"};
    case R::AttnQ: return mla ? Slot{12, "self_attn.q_proj"} : Slot{10, "self_attn.qkv_proj"};
    case R::AttnQA: return {10, "self_attn.fused_qkv_a_proj"};
    case R::AttnKVAMqa:
      return a.q_lora_rank > 0 ? Slot{10, "self_attn.fused_qkv_a_proj"} : Slot{10, "self_attn.kv_a_proj_with_mqa"};
    case R::AttnQANorm: return {11, "self_attn.q_a_layernorm"};
    case R::AttnQB: return {12, "self_attn.q_b_proj"};
    case R::AttnKVANorm: return {13, "self_attn.kv_a_layernorm"};
    case R::AttnKVB: return {14, "self_attn.kv_b_proj"};
    case R::AttnOutput: return {20, "self_attn.o_proj"};
    case R::AttnSinks: return {26, "self_attn.sinks"};
    case R::AttnQNorm: return {27, "self_attn.q_norm"};
    case R::AttnKNorm: return {28, "self_attn.k_norm"};
    case R::FfnGateInp: return {30, "mlp.gate"};
    case R::FfnExpProbsBias: return {31, "mlp.gate.e_score_correction_bias"};
    case R::FfnGateShexp:
    case R::FfnUpShexp: return {32, "mlp.shared_experts.gate_up_proj"};
    case R::FfnDownShexp: return {33, "mlp.shared_experts.down_proj"};
    case R::FfnGateInpShexp: return {34, "mlp.shared_expert_gate"};
    // nemotron_h.py NemotronHMoE builds fc1_latent_proj / fc2_latent_proj after shared_experts
    // and before experts (FusedMoE takes them as its routed input / output transforms).
    case R::FfnLatentDown:
    case R::FfnLatentUp: return {34, nullptr};
    case R::FfnGateExps:
    case R::FfnUpExps:
    case R::FfnGateUpExps: return {35, "mlp.experts.w13"};
    case R::FfnDownExps: return {36, "mlp.experts.w2"};
    case R::FfnGate:
    case R::FfnUp:
    case R::FfnGateUp: return {40, "mlp.gate_up_proj"};
    case R::FfnDown: return {41, "mlp.down_proj"};
    case R::AttnNorm: return {50, nullptr};  // norms keep their checkpoint names (HF naming varies)
    case R::AttnPostNorm: return {51, nullptr};
    case R::FfnNorm: return {52, nullptr};
    case R::FfnPostNorm: return {53, nullptr};
    default: return {60, nullptr};
  }
}

std::string last_component(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

bool global_before_layers(R role) {
  return role == R::Vision || role == R::Audio || role == R::TokenEmbedding || role == R::PositionEmbedding;
}

// The order of the tensors built before the decoder layers: a multimodal wrapper builds its
// tower first (e.g. Gemma3ForConditionalGeneration: vision_tower, multi_modal_projector,
// language_model), then the text model its embeddings.
int global_rank(R role) { return role == R::Vision || role == R::Audio ? 0 : role == R::TokenEmbedding ? 1 : 2; }

}  // namespace

std::vector<VllmAllocationStep> vllm_allocation_plan(const ModelSpec& model, const ResolvedWeights& weights,
                                                     const ShardOptions& o) {
  if (weights.tensor_bytes.size() != model.tensors.size())
    throw_internal("vllm_allocation_plan: resolved weights do not match the inventory");
  const auto& a = model.arch;
  const auto [first, end] = pp_layer_range(a.num_layers, o.pp, o.stage, o.pp_extra_layers_last);
  const bool first_stage = o.stage == 0, last_stage = o.stage + 1 == o.pp;
  auto rank_bytes = [&](std::size_t i) {
    return tensor_rank_bytes(model, model.tensors[i], weights.tensor_bytes[i], split_degree(model.tensors[i].role, o), o.vocab_pad);
  };

  std::vector<VllmAllocationStep> plan;
  auto add = [&](std::string name, std::uint64_t bytes) {
    if (bytes > 0) plan.push_back({std::move(name), bytes, std::nullopt});
  };

  // Before the layers (first stage): towers, then embeddings, each tensor one parameter.
  std::vector<std::size_t> before;
  std::map<std::uint64_t, std::vector<std::size_t>> by_layer;
  std::uint64_t embed_rank = 0;
  bool has_output = false;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const auto& t = model.tensors[i];
    if (t.role == R::TokenEmbedding) embed_rank = rank_bytes(i);
    if (t.role == R::Output) has_output = true;
    if (t.layer) {
      const auto l = static_cast<std::uint64_t>(*t.layer);
      if (l >= first && l < end) by_layer[l].push_back(i);
    } else if (global_before_layers(t.role) && first_stage) {
      before.push_back(i);
    }
  }
  std::stable_sort(before.begin(), before.end(), [&](std::size_t x, std::size_t y) {
    return global_rank(model.tensors[x].role) < global_rank(model.tensors[y].role);
  });
  for (const auto i : before) add(model.tensors[i].name, rank_bytes(i));

  // Decoder layers: inventory tensors merged into vLLM's parameters, in construction order.
  for (std::uint64_t l = first; l < end; ++l) {
    struct Param {
      int rank;
      std::string name;
      std::uint64_t bytes;
    };
    std::vector<Param> params;
    std::unordered_map<std::string, std::size_t> param_index;  // name -> params[k]: linear in the layer's tensors
    for (const auto i : by_layer[l]) {
      const auto& t = model.tensors[i];
      const Slot s = slot_of(t.role, a);
      std::string name = s.module ? "layers." + std::to_string(l) + "." + s.module + "." + last_component(t.name)
                                  : t.name;
      std::uint64_t bytes = rank_bytes(i);
      // attention_k_eq_v: qkv_proj keeps a V part the checkpoint lacks, as large as K's (shard_weights).
      if (copied_into_value_slot(a, t, o)) bytes = checked_add(bytes, bytes);
      if (const auto [it, fresh] = param_index.emplace(name, params.size()); !fresh)
        params[it->second].bytes = checked_add(params[it->second].bytes, bytes);
      else
        params.push_back({s.rank, std::move(name), bytes});
    }
    std::stable_sort(params.begin(), params.end(), [](const Param& x, const Param& y) { return x.rank < y.rank; });
    bool rope_done = l != first || !o.count_rope_tables;
    auto build_ropes = [&] {
      for (std::size_t r = 0; r < a.rope_tables.size(); ++r) {
        const auto& t = a.rope_tables[r];
        const std::uint64_t bytes = checked_mul(checked_mul(t.max_positions, t.rotary_dim), weights.compute_bytes);
        if (bytes > 0)
          plan.push_back({"rope_cache[" + std::to_string(r) + "]", bytes,
                          VllmRopeBuild{t.max_positions, t.rotary_dim, weights.compute_bytes,
                                        t.scaling_type.find("yarn") != std::string::npos}});
      }
      rope_done = true;
    };
    for (const auto& p : params) {
      if (!rope_done && p.rank > kRopeRank) build_ropes();
      add(p.name, p.bytes);
    }
    if (!rope_done) build_ropes();
  }

  // After the layers: other global tensors (every stage, as shard_weights counts them), then the
  // final norm and lm_head on the last stage (its own copy of tied embeddings under PP).
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const auto& t = model.tensors[i];
    if (t.layer || global_before_layers(t.role) || t.role == R::Output) continue;
    if (t.role != R::OutputNorm || last_stage) add(t.name, rank_bytes(i));
  }
  if (last_stage) {
    for (std::size_t i = 0; i < model.tensors.size(); ++i)
      if (model.tensors[i].role == R::Output) add(model.tensors[i].name, rank_bytes(i));
    if (!has_output && o.pp > 1) add("lm_head.weight (tied, own copy on the last PP stage)", embed_rank);
  }
  return plan;
}

namespace {

void build_rope_cache(TorchCachingAllocator& alloc, const VllmRopeBuild& r) {
  constexpr std::uint64_t fp32 = 4;
  // An empty tensor (rotary_dim 1 leaves rotary_dim / 2 = 0 frequencies) gets no block in
  // PyTorch: only non-empty ones are allocated and freed.
  using Handle = TorchCachingAllocator::Handle;
  auto take = [&](std::uint64_t bytes) { return bytes > 0 ? std::optional<Handle>(alloc.malloc(bytes)) : std::nullopt; };
  auto release = [&](std::optional<Handle> h) {
    if (h) alloc.free(*h);
  };
  const std::uint64_t half = checked_mul(checked_mul(r.positions, r.rotary_dim / 2), fp32);
  const auto t = take(checked_mul(r.positions, fp32));
  const auto freqs = take(half);
  auto trig = [&] {  // freqs.cos() (or .sin()), times mscale on YaRN tables
    const auto raw = take(half);
    if (!r.mscale) return raw;
    const auto scaled = take(half);
    release(raw);
    return scaled;
  };
  const auto cos = trig();
  const auto sin = trig();
  const auto cache = take(checked_mul(checked_mul(r.positions, r.rotary_dim), fp32));
  for (const auto h : {t, freqs, cos, sin}) release(h);
  if (r.dtype_bytes == fp32) return;  // .to(torch.float32) returns the same tensor
  take(checked_mul(checked_mul(r.positions, r.rotary_dim), r.dtype_bytes));
  release(cache);
}

}  // namespace

VllmAllocatorReplay replay_vllm_allocations(const std::vector<VllmAllocationStep>& plan) {
  TorchCachingAllocator alloc;
  VllmAllocatorReplay out;
  for (const auto& step : plan) {
    if (step.rope) build_rope_cache(alloc, *step.rope);
    else alloc.malloc(step.bytes);
    ++out.parameters;
    out.exact_bytes = checked_add(out.exact_bytes, step.bytes);
  }
  out.allocated = alloc.allocated();
  out.peak = alloc.peak_allocated();
  out.reserved = alloc.reserved();
  return out;
}

Component vllm_allocator_rounding(const ModelSpec& model, const ResolvedWeights& weights, const ShardOptions& o) {
  const auto r = replay_vllm_allocations(vllm_allocation_plan(model, weights, o));
  const std::uint64_t extra = r.allocated - r.exact_bytes;
  return {"weights.allocator_rounding", Bytes(extra),
          "PyTorch caching allocator (c10/cuda/CUDACachingAllocator.cpp): " + std::to_string(r.parameters) +
              " parameters in vLLM's construction order, blocks rounded to 512 B, requests >= 10 MiB in 2 MiB "
              "segments, tails <= 1 MiB not split off: allocated " + grouped(r.allocated) + " B - requested " +
              grouped(r.exact_bytes) + " B = +" + grouped(extra) +
              " B (quantized parameters at their final size; re-creation in process_weights_after_loading "
              "not replayed)"};
}

}  // namespace vramplan::memory
