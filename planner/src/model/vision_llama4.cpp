// The Llama-4 vision encoder + pixel-shuffle adapter + multimodal projector, counted from
// vision_config. Modules as vLLM builds them (vllm/model_executor/models/mllama4.py:
// Llama4VisionModel, Llama4UnfoldConvolution, Llama4VisionEncoderLayer, Llama4VisionPixelShuffleMLP,
// Llama4MultiModalProjector) with HF's checkpoint names (transformers models/llama4/modeling_llama4.py).
// Not counted: the vision rotary table (complex64, (image_size/patch_size)^2 positions x
// head_dim/4 entries: under 1 MiB).
#include <cmath>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::hf {

void add_llama4_vision_tower(const ConfigView& c, ModelSpec& spec) {
  const auto vision = c.root().at("vision_config");
  const VisionDims d = read_vision_dims(vision);
  const auto H = d.hidden, I = d.intermediate, L = d.layers, patch = d.patch, channels = d.channels;
  const auto projector_in = checked_dimension(vision.at("projector_input_dim"), "projector_input_dim");
  const auto projector_out = checked_dimension(vision.at("projector_output_dim"), "projector_output_dim");
  const auto vision_out = checked_dimension(vision.at("vision_output_dim"), "vision_output_dim");
  const bool projector_bias = vision.opt_bool("multi_modal_projector_bias").value_or(false);
  const auto positions = d.patches() + 1;  // patches + the class token

  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  const std::string v = "vision_model.";
  // Llama4UnfoldConvolution: a bias-free linear over channels x patch x patch pixels.
  b.tensor(v + "patch_embedding.linear.weight", R::Vision, {H, channels * patch * patch});
  b.tensor(v + "class_embedding", R::Vision, {H});
  b.tensor(v + "positional_embedding_vlm", R::Vision, {positions, H});
  b.norm(v + "layernorm_pre", R::Vision, H, true);
  b.norm(v + "layernorm_post", R::Vision, H, true);
  for (std::uint64_t i = 0; i < L; ++i) {
    const auto p = v + "model.layers." + std::to_string(i) + ".";
    b.norm(p + "input_layernorm", R::Vision, H, true);
    b.norm(p + "post_attention_layernorm", R::Vision, H, true);
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
      b.linear(p + "self_attn." + proj, R::Vision, H, H, true);
    b.linear(p + "mlp.fc1", R::Vision, I, H, true);
    b.linear(p + "mlp.fc2", R::Vision, H, I, true);
  }
  // Llama4VisionPixelShuffleMLP: vLLM sizes fc1's input as vision intermediate_size (the
  // pixel-shuffled width, hidden_size / ratio^2, for the published configs).
  b.linear(v + "vision_adapter.mlp.fc1", R::Vision, projector_in, I, projector_bias);
  b.linear(v + "vision_adapter.mlp.fc2", R::Vision, projector_out, projector_in, projector_bias);
  b.linear("multi_modal_projector.linear_1", R::Vision, spec.arch.hidden_size, vision_out);

  // The dummy image of vLLM's profiling (mllama4.py Mllama4ProcessingInfo):
  // get_image_size_with_most_features is max_num_tiles x image_size high, image_size wide, so the
  // processor cuts max_num_tiles tiles plus the global tile (patches_per_image = 1 + r_h x r_w);
  // each tile yields get_patch_per_chunk = (image_size / patch_size)^2 / round(1 / ratio^2)
  // embeddings (the pixel shuffle). max_num_tiles is the image processor's max_patches, absent
  // from config.json: 16 in the published preprocessor_config.json
  // (https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E-Instruct/blob/main/preprocessor_config.json,
  // and transformers Llama4ImageProcessorFast's default).
  constexpr std::uint64_t kLlama4MaxTiles = 16;
  const double ratio = vision.opt_number("pixel_shuffle_ratio").value_or(0.5);
  if (!(ratio > 0.0 && ratio <= 1.0)) vision.fail_at("pixel_shuffle_ratio", "must be in (0, 1]");
  const auto shuffle = static_cast<std::uint64_t>(std::llround(1.0 / (ratio * ratio)));
  const auto tiles = kLlama4MaxTiles + 1;
  spec.arch.mm_tokens_per_item = tiles * (d.patches() / shuffle);
  spec.arch.mm_pixel_values_per_item = checked_mul(tiles, checked_mul(checked_mul(channels, d.image), d.image));
}

}  // namespace vramplan::hf
