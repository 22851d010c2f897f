// What each supported pipeline class does with its components, read from its __call__ in diffusers
// (src/diffusers/pipelines/...):
//  * StableDiffusionXLPipeline (stable_diffusion_xl/pipeline_stable_diffusion_xl.py): 50 steps,
//    guidance_scale 5.0, do_classifier_free_guidance = guidance_scale > 1 (latents torch.cat x 2),
//    both CLIP encoders at 77 tokens concatenated on the hidden axis, and `needs_upcasting =
//    vae.dtype == float16 and vae.config.force_upcast` decodes in fp32;
//  * StableDiffusion3Pipeline (stable_diffusion_3/pipeline_stable_diffusion_3.py): 28 steps,
//    guidance_scale 7.0 with CFG, context = 77 CLIP tokens + max_sequence_length (256) T5 tokens;
//  * FluxPipeline (flux/pipeline_flux.py): 28 steps, guidance_scale 3.5 passed as the guidance
//    embedding when transformer.config.guidance_embeds (no doubling; true CFG only with
//    true_cfg_scale > 1 and a negative prompt, as a second sequential pass), context =
//    max_sequence_length (512) T5 tokens (CLIP gives the pooled vector only);
//  * CogVideoXPipeline (cogvideo/pipeline_cogvideox.py): 50 steps, guidance_scale 6 with CFG
//    (do_classifier_free_guidance = guidance_scale > 1, torch.cat([latents] * 2)), context =
//    max_sequence_length (226) T5 tokens, num_frames default transformer.config.sample_frames,
//    height / width transformer.config.sample_height / sample_width x vae_scale_factor_spatial;
//    decode_latents calls vae.decode as it is (no upcast); the model card's example loads the 2B
//    model in torch.float16.
// The usual dtype is the one the pipeline's documentation example loads with (docs/source/en/api/
// pipelines: SDXL torch.float16, SD3 / FLUX torch.bfloat16).
#include <array>

#include "vramplan/diffusion/pipeline.hpp"

namespace vramplan::diffusion {

namespace {

constexpr std::array<PipelineTraits, 4> kPipelines{{
    {"StableDiffusionXLPipeline", "pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py", Guidance::Cfg, 50,
     5.0, 0, 77, true, false, true, "fp16"},
    {"StableDiffusion3Pipeline", "pipelines/stable_diffusion_3/pipeline_stable_diffusion_3.py", Guidance::Cfg, 28,
     7.0, 256, 77, true, true, false, "bf16"},
    {"FluxPipeline", "pipelines/flux/pipeline_flux.py", Guidance::Distilled, 28, 3.5, 512, 77, false, true, false, "bf16"},
    {"CogVideoXPipeline", "pipelines/cogvideo/pipeline_cogvideox.py", Guidance::Cfg, 50, 6.0, 226, 0, false, true, false,
     "fp16", true},
}};

}  // namespace

std::string_view guidance_name(Guidance g) {
  switch (g) {
    case Guidance::Cfg: return "classifier-free (batch doubled)";
    case Guidance::Distilled: return "distilled (guidance embedding, no doubling)";
    case Guidance::None: return "none";
  }
  return "?";
}

const PipelineTraits* find_pipeline_traits(std::string_view class_name) {
  for (const auto& p : kPipelines)
    if (p.class_name == class_name) return &p;
  return nullptr;
}

std::string supported_pipelines() {
  std::string out;
  for (const auto& p : kPipelines) out += (out.empty() ? "" : ", ") + std::string(p.class_name);
  return out;
}

}  // namespace vramplan::diffusion
