// inventory_builder.hpp (private) — appends HF-named tensors to a ModelSpec.
//
// Family handlers describe a checkpoint as calls like linear("model.layers.3.self_attn.q_proj",
// AttnQ, out, in, bias); this class turns them into TensorInfo rows (weight + optional bias,
// PyTorch {out, in} shapes, the layer index, the checkpoint's stored format).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/model/spec.hpp"

namespace vramplan::hf {

class InventoryBuilder {
 public:
  InventoryBuilder(ModelSpec& spec, std::string stored_format)
      : spec_(spec), format_(std::move(stored_format)) {}

  //! Tensors added from now on carry this layer index (nullopt: global tensors).
  void set_layer(std::optional<int> layer) { layer_ = layer; }
  //! Tensors added from now on get this role instead of their own (the MTP module) when set.
  void override_role(std::optional<TensorRole> role) { override_ = role; }

  void tensor(std::string name, TensorRole role, std::vector<std::uint64_t> shape,
              bool is_bias = false);
  //! `<prefix>.weight` {out, in} and, when `bias`, `<prefix>.bias` {out}.
  void linear(const std::string& prefix, TensorRole role, std::uint64_t out, std::uint64_t in,
              bool bias = false);
  //! A norm: `<prefix>.weight` {dim} and, when `bias` (LayerNorm), `<prefix>.bias` {dim}.
  void norm(const std::string& prefix, TensorRole role, std::uint64_t dim, bool bias = false);
  //! Stacked routed experts: `<prefix>` names the stacked tensor; shape {experts, out, in}.
  void experts(const std::string& name, TensorRole role, std::uint64_t experts, std::uint64_t out,
               std::uint64_t in);

 private:
  ModelSpec& spec_;
  std::string format_;
  std::optional<int> layer_;
  std::optional<TensorRole> override_;
};

//! A gated MLP under `prefix` ("...mlp." or "...shared_experts."): `gate_proj` and `up_proj`
//! {intermediate, hidden}, `down_proj` {hidden, intermediate}, with the three roles given.
void gated_mlp(InventoryBuilder& b, const std::string& prefix, std::uint64_t intermediate, std::uint64_t hidden,
               TensorRole gate, TensorRole up, TensorRole down);

//! Stacked routed experts under `prefix`: `experts.*.{gate,up,down}_proj.weight` of `experts`
//! experts, each `intermediate` wide over `hidden` (the layout Qwen2-MoE, DeepSeek and ERNIE share).
void routed_experts(InventoryBuilder& b, const std::string& prefix, std::uint64_t experts,
                    std::uint64_t intermediate, std::uint64_t hidden);

//! A Qwen2-MoE-style sparse MLP under `prefix` ("model.layers.3.mlp."): the router `gate`,
//! the stacked routed experts' gate / up / down projections and, when the config has one, the
//! shared expert with its sigmoid gate (transformers qwen2_moe / qwen3_moe / qwen3_next).
void qwen_moe_mlp(InventoryBuilder& b, const std::string& prefix, const ModelArch& a);

//! DeepSeek-V3's sparse MLP under `prefix` ("model.layers.3.mlp."): the router `gate`, its
//! per-expert `gate.e_score_correction_bias` when `score_bias` (noaux_tc routing), the stacked
//! routed experts and, when the arch has them, `shared_experts` (no gate on them). GLM-4.5 MoE and
//! GLM-4.7-Flash use the same block.
void deepseek_moe_mlp(InventoryBuilder& b, const std::string& prefix, const ModelArch& a, bool score_bias);

//! The module names of a sparse MLP with a router selection bias and one ungated shared expert,
//! relative to its prefix: Kimi-Linear ("gate", "gate.e_score_correction_bias",
//! "experts.*.w1.weight", ... "shared_experts."), Step-3.5-Flash ("moe.gate", "moe.router_bias",
//! "moe.gate_proj.weight", ... "share_expert.").
struct BiasedMoeNames {
  const char* router;
  const char* bias;
  const char* gate_experts;
  const char* up_experts;
  const char* down_experts;
  const char* shared;
};

//! That MLP under `prefix`: the router {E, h}, its bias {E}, the stacked experts and the shared
//! expert of shared_expert_intermediate_size.
void biased_moe_mlp(InventoryBuilder& b, const std::string& prefix, const ModelArch& a, const BiasedMoeNames& n);

//! "<prefix><layers>.<i>." — the module path of decoder layer i.
std::string layer_prefix(std::string_view model_prefix, std::string_view layers, std::uint64_t i);

//! The token embedding "<model_prefix>embed_tokens.weight" {vocab, hidden}, then every decoder layer
//! "<model_prefix>layers.<i>." with its input_layernorm and post_attention_layernorm and what
//! `mixer(prefix, i)` adds (attention and MLP); leaves no layer set.
template <class Mixer>
void pre_norm_decoder_layers(InventoryBuilder& b, const std::string& model_prefix, const ModelArch& a, Mixer mixer) {
  b.tensor(model_prefix + "embed_tokens.weight", TensorRole::TokenEmbedding, {a.vocab_size, a.hidden_size});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const std::string p = layer_prefix(model_prefix, "layers", i);
    b.norm(p + "input_layernorm", TensorRole::AttnNorm, a.hidden_size);
    b.norm(p + "post_attention_layernorm", TensorRole::FfnNorm, a.hidden_size);
    mixer(p, i);
  }
  b.set_layer(std::nullopt);
}

}  // namespace vramplan::hf
