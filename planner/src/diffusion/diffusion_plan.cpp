// GPU memory of one diffusers text-to-image call, stage by stage (docs/diffusion.md):
//  * weights: each component's parameters and persistent buffers x its dtype; the denoiser's
//    nn.Linear weights in fp8 (1 B), bitsandbytes int8 (1 B + a fp32 scale per row, LLM.int8 SCB)
//    or NF4 (0.5 B + a fp32 absmax per 64-element block) when --weights asks for it;
//  * stages (pipeline __call__): each text encoder over one prompt, the denoiser's forward over
//    batch x (2 with classifier-free guidance) latents, the VAE decode of the batch;
//  * memory modes (pipelines/pipeline_utils.py): all resident; enable_model_cpu_offload (accelerate
//    cpu_offload_with_hook chained in model_cpu_offload_seq: the previous model is offloaded before
//    the next one moves in, so a stage holds its own component only); enable_sequential_cpu_offload
//    (accelerate cpu_offload: each leaf module's weights come in for its forward, so a stage holds
//    its largest leaf); group offloading (enable_group_offload / apply_group_offloading,
//    group_offload.cpp): a stage holds its component's groups (block level: the unmatched group +
//    one group of blocks, two with use_stream; leaf level: one leaf, two with use_stream) and the
//    components kept on the GPU;
//  * the VAE decode: AutoencoderKL.decode (models/autoencoders/autoencoder_kl.py) decodes the batch
//    at once, one image at a time with enable_slicing, and in tiles of config.sample_size pixels
//    (stride 75 %, every decoded tile kept until blended) with enable_tiling when the latent is
//    larger than sample_size / vae_scale_factor; SDXL decodes an fp16 VAE in fp32 (force_upcast).
//  * video (CogVideoXPipeline): the latents hold (num_frames - 1) / temporal_compression_ratio + 1
//    frames; AutoencoderKLCogVideoX decodes them in frame chunks (vae_cogvideox.cpp) and, with
//    enable_tiling, in tiles of sample_height / 2 x sample_width / 2 pixels every 5/6 x 4/5 of a
//    latent tile (tiled_decode: tile_overlap_factor_height 1/6, width 1/5), every tile's frames kept
//    until blended.
//  * WanPipeline (pipelines/wan/pipeline_wan.py __call__): classifier-free guidance as two
//    transformer calls per step on the batch itself (the peak is one call's; the conditional
//    noise_pred is held through the unconditional call), the VAE loaded in fp32 as the documented
//    example does; AutoencoderKLWan decodes one latent frame per decoder call (vae_wan.cpp) and,
//    with enable_tiling, tiles of tile_sample_min 256 px every tile_sample_stride 192 px
//    (AutoencoderKLWan.__init__ / tiled_decode), each tile's frames kept until blended.
#include "vramplan/diffusion/diffusion_plan.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "vramplan/calib/calibration.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/perf_defaults.hpp"

namespace vramplan::diffusion {

namespace {

std::uint64_t dtype_bytes(std::string_view dtype) {
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "fp32") return 4;
  throw_usage("--dtype '" + std::string(dtype) + "' is not a diffusers torch_dtype here: fp16, bf16 or fp32");
}

// Bounds on what a request may ask, so that every product below stays within 64 bits.
constexpr std::uint64_t kMaxBatch = 1u << 16, kMaxSide = 1u << 16, kMaxSteps = 1u << 20;
// Frames share the steps' bound (Wan's default is 81, CogVideoX's 49).
constexpr std::uint64_t kMaxFrames = kMaxSteps;

Bytes times(std::uint64_t elements, std::uint64_t bytes) { return Bytes(checked_mul(elements, bytes, "bytes")); }

std::uint64_t product(std::initializer_list<std::uint64_t> factors) {
  std::uint64_t r = 1;
  for (auto f : factors) r = checked_mul(r, f, "elements");
  return r;
}

//! The denoiser's weights in `scheme` ("" = the dtype).
Bytes denoiser_bytes(const Tally& t, std::string_view scheme, std::uint64_t a, std::string& format,
                     const std::string& dtype) {
  const std::uint64_t rest = t.params - t.linear_weights + t.buffers;
  if (scheme.empty()) {
    format = dtype;
    return times(t.params + t.buffers, a);
  }
  std::uint64_t linear = 0;
  if (scheme == "fp8") {
    linear = t.linear_weights;
    format = "fp8 linear weights + " + dtype;
  } else if (scheme == "int8") {
    linear = checked_add(t.linear_weights, checked_mul(t.linear_rows, 4));
    format = "int8 linear weights (+ fp32 row scales) + " + dtype;
  } else if (scheme == "nf4") {
    linear = checked_add(ceil_div(t.linear_weights, 2), checked_mul(ceil_div(t.linear_weights, 64), 4));
    format = "nf4 linear weights (+ fp32 absmax per 64) + " + dtype;
  } else {
    throw_usage("--weights '" + std::string(scheme) + "' is not a denoiser weight scheme: fp8, int8 or nf4 "
                "(or leave it out for the --dtype weights)");
  }
  return Bytes(checked_add(linear, checked_mul(rest, a)));
}

Bytes leaf_bytes(const Tally& t, std::uint64_t a) { return times(t.largest_leaf, a); }

std::uint64_t joint_dim(const Component& denoiser) {
  for (const char* key : {"joint_attention_dim", "cross_attention_dim", "text_embed_dim", "text_dim"}) {
    const auto it = denoiser.config.find(key);
    if (it != denoiser.config.end() && it->is_number_unsigned()) return it->get<std::uint64_t>();
  }
  return 0;
}

std::uint64_t vae_config_u64(const Component& vae, const char* key, std::uint64_t fallback) {
  const auto it = vae.config.find(key);
  return it != vae.config.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : fallback;
}

bool is_t5(const Component& c) { return c.class_name == "T5EncoderModel" || c.class_name == "UMT5EncoderModel"; }

//! `part` of `total` elements of a component whose weights take `whole` bytes: exact when every
//! element has the same width; a quantised denoiser's groups at its average bytes per element.
Bytes share(Bytes whole, std::uint64_t part, std::uint64_t total) {
  if (total == 0 || part >= total) return whole;
  const long double b = static_cast<long double>(whole.count()) * static_cast<long double>(part) /
                        static_cast<long double>(total);
  return Bytes(static_cast<std::uint64_t>(b + 0.5L));
}

}  // namespace

std::string_view offload_name(Offload o) {
  switch (o) {
    case Offload::None: return "none";
    case Offload::Model: return "model";
    case Offload::Sequential: return "sequential";
    case Offload::Group: return "group";
  }
  return "?";
}

OffloadMode parse_offload(std::string_view text) {
  if (text == "none") return {Offload::None, {}};
  if (text == "model") return {Offload::Model, {}};
  if (text == "sequential") return {Offload::Sequential, {}};
  if (text.rfind("group:", 0) == 0) return {Offload::Group, parse_group_offload(text.substr(6))};
  throw_usage("--offload '" + std::string(text) + "': expected none, model (enable_model_cpu_offload), "
              "sequential (enable_sequential_cpu_offload) or group:<setting> (enable_group_offload: group:block:N, "
              "group:leaf, +stream, /<component>=<setting>)");
}

std::string offload_text(Offload kind, const GroupOffload& group) {
  return kind == Offload::Group ? "group:" + group_offload_text(group) : std::string(offload_name(kind));
}

DiffusionPlan plan_diffusion(const DiffusionRequest& req, const DataRoot& root) {
  DiffusionPlan p;
  p.request = req;
  p.pipeline = load_pipeline(req.model, root);
  const Pipeline& pl = p.pipeline;
  const auto catalog = GpuCatalog::load(root.data_file("gpus.json"));
  if (req.gpu.empty()) throw_usage("--gpu is required (a GPU catalogue id or custom:<size>)");
  p.gpu = catalog.resolve_one(req.gpu);
  // A card no engine profile serves (Intel Gaudi: diffusers runs there only through optimum-habana,
  // without a CUDA context) is refused as the LLM commands and the diffusion sweep refuse it.
  require_plannable(p.gpu);
  if (req.gpu_memory) p.gpu = with_reported_total(p.gpu, *req.gpu_memory);
  if (req.batch == 0 || req.batch > kMaxBatch)
    throw_usage("--batch must be between 1 and " + std::to_string(kMaxBatch) + ", got " + count_text(req.batch));

  p.dtype = req.dtype.empty() ? pl.defaults.dtype : req.dtype;
  const std::uint64_t a = dtype_bytes(p.dtype);
  const std::uint64_t scale = vae_scale_factor(pl);
  p.height = req.height.value_or(pl.defaults.height);
  p.width = req.width.value_or(pl.defaults.width);
  // Latents are packed in 2 x 2 patches (FluxPipeline._pack_latents, SD3 patch_size 2).
  const std::uint64_t multiple = pl.denoiser().class_name == "UNet2DConditionModel" ? scale : scale * 2;
  if (p.height > kMaxSide || p.width > kMaxSide)
    throw_usage("--resolution: at most " + std::to_string(kMaxSide) + " pixels a side");
  // Shown as the user writes it: WIDTHxHEIGHT.
  const auto size_text = [](std::uint64_t w, std::uint64_t h) { return std::to_string(w) + "x" + std::to_string(h); };
  if (!req.height && !req.width && (p.height == 0 || p.width == 0 || p.height % multiple || p.width % multiple)) {
    // The default comes from the denoiser's config (pipeline_load.cpp): blame that field, not a
    // --resolution the user did not give.
    const bool cog = pl.traits->video && !pl.traits->default_frames;
    throw_input(pl.denoiser().config_file, cog ? "/sample_height" : "/sample_size",
                "x vae_scale_factor " + std::to_string(scale) + " gives the default resolution " +
                    size_text(p.width, p.height) + ", not positive multiples of " + std::to_string(multiple) + " as " +
                    pl.class_name + " needs");
  }
  // FluxPipeline.check_inputs (pipelines/flux/pipeline_flux.py, diffusers 58eb52c0) only warns
  // "`height` and `width` have to be divisible by 16 ... Dimensions will be resized accordingly";
  // prepare_latents then floors: height = 2 * (int(height) // (vae_scale_factor * 2)) latent
  // pixels, so the image is the floored multiple of 16. StableDiffusion3Pipeline, CogVideoXPipeline,
  // WanPipeline and StableDiffusionXLPipeline.check_inputs raise ValueError instead.
  if (pl.class_name == "FluxPipeline" && (p.height % multiple || p.width % multiple)) {
    const std::uint64_t fh = p.height / multiple * multiple, fw = p.width / multiple * multiple;
    if (fh && fw) {
      p.notes.push_back("--resolution " + size_text(p.width, p.height) + " is not a multiple of " +
                        std::to_string(multiple) + ": FluxPipeline warns and prepare_latents floors it to " +
                        size_text(fw, fh) + " (planned)");
      p.height = fh;
      p.width = fw;
    }
  }
  if (p.height == 0 || p.width == 0 || p.height % multiple || p.width % multiple)
    throw_usage("--resolution " + size_text(req.width.value_or(p.width), req.height.value_or(p.height)) + ": " +
                pl.class_name + " needs height and width that are positive multiples of " + std::to_string(multiple) +
                (pl.class_name == "FluxPipeline" ? " (it floors other sizes to a multiple; this one floors to 0)" : ""));
  if (pl.traits->video) {
    p.frames = req.frames.value_or(pl.defaults.frames);
    const std::uint64_t tf = vae_temporal_factor(pl);
    if (p.frames == 0 || p.frames > kMaxFrames)
      throw_usage("--frames must be between 1 and " + std::to_string(kMaxFrames) + ", got " + count_text(p.frames));
    if ((p.frames - 1) % tf)
      throw_usage("--frames " + std::to_string(p.frames) + ": " + pl.class_name + " needs 1 + a multiple of " +
                  std::to_string(tf) + " frames (the VAE's temporal_compression_ratio)");
    p.latent_frames = latent_frames(pl, p.frames);
  } else if (req.frames) {
    throw_usage("--frames applies to video pipelines (CogVideoXPipeline, WanPipeline); " + pl.class_name + " makes images");
  }
  p.steps = req.steps.value_or(pl.defaults.steps);
  if (p.steps == 0 || p.steps > kMaxSteps)
    throw_usage("--steps must be between 1 and " + std::to_string(kMaxSteps) + ", got " + count_text(p.steps));
  p.guidance = req.guidance.value_or(pl.defaults.guidance);
  // The option parser reads "nan" and "inf"; neither is a guidance_scale.
  if (!std::isfinite(p.guidance)) throw_usage("--guidance must be a finite number");
  // Published pipelines use 1 to about 20; a scale past 1,000 is a typo, not a setting.
  if (std::abs(p.guidance) > 1000)
    throw_usage("--guidance: a guidance scale within +-1000, got " + format_number("%g", p.guidance));
  p.guidance_mode = pl.guidance();
  // diffusers: do_classifier_free_guidance = guidance_scale > 1; at or below 1 the pipeline runs
  // one unguided pass, and the plan says so rather than naming the guidance it does not run.
  if ((p.guidance_mode == Guidance::Cfg || p.guidance_mode == Guidance::CfgSequential) && !(p.guidance > 1.0)) {
    p.guidance_mode = Guidance::None;
    p.notes.push_back("guidance_scale " + format_number("%g", p.guidance) +
                      " <= 1: classifier-free guidance is off (diffusers do_classifier_free_guidance = guidance_scale > 1)");
  }
  p.cfg_doubles = p.guidance_mode == Guidance::Cfg && p.guidance > 1.0;
  p.denoiser_batch = req.batch * (p.cfg_doubles ? 2 : 1);
  // WanPipeline: the cond and uncond calls run one after the other on the batch.
  p.denoiser_passes = p.guidance_mode == Guidance::CfgSequential && p.guidance > 1.0 ? 2 : 1;
  const std::uint64_t prompt_copies = p.cfg_doubles || p.denoiser_passes == 2 ? 2 : 1;  // + negative prompt
  p.t5_tokens = req.max_sequence_length.value_or(pl.defaults.t5_tokens);
  // (A pipeline without a T5 encoder has 0 by default; a user's 0 is no prompt length.)
  if ((req.max_sequence_length && *req.max_sequence_length == 0) || p.t5_tokens > kMaxSide)
    throw_usage("--max-sequence-length: 1 to " + std::to_string(kMaxSide) + " tokens, got " + count_text(p.t5_tokens));
  const bool has_t5 = std::any_of(pl.components.begin(), pl.components.end(), is_t5);
  if (req.max_sequence_length && !has_t5) throw_usage("--max-sequence-length applies to pipelines with a T5 encoder");
  // FluxPipeline.check_inputs and StableDiffusion3Pipeline.check_inputs (diffusers 58eb52c0) raise
  // ValueError(f"`max_sequence_length` cannot be greater than 512 but is {max_sequence_length}");
  // CogVideoXPipeline and WanPipeline have no such check.
  if (req.max_sequence_length && *req.max_sequence_length > 512 &&
      (pl.class_name == "FluxPipeline" || pl.class_name == "StableDiffusion3Pipeline"))
    throw_usage("--max-sequence-length " + count_text(*req.max_sequence_length) + ": " + pl.class_name +
                ".check_inputs raises \"`max_sequence_length` cannot be greater than 512\"");
  p.context_tokens = (pl.traits->context_has_clip_tokens ? pl.traits->clip_tokens : 0) +
                     (pl.traits->context_has_t5_tokens && has_t5 ? p.t5_tokens : 0);

  const Component& den = pl.denoiser();
  const Component& vae = pl.vae();
  const bool upcast = pl.traits->upcasts_fp16_vae && p.dtype == "fp16" &&
                      vae.config.value("force_upcast", true);
  // The VAE's own dtype: the pipeline's, or the documented example's (WanPipeline: fp32).
  const std::string vae_load_dtype = pl.traits->vae_dtype.empty() ? p.dtype : std::string(pl.traits->vae_dtype);
  const std::uint64_t vae_load_a = dtype_bytes(vae_load_dtype);
  p.vae_dtype = upcast ? "fp32" : vae_load_dtype;
  const std::uint64_t vae_a = dtype_bytes(p.vae_dtype);
  if (upcast) p.notes.push_back("the fp16 VAE decodes in fp32: StableDiffusionXLPipeline upcasts when vae.config.force_upcast");
  if (vae_load_dtype != p.dtype)
    p.notes.push_back("the VAE is loaded in " + vae_load_dtype + " as " + pl.class_name +
                      "'s documented example does (" + std::string(pl.traits->source) + ")");

  // Weights.
  Bytes all_weights;
  Bytes den_weights, den_leaf;
  for (const auto& c : pl.components) {
    if (c.checkpoint_elements && *c.checkpoint_elements != c.inventory.params + c.inventory.buffers)
      p.notes.push_back(c.name + ": its safetensors hold " + std::to_string(*c.checkpoint_elements) +
                        " elements, the config's layout " + std::to_string(c.inventory.params + c.inventory.buffers) +
                        " (planned from the config; extra tensors are not placed)");
    WeightRow w{c.name, c.class_name, c.role, c.inventory.params, c.inventory.buffers, p.dtype, {}};
    if (c.role == Role::Denoiser) {
      w.bytes = denoiser_bytes(c.inventory, req.weights, a, w.format, p.dtype);
      den_weights = w.bytes;
      // Sequential offload moves one leaf at a time; with --weights the leaf is taken as a linear
      // weight of the scheme (the largest leaves are linears, except in UNets: a conv).
      Tally leaf;
      leaf.params = leaf.linear_weights = c.inventory.largest_leaf;
      std::string leaf_format;
      den_leaf = denoiser_bytes(leaf, req.weights, a, leaf_format, p.dtype);
    } else if (c.role == Role::Vae) {
      w.format = vae_load_dtype;
      w.bytes = times(c.inventory.params + c.inventory.buffers, vae_load_a);
    } else {
      w.bytes = times(c.inventory.params + c.inventory.buffers, a);
    }
    all_weights = all_weights + w.bytes;
    p.weights.push_back(std::move(w));
  }
  const Bytes vae_decode_weights = times(vae.inventory.params, vae_a);

  // Tensors carried between stages: the prompt embeddings for the batch (x2 with CFG: the
  // negative prompt's) and the latents (the schedulers step in fp32; WanPipeline also keeps an fp32
  // `mask` of the latents' shape).
  const std::uint64_t lh = p.height / scale, lw = p.width / scale;
  const std::uint64_t latent_ch = vae_config_u64(vae, "latent_channels", vae_config_u64(vae, "z_dim", 4));
  const std::uint64_t latent_elems = product({req.batch, latent_ch, p.latent_frames, lh, lw});
  const Bytes carried = times(product({req.batch, prompt_copies, p.context_tokens, joint_dim(den)}), a) +
                        times(latent_elems, pl.traits->latent_mask ? 8 : 4);

  if (req.offload == Offload::Group) {
    for (const auto& entry : req.group.components) {
      // A named reference, not a structured binding: clang 15 cannot capture those in a lambda.
      const std::string& name = entry.first;
      if (std::none_of(pl.components.begin(), pl.components.end(), [&](const Component& c) { return c.name == name; })) {
        std::string names;
        for (const auto& c : pl.components) names += (names.empty() ? "" : ", ") + c.name;
        throw_usage("--offload group:.../" + name + "=...: " + pl.class_name + " has no component " + name + " (" + names + ")");
      }
    }
    // Whether any component's setting has a property (its own, else the pipeline-wide one).
    auto any_setting = [&](auto has) {
      return std::any_of(pl.components.begin(), pl.components.end(),
                         [&](const Component& c) { return has(req.group.setting(c.name)); });
    };
    if (any_setting([](const GroupSetting& s) { return s.level == GroupSetting::Level::Block && s.stream && s.blocks_per_group != 1; }))
      p.notes.push_back("block level with use_stream: diffusers sets num_blocks_per_group to 1 (a warning in "
                        "_apply_group_offloading_block_level); planned with 1 block and the next one prefetched");
    p.notes.push_back("group offloading copies each offloaded group from the host at every forward: the step time "
                      "above (compute only) is a lower bound, approached with +stream when the copy of the next group "
                      "overlaps the current one's compute");
    if (any_setting([](const GroupSetting& s) { return s.stream; }))
      p.notes.push_back("use_stream keeps a pinned host copy of the offloaded weights (ModuleGroup cpu_param_dict; "
                        "low_cpu_mem_usage pins on the fly instead): host RAM, not planned here");
    if (any_setting([](const GroupSetting& s) { return s.record_stream; }))
      p.notes.push_back("record_stream: an offloaded group's memory stays reserved until the compute stream passes "
                        "it; max_memory_allocated (planned) does not change, max_memory_reserved rises");
  }
  // Group offloading: the components kept on the GPU (`gpu`) beside the stage's own.
  auto on_gpu_others = [&](const std::string& name) {
    Bytes sum;
    if (req.offload != Offload::Group) return sum;
    for (const auto& w : p.weights)
      if (w.name != name && req.group.setting(w.name).level == GroupSetting::Level::OnGpu) sum = sum + w.bytes;
    return sum;
  };
  // The weights on the GPU while component `c` runs: `own` all of it in the stage's dtype, `leaf`
  // its largest leaf module.
  auto resident = [&](const Component& c, Bytes own, Bytes leaf, std::string& detail) {
    switch (req.offload) {
      case Offload::None: return all_weights;
      case Offload::Model: return own;
      case Offload::Sequential: return leaf;
      case Offload::Group: {
        const GroupSetting& s = req.group.setting(c.name);
        const GroupResident g = group_resident(c, s);
        detail += "; group " + group_setting_text(s) + ": " + g.detail;
        const Bytes mine = g.leaves ? times(leaf.count(), g.leaves) : share(own, g.elements, c.inventory.elements());
        return mine + on_gpu_others(c.name);
      }
    }
    return own;
  };

  // Stage 1: text encoders, one prompt each (the pipelines encode the prompt once, then repeat the
  // embeddings num_images_per_prompt times; the negative prompt is a second pass of the same size).
  for (const auto& c : pl.components) {
    if (c.role != Role::TextEncoder) continue;
    Geometry g;
    g.batch = 1;
    g.text_tokens = is_t5(c) ? p.t5_tokens : pl.traits->clip_tokens;
    g.act_bytes = a;
    g.eager_attention = req.eager_attention;
    const Tally t = walk_at(c, g);
    const Bytes own = times(c.inventory.params + c.inventory.buffers, a);
    Stage s{"encode (" + c.name + ")", {}, times(t.peak_elements, a) + carried,
            {}, std::to_string(g.text_tokens) + " tokens, peak in " + t.peak_where};
    s.weights = resident(c, own, leaf_bytes(c.inventory, a), s.detail);
    s.total = s.weights + s.activations;
    p.stages.push_back(s);
  }

  // Stage 2: the denoiser.
  Geometry dg;
  dg.batch = p.denoiser_batch;
  dg.height = p.height;
  dg.width = p.width;
  dg.vae_scale = scale;
  dg.frames = p.latent_frames;
  dg.text_tokens = p.context_tokens;
  dg.act_bytes = a;
  dg.eager_attention = req.eager_attention;
  const Tally dt = walk_at(den, dg);
  p.flops_per_step = dt.flops * static_cast<double>(p.denoiser_passes);
  {
    // Sequential CFG (WanPipeline): latents.to(transformer_dtype) and the cond call's noise_pred
    // (the latents' shape, in the dtype) are held through the uncond call.
    const Bytes between = p.denoiser_passes == 2 ? times(checked_mul(latent_elems, 2), a) : Bytes();
    Stage s{"denoise (" + den.name + ")", {},
            times(dt.peak_elements, a) + carried + between, {},
            std::to_string(p.denoiser_batch) + " latents x " + std::to_string(p.context_tokens) + " context tokens" +
                (p.denoiser_passes == 2 ? ", cond then uncond pass" : "") + ", peak in " + dt.peak_where};
    s.weights = resident(den, den_weights, den_leaf, s.detail);
    s.total = s.weights + s.activations;
    p.stages.push_back(s);
  }

  // Stage 3: the VAE decode.
  const std::uint64_t slice = req.vae_slicing ? 1 : req.batch;
  Geometry vg;
  vg.batch = slice;
  vg.height = p.height;
  vg.width = p.width;
  vg.vae_scale = scale;
  vg.frames = p.latent_frames;
  vg.act_bytes = vae_a;
  vg.eager_attention = req.eager_attention;
  const std::uint64_t out_frames = pl.traits->video ? p.frames : 1;
  std::string how = std::to_string(slice) + (pl.traits->video ? " video(s)" : " image(s)") + " at once";
  Bytes kept = times(product({req.batch, 3, out_frames, p.height, p.width}), vae_a);  // the decoded images
  // AutoencoderKL.__init__ (models/autoencoders/autoencoder_kl.py): tile_latent_min_size =
  // int(sample_size / 2 ** (len(block_out_channels) - 1)), sample_size an int (default 32) or the
  // first of a [h, w] pair.
  std::uint64_t tile_sample = vae_config_u64(vae, "sample_size", 32);
  if (const auto it = vae.config.find("sample_size");
      it != vae.config.end() && it->is_array() && !it->empty() && it->front().is_number_unsigned())
    tile_sample = it->front().get<std::uint64_t>();
  const std::uint64_t tile_latent = tile_sample / scale;
  Bytes blend_end;  // AutoencoderKLWan.tiled_decode after the last tile: tiles + result rows + dec + clamp
  const bool wan_vae = vae.class_name == "AutoencoderKLWan";
  if (wan_vae) {
    // AutoencoderKLWan.__init__: tile_sample_min_height / width 256, tile_sample_stride 192 (plain
    // attributes, not config fields); tiled_decode runs when a latent side exceeds 256 / 8 = 32,
    // tiles z[..., i : i + 32, j : j + 32] for i, j in range(0, side, 24), the edge tiles cut by the
    // latent's end; each tile decoded frame by frame with a fresh cache (clear_cache) and kept in
    // `rows` (its frames torch.cat) until blended; then each result row is a torch.cat, `dec` the
    // torch.cat of the rows and torch.clamp a third full-size copy.
    constexpr std::uint64_t kTileSample = 256, kTileStride = 192;
    const std::uint64_t tl = kTileSample / scale, ts = std::max<std::uint64_t>(kTileStride / scale, 1);
    if (req.vae_tiling && (lh > tl || lw > tl)) {
      // Pixels covered by the tiles along a side: every start i adds min(tl, side - i) latent pixels.
      auto covered = [&](std::uint64_t side) {
        std::uint64_t sum = 0, n = 0;
        for (std::uint64_t i = 0; i < side; i += ts, ++n) sum += std::min(tl, side - i) * scale;
        return std::pair{sum, n};
      };
      const auto [sum_h, rows] = covered(lh);
      const auto [sum_w, cols] = covered(lw);
      vg.height = std::min(p.height, tl * scale);
      vg.width = std::min(p.width, tl * scale);
      // Kept while a tile decodes: the tiles so far (taken as all) and, with slicing, the videos of
      // the earlier slices; no untiled `out` is built.
      const Bytes done = times(product({req.batch - slice, 3, out_frames, p.height, p.width}), vae_a);
      const Bytes tiles = times(product({slice, 3, out_frames, sum_h, sum_w}), vae_a);
      kept = tiles + done;
      blend_end = kept + times(product({slice, 3, 3, out_frames, p.height, p.width}), vae_a);
      how += ", tiled: " + std::to_string(rows * cols) + " tiles of at most " + std::to_string(vg.width) + "x" +
             std::to_string(vg.height) + " px";
    } else if (req.vae_tiling) {
      p.notes.push_back("--vae-tiling changes nothing at " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                        ": AutoencoderKLWan tiles only latents with a side above " + std::to_string(tl));
    }
  } else if (pl.traits->video) {
    // AutoencoderKLCogVideoX.enable_tiling / tiled_decode.
    const std::uint64_t th = vae_config_u64(vae, "sample_height", 480) / 2, tw = vae_config_u64(vae, "sample_width", 720) / 2;
    const std::uint64_t tlh = th / scale, tlw = tw / scale;
    const std::uint64_t step_h = std::max<std::uint64_t>(tlh * 5 / 6, 1), step_w = std::max<std::uint64_t>(tlw * 4 / 5, 1);
    if (req.vae_tiling && (lh > tlh || lw > tlw)) {
      const std::uint64_t tiles = product({ceil_div(lh, step_h), ceil_div(lw, step_w)});
      vg.height = th;
      vg.width = tw;
      kept = kept + times(product({slice, tiles, 3, out_frames, th, tw}), vae_a);
      how += ", tiled: " + std::to_string(tiles) + " tiles of " + std::to_string(tw) + "x" + std::to_string(th) + " px";
    } else if (req.vae_tiling) {
      p.notes.push_back("--vae-tiling changes nothing at " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                        ": AutoencoderKLCogVideoX tiles only latents larger than " + std::to_string(tlw) + "x" +
                        std::to_string(tlh));
    }
  } else if (req.vae_tiling && (lh > tile_latent || lw > tile_latent)) {
    // AutoencoderKL.tiled_decode: tiles of tile_latent latent pixels every 75 % of that, each
    // decoded to tile_sample pixels and kept in `rows` until blended.
    const std::uint64_t stride = tile_latent * 3 / 4;
    // overlap_size = int(tile_latent_min_size * (1 - 0.25)); range(0, h, 0) raises ValueError.
    if (stride == 0)
      throw_input(vae.config_file, "/sample_size",
                  std::to_string(tile_sample) + " gives AutoencoderKL.tiled_decode latent tiles of " +
                      std::to_string(tile_latent) + " and a stride of 0 (range() raises): --vae-tiling cannot run");
    const std::uint64_t tiles = product({ceil_div(lh, std::max<std::uint64_t>(stride, 1)), ceil_div(lw, std::max<std::uint64_t>(stride, 1))});
    vg.height = vg.width = tile_sample;
    kept = kept + times(product({slice, tiles, 3, tile_sample, tile_sample}), vae_a);
    how += ", tiled: " + std::to_string(tiles) + " tiles of " + std::to_string(tile_sample) + " px";
  } else if (req.vae_tiling) {
    p.notes.push_back("--vae-tiling changes nothing at " + std::to_string(p.width) + "x" + std::to_string(p.height) +
                      ": AutoencoderKL tiles only latents larger than sample_size / vae_scale_factor = " +
                      std::to_string(tile_latent));
  }
  const Tally vt = walk_at(vae, vg);
  {
    Stage s{"decode (" + vae.name + ")", {},
            std::max(times(vt.peak_elements, vae_a) + kept, blend_end) + carried, {},
            how + ", peak in " + (blend_end > times(vt.peak_elements, vae_a) + kept ? "the tiles' blend" : vt.peak_where)};
    s.weights = req.offload == Offload::None ? all_weights - times(vae.inventory.params, vae_load_a) + vae_decode_weights
                : resident(vae, vae_decode_weights, leaf_bytes(vae.inventory, vae_a), s.detail);
    s.total = s.weights + s.activations;
    p.stages.push_back(s);
  }

  for (std::size_t i = 0; i < p.stages.size(); ++i)
    if (p.stages[i].total > p.stages[p.peak_stage].total) p.peak_stage = i;
  p.allocated_peak = p.stages[p.peak_stage].total;
  {
    const auto json = read_json_file(root.data_file("diffusion.json"));
    const JsonView d(json, root.data_file("diffusion.json").string());
    p.cuda_context = Bytes::from_gib(d.at("cuda_context_gib").req_positive("value"));
    // The upper bound: the largest under-prediction of the allocated peak in this pipeline's
    // accuracy records (docs/accuracy-diffusion.md), else in every pipeline's; recomputed from the
    // records by tests/accuracy/diffusion_bounds_test.cpp.
    const JsonView ub = d.at("upper_bound");
    const auto own = ub.at("pipelines").get(pl.class_name);
    const JsonView b = own ? *own : ub.at("default");
    p.upper_relative = b.req_number("relative");
    if (!(p.upper_relative >= 0 && p.upper_relative < 10))
      b.fail_at("relative", "expected a share of the allocated peak in [0, 10)");
    p.upper_record = b.req_string("record");
    p.upper_basis = own ? "the largest under-prediction of " + pl.class_name + "'s accuracy records"
                        : "no accuracy record of " + pl.class_name + ": the largest under-prediction of any pipeline's";
  }
  p.required = p.allocated_peak + p.cuda_context;
  // --headroom: the share of the card kept spare, as for the LLM checks (plan/fit.cpp: spare >=
  // headroom x the card's total).
  if (!(req.headroom >= 0 && req.headroom < 1)) throw_usage("--headroom must be in [0%, 100%)");
  const double usable = static_cast<double>(p.gpu.reported_total.count()) * (1.0 - req.headroom);
  p.capacity = Bytes(static_cast<std::uint64_t>(usable));
  p.fits = p.required <= p.capacity;
  p.upper_required =
      Bytes(static_cast<std::uint64_t>(std::ceil(static_cast<double>(p.allocated_peak.count()) * (1.0 + p.upper_relative)))) +
      p.cuda_context;
  p.marginal = p.fits && p.upper_required > p.capacity;

  // Step time: compute-bound (every latent token passes every layer once per step).
  try {
    perf::PerfDefaults defaults = perf::load_perf_defaults(root.data_file("perf_defaults.json"));
    defaults.source = "data/perf_defaults.json";
    const auto cal = calib::find_calibration(root, p.gpu.id);
    const perf::PerfHardware hw = perf::perf_hardware_from(p.gpu, cal ? &*cal : nullptr, p.dtype, defaults, "hf");
    p.perf_basis = hw.basis;
    double extra_flops = vt.flops;  // one decode (x batch / slice when sliced)
    extra_flops *= static_cast<double>(req.batch) / static_cast<double>(slice);
    auto secs = [&](const perf::HardwareRates& r) { return p.flops_per_step / r.tensor_flops_per_s; };
    p.step_s = secs(hw.expected);
    p.step_s_low = hw.fast ? secs(*hw.fast) : *p.step_s;
    p.step_s_high = hw.slow ? secs(*hw.slow) : *p.step_s;
    p.seconds_per_call = *p.step_s * static_cast<double>(p.steps) + extra_flops / hw.expected.tensor_flops_per_s;
    p.images_per_s = static_cast<double>(req.batch) / *p.seconds_per_call;
    if (req.offload == Offload::Sequential)
      p.notes.push_back("sequential offload copies every denoiser weight over the host link each step: the step "
                        "time above (compute only) is a lower bound");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    p.notes.push_back("step time unknown: " + std::string(e.what()));
  }
  return p;
}

}  // namespace vramplan::diffusion
