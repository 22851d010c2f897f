// vramplan/diffusion/diffusion_plan.hpp — GPU memory and step time of one diffusers text-to-image
// call: the components' weights per dtype / scheme, the peak of each stage (text encoding, the
// denoising loop, the VAE decode) under the diffusers memory modes, and the denoiser's step time
// from the performance model (docs/diffusion.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/core/bytes.hpp"
#include "vramplan/diffusion/group_offload.hpp"
#include "vramplan/diffusion/pipeline.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/data_root.hpp"

namespace vramplan::diffusion {

//! diffusers memory modes (pipelines/pipeline_utils.py DiffusionPipeline).
enum class Offload {
  None,        //!< pipe.to("cuda"): every component resident
  Model,       //!< enable_model_cpu_offload: one component on the GPU at a time
  Sequential,  //!< enable_sequential_cpu_offload: one leaf module's weights at a time
  Group,       //!< enable_group_offload / apply_group_offloading (group_offload.hpp)
};
std::string_view offload_name(Offload o);
//! A memory mode as `--offload` spells it: the kind and, for group offloading, its settings.
struct OffloadMode {
  Offload kind = Offload::None;
  GroupOffload group;
};
//! "none" | "model" | "sequential" | "group:<settings>" (Error(Usage) otherwise).
OffloadMode parse_offload(std::string_view text);
std::string offload_text(Offload kind, const GroupOffload& group);  //!< "model", "group:leaf+stream", ...

struct DiffusionRequest {
  std::string model;                         //!< catalogue id or diffusers directory
  std::string gpu;                           //!< GPU catalogue id or custom:<size>
  std::optional<Bytes> gpu_memory;           //!< runtime-reported total per GPU
  std::uint64_t batch = 1;                   //!< images per call (num_images_per_prompt, one prompt)
  std::optional<std::uint64_t> height, width;
  std::optional<std::uint64_t> steps;
  std::optional<std::uint64_t> frames;       //!< num_frames (video pipelines)
  std::optional<double> guidance;            //!< guidance_scale
  std::optional<std::uint64_t> max_sequence_length;  //!< T5 tokens
  std::string dtype;                         //!< torch_dtype: fp16 | bf16 | fp32 ("" = the pipeline's usual)
  std::string weights;                       //!< denoiser weights: "" (= dtype) | fp8 | int8 | nf4
  Offload offload = Offload::None;
  GroupOffload group;                        //!< offload == Group: the settings per component
  bool vae_tiling = false;
  bool vae_slicing = false;
  bool eager_attention = false;              //!< attention without an SDPA kernel
  double headroom = 0;                       //!< fraction of the card kept free (check)
};

//! One component's weights on the GPU.
struct WeightRow {
  std::string name, class_name;
  Role role;
  std::uint64_t params = 0, buffers = 0;
  std::string format;  //!< "bf16", "fp8 linear + bf16", ...
  Bytes bytes;
};

//! One stage of the call and what is live on the GPU while it runs.
struct Stage {
  std::string name;       //!< "encode text_encoder_2", "denoise (unet)", "decode (vae)"
  Bytes weights;          //!< weights resident during the stage
  Bytes activations;      //!< the stage's live activations + the tensors carried between stages
  Bytes total;            //!< weights + activations (what max_memory_allocated reports)
  std::string detail;     //!< the formula in words
};

struct DiffusionPlan {
  Pipeline pipeline;
  GpuSpec gpu;
  DiffusionRequest request;
  // Resolved run.
  std::uint64_t height = 0, width = 0, steps = 0, t5_tokens = 0, denoiser_batch = 0, context_tokens = 0;
  std::uint64_t frames = 0, latent_frames = 1;  //!< video pipelines: num_frames and its latent frames (0 / 1: images)
  double guidance = 0;
  Guidance guidance_mode = Guidance::Cfg;
  bool cfg_doubles = false;
  std::uint64_t denoiser_passes = 1;  //!< denoiser calls per step (2: sequential classifier-free guidance)
  std::string dtype;        //!< compute dtype
  std::string vae_dtype;    //!< the VAE's decode dtype (SDXL upcasts fp16)
  std::vector<WeightRow> weights;
  std::vector<Stage> stages;
  std::size_t peak_stage = 0;
  Bytes allocated_peak;     //!< the largest stage total (torch.cuda.max_memory_allocated)
  Bytes cuda_context;       //!< outside the allocator (data/diffusion.json)
  Bytes required;           //!< allocated_peak + cuda_context
  Bytes capacity;           //!< the GPU's usable total x (1 - headroom)
  bool fits = false;
  // Step time (compute-bound, perf model tensor rate).
  double flops_per_step = 0;
  std::optional<double> step_s, step_s_low, step_s_high;  //!< seconds per denoising step (expected, fast, slow)
  std::optional<double> seconds_per_call, images_per_s;
  std::string perf_basis;
  std::vector<std::string> notes;
  // Upper bound from the accuracy records (data/diffusion.json upper_bound): the allocated peak
  // x (1 + upper_relative) + the CUDA context. MARGINAL: fits on the expected values, not on it.
  double upper_relative{};
  std::string upper_record{};   //!< the record the margin comes from
  std::string upper_basis{};    //!< whose records (this pipeline's, or every pipeline's)
  Bytes upper_required{};
  bool marginal{};
};

DiffusionPlan plan_diffusion(const DiffusionRequest& req, const DataRoot& root);
nlohmann::json diffusion_plan_json(const DiffusionPlan& p);
std::string diffusion_plan_text(const DiffusionPlan& p);
//! `check`'s first line: FITS / MARGINAL / DOES NOT FIT, what the call needs and the upper bound.
std::string diffusion_verdict_line(const DiffusionPlan& p);
//! `inspect` for a pipeline: components, classes, exact parameter counts, weight bytes per dtype.
nlohmann::json pipeline_inspect_json(const Pipeline& p);
std::string pipeline_inspect_text(const Pipeline& p);

}  // namespace vramplan::diffusion
