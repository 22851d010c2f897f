// Rendering a diffusion plan and a pipeline inventory: JSON (schemas vramplan.diffusion_plan/1 and
// vramplan.pipeline/1, docs/diffusion.md) and text. Sizes in GiB, named.
#include <cstdio>

#include "vramplan/core/text.hpp"
#include "vramplan/diffusion/diffusion_plan.hpp"

namespace vramplan::diffusion {

namespace {

// A non-zero size that would print as 0.00 GiB is shown in MiB / bytes (README, "Sizes").
std::string gib_text(Bytes b) {
  return b.count() > 0 && b.count() < (std::uint64_t{1} << 30) / 200 ? format_binary(b) : format_gib(b, 2);
}

std::string verdict_word(const DiffusionPlan& p) { return !p.fits ? "DOES NOT FIT" : p.marginal ? "MARGINAL" : "FITS"; }

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

std::string params_text(std::uint64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f B", static_cast<double>(n) / 1e9);
  if (n < 1000000000ull) std::snprintf(buf, sizeof buf, "%.1f M", static_cast<double>(n) / 1e6);
  return buf;
}

std::string group_digits(std::uint64_t n) {
  std::string s = std::to_string(n), out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

nlohmann::json source_json(const Pipeline& p) {
  nlohmann::json s = {{"kind", p.origin}, {"path", p.path}};
  if (!p.source_url.empty()) s["url"] = p.source_url;
  return s;
}

}  // namespace

nlohmann::json pipeline_inspect_json(const Pipeline& p) {
  nlohmann::json comps = nlohmann::json::array();
  std::uint64_t total = 0;
  for (const auto& c : p.components) {
    total += c.inventory.params;
    nlohmann::json j = {{"name", c.name}, {"class", c.class_name}, {"role", std::string(role_name(c.role))},
                        {"params", c.inventory.params}, {"buffers", c.inventory.buffers},
                        {"linear_weight_params", c.inventory.linear_weights},
                        {"largest_module_params", c.inventory.largest_leaf},
                        {"bytes_bf16", (c.inventory.params + c.inventory.buffers) * 2},
                        {"config", c.config_file}};
    for (const auto& pub : p.published)
      if (pub.component == c.name) j["published"] = {{"params", pub.params}, {"source", pub.source}};
    if (c.checkpoint_elements) j["checkpoint_elements"] = *c.checkpoint_elements;
    comps.push_back(j);
  }
  return {{"schema", "vramplan.pipeline/1"}, {"id", p.id}, {"pipeline", p.class_name}, {"source", source_json(p)},
          {"components", comps}, {"total_params", total},
          {"defaults", {{"height", p.defaults.height}, {"width", p.defaults.width}, {"steps", p.defaults.steps},
                        {"guidance_scale", p.defaults.guidance}, {"max_sequence_length", p.defaults.t5_tokens},
                        {"torch_dtype", p.defaults.dtype},
                        {"guidance", std::string(guidance_name(p.guidance()))}, {"source", p.defaults.source}}}};
}

std::string pipeline_inspect_text(const Pipeline& p) {
  std::string out = p.id + ": " + p.class_name + " (" + p.origin + (p.source_url.empty() ? "" : ", " + p.source_url) + ")\n";
  char line[512];
  std::uint64_t total = 0;
  std::snprintf(line, sizeof line, "  %-15s %-28s %-12s %17s %10s\n", "component", "class", "role", "parameters", "bf16");
  out += line;
  for (const auto& c : p.components) {
    total += c.inventory.params;
    std::snprintf(line, sizeof line, "  %-15s %-28s %-12s %17s %10s\n", c.name.c_str(), c.class_name.c_str(),
                  std::string(role_name(c.role)).c_str(), group_digits(c.inventory.params).c_str(),
                  gib_text(Bytes((c.inventory.params + c.inventory.buffers) * 2)).c_str());
    out += line;
    if (c.inventory.buffers)
      out += "                  + " + group_digits(c.inventory.buffers) + " buffer elements (moved to the GPU with the weights)\n";
    if (c.checkpoint_elements) {
      const bool same = *c.checkpoint_elements == c.inventory.params + c.inventory.buffers;
      out += "                  safetensors headers: " + group_digits(*c.checkpoint_elements) + " elements" +
             (same ? " (= the config's count)\n" : " (the config's layout gives " +
                                                    group_digits(c.inventory.params + c.inventory.buffers) + ")\n");
    }
  }
  out += "  total " + group_digits(total) + " parameters (" + params_text(total) + ")\n";
  for (const auto& pub : p.published)
    out += "  published " + pub.component + ": " + params_text(static_cast<std::uint64_t>(pub.params)) + " (" + pub.source + ")\n";
  std::snprintf(line, sizeof line, "  defaults: %llux%llu, %llu steps, guidance_scale %.1f (%s)",
                static_cast<unsigned long long>(p.defaults.height), static_cast<unsigned long long>(p.defaults.width),
                static_cast<unsigned long long>(p.defaults.steps), p.defaults.guidance,
                std::string(guidance_name(p.guidance())).c_str());
  out += line;
  if (p.defaults.t5_tokens) out += ", max_sequence_length " + std::to_string(p.defaults.t5_tokens);
  if (p.defaults.frames) out += ", num_frames " + std::to_string(p.defaults.frames);
  out += ", " + p.defaults.dtype;
  out += "\n    from " + p.defaults.source + "\n";
  return out;
}

nlohmann::json diffusion_plan_json(const DiffusionPlan& p) {
  nlohmann::json weights = nlohmann::json::array();
  for (const auto& w : p.weights)
    weights.push_back({{"component", w.name}, {"class", w.class_name}, {"role", std::string(role_name(w.role))},
                       {"params", w.params}, {"buffers", w.buffers}, {"format", w.format}, {"bytes", w.bytes.count()}});
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : p.stages)
    stages.push_back({{"stage", s.name}, {"weights_bytes", s.weights.count()},
                      {"activations_bytes", s.activations.count()}, {"total_bytes", s.total.count()},
                      {"detail", s.detail}});
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"schema", "vramplan.diffusion_plan/1"},
          {"model", {{"id", p.pipeline.id}, {"pipeline", p.pipeline.class_name}, {"source", source_json(p.pipeline)}}},
          {"gpu", {{"id", p.gpu.id}, {"reported_total_bytes", p.gpu.reported_total.count()}}},
          {"run", {{"height", p.height}, {"width", p.width}, {"batch", p.request.batch}, {"steps", p.steps},
                   {"guidance_scale", p.guidance}, {"guidance", std::string(guidance_name(p.guidance_mode))},
                   {"denoiser_batch", p.denoiser_batch}, {"denoiser_passes", p.denoiser_passes},
                   {"context_tokens", p.context_tokens},
                   {"max_sequence_length", p.t5_tokens}, {"dtype", p.dtype}, {"vae_dtype", p.vae_dtype},
                   {"weights", p.request.weights.empty() ? p.dtype : p.request.weights},
                   {"offload", offload_text(p.request.offload, p.request.group)}, {"vae_tiling", p.request.vae_tiling},
                   {"vae_slicing", p.request.vae_slicing}, {"frames", p.frames}, {"latent_frames", p.latent_frames},
                   {"attention", p.request.eager_attention ? "eager" : "sdpa"}}},
          {"weights", weights},
          {"stages", stages},
          {"peak_stage", p.stages[p.peak_stage].name},
          {"allocated_peak_bytes", p.allocated_peak.count()},
          {"cuda_context_bytes", p.cuda_context.count()},
          {"required_bytes", p.required.count()},
          {"capacity_bytes", p.capacity.count()},
          {"headroom_bytes", signed_difference(p.capacity, p.required)},
          {"fits", p.fits},
          {"verdict", verdict_word(p)},
          {"upper_bound", {{"relative", p.upper_relative}, {"record", p.upper_record}, {"basis", p.upper_basis},
                           {"required_bytes", p.upper_required.count()}}},
          {"headroom_fraction", p.request.headroom},
          {"performance", {{"flops_per_step", p.flops_per_step}, {"step_s", opt(p.step_s)},
                           {"step_s_low", opt(p.step_s_low)}, {"step_s_high", opt(p.step_s_high)},
                           {"seconds_per_call", opt(p.seconds_per_call)}, {"images_per_s", opt(p.images_per_s)},
                           {"basis", p.perf_basis}}},
          {"notes", p.notes}};
}

std::string diffusion_plan_text(const DiffusionPlan& p) {
  char line[600];
  std::string out = p.pipeline.id + " (" + p.pipeline.class_name + ") on " + p.gpu.id + "\n";
  std::snprintf(line, sizeof line, "  %llux%llu (WxH), batch %llu, %llu steps, guidance %.1f: %s -> denoiser batch %llu%s; %s, offload %s%s%s\n",
                static_cast<unsigned long long>(p.width), static_cast<unsigned long long>(p.height),
                static_cast<unsigned long long>(p.request.batch), static_cast<unsigned long long>(p.steps), p.guidance,
                std::string(guidance_name(p.guidance_mode)).c_str(), static_cast<unsigned long long>(p.denoiser_batch),
                p.denoiser_passes > 1 ? " x 2 passes per step" : "", p.dtype.c_str(), offload_text(p.request.offload, p.request.group).c_str(),
                p.request.vae_tiling ? ", VAE tiling" : "", p.request.vae_slicing ? ", VAE slicing" : "");
  out += line;
  if (p.frames)
    out += "  " + std::to_string(p.frames) + " frames -> " + std::to_string(p.latent_frames) + " latent frames\n";
  out += "weights\n";
  for (const auto& w : p.weights) {
    std::snprintf(line, sizeof line, "  %-15s %-28s %16s params  %10s  %s\n", w.name.c_str(), w.class_name.c_str(),
                  group_digits(w.params).c_str(), gib_text(w.bytes).c_str(), w.format.c_str());
    out += line;
  }
  out += "stages (weights on the GPU + live activations)\n";
  for (std::size_t i = 0; i < p.stages.size(); ++i) {
    const auto& s = p.stages[i];
    std::snprintf(line, sizeof line, "  %-24s %10s + %10s = %10s%s  %s\n", s.name.c_str(), gib_text(s.weights).c_str(),
                  gib_text(s.activations).c_str(), gib_text(s.total).c_str(), i == p.peak_stage ? " <- peak" : "       ",
                  s.detail.c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "peak %s allocated + %s CUDA context = %s of %s usable: %s (headroom %s)\n",
                gib_text(p.allocated_peak).c_str(), gib_text(p.cuda_context).c_str(), gib_text(p.required).c_str(),
                gib_text(p.capacity).c_str(), verdict_word(p).c_str(),
                (p.fits ? gib_text(p.capacity - p.required) : "-" + gib_text(p.required - p.capacity)).c_str());
  out += line;
  out += "  upper bound " + gib_text(p.upper_required) + ": allocated +" + pct(p.upper_relative) + ", " + p.upper_basis +
         " (" + p.upper_record + ", docs/accuracy-diffusion.md)" +
         (p.request.headroom > 0 ? "; --headroom " + pct(p.request.headroom) + " of the card kept spare" : "") + "\n";
  if (p.step_s) {
    std::snprintf(line, sizeof line,
                  "time (compute-bound): %.3g TFLOP per step -> %.3f s/step [%.3f-%.3f], %.2f s per call of %llu %s, %.3f %s/s\n",
                  p.flops_per_step / 1e12, *p.step_s, *p.step_s_low, *p.step_s_high, *p.seconds_per_call,
                  static_cast<unsigned long long>(p.request.batch), p.frames ? "video(s)" : "image(s)", *p.images_per_s,
                  p.frames ? "videos" : "images");
    out += line;
    out += "  (" + p.perf_basis + ")\n";
  }
  for (const auto& n : p.notes) out += "note: " + n + "\n";
  return out;
}

std::string diffusion_verdict_line(const DiffusionPlan& p) {
  const std::string where = p.gpu.id + ": ";
  const std::string needs = "needs " + gib_text(p.required) + " (" + gib_text(p.allocated_peak) + " allocated + " +
                            gib_text(p.cuda_context) + " CUDA context) of " + gib_text(p.capacity) + " usable";
  const std::string upper = "upper bound " + gib_text(p.upper_required) + " (allocated +" + pct(p.upper_relative) +
                            ", record " + p.upper_record + ")";
  if (!p.fits) return "DOES NOT FIT " + where + needs + "; peak in " + p.stages[p.peak_stage].name;
  if (p.marginal)
    return "MARGINAL " + where + needs + ", not on the " + upper + ": " + gib_text(p.upper_required - p.capacity) +
           " over";
  return "FITS " + where + needs + ", also on the " + upper;
}

}  // namespace vramplan::diffusion
