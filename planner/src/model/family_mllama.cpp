// Llama-3.2-Vision (MllamaForConditionalGeneration): a Llama text model in which the layers
// listed in cross_attention_layers attend to the image instead of the text, and a tiled ViT.
// Modules as vLLM builds them (vllm/model_executor/models/mllama.py, the release line that
// still carries it, e.g. v0.10.1) with HF's checkpoint names (transformers models/mllama/):
//  - MllamaTextModel: embed_tokens of vocab_size + 8 rows (the image tokens), self-attention
//    LlamaDecoderLayer everywhere except MllamaCrossAttentionDecoderLayer at cross_attention_layers:
//    cross_attn.{q,k,v,o}_proj + q_norm / k_norm (RMSNorm over head_dim), the scalar gates
//    cross_attn_attn_gate / cross_attn_mlp_gate, an MLP and two norms; lm_head of vocab_size.
//  - MllamaVisionModel: patch_embedding (Conv2d, bias=False), class_embedding,
//    gated_positional_embedding (embedding of patches + 1 rows, gate, tile_embedding of
//    (max_aspect_ratio_id + 1) x max_num_tiles x (patches + 1) x w), pre/post_tile_positional_
//    embedding ((max_aspect_ratio_id + 1) x max_num_tiles x w, gate), layernorm_pre / _post,
//    transformer (num_hidden_layers) and global_transformer (num_global_layers, gated: gate_attn,
//    gate_ffn) of MllamaVisionEncoderLayer (q/k/v/o without bias, mlp.fc1 / fc2 with bias,
//    LayerNorms); max_aspect_ratio_id = len(supported_aspect_ratios).
//  - multi_modal_projector: Linear(vision_output_dim, text hidden, bias=True).
// KV: every layer keeps its LayerAttention::Full slot. vLLM's V0 engine, the only one that served
// Mllama (removed with V0 encoder-decoder support in 0.11, vllm-project/vllm#24907), sizes a cache
// block over all attention layers (vllm/worker/cache_engine.py CacheEngine.get_cache_block_size,
// ModelConfig.get_num_layers_by_block_type: num_hidden_layers), the cross-attention layers included:
// their slots hold the image's encoder tokens, which take blocks per request that are not modelled
// (listed as an exclusion).
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::hf {
namespace {

// MllamaTextModel: nn.Embedding(config.vocab_size + 8, hidden_size) — eight image/special rows.
constexpr std::uint64_t kMllamaExtraEmbeddingRows = 8;

void add_mllama_vision(const ConfigView& c, ModelSpec& spec) {
  const auto vision = c.root().at("vision_config");
  const VisionDims d = read_vision_dims(vision);
  const auto w = d.hidden, I = d.intermediate;
  const auto global_layers = checked_dimension(vision.at("num_global_layers"), "num_global_layers");
  const auto tiles = checked_dimension(vision.at("max_num_tiles"), "max_num_tiles");
  const auto out = checked_dimension(vision.at("vision_output_dim"), "vision_output_dim");
  const auto aspect_ids = vision.at("supported_aspect_ratios").items().size() + 1;
  const auto positions = d.patches() + 1;  // patches + the class token

  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  const std::string v = "vision_model.";
  b.tensor(v + "patch_embedding.weight", R::Vision, {w, d.channels, d.patch, d.patch});
  b.tensor(v + "class_embedding", R::Vision, {w});
  b.tensor(v + "gated_positional_embedding.embedding", R::Vision, {positions, w});
  b.tensor(v + "gated_positional_embedding.gate", R::Vision, {1});
  b.tensor(v + "gated_positional_embedding.tile_embedding.weight", R::Vision,
           {aspect_ids, checked_mul(checked_mul(tiles, positions), w)});
  for (const char* tile : {"pre_tile_positional_embedding.", "post_tile_positional_embedding."}) {
    b.tensor(v + tile + "embedding.weight", R::Vision, {aspect_ids, tiles * w});
    b.tensor(v + tile + "gate", R::Vision, {1});
  }
  b.norm(v + "layernorm_pre", R::Vision, w, true);
  b.norm(v + "layernorm_post", R::Vision, w, true);
  auto encoder = [&](const std::string& stack, std::uint64_t layers, bool gated) {
    for (std::uint64_t i = 0; i < layers; ++i) {
      const auto p = v + stack + ".layers." + std::to_string(i) + ".";
      for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
        b.linear(p + "self_attn." + proj, R::Vision, w, w);
      b.linear(p + "mlp.fc1", R::Vision, I, w, true);
      b.linear(p + "mlp.fc2", R::Vision, w, I, true);
      b.norm(p + "input_layernorm", R::Vision, w, true);
      b.norm(p + "post_attention_layernorm", R::Vision, w, true);
      if (gated) {
        b.tensor(p + "gate_attn", R::Vision, {1});
        b.tensor(p + "gate_ffn", R::Vision, {1});
      }
    }
  };
  encoder("transformer", d.layers, false);
  encoder("global_transformer", global_layers, true);
  b.linear("multi_modal_projector", R::Vision, spec.arch.hidden_size, out, true);
}

}  // namespace

void build_mllama(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.intermediate_size = c.positive({"intermediate_size"});
  read_layer_attention(c, Pattern::SlidingIfConfigured, a);
  read_rope_tables(c, a.head_dim, a);
  std::vector<bool> cross(a.num_layers, false);
  if (const auto listed = c.find({"cross_attention_layers"}))
    for (const auto& item : listed->items()) {
      const auto i = item.as_u64();
      if (i >= a.num_layers) item.fail("layer index out of range");
      cross[i] = true;
    }

  const auto h = a.hidden_size, d = a.head_dim, I = a.intermediate_size;
  const auto q_out = a.num_heads * d, kv_out = a.num_kv_heads * d;
  const std::string mp = "language_model.model.";
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(mp + "embed_tokens.weight", R::TokenEmbedding, {a.vocab_size + kMllamaExtraEmbeddingRows, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix(mp, "layers", i);
    const auto at = p + (cross[i] ? "cross_attn." : "self_attn.");
    b.norm(p + "input_layernorm", R::AttnNorm, h);
    b.linear(at + "q_proj", R::AttnQ, q_out, h);
    b.linear(at + "k_proj", R::AttnK, kv_out, h);
    b.linear(at + "v_proj", R::AttnV, kv_out, h);
    b.linear(at + "o_proj", R::AttnOutput, h, q_out);
    if (cross[i]) {
      b.tensor(at + "q_norm.weight", R::AttnQNorm, {d});
      b.tensor(at + "k_norm.weight", R::AttnKNorm, {d});
      b.tensor(p + "cross_attn_attn_gate", R::AttnNorm, {1});  // scalar gates: replicated
      b.tensor(p + "cross_attn_mlp_gate", R::FfnNorm, {1});
    }
    b.norm(p + "post_attention_layernorm", R::FfnNorm, h);
    b.linear(p + "mlp.gate_proj", R::FfnGate, I, h);
    b.linear(p + "mlp.up_proj", R::FfnUp, I, h);
    b.linear(p + "mlp.down_proj", R::FfnDown, h, I);
  }
  b.set_layer(std::nullopt);
  b.norm(mp + "norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear("language_model.lm_head", R::Output, a.vocab_size, h);
  spec.exclusions.push_back(
      "KV blocks the image's encoder tokens take in the cross-attention layers (vLLM V0 encoder-decoder cache) "
      "not modelled: every layer is sized as a text KV layer, as vLLM sizes its blocks");
}

void add_mllama_vision_tower(const ConfigView& c, ModelSpec& spec) { add_mllama_vision(c, spec); }

}  // namespace vramplan::hf
