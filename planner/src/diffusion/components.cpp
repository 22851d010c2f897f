// The component classes vramplan builds: one table, one walk per class (diffusion/walkers.hpp).
#include <array>

#include "diffusion/walkers.hpp"
#include "vramplan/diffusion/component.hpp"

namespace vramplan::diffusion {

namespace {

constexpr std::array<ComponentClass, 12> kClasses{{
    {"CLIPTextModel", Role::TextEncoder, "transformers models/clip/modeling_clip.py", walk_clip_text},
    {"CLIPTextModelWithProjection", Role::TextEncoder, "transformers models/clip/modeling_clip.py",
     walk_clip_text_projection},
    {"T5EncoderModel", Role::TextEncoder, "transformers models/t5/modeling_t5.py", walk_t5_encoder},
    {"UMT5EncoderModel", Role::TextEncoder, "transformers models/umt5/modeling_umt5.py", walk_umt5_encoder},
    {"UNet2DConditionModel", Role::Denoiser, "diffusers models/unets/unet_2d_condition.py", walk_unet_2d_condition},
    {"SD3Transformer2DModel", Role::Denoiser, "diffusers models/transformers/transformer_sd3.py", walk_sd3_transformer},
    {"FluxTransformer2DModel", Role::Denoiser, "diffusers models/transformers/transformer_flux.py",
     walk_flux_transformer},
    {"CogVideoXTransformer3DModel", Role::Denoiser, "diffusers models/transformers/cogvideox_transformer_3d.py",
     walk_cogvideox_transformer},
    {"AutoencoderKLCogVideoX", Role::Vae, "diffusers models/autoencoders/autoencoder_kl_cogvideox.py",
     walk_autoencoder_kl_cogvideox},
    {"WanTransformer3DModel", Role::Denoiser, "diffusers models/transformers/transformer_wan.py", walk_wan_transformer},
    {"AutoencoderKLWan", Role::Vae, "diffusers models/autoencoders/autoencoder_kl_wan.py", walk_autoencoder_kl_wan},
    {"AutoencoderKL", Role::Vae, "diffusers models/autoencoders/autoencoder_kl.py", walk_autoencoder_kl},
}};

}  // namespace

const ComponentClass* find_component_class(std::string_view class_name) {
  for (const auto& c : kClasses)
    if (c.name == class_name) return &c;
  return nullptr;
}

std::string supported_component_classes() {
  std::string out;
  for (const auto& c : kClasses) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

Tally walk_at(const Component& c, const Geometry& g) {
  const ComponentClass* cls = find_component_class(c.class_name);
  return cls->walk(c.config, c.config_file, &g);
}

}  // namespace vramplan::diffusion
