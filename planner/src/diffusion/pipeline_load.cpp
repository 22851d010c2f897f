// Reading a pipeline: model_index.json names the pipeline class and, per component, its library
// and class ([library, class], or [null, null] for an absent optional one); each weights-bearing
// component's config.json sits in the sub-directory of its name (diffusers pipeline_utils.py
// DiffusionPipeline.from_pretrained / save_pretrained layout). Tokenizers, schedulers and feature
// extractors carry no weights on the GPU and are skipped. Where a component directory holds
// safetensors, their headers' element counts are kept beside the config's count (inspect shows
// both; a plan notes a difference).
#include <algorithm>
#include <filesystem>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/diffusion/pipeline.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/io/safetensors.hpp"
#include "vramplan/io/format_table.hpp"

namespace vramplan::diffusion {

namespace fs = std::filesystem;

namespace {

bool weightless(std::string_view name) {
  for (std::string_view prefix : {"tokenizer", "scheduler", "feature_extractor"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

fs::path catalogue_dir(const DataRoot& root) { return root.models() / "diffusion"; }

bool safe_id(std::string_view id) {
  return !id.empty() && id.find('/') == std::string_view::npos && id.find('\\') == std::string_view::npos &&
         id != "." && id != "..";
}

void read_catalogue_source(Pipeline& p, const fs::path& file) {
  const auto json = read_json_file(file);
  const JsonView s(json, file.string());
  if (!s.is_object()) s.fail("expected a JSON object");
  if (s.req_string("_id") != p.id) s.fail_at("_id", "must equal the directory name '" + p.id + "'");
  p.source_url = s.req_string("_source");
  s.at("_configs").members();  // each component's config source, required (pinned copies)
  for (const auto& [name, v] : s.at("_configs").members()) v.as_string();
  if (auto pub = s.get("_published_params")) {
    for (const auto& [name, v] : pub->members())
      p.published.push_back({name, v.req_positive("params"), v.req_string("source")});
  }
  if (auto d = s.get("_defaults")) {
    p.defaults.source = d->req_string("source");
    if (auto v = d->opt_u64("num_inference_steps")) p.defaults.steps = *v;
    if (auto v = d->opt_number("guidance_scale")) p.defaults.guidance = *v;
    if (auto v = d->opt_u64("max_sequence_length")) p.defaults.t5_tokens = *v;
  }
}

//! Elements of every tensor in a component directory's safetensors headers: a single
//! diffusion_pytorch_model.safetensors / model.safetensors, or the shards an .index.json names
//! (diffusers ModelMixin.save_pretrained / transformers save_pretrained names). nullopt: no weights.
std::optional<std::uint64_t> checkpoint_elements(const fs::path& dir, const DataRoot& root,
                                                 std::optional<FormatTable>& catalog) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const char* stem : {"diffusion_pytorch_model", "model"}) {
    const fs::path single = dir / (std::string(stem) + ".safetensors");
    const fs::path index = dir / (std::string(stem) + ".safetensors.index.json");
    if (fs::is_regular_file(single, ec)) {
      files.push_back(single);
    } else if (fs::is_regular_file(index, ec)) {
      const auto json = read_json_file(index);
      const JsonView v(json, index.string());
      for (const auto& [tensor, shard] : v.at("weight_map").members()) {
        const fs::path f = dir / shard.as_string();
        if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
      }
    }
    if (!files.empty()) break;
  }
  if (files.empty()) return std::nullopt;
  if (!catalog) catalog = FormatTable::load(root.data_file("quant_formats.json"));
  std::uint64_t n = 0;
  for (const auto& f : files)
    for (const auto& t : read_safetensors_file(f, *catalog)) {
      std::uint64_t e = 1;
      for (auto d : t.shape) e = checked_mul(e, d, "tensor elements");
      n = checked_add(n, e, "tensor elements");
    }
  return n;
}

}  // namespace

std::uint64_t vae_scale_factor(const Pipeline& p) {
  const auto& cfg = p.vae().config;
  // WanPipeline.__init__: vae_scale_factor_spatial = vae.config.scale_factor_spatial.
  const auto sf = cfg.find("scale_factor_spatial");
  if (sf != cfg.end() && sf->is_number_unsigned() && sf->get<std::uint64_t>() >= 1) return sf->get<std::uint64_t>();
  const auto it = cfg.find("block_out_channels");
  const std::size_t n = it != cfg.end() && it->is_array() && !it->empty() ? it->size() : 4;
  return std::uint64_t{1} << (n - 1);
}

std::uint64_t vae_temporal_factor(const Pipeline& p) {
  if (!p.traits->video) return 1;
  const auto& cfg = p.vae().config;
  // WanPipeline.__init__: vae.config.scale_factor_temporal; CogVideoXPipeline:
  // vae.config.temporal_compression_ratio.
  const auto st = cfg.find("scale_factor_temporal");
  if (st != cfg.end() && st->is_number_unsigned() && st->get<std::uint64_t>() >= 1) return st->get<std::uint64_t>();
  const auto it = cfg.find("temporal_compression_ratio");
  return it != cfg.end() && it->is_number() && it->get<double>() >= 1 ? static_cast<std::uint64_t>(it->get<double>()) : 4;
}

std::uint64_t latent_frames(const Pipeline& p, std::uint64_t frames) {
  if (!p.traits->video) return 1;
  return (frames - 1) / vae_temporal_factor(p) + 1;
}

const Component& Pipeline::denoiser() const {
  for (const auto& c : components)
    if (c.role == Role::Denoiser) return c;
  throw Error(ErrorKind::Internal, "pipeline without a denoiser");
}

const Component& Pipeline::vae() const {
  for (const auto& c : components)
    if (c.role == Role::Vae) return c;
  throw Error(ErrorKind::Internal, "pipeline without a VAE");
}

Guidance Pipeline::guidance() const {
  if (traits->guidance != Guidance::Distilled) return traits->guidance;
  const auto& cfg = denoiser().config;
  const auto it = cfg.find("guidance_embeds");
  return it != cfg.end() && it->is_boolean() && it->get<bool>() ? Guidance::Distilled : Guidance::None;
}

std::vector<std::string> pipeline_ids(const DataRoot& root) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(catalogue_dir(root), ec))
    if (e.is_directory() && fs::is_regular_file(e.path() / "model_index.json")) ids.push_back(e.path().filename().string());
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool is_pipeline(std::string_view model, const DataRoot& root) {
  std::error_code ec;
  if (safe_id(model) && fs::is_regular_file(catalogue_dir(root) / std::string(model) / "model_index.json", ec)) return true;
  const fs::path p{std::string(model)};
  if (fs::is_directory(p, ec)) return fs::is_regular_file(p / "model_index.json", ec);
  return p.filename() == "model_index.json" && fs::is_regular_file(p, ec);
}

Pipeline load_pipeline(std::string_view model, const DataRoot& root) {
  Pipeline p;
  fs::path dir{std::string(model)};
  std::error_code ec;
  if (safe_id(model) && fs::is_regular_file(catalogue_dir(root) / std::string(model) / "model_index.json", ec)) {
    dir = catalogue_dir(root) / std::string(model);
    p.origin = "catalogue";
    p.id = std::string(model);
  } else {
    if (dir.filename() == "model_index.json") dir = dir.parent_path();
    p.origin = "directory";
    p.id = dir.string();
  }
  p.path = dir.string();
  const fs::path index_file = dir / "model_index.json";
  const auto index = read_json_file(index_file);
  const JsonView idx(index, index_file.string());
  if (!idx.is_object()) idx.fail("expected a JSON object");
  p.class_name = idx.req_string("_class_name");
  p.traits = find_pipeline_traits(p.class_name);
  if (!p.traits)
    throw_unknown("diffusion pipeline '" + p.class_name + "' (" + index_file.string() +
                  ") is not supported; supported pipelines: " + supported_pipelines());

  std::optional<FormatTable> quant;  // loaded on the first component with safetensors
  for (const auto& [name, entry] : idx.members()) {
    if (name.empty() || name[0] == '_' || !entry.is_array()) continue;
    const auto parts = entry.items();
    if (parts.size() != 2) entry.fail("expected [library, class]");
    if (parts[1].raw().is_null()) continue;  // an optional component left out ([null, null])
    const std::string cls = parts[1].as_string();
    if (weightless(name)) continue;
    const ComponentClass* known = find_component_class(cls);
    if (!known)
      throw_unknown("component '" + name + "' of " + index_file.string() + " is a " + cls +
                    ", which vramplan does not build; supported component classes: " + supported_component_classes());
    Component c;
    c.name = name;
    c.library = parts[0].raw().is_string() ? parts[0].as_string() : "";
    c.class_name = cls;
    c.role = known->role;
    const fs::path cfg_file = dir / name / "config.json";
    c.config_file = cfg_file.string();
    c.config = read_json_file(cfg_file);
    if (!c.config.is_object()) throw_input(c.config_file, "", "expected a JSON object");
    c.inventory = known->walk(c.config, c.config_file, nullptr);
    c.checkpoint_elements = checkpoint_elements(dir / name, root, quant);
    p.components.push_back(std::move(c));
  }
  const auto count = [&](Role r) {
    return std::count_if(p.components.begin(), p.components.end(), [&](const Component& c) { return c.role == r; });
  };
  if (count(Role::Denoiser) != 1) idx.fail("expected exactly one denoiser (unet or transformer) among the components");
  if (count(Role::Vae) != 1) idx.fail("expected exactly one vae among the components");

  p.defaults.steps = p.traits->default_steps;
  p.defaults.guidance = p.traits->default_guidance;
  p.defaults.t5_tokens = p.traits->default_t5_tokens;
  p.defaults.source = "diffusers " + std::string(p.traits->source) + " __call__ defaults";
  // height / width default: default_sample_size x vae_scale_factor (the denoiser's sample_size for
  // SDXL / SD3, 128 fixed in FluxPipeline.__init__).
  const auto& den = p.denoiser().config;
  if (p.traits->video) {
    // CogVideoXPipeline.__call__: transformer.config.sample_height / sample_width x
    // vae_scale_factor_spatial, num_frames = transformer.config.sample_frames; WanPipeline: its
    // __call__ signature's defaults (traits).
    const auto get = [&](const char* key, std::uint64_t fallback) {
      const auto it = den.find(key);
      return it != den.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : fallback;
    };
    if (p.traits->default_frames) {  // WanPipeline.__call__: height 480, width 832, num_frames 81
      p.defaults.height = p.traits->default_height;
      p.defaults.width = p.traits->default_width;
      p.defaults.frames = p.traits->default_frames;
    } else {
      p.defaults.height = get("sample_height", 60) * vae_scale_factor(p);
      p.defaults.width = get("sample_width", 90) * vae_scale_factor(p);
      p.defaults.frames = get("sample_frames", 49);
    }
    if (p.origin == "catalogue") read_catalogue_source(p, dir / "source.json");
    return p;
  }
  const auto ss = den.find("sample_size");
  const std::uint64_t sample = p.class_name != "FluxPipeline" && ss != den.end() && ss->is_number_unsigned()
                                   ? ss->get<std::uint64_t>() : 128;
  p.defaults.height = p.defaults.width = sample * vae_scale_factor(p);
  if (p.origin == "catalogue") read_catalogue_source(p, dir / "source.json");
  return p;
}

}  // namespace vramplan::diffusion
