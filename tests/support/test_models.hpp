// test_models.hpp — hand-built model specs for the tests (no loader involved): a Llama-style
// dense decoder whose tensor shapes follow the HF modules (q/k/v/o, gate/up/down, two norms per
// layer).
#pragma once

#include <string>

#include "vramplan/model/spec.hpp"

namespace vramplan::test {

struct DenseShape {
  std::uint64_t layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128;
  std::uint64_t intermediate = 14336, vocab = 128256, max_positions = 131072;
  bool tied = false;
};

inline ModelSpec dense_model(const DenseShape& s, const std::string& id = "test-dense") {
  ModelSpec m;
  m.id = id;
  m.source.kind = "test";
  auto& a = m.arch;
  a.architecture = "LlamaForCausalLM";
  a.model_type = "llama";
  a.hidden_size = s.hidden;
  a.num_layers = s.layers;
  a.num_heads = s.heads;
  a.num_kv_heads = s.kv_heads;
  a.head_dim = a.v_head_dim = s.head_dim;
  a.intermediate_size = s.intermediate;
  a.vocab_size = s.vocab;
  a.max_position_embeddings = s.max_positions;
  a.tied_embeddings = s.tied;
  a.torch_dtype = "bfloat16";
  a.layer_attention.assign(s.layers, LayerAttention::Full);
  a.rope_tables.push_back({s.head_dim, s.max_positions, "", 1.0});
  auto add = [&](std::string name, TensorRole role, std::vector<std::uint64_t> shape, std::optional<int> layer) {
    TensorInfo t;
    t.name = std::move(name);
    t.role = role;
    t.shape = std::move(shape);
    t.layer = layer;
    m.tensors.push_back(std::move(t));
  };
  add("model.embed_tokens.weight", TensorRole::TokenEmbedding, {s.vocab, s.hidden}, std::nullopt);
  const std::uint64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  for (std::uint64_t l = 0; l < s.layers; ++l) {
    const int li = static_cast<int>(l);
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", TensorRole::AttnNorm, {s.hidden}, li);
    add(p + "self_attn.q_proj.weight", TensorRole::AttnQ, {q, s.hidden}, li);
    add(p + "self_attn.k_proj.weight", TensorRole::AttnK, {kv, s.hidden}, li);
    add(p + "self_attn.v_proj.weight", TensorRole::AttnV, {kv, s.hidden}, li);
    add(p + "self_attn.o_proj.weight", TensorRole::AttnOutput, {s.hidden, q}, li);
    add(p + "post_attention_layernorm.weight", TensorRole::FfnNorm, {s.hidden}, li);
    add(p + "mlp.gate_proj.weight", TensorRole::FfnGate, {s.intermediate, s.hidden}, li);
    add(p + "mlp.up_proj.weight", TensorRole::FfnUp, {s.intermediate, s.hidden}, li);
    add(p + "mlp.down_proj.weight", TensorRole::FfnDown, {s.hidden, s.intermediate}, li);
  }
  add("model.norm.weight", TensorRole::OutputNorm, {s.hidden}, std::nullopt);
  if (!s.tied) add("lm_head.weight", TensorRole::Output, {s.vocab, s.hidden}, std::nullopt);
  return m;
}

}  // namespace vramplan::test
