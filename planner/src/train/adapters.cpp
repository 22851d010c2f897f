// LoRA / DoRA / QLoRA adapters and the frozen base (train/adapters.hpp).
#include "vramplan/train/adapters.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::train {
namespace {

using R = TensorRole;

struct TargetName {
  std::string_view name;
  std::vector<R> roles;
};

const std::vector<TargetName>& target_names() {
  static const std::vector<TargetName> names = {
      {"q_proj", {R::AttnQ, R::AttnQB}}, {"wq", {R::AttnQ}}, {"query", {R::AttnQ}},
      {"k_proj", {R::AttnK}}, {"wk", {R::AttnK}}, {"key", {R::AttnK}},
      {"v_proj", {R::AttnV}}, {"wv", {R::AttnV}}, {"value", {R::AttnV}},
      {"o_proj", {R::AttnOutput}}, {"output_proj", {R::AttnOutput}}, {"wo", {R::AttnOutput}},
      {"projection", {R::AttnOutput}}, {"dense", {R::AttnOutput}}, {"out_proj", {R::AttnOutput}},
      {"c_attn", {R::AttnQKV}}, {"query_key_value", {R::AttnQKV}}, {"qkv_proj", {R::AttnQKV}}, {"wqkv", {R::AttnQKV}},
      {"gate_proj", {R::FfnGate}}, {"w1", {R::FfnGate}}, {"up_proj", {R::FfnUp}}, {"w3", {R::FfnUp}},
      {"down_proj", {R::FfnDown}}, {"w2", {R::FfnDown}}, {"gate_up_proj", {R::FfnGateUp}},
      {"mlp", {R::FfnGate, R::FfnUp, R::FfnDown, R::FfnGateUp}},
      {"lm_head", {R::Output}}, {"output", {R::Output}}, {"head", {R::Output}},
  };
  return names;
}

// PEFT's "all-linear": every nn.Linear in the blocks except the output layer
// (peft/tuners/tuners_utils.py _maybe_include_all_linear_layers excludes the lm_head).
const std::vector<R>& block_linear_roles() {
  static const std::vector<R> roles = {R::AttnQ, R::AttnK, R::AttnV, R::AttnQKV, R::AttnOutput, R::AttnQA, R::AttnQB,
                                       R::AttnKVAMqa, R::AttnKVB, R::FfnGate, R::FfnUp, R::FfnDown, R::FfnGateUp,
                                       R::FfnGateShexp, R::FfnUpShexp, R::FfnDownShexp, R::FfnGateExps, R::FfnUpExps,
                                       R::FfnDownExps, R::FfnGateUpExps};
  return roles;
}

bool contains(const std::vector<R>& v, R r) { return std::find(v.begin(), v.end(), r) != v.end(); }

// A linear layer whose input autograd keeps (an adapter on it, or a bitsandbytes base).
void mark_saved(R role, SavedLinearInputs& saved) {
  switch (role) {
    case R::AttnQ: case R::AttnK: case R::AttnV: case R::AttnQKV: saved.qkv = true; break;
    case R::AttnOutput: saved.o = true; break;
    case R::FfnGate: case R::FfnUp: case R::FfnGateUp: saved.gate_up = true; break;
    case R::FfnDown: saved.down = true; break;
    default: break;
  }
}

int position(const TensorInfo& t, std::uint64_t num_layers) {
  if (t.layer) return *t.layer;
  return t.role == R::Output || t.role == R::OutputNorm ? static_cast<int>(num_layers) : -1;
}

}  // namespace

std::vector<TensorRole> lora_target_roles(std::string_view targets) {
  std::vector<R> roles;
  std::string list(targets);
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    std::string name = to_lower(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
    if (!name.empty()) {
      if (name == "all-linear" || name == "all_linear" || name == "all") {
        roles.insert(roles.end(), block_linear_roles().begin(), block_linear_roles().end());
      } else {
        const auto& names = target_names();
        const auto it = std::find_if(names.begin(), names.end(), [&](const TargetName& n) { return n.name == name; });
        if (it == names.end()) {
          std::string known = "all-linear";
          for (const auto& n : names) known += ", " + std::string(n.name);
          throw Error(ErrorKind::Usage, "unknown LoRA target module '" + name + "' (known: " + known + ")");
        }
        roles.insert(roles.end(), it->roles.begin(), it->roles.end());
      }
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (roles.empty()) throw Error(ErrorKind::Usage, "--lora-targets names no module");
  return roles;
}

AdapterPlan adapter_plan(const ModelSpec& spec, const AdapterSetup& setup, const QuantCatalog& formats,
                         std::uint64_t act_bytes) {
  if (setup.method == Method::Full) throw Error(ErrorKind::Internal, "adapter_plan called for full training");
  if (setup.rank == 0) throw Error(ErrorKind::Usage, "--lora-rank must be > 0");
  // A rank above min(d_in, d_out) of a target adds no expressiveness (the update's rank is bounded
  // by both sides); the hidden size is the largest such minimum of a decoder's projections.
  if (spec.arch.hidden_size > 0 && setup.rank > spec.arch.hidden_size)
    throw Error(ErrorKind::Usage, "--lora-rank " + std::to_string(setup.rank) + " exceeds the model's hidden size " +
                                      std::to_string(spec.arch.hidden_size) + " (a LoRA update's rank is at most min(d_in, d_out))");
  const QuantFormat* base = &formats.get(setup.base_format);
  const bool quantized = quantized_base(setup);
  const auto targets = lora_target_roles(setup.targets);
  const std::uint64_t L = spec.arch.num_layers, r = setup.rank;
  const bool want_q = contains(targets, R::AttnQ), want_k = contains(targets, R::AttnK), want_v = contains(targets, R::AttnV);

  AdapterPlan plan;
  plan.saved = {false, false, false, false};
  bool qkv_dropout_counted = false;  // fused_qkv_dropout: one dropped copy for q, k and v
  for (const auto& t : spec.tensors) {
    if (t.role == R::Mtp) continue;
    const int pos = position(t, L);
    const bool linear = t.shape.size() >= 2 && !t.is_bias;
    // q / k / v named on a fused qkv projection (Falcon, Phi-3 in LitGPT: LoRAQKVLinear with
    // enable_q / enable_k / enable_v): one A per enabled part, B over the enabled outputs.
    const bool fused_parts = t.role == R::AttnQKV && !contains(targets, R::AttnQKV) &&
                             (want_q || want_k || want_v);
    const bool targeted = linear && (contains(targets, t.role) || fused_parts);
    const bool block_linear = linear && contains(block_linear_roles(), t.role);
    const bool head = linear && t.role == R::Output && setup.quantize_head;
    const bool quantize = quantized && (block_linear || head) && (!setup.quantize_targets_only || targeted);

    ParamTensor frozen;
    frozen.name = t.name;
    frozen.shape = t.shape;
    frozen.layer = pos;
    frozen.trainable = false;
    frozen.tp_split = linear || t.role == R::TokenEmbedding;
    const std::uint64_t plain_bytes = quantized && setup.upcast_unquantized ? 4 : setup.base_bytes;
    frozen.frozen_bytes = quantize ? tensor_bytes(*base, t.shape, t.name) : checked_mul(t.elements(), plain_bytes);
    // The dequantized weight: act_bytes wide, plus the fp16 copy it is cast from (dequant_via_fp16).
    if (quantize)
      plan.dequant_buffer = std::max(plan.dequant_buffer, checked_mul(t.elements(), act_bytes + (setup.dequant_via_fp16 ? 2 : 0)));
    // bitsandbytes' MatMul4Bit / MatMul8bitLt keep the input of every quantized linear for
    // backward, frozen or not (bnb/autograd/_functions.py: ctx.tensors = (A, B) whenever an input
    // needs a gradient); torchao's NF4 linear (torchtune) keeps only the weight.
    if (quantize && base->family == "bitsandbytes") {
      mark_saved(t.role, plan.saved);
      mark_saved(t.role, plan.bnb_saved);
      if (t.role == R::Output) plan.bnb_head = true;
    }
    plan.tensors.push_back(std::move(frozen));
    if (!targeted) continue;

    // {.., out, in}: experts (stacked {E, out, in}) get one adapter per expert.
    const std::uint64_t in = t.shape.back();
    std::uint64_t out = t.shape[t.shape.size() - 2], parts = 1;
    if (fused_parts) {
      const std::uint64_t q = spec.arch.num_heads * spec.arch.head_dim, kv = spec.arch.num_kv_heads * spec.arch.head_dim;
      out = (want_q ? q : 0) + (want_k ? kv : 0) + (want_v ? kv : 0);
      parts = (want_q ? 1 : 0) + (want_k ? 1 : 0) + (want_v ? 1 : 0);
    }
    const std::uint64_t copies = t.shape.size() == 3 ? t.shape[0] : 1;
    ++plan.targeted_modules;
    ParamTensor a{t.name + ".lora_A", {copies * r * parts, in}, pos, false, true, 0};
    ParamTensor b{t.name + ".lora_B", {copies * out, r}, pos, true, true, 0};
    plan.adapter_params = checked_add(plan.adapter_params, checked_add(a.elements(), b.elements()));
    plan.tensors.push_back(std::move(a));
    plan.tensors.push_back(std::move(b));
    if (setup.method == Method::Dora) {
      ParamTensor m{t.name + ".lora_magnitude", {copies * out}, pos, true, true, 0};
      plan.adapter_params = checked_add(plan.adapter_params, m.elements());
      plan.tensors.push_back(std::move(m));
    }
    if (t.layer && *t.layer == 0) {
      std::uint64_t extra = r * parts * act_bytes;
      const bool qkv_part = t.role == R::AttnQ || t.role == R::AttnK || t.role == R::AttnV;
      if (setup.dropout && !(setup.fused_qkv_dropout && qkv_part && qkv_dropout_counted))
        extra += in * (act_bytes + 1);
      if (qkv_part) qkv_dropout_counted = true;
      if (setup.method == Method::Dora) extra += out * act_bytes;
      plan.adapter_bytes_per_token_layer += copies == 1 ? extra : extra * spec.arch.experts_per_token;
    }
    mark_saved(t.role, plan.saved);
  }
  if (plan.targeted_modules == 0)
    throw Error(ErrorKind::Usage, "--lora-targets '" + setup.targets + "' matches no layer of " + spec.id);
  return plan;
}

}  // namespace vramplan::train
