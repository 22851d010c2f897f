// A Llama-style tensor inventory (HF LlamaForCausalLM layout) from config numbers, for the
// performance tests: the same roles and shapes a config reader would produce, plus per-tensor
// byte counts at a given bytes-per-weight for linear layers and for embedding / lm_head.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/model/spec.hpp"

namespace vramplan::test {

struct LlamaConfig {
  std::uint64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, intermediate = 0, vocab = 0;
  bool tied = false;
  // MoE (Mixtral layout: stacked experts per layer); 0 = dense.
  std::uint64_t experts = 0, experts_per_token = 0;
};

struct LlamaInventory {
  ModelSpec spec;
  std::vector<std::uint64_t> bytes;
};

//! `linear_bytes` per weight of the attention / MLP / expert matrices, `edge_bytes` per weight of
//! embedding and lm_head, 2 B for norms.
inline LlamaInventory llama_inventory(const std::string& id, const LlamaConfig& c,
                                      double linear_bytes, double edge_bytes) {
  LlamaInventory inv;
  ModelSpec& s = inv.spec;
  s.id = id;
  ModelArch& a = s.arch;
  a.hidden_size = c.hidden;
  a.num_layers = c.layers;
  a.num_heads = c.heads;
  a.num_kv_heads = c.kv_heads;
  a.head_dim = c.hidden / c.heads;
  a.v_head_dim = a.head_dim;
  a.intermediate_size = c.intermediate;
  a.vocab_size = c.vocab;
  a.tied_embeddings = c.tied;
  a.num_experts = c.experts;
  a.experts_per_token = c.experts_per_token;
  a.layer_attention.assign(c.layers, LayerAttention::Full);
  auto add = [&](std::string name, TensorRole role, std::vector<std::uint64_t> shape,
                 std::optional<int> layer, double per_weight) {
    TensorInfo t;
    t.name = std::move(name);
    t.role = role;
    t.shape = std::move(shape);
    t.layer = layer;
    inv.bytes.push_back(static_cast<std::uint64_t>(static_cast<double>(t.elements()) * per_weight));
    s.tensors.push_back(std::move(t));
  };
  const std::uint64_t h = c.hidden, d = a.head_dim;
  add("model.embed_tokens.weight", TensorRole::TokenEmbedding, {c.vocab, h}, std::nullopt, edge_bytes);
  for (std::uint64_t l = 0; l < c.layers; ++l) {
    const int li = static_cast<int>(l);
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", TensorRole::AttnNorm, {h}, li, 2);
    add(p + "self_attn.q_proj.weight", TensorRole::AttnQ, {c.heads * d, h}, li, linear_bytes);
    add(p + "self_attn.k_proj.weight", TensorRole::AttnK, {c.kv_heads * d, h}, li, linear_bytes);
    add(p + "self_attn.v_proj.weight", TensorRole::AttnV, {c.kv_heads * d, h}, li, linear_bytes);
    add(p + "self_attn.o_proj.weight", TensorRole::AttnOutput, {h, c.heads * d}, li, linear_bytes);
    add(p + "post_attention_layernorm.weight", TensorRole::FfnNorm, {h}, li, 2);
    if (c.experts == 0) {
      add(p + "mlp.gate_proj.weight", TensorRole::FfnGate, {c.intermediate, h}, li, linear_bytes);
      add(p + "mlp.up_proj.weight", TensorRole::FfnUp, {c.intermediate, h}, li, linear_bytes);
      add(p + "mlp.down_proj.weight", TensorRole::FfnDown, {h, c.intermediate}, li, linear_bytes);
    } else {
      add(p + "block_sparse_moe.gate.weight", TensorRole::FfnGateInp, {c.experts, h}, li, 2);
      add(p + "experts.gate", TensorRole::FfnGateExps, {c.experts, c.intermediate, h}, li, linear_bytes);
      add(p + "experts.up", TensorRole::FfnUpExps, {c.experts, c.intermediate, h}, li, linear_bytes);
      add(p + "experts.down", TensorRole::FfnDownExps, {c.experts, h, c.intermediate}, li, linear_bytes);
    }
  }
  add("model.norm.weight", TensorRole::OutputNorm, {h}, std::nullopt, 2);
  if (!c.tied) add("lm_head.weight", TensorRole::Output, {c.vocab, h}, std::nullopt, edge_bytes);
  return inv;
}

}  // namespace vramplan::test
