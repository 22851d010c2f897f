// The Qwen2.5-VL and Qwen3-VL vision transformers + patch mergers, counted from vision_config.
// Modules as vLLM builds them (checkpoint names are the published ones, "visual."):
//  - vllm/model_executor/models/qwen2_5_vl.py Qwen2_5_VisionTransformer: patch_embed.proj
//    (Conv3d over temporal_patch_size x patch x patch, bias=False); blocks[i] =
//    Qwen2_5_VisionBlock: norm1 / norm2 (RMSNorm), attn.qkv + attn.proj (bias=True),
//    mlp.gate_proj / up_proj / down_proj (Qwen2_5_VisionMLP, bias=True); merger =
//    Qwen2_5_VisionPatchMerger: ln_q (RMSNorm), mlp.0 (w x merge^2 square, bias) and mlp.2
//    (-> out_hidden_size, bias).
//  - vllm/model_executor/models/qwen3_vl.py Qwen3_VisionTransformer: patch_embed.proj (Conv3d,
//    bias=True), pos_embed (num_position_embeddings x w); blocks[i] = Qwen3_VisionBlock: norm1 /
//    norm2 (LayerNorm), attn.qkv / attn.proj (bias), mlp.linear_fc1 / linear_fc2 (Qwen3_VisionMLP,
//    bias); merger = Qwen3_VisionPatchMerger (norm LayerNorm over w, linear_fc1 square of
//    w x merge^2, linear_fc2 -> out_hidden_size); deepstack_merger_list: one merger per
//    deepstack_visual_indexes entry with use_postshuffle_norm (its LayerNorm over w x merge^2).
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::hf {
namespace {

struct QwenVisionDims {
  std::uint64_t width = 0, intermediate = 0, depth = 0, out = 0, patch = 0, temporal = 0, merge = 0;
  std::uint64_t channels = 3;
};

QwenVisionDims read_qwen_vision(const JsonView& vision) {
  QwenVisionDims d;
  d.width = vision_count(vision, "hidden_size");
  d.intermediate = vision_count(vision, "intermediate_size");
  d.depth = vision_count(vision, "depth");
  d.out = vision_count(vision, "out_hidden_size");
  d.patch = vision_count(vision, "patch_size");
  d.temporal = vision_count(vision, "temporal_patch_size");
  d.merge = vision_count(vision, "spatial_merge_size");
  for (const char* key : {"in_channels", "in_chans"})
    if (const auto ch = vision.get(key)) {
      d.channels = checked_dimension(*ch, key);
      break;
    }
  return d;
}

//! The dummy image of vLLM's profiling: Qwen2VLProcessingInfo.get_image_size_with_most_features
//! (qwen2_vl.py, reused by qwen2_5_vl.py and qwen3_vl.py) resizes to the processor's largest
//! area, max_pixels, in units of (patch x merge)^2: tokens = max_pixels / (patch x merge)^2
//! embeddings, patches = tokens x merge^2 rows of channels x temporal x patch^2 pixel values
//! (a still image is repeated to temporal_patch_size frames).
void set_qwen_dummy_image(const QwenVisionDims& d, std::uint64_t max_pixels, ModelSpec& spec) {
  const auto unit = d.patch * d.merge;
  const auto tokens = max_pixels / (unit * unit);
  const auto patches = checked_mul(tokens, d.merge * d.merge);
  spec.arch.mm_tokens_per_item = tokens;
  spec.arch.mm_pixel_values_per_item = checked_mul(patches, d.channels * d.temporal * d.patch * d.patch);
}

// The processors' largest image area (preprocessor_config.json of the published checkpoints;
// config.json does not carry it). Qwen2.5-VL: "max_pixels": 12845056 (= 16384 x 28^2), e.g.
// https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/preprocessor_config.json; vLLM logs
// "Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image
// items of the maximum feature size" for Qwen2.5-VL-3B (https://github.com/vllm-project/vllm/issues/27706).
// Qwen3-VL: "size": {"longest_edge": 16777216} (= 16384 x 32^2), e.g.
// https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct/blob/main/preprocessor_config.json.
constexpr std::uint64_t kQwen25VlMaxPixels = 12845056;
constexpr std::uint64_t kQwen3VlMaxPixels = 16777216;

}  // namespace

void add_qwen2_5_vision_tower(const ConfigView& c, ModelSpec& spec) {
  const QwenVisionDims d = read_qwen_vision(c.root().at("vision_config"));
  const auto w = d.width, I = d.intermediate, wm = checked_mul(w, d.merge * d.merge);
  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  b.tensor("visual.patch_embed.proj.weight", R::Vision, {w, d.channels, d.temporal, d.patch, d.patch});
  for (std::uint64_t i = 0; i < d.depth; ++i) {
    const auto p = "visual.blocks." + std::to_string(i) + ".";
    b.norm(p + "norm1", R::Vision, w);
    b.norm(p + "norm2", R::Vision, w);
    b.linear(p + "attn.qkv", R::Vision, 3 * w, w, true);
    b.linear(p + "attn.proj", R::Vision, w, w, true);
    b.linear(p + "mlp.gate_proj", R::Vision, I, w, true);
    b.linear(p + "mlp.up_proj", R::Vision, I, w, true);
    b.linear(p + "mlp.down_proj", R::Vision, w, I, true);
  }
  b.norm("visual.merger.ln_q", R::Vision, w);
  b.linear("visual.merger.mlp.0", R::Vision, wm, wm, true);
  b.linear("visual.merger.mlp.2", R::Vision, d.out, wm, true);
  set_qwen_dummy_image(d, kQwen25VlMaxPixels, spec);
}

void add_qwen3_vision_tower(const ConfigView& c, ModelSpec& spec) {
  const auto vision = c.root().at("vision_config");
  const QwenVisionDims d = read_qwen_vision(vision);
  const auto positions = vision_count(vision, "num_position_embeddings");
  std::uint64_t deepstack = 0;
  if (const auto idx = vision.get("deepstack_visual_indexes")) deepstack = idx->items().size();
  const auto w = d.width, I = d.intermediate, wm = checked_mul(w, d.merge * d.merge);
  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  const std::string v = "model.visual.";
  b.tensor(v + "patch_embed.proj.weight", R::Vision, {w, d.channels, d.temporal, d.patch, d.patch});
  b.tensor(v + "patch_embed.proj.bias", R::Vision, {w}, true);
  b.tensor(v + "pos_embed.weight", R::Vision, {positions, w});
  for (std::uint64_t i = 0; i < d.depth; ++i) {
    const auto p = v + "blocks." + std::to_string(i) + ".";
    b.norm(p + "norm1", R::Vision, w, true);
    b.norm(p + "norm2", R::Vision, w, true);
    b.linear(p + "attn.qkv", R::Vision, 3 * w, w, true);
    b.linear(p + "attn.proj", R::Vision, w, w, true);
    b.linear(p + "mlp.linear_fc1", R::Vision, I, w, true);
    b.linear(p + "mlp.linear_fc2", R::Vision, w, I, true);
  }
  auto merger = [&](const std::string& p, std::uint64_t norm_width) {
    b.norm(p + "norm", R::Vision, norm_width, true);
    b.linear(p + "linear_fc1", R::Vision, wm, wm, true);
    b.linear(p + "linear_fc2", R::Vision, d.out, wm, true);
  };
  merger(v + "merger.", w);
  for (std::uint64_t i = 0; i < deepstack; ++i) merger(v + "deepstack_merger_list." + std::to_string(i) + ".", wm);
  set_qwen_dummy_image(d, kQwen3VlMaxPixels, spec);
  // Qwen3VLForConditionalGeneration.embed_multimodal returns the main merger output concatenated
  // with the deepstack levels along the feature axis, and that is what the encoder cache holds.
  spec.arch.mm_embedding_width = checked_mul(d.out, 1 + deepstack);
  spec.arch.deepstack_layers = deepstack;
}

}  // namespace vramplan::hf
