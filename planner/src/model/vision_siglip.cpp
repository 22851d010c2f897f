// The SigLIP vision tower + Gemma-3 multimodal projector, counted from vision_config.
// Modules: HF SiglipVisionEmbeddings / SiglipEncoderLayer / SiglipVisionTransformer
// (https://github.com/huggingface/transformers/blob/main/src/transformers/models/siglip/modeling_siglip.py)
// and Gemma3MultiModalProjector (models/gemma3/modeling_gemma3.py).
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::hf {

void add_siglip_vision_tower(const ConfigView& c, ModelSpec& spec) {
  const auto vision = c.root().at("vision_config");
  const VisionDims d = read_vision_dims(vision);
  const auto H = d.hidden, I = d.intermediate, L = d.layers, patch = d.patch, image = d.image;
  const auto channels = d.channels, patches = d.patches();

  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  const std::string v = "vision_tower.vision_model.";
  b.tensor(v + "embeddings.patch_embedding.weight", R::Vision, {H, channels, patch, patch});
  b.tensor(v + "embeddings.patch_embedding.bias", R::Vision, {H}, true);
  b.tensor(v + "embeddings.position_embedding.weight", R::Vision, {patches, H});
  for (std::uint64_t i = 0; i < L; ++i) {
    const auto p = v + "encoder.layers." + std::to_string(i) + ".";
    b.norm(p + "layer_norm1", R::Vision, H, true);
    b.norm(p + "layer_norm2", R::Vision, H, true);
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"})
      b.linear(p + "self_attn." + proj, R::Vision, H, H, true);
    b.linear(p + "mlp.fc1", R::Vision, I, H, true);
    b.linear(p + "mlp.fc2", R::Vision, H, I, true);
  }
  b.norm(v + "post_layernorm", R::Vision, H, true);
  if (vision.opt_bool("vision_use_head").value_or(false))
    spec.exclusions.push_back("SigLIP attention-pooling head (vision_use_head) not counted");
  b.tensor("multi_modal_projector.mm_input_projection_weight", R::Vision,
           {H, spec.arch.hidden_size});
  b.norm("multi_modal_projector.mm_soft_emb_norm", R::Vision, H);

  // The image vLLM's encoder profiling feeds the tower (memory/vllm_encoder_profile.hpp): one
  // image_size x image_size crop (pan-and-scan is off by default, so no extra crops), pooled by
  // the projector to mm_tokens_per_image embeddings (Gemma3Config default 256,
  // transformers models/gemma3/configuration_gemma3.py).
  const auto tokens_field = c.root().get("mm_tokens_per_image");
  const auto tokens = tokens_field ? checked_dimension(*tokens_field, "mm_tokens_per_image") : 256;
  if (tokens == 0) c.root().fail_at("mm_tokens_per_image", "must be greater than zero");
  spec.arch.mm_tokens_per_item = tokens;
  spec.arch.mm_pixel_values_per_item = checked_mul(checked_mul(channels, image), image);
}

}  // namespace vramplan::hf
