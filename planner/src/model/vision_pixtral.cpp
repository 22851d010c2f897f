// The Pixtral vision encoder and the two projectors that sit on it, counted from vision_config.
// Modules as vLLM builds them:
//  - vllm/model_executor/models/pixtral.py PixtralHFVisionModel: patch_conv (Conv2d, bias=False),
//    ln_pre (RMSNorm), transformer.layers[i] = attention_norm, attention.{q,k,v,o}_proj (no bias),
//    ffn_norm, feed_forward.{gate,up,down}_proj (no bias); built with require_post_norm=False
//    and only up to the deepest vision_feature_layer (mistral3.py _get_num_hidden_layers).
//  - vllm/model_executor/models/mistral3.py Mistral3MultiModalProjector: norm (RMSNorm over the
//    vision width), patch_merger.merging_layer (vision x merge^2 -> vision, bias=False),
//    linear_1 (vision -> text) and linear_2 (text -> text), both bias=multimodal_projector_bias.
//  - vllm/model_executor/models/llava.py LlavaMultiModalProjector (Pixtral-12B in HF format,
//    mistral-community/pixtral-12b): linear_1 / linear_2 with bias=multimodal_projector_bias
//    (transformers LlavaConfig default True), no merger.
// Checkpoint names are HF's (vision_tower., multi_modal_projector.).
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::hf {
namespace {

//! vllm/model_executor/models/utils.py get_layer_index: a negative feature layer counts from the
//! end (-1 = all layers), a positive one is the number of layers to build.
std::uint64_t pixtral_layers_built(const ConfigView& c, std::uint64_t layers) {
  const auto field = c.root().get("vision_feature_layer");
  if (!field || !field->raw().is_number_integer()) return layers;
  const auto index = field->raw().get<std::int64_t>();
  const auto built = index < 0 ? static_cast<std::int64_t>(layers) + index + 1 : index;
  if (built <= 0 || built > static_cast<std::int64_t>(layers))
    c.root().fail_at("vision_feature_layer", "is outside the vision tower's layers");
  return static_cast<std::uint64_t>(built);
}

//! Adds the encoder; returns its width. Sets the dummy image vLLM's profiling encodes: the
//! processor's longest edge square (Mistral3ProcessingInfo.get_image_size_with_most_features;
//! the published preprocessor configs set size.longest_edge = vision_config.image_size).
VisionDims add_pixtral_encoder(const ConfigView& c, InventoryBuilder& b, ModelSpec& spec) {
  const auto vision = c.root().at("vision_config");
  const VisionDims d = read_vision_dims(vision);
  const auto H = d.hidden, I = d.intermediate;
  const std::string v = "vision_tower.";
  b.tensor(v + "patch_conv.weight", R::Vision, {H, d.channels, d.patch, d.patch});
  b.norm(v + "ln_pre", R::Vision, H);
  const auto layers = pixtral_layers_built(c, d.layers);
  for (std::uint64_t i = 0; i < layers; ++i) {
    const auto p = v + "transformer.layers." + std::to_string(i) + ".";
    b.norm(p + "attention_norm", R::Vision, H);
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
      b.linear(p + "attention." + proj, R::Vision, H, H);
    b.norm(p + "ffn_norm", R::Vision, H);
    b.linear(p + "feed_forward.gate_proj", R::Vision, I, H);
    b.linear(p + "feed_forward.up_proj", R::Vision, I, H);
    b.linear(p + "feed_forward.down_proj", R::Vision, H, I);
  }
  spec.arch.mm_pixel_values_per_item = checked_mul(checked_mul(d.channels, d.image), d.image);
  return d;
}

}  // namespace

void add_mistral3_vision_tower(const ConfigView& c, ModelSpec& spec) {
  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  const VisionDims d = add_pixtral_encoder(c, b, spec);
  const auto merge = c.root().get("spatial_merge_size") ? checked_dimension(c.root().at("spatial_merge_size"), "spatial_merge_size") : 2;
  if (merge == 0 || (d.image / d.patch) % merge != 0)
    c.root().fail_at("spatial_merge_size", "must divide image_size / patch_size");
  const bool bias = c.root().opt_bool("multimodal_projector_bias").value_or(false);  // Mistral3Config default
  const auto H = d.hidden, h = spec.arch.hidden_size;
  b.norm("multi_modal_projector.norm", R::Vision, H);
  b.linear("multi_modal_projector.patch_merger.merging_layer", R::Vision, H, checked_mul(H, merge * merge));
  b.linear("multi_modal_projector.linear_1", R::Vision, h, H, bias);
  b.linear("multi_modal_projector.linear_2", R::Vision, h, h, bias);
  // Embeddings of the largest image: one per merged patch; the [IMG_BREAK] / [IMG_END] tokens
  // of mistral3.py _get_prompt_updates are text (PromptUpdateDetails.select_token_id).
  const auto side = d.image / d.patch / merge;
  spec.arch.mm_tokens_per_item = side * side;
}

void add_llava_pixtral_vision_tower(const ConfigView& c, ModelSpec& spec) {
  const auto type = c.root().at("vision_config").opt_string("model_type").value_or("");
  if (type != "pixtral") {
    spec.exclusions.push_back("vision tower not counted: vramplan counts LLaVA's pixtral vision_config only, not '" +
                              type + "'");
    return;
  }
  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  const VisionDims d = add_pixtral_encoder(c, b, spec);
  const bool bias = c.root().opt_bool("multimodal_projector_bias").value_or(true);  // LlavaConfig default
  const auto h = spec.arch.hidden_size;
  b.linear("multi_modal_projector.linear_1", R::Vision, h, d.hidden, bias);
  b.linear("multi_modal_projector.linear_2", R::Vision, h, h, bias);
  const auto side = d.image / d.patch;  // one embedding per patch (no merger)
  spec.arch.mm_tokens_per_item = side * side;
}

}  // namespace vramplan::hf
