#include "vramplan/model/catalogue.hpp"

#include <algorithm>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/model/encoder.hpp"

namespace vramplan {

std::vector<std::string> catalogue_ids(const DataRoot& root) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root.models(), ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      ids.push_back(entry.path().stem().string());
  if (ec) throw Error(ErrorKind::Io, root.models().string() + ": cannot list the model catalogue: " + ec.message());
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::string> closest_ids(std::string_view what, const std::vector<std::string>& ids,
                                     std::size_t max) {
  return closest_names(what, ids, max);
}

ModelSpec load_catalogue_model(const DataRoot& root, std::string_view id, const HfLoadOptions& options) {
  const auto file = root.models() / (std::string(id) + ".json");
  std::error_code ec;  // a name too long for the file system is simply not in the catalogue
  if (id.empty() || id.find('/') != std::string_view::npos || !std::filesystem::is_regular_file(file, ec)) {
    // A diffusers pipeline of the catalogue (models/diffusion/<id>/) is known, only not here.
    if (!id.empty() && id.find('/') == std::string_view::npos &&
        std::filesystem::is_regular_file(root.models() / "diffusion" / std::string(id) / "model_index.json", ec))
      throw_usage("'" + std::string(id) + "' is a diffusion pipeline (models/diffusion/" + std::string(id) +
                  "): plan, check, sweep and inspect take it; this command plans language and embedding models");
    const auto ids = catalogue_ids(root);
    const auto near = closest_ids(id, ids);
    std::string msg = "unknown model '" + std::string(id) + "'";
    if (!near.empty()) {
      msg += " (did you mean:";
      for (const auto& n : near) msg += " " + n;
      msg += "?)";
    }
    msg += "; 'vramplan models' lists the catalogue, or pass a config.json / checkpoint dir / .gguf";
    throw_unknown(msg);
  }
  const auto json = read_json_file(file);
  const JsonView entry(json, file.string());
  if (!entry.is_object()) entry.fail("expected a JSON object");
  if (entry.req_string("_id") != id) entry.fail_at("_id", "must equal the file name '" + std::string(id) + "'");
  const auto url = entry.req_string("_source");
  const auto published = entry.req_positive("_published_params");
  entry.req_string("_published_params_source");

  auto spec = model_from_hf_config(json, file.string(), options);
  if (json.contains("_pooling")) apply_pooling_view(spec, entry.req_string("_pooling"), file.string());
  spec.id = std::string(id);
  spec.source.kind = "catalogue";
  spec.source.path = std::string(id);
  spec.source.url = url;
  spec.source.published_params = static_cast<std::uint64_t>(published);
  return spec;
}

}  // namespace vramplan

namespace vramplan {

std::vector<std::string> model_features(const ModelSpec& spec) {
  const auto& a = spec.arch;
  auto has = [&](LayerAttention kind) {
    return std::find(a.layer_attention.begin(), a.layer_attention.end(), kind) != a.layer_attention.end();
  };
  std::vector<std::string> out;
  if (is_encoder(a)) out.push_back("encoder");
  if (!pooling_view_mode(spec).empty()) out.push_back("pooling");
  if (a.num_experts > 0) out.push_back("moe");
  if (has(LayerAttention::Mla)) out.push_back("mla");
  if (has(LayerAttention::Sliding)) out.push_back("swa");
  if (has(LayerAttention::Chunked)) out.push_back("chunked");
  if (a.tied_embeddings) out.push_back("tied");
  // Also a vision-language class whose config lacks the vision_config (hf_config.cpp's exclusion).
  const bool tower_missing = std::any_of(spec.exclusions.begin(), spec.exclusions.end(), [](const std::string& e) {
    return e.rfind("vision tower not counted", 0) == 0;
  });
  if (a.multimodal || tower_missing) out.push_back("multimodal");
  if (a.mtp_layers > 0) out.push_back("mtp");
  if (!spec.quantization_config_json.empty()) out.push_back("quantized");
  return out;
}

}  // namespace vramplan
