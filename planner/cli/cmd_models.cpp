// `vramplan models` — the built-in model catalogue (models/*.json) with parameter counts summed
// over each entry's tensor inventory; filters by family, size and feature. JSON schema
// vramplan.models/1 (docs/schemas/models.schema.json).
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "vramplan/diffusion/pipeline.hpp"
#include "param_count.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/inventory.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::cli {
namespace {

// Every feature model_features (model/catalogue.cpp) can list, so each shown one can be filtered on.
const std::vector<std::string> kFeatures = {"encoder", "pooling", "moe",        "mla", "swa",
                                            "chunked", "tied",    "multimodal", "mtp", "quantized"};

struct Filters {
  std::optional<std::string> family;
  std::optional<std::uint64_t> min_params, max_params;
  std::vector<std::string> features;
};

bool keep(const ModelSpec& spec, const ParamCounts& counts, const std::vector<std::string>& features,
          const Filters& f) {
  if (f.family && to_lower(spec.arch.family) != *f.family && to_lower(spec.arch.model_type) != *f.family) return false;
  if (f.min_params && counts.total < *f.min_params) return false;
  if (f.max_params && counts.total > *f.max_params) return false;
  for (const auto& want : f.features)
    if (std::find(features.begin(), features.end(), want) == features.end()) return false;
  return true;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

int run_models(const std::vector<std::string>& args) {
  po::options_description desc("Options");
  desc.add_options()
      ("family", po::value<std::string>(), "only this family (llama, qwen3_moe, deepseek, gemma3, ...)")
      ("min-params", po::value<std::string>(), "only models with at least this many parameters (7B, 500M)")
      ("max-params", po::value<std::string>(), "only models with at most this many parameters")
      ("feature", po::value<std::vector<std::string>>()->composing(),
       "only models with this feature (repeatable): encoder, pooling, moe, mla, swa, chunked, tied, multimodal, mtp, quantized");
  add_common_options(desc, true);
  po::variables_map vm;
  if (!parse_args("models", "[--family F] [--min-params N] [--max-params N] [--feature F]... [--json]",
                  desc, args, vm))
    return 0;
  const auto opts = read_common_options(vm);
  Filters f;
  if (vm.count("family")) f.family = to_lower(vm["family"].as<std::string>());
  if (vm.count("min-params")) f.min_params = parse_params(vm["min-params"].as<std::string>(), "min-params");
  if (vm.count("max-params")) f.max_params = parse_params(vm["max-params"].as<std::string>(), "max-params");
  if (vm.count("feature")) f.features = vm["feature"].as<std::vector<std::string>>();
  for (const auto& feat : f.features)
    if (std::find(kFeatures.begin(), kFeatures.end(), feat) == kFeatures.end())
      throw_usage("--feature: unknown feature '" + feat + "' (" + join(kFeatures) + ")");

  const auto& root = data_root();
  nlohmann::json list = nlohmann::json::array();
  Table table({{"id", Align::Left}, {"family", Align::Left}, {"params", Align::Right},
               {"active", Align::Right}, {"published", Align::Right}, {"layers", Align::Right},
               {"context", Align::Right}, {"dtype", Align::Left}, {"features", Align::Left}});
  std::set<std::string> families;  // every family and model_type, to tell an unknown --family from no match
  for (const auto& id : catalogue_ids(root)) {
    const auto spec = load_catalogue_model(root, id);
    families.insert({to_lower(spec.arch.family), to_lower(spec.arch.model_type)});
    const auto counts = count_params(spec);
    const auto features = model_features(spec);
    if (!keep(spec, counts, features, f)) continue;
    const auto& a = spec.arch;
    list.push_back({{"id", spec.id},
                    {"family", a.family},
                    {"architecture", a.architecture},
                    {"model_type", a.model_type},
                    {"params", counts.total},
                    {"active_params", counts.active},
                    {"mtp_params", counts.mtp},
                    {"published_params", spec.source.published_params.value_or(0)},
                    {"num_layers", a.num_layers},
                    {"hidden_size", a.hidden_size},
                    {"max_position_embeddings", a.max_position_embeddings},
                    {"torch_dtype", a.torch_dtype},
                    {"features", features},
                    {"source", spec.source.url}});
    table.add_row({spec.id, a.family, format_params(counts.total),
                   counts.active == counts.total ? "" : format_params(counts.active),
                   spec.source.published_params ? format_params(*spec.source.published_params) : "",
                   std::to_string(a.num_layers), std::to_string(a.max_position_embeddings),
                   a.torch_dtype, join(features)});
  }
  if (f.family && !families.count(*f.family)) {
    families.erase("");
    throw_unknown("--family '" + *f.family + "': no catalogue model has that family or model_type (families: " +
                  join(std::vector<std::string>(families.begin(), families.end())) + ")");
  }
  const nlohmann::json j = {{"schema", "vramplan.models/1"}, {"models", list}};
  std::string text = opts.format == OutputFormat::Markdown ? table.render_markdown() : table.render_text();
  text += std::to_string(list.size()) + " model(s); params = total resident parameters (MTP excluded), "
          "active = per token (routed experts at k/E); decimal units (B = 10^9)\n";
  std::string pipelines;
  for (const auto& id : diffusion::pipeline_ids(root)) pipelines += (pipelines.empty() ? "" : ", ") + id;
  if (!pipelines.empty())
    text += "diffusion pipelines (vramplan inspect <id>, docs/diffusion.md): " + pipelines + "\n";
  emit(opts, j, text);
  return 0;
}

}  // namespace vramplan::cli
