// `vramplan inspect --model X` — what vramplan read from a model: architecture, total and
// per-token parameters, bytes per tensor role at the stored dtype, per-layer sums (--layers).
// X is a catalogue id, a config.json, a checkpoint directory or a .gguf file.
// JSON schema vramplan.inspect/1 (docs/schemas/inspect.schema.json).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "diffusion_commands.hpp"
#include "param_count.hpp"
#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/model/inventory.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/precision_plan.hpp"
#include "vramplan/core/sizes.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::cli {
namespace {

nlohmann::json opt_bytes(const std::optional<std::uint64_t>& b) {
  return b ? nlohmann::json(*b) : nlohmann::json(nullptr);
}

std::string bytes_cell(const std::optional<std::uint64_t>& b) {
  return b ? size_cell(Bytes(*b)) : "?";
}

//! Runs of equal layer kinds: "full x10, sliding x52" in layer order, grouped by kind.
std::string attention_summary(const ModelArch& a) {
  std::map<std::string, std::size_t> counts;
  for (auto k : a.layer_attention) counts[std::string(layer_attention_name(k))]++;
  std::string out;
  for (const auto& [name, n] : counts) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  return out;
}

nlohmann::json arch_json(const ModelArch& a) {
  nlohmann::json attention = nlohmann::json::array();
  for (auto k : a.layer_attention) attention.push_back(std::string(layer_attention_name(k)));
  nlohmann::json ropes = nlohmann::json::array();
  for (const auto& r : a.rope_tables)
    ropes.push_back({{"rotary_dim", r.rotary_dim}, {"max_positions", r.max_positions},
                     {"scaling_type", r.scaling_type}, {"scaling_factor", r.scaling_factor}});
  return {{"architecture", a.architecture}, {"model_type", a.model_type}, {"family", a.family},
          {"hidden_size", a.hidden_size}, {"num_layers", a.num_layers}, {"num_heads", a.num_heads},
          {"num_kv_heads", a.num_kv_heads}, {"head_dim", a.head_dim}, {"v_head_dim", a.v_head_dim},
          {"intermediate_size", a.intermediate_size}, {"vocab_size", a.vocab_size},
          {"max_position_embeddings", a.max_position_embeddings},
          {"tied_embeddings", a.tied_embeddings}, {"num_experts", a.num_experts},
          {"experts_per_token", a.experts_per_token},
          {"moe_intermediate_size", a.moe_intermediate_size},
          {"num_shared_experts", a.num_shared_experts},
          {"shared_expert_intermediate_size", a.shared_expert_intermediate_size},
          {"moe_latent_size", a.moe_latent_size},
          {"layer_is_moe", a.layer_is_moe}, {"q_lora_rank", a.q_lora_rank},
          {"kv_lora_rank", a.kv_lora_rank}, {"qk_rope_head_dim", a.qk_rope_head_dim},
          {"qk_nope_head_dim", a.qk_nope_head_dim}, {"layer_attention", attention},
          {"sliding_window", a.sliding_window}, {"attention_chunk_size", a.attention_chunk_size},
          {"rope_tables", ropes}, {"mtp_layers", a.mtp_layers}, {"torch_dtype", a.torch_dtype},
          {"multimodal", a.multimodal}};
}

std::string text_report(const ModelSpec& spec, const ParamCounts& c,
                        const std::vector<RoleTotals>& roles, const std::optional<std::uint64_t>& total_bytes,
                        const std::string& quantized_as, const std::vector<LayerTotals>* layers) {
  const auto& a = spec.arch;
  std::string t;
  // Each line wrapped to the output width as plan / explain wrap theirs (core/table.hpp
  // text_width: COLUMNS, else the terminal, else 100), continuation lines under the value.
  const std::size_t width = text_width();
  auto line = [&](const std::string& k, const std::string& v) {
    t += wrap_paragraph(k + std::string(14 - std::min<std::size_t>(13, k.size()), ' ') + v, width, 14) + "\n";
  };
  line("model", spec.id + " (" + spec.source.kind + ": " + (spec.source.url.empty() ? spec.source.path : spec.source.url) + ")");
  line("architecture", a.architecture + " (model_type " + a.model_type + ", family " + a.family + ")");
  line("dimensions", "hidden " + std::to_string(a.hidden_size) + ", layers " + std::to_string(a.num_layers) +
                         ", heads " + std::to_string(a.num_heads) + " (kv " + std::to_string(a.num_kv_heads) +
                         "), head_dim " + std::to_string(a.head_dim) +
                         (a.v_head_dim != a.head_dim ? " (v " + std::to_string(a.v_head_dim) + ")" : "") +
                         ", intermediate " + std::to_string(a.intermediate_size) + ", vocab " +
                         std::to_string(a.vocab_size) + (a.tied_embeddings ? " (tied)" : ""));
  line("context", a.max_position_embeddings
                      ? std::to_string(a.max_position_embeddings) + " positions"
                      : std::string("not given (max_position_embeddings 0): a plan needs --context N or the engine's context flag"));
  std::string attn = attention_summary(a);
  if (a.sliding_window) attn += "; window " + std::to_string(a.sliding_window);
  if (a.attention_chunk_size) attn += "; chunk " + std::to_string(a.attention_chunk_size);
  line("attention", attn);
  if (is_encoder(a)) {
    const auto labels = classifier_labels(spec);
    line("encoder", "bidirectional, task " + std::string(encoder_task_name(encoder_task(a))) + ", pooler " +
                        (has_pooler(spec) ? "yes" : "no") + (labels ? ", classifier " + std::to_string(labels) + " label(s)" : "") +
                        "; no KV cache (planned as a pooling model: docs/encoders.md)");
  }
  if (a.kv_lora_rank)
    line("mla", "kv_lora_rank " + std::to_string(a.kv_lora_rank) + ", q_lora_rank " + std::to_string(a.q_lora_rank) +
                    ", rope " + std::to_string(a.qk_rope_head_dim) + ", nope " + std::to_string(a.qk_nope_head_dim));
  if (a.num_experts) {
    std::size_t moe_layers = 0;
    for (bool m : a.layer_is_moe) moe_layers += m ? 1 : 0;
    line("experts", std::to_string(a.num_experts) + " routed (top-" + std::to_string(a.experts_per_token) +
                        ", width " + std::to_string(a.moe_intermediate_size) +
                        (a.moe_latent_size ? ", on a latent of " + std::to_string(a.moe_latent_size) : "") + ")" +
                        (a.num_shared_experts ? ", shared width " + std::to_string(a.shared_expert_intermediate_size) : "") +
                        ", on " + std::to_string(moe_layers) + " of " + std::to_string(a.num_layers) + " layers");
  }
  for (const auto& r : a.rope_tables)
    line("rope table", std::to_string(r.max_positions) + " x " + std::to_string(r.rotary_dim) +
                           (r.scaling_type.empty() ? "" : " (" + r.scaling_type + ")"));
  line("params", std::to_string(c.total) + " total (" + format_params(c.total) + "); active per token " +
                     format_params(c.active) + " (" + format_params(c.active - c.embedding) + " without the embedding)");
  if (spec.source.published_params) line("published", format_params(*spec.source.published_params));
  if (c.vision) line("vision", format_params(c.vision) + " (included in total)");
  if (c.mtp) line("mtp", format_params(c.mtp) + " in " + std::to_string(a.mtp_layers) + " layer(s), not in total");
  const std::string stored = quantized_as.empty() ? "at the stored dtype" : "as stored: " + quantized_as + " (quantization_config)";
  line("weights", total_bytes ? format_gib(Bytes(*total_bytes)) + " (" + format_gb(Bytes(*total_bytes)) +
                                    ") " + stored + ", MTP excluded"
                              : std::string("stored dtype unknown (no torch_dtype): see the precision plan"));
  t += "\n";
  Table roles_table({{"role", Align::Left}, {"tensors", Align::Right}, {"params", Align::Right},
                     {"format", Align::Left}, {"bytes", Align::Right}});
  for (const auto& r : roles)
    roles_table.add_row({std::string(tensor_role_name(r.role)), std::to_string(r.tensors),
                         std::to_string(r.params), r.formats, bytes_cell(r.bytes)});
  t += roles_table.render_text();
  if (layers) {
    t += "\n";
    Table lt({{"layer", Align::Right}, {"attention", Align::Left}, {"ffn", Align::Left},
              {"params", Align::Right}, {"bytes", Align::Right}});
    for (const auto& l : *layers) {
      std::string attn_kind, ffn;
      if (l.layer && static_cast<std::uint64_t>(*l.layer) < a.num_layers) {
        const auto i = static_cast<std::size_t>(*l.layer);
        attn_kind = std::string(layer_attention_name(a.layer_attention[i]));
        ffn = !a.layer_is_moe.empty() && a.layer_is_moe[i] ? "moe" : "dense";
      } else if (l.layer) {
        attn_kind = "mtp";
      }
      lt.add_row({l.layer ? std::to_string(*l.layer) : "global", attn_kind, ffn,
                  std::to_string(l.params), bytes_cell(l.bytes)});
    }
    t += lt.render_text();
  }
  for (const auto& e : spec.exclusions) t += wrap_paragraph("excluded: " + e, width, 10) + "\n";
  for (const auto& w : spec.warnings) t += wrap_paragraph("warning: " + w, width, 9) + "\n";
  return t;
}

// A config-only inventory (catalogue entry, config.json) labels every tensor with torch_dtype.
// With a quantization_config the stored formats are the method's (DeepSeek-V3: fp8 blocks under
// torch_dtype bfloat16), so each tensor takes the format and bytes the precision plan gives it
// with no override, as `plan` does. Returns the scheme's name ("" when nothing changed).
std::string apply_checkpoint_quantization(ModelSpec& spec, const QuantCatalog& formats) {
  const bool from_file = !spec.tensors.empty() && std::all_of(spec.tensors.begin(), spec.tensors.end(),
                                                              [](const TensorInfo& t) { return t.stored_bytes.has_value(); });
  if (from_file || spec.quantization_config_json.empty()) return "";
  const PrecisionPlan plan = plan_precision(spec, formats, {});
  for (const auto& p : plan.tensors) {
    spec.tensors[p.index].stored_format = p.format;
    spec.tensors[p.index].stored_bytes = p.bytes;
  }
  for (const auto& w : plan.warnings) spec.warnings.push_back(w);
  return plan.weights_precision;
}

}  // namespace

int run_inspect(const std::vector<std::string>& args) {
  // A diffusion pipeline (models/diffusion/<id>, a diffusers directory) has its own options.
  if (names_diffusion_pipeline(args, true)) return run_diffusion_inspect(args);
  po::options_description desc("Options");
  desc.add_options()
      ("model,m", po::value<std::string>(), "catalogue id, config.json, checkpoint directory or .gguf file")
      ("layers", po::bool_switch(), "add the per-layer table")
      ("assume-llama-like", po::bool_switch(), "build an unsupported architecture as a Llama-style decoder");
  add_common_options(desc);
  po::positional_options_description positional;
  positional.add("model", 1);
  po::variables_map vm;
  if (!parse_args("inspect", "--model <id|config.json|dir|file.gguf> [--layers] [--json]", desc, args,
                  vm, &positional))
    return 0;
  const auto opts = read_common_options(vm);
  if (!vm.count("model") || vm["model"].as<std::string>().empty())
    throw_usage("vramplan inspect: --model is required (see 'vramplan models')");
  LoadOptions load;
  load.hf.assume_llama_like = vm["assume-llama-like"].as<bool>();
  load.hf.allow_missing_tensors = true;  // inspect shows an incomplete checkpoint (with a warning); plan refuses it
  const auto& root = data_root();
  const auto formats = QuantCatalog::load(root.data_file("quant_formats.json"), root.data_file("quant_schemes.json"));
  auto spec = load_model(vm["model"].as<std::string>(), root, formats, load);
  if (!spec.arch.torch_dtype.empty()) memory::config_dtype_format(spec, formats);  // refused as plan refuses it
  const std::string quantized_as = apply_checkpoint_quantization(spec, formats);
  const auto counts = count_params(spec);
  const auto roles = totals_by_role(spec, formats);
  std::optional<std::uint64_t> total_bytes = std::uint64_t{0};
  nlohmann::json roles_json = nlohmann::json::array();
  for (const auto& r : roles) {
    if (r.role != TensorRole::Mtp)
      total_bytes = total_bytes && r.bytes ? std::optional(checked_add(*total_bytes, *r.bytes, "weight bytes")) : std::nullopt;
    roles_json.push_back({{"role", std::string(tensor_role_name(r.role))}, {"tensors", r.tensors},
                          {"params", r.params}, {"formats", r.formats}, {"bytes", opt_bytes(r.bytes)}});
  }
  const bool with_layers = vm["layers"].as<bool>();
  const auto layers = with_layers ? totals_by_layer(spec, formats) : std::vector<LayerTotals>{};
  nlohmann::json j = {
      {"schema", "vramplan.inspect/1"},
      {"id", spec.id},
      {"source", {{"kind", spec.source.kind}, {"path", spec.source.path}, {"url", spec.source.url},
                  {"published_params", spec.source.published_params ? nlohmann::json(*spec.source.published_params) : nlohmann::json(nullptr)}}},
      {"arch", arch_json(spec.arch)},
      {"features", model_features(spec)},
      {"params", {{"total", counts.total}, {"active", counts.active},
                  {"active_excluding_embedding", counts.active - counts.embedding},
                  {"embedding", counts.embedding}, {"vision", counts.vision}, {"mtp", counts.mtp}}},
      {"weight_bytes", opt_bytes(total_bytes)},
      {"roles", roles_json},
      {"tensor_count", spec.tensors.size()},
      {"quantization_config", spec.quantization_config_json.empty()
                                  ? nlohmann::json(nullptr)
                                  : nlohmann::json::parse(spec.quantization_config_json)},
      {"exclusions", spec.exclusions},
      {"warnings", spec.warnings}};
  if (with_layers) {
    nlohmann::json lj = nlohmann::json::array();
    for (const auto& l : layers)
      lj.push_back({{"layer", l.layer ? nlohmann::json(*l.layer) : nlohmann::json(nullptr)},
                    {"params", l.params}, {"bytes", opt_bytes(l.bytes)}});
    j["layers"] = lj;
  }
  j["stored_as"] = quantized_as.empty() ? nlohmann::json(nullptr) : nlohmann::json(quantized_as);
  emit(opts, j, text_report(spec, counts, roles, total_bytes, quantized_as, with_layers ? &layers : nullptr));
  return 0;
}

}  // namespace vramplan::cli
