// model_from_hf_config: pick the family handler for `architectures[0]`, let it build the
// architecture and the inventory, then attach what every spec carries (source, quantization
// config, exclusions).
#include "vramplan/model/hf_config.hpp"

#include <algorithm>

#include "model/hf_config_view.hpp"
#include "model/hf_family.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan {
namespace {

std::string architecture_of(const nlohmann::json& config, const std::string& origin) {
  const JsonView root(config, origin);
  if (!root.is_object()) root.fail("expected a JSON object (an HF config.json)");
  const auto archs = root.at("architectures");
  const auto items = archs.items();
  if (items.empty()) archs.fail("is empty: the config names no architecture");
  return items[0].as_string();
}

std::string supported_list() {
  std::string out;
  for (const auto& name : supported_architectures()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

//! The config with the family's class defaults filled in where the text config lacks a key.
nlohmann::json with_class_defaults(const nlohmann::json& config, const hf::Family& family) {
  if (family.class_defaults.empty()) return config;
  nlohmann::json out = config;
  auto& text = out.contains("text_config") && out["text_config"].is_object() ? out["text_config"] : out;
  for (const auto& [key, value] : family.class_defaults.items()) {
    if (key == "vision_config") continue;
    if (!text.contains(key) || text[key].is_null()) text[key] = value;
  }
  // Vision-config class defaults (a "vision_config" object in class_defaults) fill the file's
  // vision_config when it has one; they never create it.
  if (family.class_defaults.contains("vision_config") && out.contains("vision_config") && out["vision_config"].is_object())
    for (const auto& [key, value] : family.class_defaults["vision_config"].items())
      if (!out["vision_config"].contains(key) || out["vision_config"][key].is_null()) out["vision_config"][key] = value;
  return out;
}

std::string id_from_origin(const std::string& origin) {
  std::filesystem::path p(origin);
  if (p.filename() == "config.json" && p.has_parent_path()) return p.parent_path().filename().string();
  return p.stem().string();
}

// A ModelOpt hf_quant_config.json ({"producer": {"name": "modelopt"}, "quantization":
// {"quant_algo": "FP8", "exclude_modules": [...]}}) as the quantization_config vLLM makes of it:
// vLLM's get_config (vllm/transformers_utils/config.py) takes the file when config.json has no
// quantization_config ("ModelOpt 0.29.0 and before saves the quantization config in a separate
// hf_quant_config.json"), and ModelConfig._normalize_quantization_config (vllm/config/model.py)
// sets quant_method "modelopt" for a modelopt producer (FP8; NVFP4 is modelopt_fp4, read by the
// same branch of checkpoint_quantization).
std::string modelopt_quant_config(nlohmann::json q, const std::string& origin) {
  if (!q.is_object()) throw_input(origin, "/", "expected a JSON object (a ModelOpt hf_quant_config.json)");
  if (!q.contains("quant_method")) {
    const bool modelopt = q.contains("producer") && q["producer"].is_object() &&
                          q["producer"].contains("name") && q["producer"]["name"] == "modelopt";
    if (!modelopt && !(q.contains("quantization") && q["quantization"].is_object()))
      throw_input(origin, "/producer/name", "expected \"modelopt\" (the producer of an hf_quant_config.json)");
    q["quant_method"] = "modelopt";
  }
  return q.dump();
}

}  // namespace

std::vector<std::string> supported_architectures() {
  std::vector<std::string> out;
  for (const auto& fam : hf::families())
    for (auto a : fam.architectures) out.emplace_back(a);
  std::sort(out.begin(), out.end());
  return out;
}

ModelSpec model_from_hf_config(const nlohmann::json& config, std::string origin,
                               const HfLoadOptions& options) {
  const auto architecture = architecture_of(config, origin);
  ModelSpec spec;
  const hf::Family* family = hf::find_family_by_architecture(architecture);
  if (family == nullptr) {
    if (!options.assume_llama_like)
      throw_unknown(origin + ": architecture '" + architecture +
                    "' is not supported (supported: " + supported_list() +
                    "); --assume-llama-like builds it as a Llama-style decoder");
    family = hf::find_family_by_name("llama");
    spec.warnings.push_back("architecture '" + architecture +
                            "' is not supported; built as a Llama-style decoder "
                            "(--assume-llama-like): check the parameter count");
  }
  const auto effective = with_class_defaults(config, *family);
  const hf::ConfigView view(effective, origin);
  spec.id = id_from_origin(origin);
  spec.source.kind = "hf-config";
  spec.source.path = origin;
  spec.arch.architecture = architecture;
  spec.arch.model_type = view.string({"model_type"}).value_or("");
  spec.arch.family = std::string(family->name);
  (family->build ? family->build : hf::build_decoder)(view, *family, spec);

  // At the root, or in text_config for wrappers that quantize only the language model (Kimi-K2.5).
  if (auto q = view.find({"quantization_config"})) spec.quantization_config_json = q->raw().dump();
  // The catalogue keeps a ModelOpt repository's hf_quant_config.json under _hf_quant_config.
  if (spec.quantization_config_json.empty() && config.is_object() && config.contains("_hf_quant_config"))
    spec.quantization_config_json = modelopt_quant_config(config["_hf_quant_config"], origin + " _hf_quant_config");
  spec.arch.multimodal = view.root().has("vision_config") || view.root().has("audio_config");
  if (view.root().has("vision_config")) {
    const auto vision = view.root().at("vision_config");
    if (const auto n = vision.get("num_hidden_layers")) spec.arch.vision_config_layers = hf::checked_dimension(*n, "num_hidden_layers");
    if (const auto n = vision.get("hidden_size")) spec.arch.vision_config_hidden = hf::checked_dimension(*n, "hidden_size");
    if (family->vision_tower) family->vision_tower(view, spec);
    else
      spec.exclusions.push_back("vision tower not counted: vramplan has no builder for the " +
                                JsonView(config, origin).at("vision_config").opt_string("model_type").value_or("?") +
                                " vision_config of " + architecture);
  }
  // A vision-language class (its family counts a tower) whose config has no vision_config: a
  // trimmed copy (the llama-4-maverick catalogue entry's vendor file). The checkpoint still holds
  // the tower and vLLM still profiles it: say it is missing rather than plan a text-only model.
  if (!view.root().has("vision_config") && family->vision_tower &&
      architecture.ends_with("ForConditionalGeneration")) {
    // arch.multimodal stays false: the engines' vision paths (vLLM's encoder profile, SGLang's
    // mem-fraction scaling) need the tower's dimensions, which this config does not give.
    spec.exclusions.push_back("vision tower not counted: " + architecture + " has one, but this config has no "
                              "vision_config to size it from (weights and the encoder's profile activations are missing)");
  }
  if (view.root().has("audio_config"))
    spec.exclusions.push_back("audio encoder not counted: no builder for " + architecture);
  return spec;
}

ModelSpec model_from_hf_config_file(const std::filesystem::path& path, const HfLoadOptions& options) {
  const auto file = std::filesystem::is_directory(path) ? path / "config.json" : path;
  auto spec = model_from_hf_config(read_json_file(file), file.string(), options);
  // hf_quant_config.json beside config.json, read as vLLM's get_config reads it (see
  // modelopt_quant_config) when config.json carries no quantization_config.
  if (spec.quantization_config_json.empty() && file.filename() == "config.json") {
    const auto side = file.parent_path() / "hf_quant_config.json";
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(side, ec)))
      spec.quantization_config_json = modelopt_quant_config(read_json_file(side), side.string());
  }
  if (std::filesystem::is_directory(path)) spec.id = path.filename().string();
  return spec;
}

}  // namespace vramplan
