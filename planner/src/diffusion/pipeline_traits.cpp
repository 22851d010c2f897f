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
//    model in torch.float16;
//  * WanPipeline (wan/pipeline_wan.py, diffusers 58eb52c0): __call__ defaults height 480, width 832,
//    num_frames 81, 50 steps, guidance_scale 5.0, max_sequence_length 512 UMT5 tokens (the
//    transformer's config has no sample size: the defaults are __call__'s); with
//    do_classifier_free_guidance (guidance_scale > 1) the denoising loop calls the transformer twice
//    per step, cache_context("cond") with prompt_embeds and then cache_context("uncond") with
//    negative_prompt_embeds, each on the batch itself (no torch.cat of the latents): the
//    activation peak is one pass's, the FLOPs two passes'; prepare_latents in torch.float32 and
//    `mask = torch.ones(latents.shape, dtype=torch.float32)` kept for the loop; the class
//    docstring example loads the VAE with AutoencoderKLWan.from_pretrained(...,
//    torch_dtype=torch.float32) and the pipeline in torch.bfloat16, and decodes with
//    latents.to(self.vae.dtype) (fp32).
// The usual dtype is the one the pipeline's documentation example loads with (docs/source/en/api/
// pipelines: SDXL torch.float16, SD3 / FLUX torch.bfloat16).
#include <array>

#include "vramplan/diffusion/pipeline.hpp"

namespace vramplan::diffusion {

namespace {

constexpr std::array<PipelineTraits, 5> kPipelines{{
    {"StableDiffusionXLPipeline", "pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py", Guidance::Cfg, 50,
     5.0, 0, 77, true, false, true, "fp16"},
    {"StableDiffusion3Pipeline", "pipelines/stable_diffusion_3/pipeline_stable_diffusion_3.py", Guidance::Cfg, 28,
     7.0, 256, 77, true, true, false, "bf16"},
    {"FluxPipeline", "pipelines/flux/pipeline_flux.py", Guidance::Distilled, 28, 3.5, 512, 77, false, true, false, "bf16"},
    {"CogVideoXPipeline", "pipelines/cogvideo/pipeline_cogvideox.py", Guidance::Cfg, 50, 6.0, 226, 0, false, true, false,
     "fp16", true},
    {"WanPipeline", "pipelines/wan/pipeline_wan.py", Guidance::CfgSequential, 50, 5.0, 512, 0, false, true, false, "bf16",
     true, "fp32", 480, 832, 81, true},
}};

}  // namespace

std::string_view guidance_name(Guidance g) {
  switch (g) {
    case Guidance::Cfg: return "classifier-free (batch doubled)";
    case Guidance::CfgSequential: return "classifier-free (two sequential passes, batch not doubled)";
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
