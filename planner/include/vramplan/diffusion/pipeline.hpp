// vramplan/diffusion/pipeline.hpp — a diffusers text-to-image pipeline read from its files: a
// directory with model_index.json and one config.json per component (what
// DiffusionPipeline.save_pretrained writes), or a catalogue entry (models/diffusion/<id>/, the same
// layout plus source.json naming where each config was copied from).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/diffusion/component.hpp"
#include "vramplan/io/data_root.hpp"

namespace vramplan::diffusion {

//! How a pipeline applies guidance in its denoising loop.
enum class Guidance {
  Cfg,        //!< classifier-free guidance: the latents are doubled when guidance_scale > 1
  CfgSequential,  //!< classifier-free guidance as two denoiser calls one after the other (WanPipeline)
  Distilled,  //!< guidance is an input embedding (FLUX.1-dev guidance_embeds): no doubling
  None,       //!< no guidance at all (FLUX.1-schnell: guidance_embeds false)
};
std::string_view guidance_name(Guidance g);

//! What the pipeline class does, read from its __call__ (pipelines/<name>/pipeline_<name>.py).
struct PipelineTraits {
  std::string_view class_name;
  std::string_view source;             //!< the pipeline file
  Guidance guidance;                   //!< Distilled is refined per transformer config (guidance_embeds)
  std::uint64_t default_steps;         //!< num_inference_steps default
  double default_guidance;             //!< guidance_scale default
  std::uint64_t default_t5_tokens;     //!< max_sequence_length default (0: no T5)
  std::uint64_t clip_tokens;           //!< CLIP tokenizer max length (77)
  bool context_has_clip_tokens;        //!< the denoiser attends to CLIP tokens too (SDXL, SD3)
  bool context_has_t5_tokens;          //!< ... and to the T5 tokens (SD3, FLUX)
  bool upcasts_fp16_vae;               //!< decodes an fp16 VAE in fp32 when its config says force_upcast (SDXL)
  std::string_view usual_dtype;        //!< torch_dtype of the pipeline's documented example
  bool video = false;                  //!< generates num_frames frames (the denoiser's sample_frames default)
  std::string_view vae_dtype = "";     //!< torch_dtype the documented example loads the VAE in ("" = the pipeline's)
  //! __call__ defaults of a video pipeline whose denoiser config has no sample_* fields (0: read them).
  std::uint64_t default_height = 0, default_width = 0, default_frames = 0;
  bool latent_mask = false;            //!< __call__ keeps an fp32 tensor of the latents' shape (WanPipeline `mask`)
};
const PipelineTraits* find_pipeline_traits(std::string_view class_name);
std::string supported_pipelines();  //!< "StableDiffusionXLPipeline, ..." for messages

//! Defaults of a run: the pipeline's, or a catalogue entry's recommended ones (its model card).
struct RunDefaults {
  std::uint64_t steps = 0;
  double guidance = 0;
  std::uint64_t t5_tokens = 0;
  std::uint64_t height = 1024, width = 1024;
  std::uint64_t frames = 0;  //!< num_frames of a video pipeline (0: an image pipeline)
  std::string source;  //!< where these come from
};

//! A published parameter count of one component (catalogue source.json).
struct PublishedCount {
  std::string component;
  double params = 0;
  std::string source;
};

struct Pipeline {
  std::string id;            //!< catalogue id, or the directory
  std::string class_name;    //!< model_index.json _class_name
  std::string origin;        //!< "catalogue" / "directory"
  std::string path;          //!< the directory read
  std::string source_url;    //!< catalogue: the published repository of the pipeline
  const PipelineTraits* traits = nullptr;
  std::vector<Component> components;  //!< in model_index.json order, weights-bearing only
  RunDefaults defaults;
  std::vector<PublishedCount> published;

  const Component& denoiser() const;
  const Component& vae() const;
  //! The guidance this pipeline's denoiser takes (FLUX: Distilled when guidance_embeds, else None).
  Guidance guidance() const;
};

//! Pixels per latent pixel (the pipelines' vae_scale_factor): the VAE config's scale_factor_spatial
//! (AutoencoderKLWan, read by WanPipeline.__init__), else 2^(len(vae.block_out_channels) - 1).
std::uint64_t vae_scale_factor(const Pipeline& p);
//! Frames per latent frame of a video VAE (config scale_factor_temporal or temporal_compression_ratio;
//! 1 for images).
std::uint64_t vae_temporal_factor(const Pipeline& p);
//! Latent frames of `frames` video frames: (frames - 1) / temporal factor + 1 (CogVideoXPipeline
//! prepare_latents); 1 for an image pipeline.
std::uint64_t latent_frames(const Pipeline& p, std::uint64_t frames);

//! True when `model` names a diffusion pipeline: a catalogue id under models/diffusion/, a
//! directory holding model_index.json, or a model_index.json file.
bool is_pipeline(std::string_view model, const DataRoot& root);
//! Loads it (Error(InputFile) naming the file and field; Error(UnknownName) for an unsupported
//! pipeline or component class, listing the supported ones).
Pipeline load_pipeline(std::string_view model, const DataRoot& root);
//! Catalogue ids of the pipelines (models/diffusion/<id>/), sorted.
std::vector<std::string> pipeline_ids(const DataRoot& root);

}  // namespace vramplan::diffusion
