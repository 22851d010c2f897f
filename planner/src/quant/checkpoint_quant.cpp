// quantization_config (HF config.json) -> the scheme it describes. Field names follow each
// producer: AutoGPTQ/GPTQModel (bits, group_size, desc_act, sym, lm_head), AutoAWQ (bits /
// w_bit, group_size / q_group_size, zero_point, modules_to_not_convert), compressed-tensors
// (config_groups[*].weights {num_bits, type, strategy, group_size, symmetric, actorder},
// input_activations, ignore), fp8 (weight_block_size, activation_scheme, ignored_layers /
// modules_to_not_convert), bitsandbytes (load_in_4bit/8bit, bnb_4bit_quant_type,
// bnb_4bit_use_double_quant, llm_int8_skip_modules), mxfp4 (modules_to_not_convert), modelopt
// (quant_algo, exclude_modules).
#include <regex>

#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/quant/precision_plan.hpp"

namespace vramplan {
namespace {

using nlohmann::json;

std::vector<std::string> string_list(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::int64_t int_or(const json& j, const char* key, std::int64_t fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<std::int64_t>() : fallback;
}

bool bool_or(const json& j, const char* key, bool fallback) {
  return j.contains(key) && j[key].is_boolean() ? j[key].get<bool>() : fallback;
}

// A group size from the config: -1 (one group per output channel) or a positive size; 0 and other
// negatives are no layout a producer writes.
std::int64_t group_or(const json& j, const char* key, std::int64_t fallback, const std::string& origin) {
  const std::int64_t g = int_or(j, key, fallback);
  if (g == 0 || g < -1)
    throw_input(origin, std::string("quantization_config/") + key, "must be -1 (per channel) or > 0, got " + std::to_string(g));
  return g;
}

std::string group_name(std::string_view prefix, std::int64_t bits, std::int64_t group, bool actorder, bool asym) {
  return std::string(prefix) + "-" + std::to_string(bits) + "bit-g" + (group <= 0 ? std::string("-1") : std::to_string(group)) +
         (actorder ? "-actorder" : "") + (asym ? "-asym" : "");
}

// compressed-tensors: the first config group that targets Linear layers.
std::string compressed_tensors_scheme(const json& q, std::string& activation, const std::string& origin) {
  if (!q.contains("config_groups") || !q["config_groups"].is_object() || q["config_groups"].empty())
    throw_input(origin, "quantization_config/config_groups", "compressed-tensors config without config_groups");
  const json& group = q["config_groups"].begin().value();
  const json w = group.value("weights", json::object());
  const json a = group.value("input_activations", json());
  const std::int64_t bits = int_or(w, "num_bits", 0);
  const std::string type = w.value("type", "int");
  const std::string strategy = w.value("strategy", "tensor");
  activation = a.is_object() ? (a.value("type", "int") == "float" ? (int_or(a, "num_bits", 8) == 4 ? "fp4" : "fp8") : "int8") : "model";
  if (type == "float" && bits == 8) {
    if (strategy == "block") return "fp8-block";
    return strategy == "channel" ? "fp8-channel" : "fp8";
  }
  if (type == "float" && bits == 4) {
    // NVFP4: FP8 scales over groups of 16 (compressed-tensors strategy tensor_group).
    if (w.contains("group_size") && int_or(w, "group_size", 16) != 16)
      throw_input(origin, "quantization_config/config_groups/weights/group_size",
                  "4-bit float weights are NVFP4, in groups of 16; got " + w["group_size"].dump());
    return "nvfp4";
  }
  if (type == "int" && bits == 8 && strategy == "channel") return a.is_object() ? "w8a8" : "int8";
  const bool actorder = w.contains("actorder") && w["actorder"].is_string() && w["actorder"] == "group";
  const std::int64_t group_size = strategy == "group" ? int_or(w, "group_size", 128) : -1;
  return group_name("ct", bits, group_size, actorder, !bool_or(w, "symmetric", true));
}

}  // namespace

std::optional<CheckpointQuant> checkpoint_quantization(const ModelSpec& model, const QuantCatalog& catalog) {
  if (model.quantization_config_json.empty()) return std::nullopt;
  const std::string origin = model.source.path.empty() ? model.id : model.source.path;
  const json q = parse_json_text(model.quantization_config_json, origin + " quantization_config");
  if (!q.is_object()) throw_input(origin, "quantization_config", "expected an object");
  CheckpointQuant out;
  out.method = q.value("quant_method", "");
  std::string name;
  std::string activation;
  const std::string& m = out.method;
  if (m == "gptq") {
    name = group_name("gptq", int_or(q, "bits", 4), group_or(q, "group_size", 128, origin), bool_or(q, "desc_act", false), false);
    out.quantize_output = bool_or(q, "lm_head", false);
  } else if (m == "awq") {
    const std::int64_t bits = int_or(q, "bits", int_or(q, "w_bit", 4));
    name = group_name("awq", bits, group_or(q, "group_size", int_or(q, "q_group_size", 128), origin), false, false);
    out.ignore = string_list(q, "modules_to_not_convert");
  } else if (m == "compressed-tensors") {
    name = compressed_tensors_scheme(q, activation, origin);
    out.ignore = string_list(q, "ignore");
  } else if (m == "fp8") {
    if (q.contains("weight_block_size") && !q["weight_block_size"].is_null()) {
      const json& b = q["weight_block_size"];
      if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() || !b[1].is_number_unsigned() || b[0] == 0 || b[1] == 0)
        throw_input(origin, "quantization_config/weight_block_size", "expected two positive integers such as [128, 128], got " + b.dump());
      name = "fp8-block";
    } else {
      name = "fp8";
    }
    out.ignore = string_list(q, "ignored_layers");
    for (auto& s : string_list(q, "modules_to_not_convert")) out.ignore.push_back(s);
  } else if (m == "bitsandbytes") {
    // transformers' BitsAndBytesConfig refuses both at once ("only one can be used at the same time").
    if (bool_or(q, "load_in_8bit", false) && bool_or(q, "load_in_4bit", false))
      throw_input(origin, "quantization_config", "load_in_4bit and load_in_8bit are both true: bitsandbytes takes one");
    if (bool_or(q, "load_in_8bit", false)) {
      name = "llm.int8";
    } else {
      const bool dq = bool_or(q, "bnb_4bit_use_double_quant", false);
      name = q.value("bnb_4bit_quant_type", "fp4") == "nf4" ? (dq ? "nf4-dq" : "nf4") : (dq ? "fp4-dq" : "fp4");
    }
    out.ignore = string_list(q, "llm_int8_skip_modules");
  } else if (m == "mxfp4") {
    name = "mxfp4";
    out.ignore = string_list(q, "modules_to_not_convert");
  } else if (m == "modelopt") {
    const json& algo_holder = q.contains("quantization") ? q["quantization"] : q;
    const std::string algo = algo_holder.value("quant_algo", "FP8");
    if (algo != "FP8" && algo != "NVFP4")
      throw_unknown(origin + ": quantization_config quant_algo '" + algo + "' of modelopt is not modelled (FP8, NVFP4)");
    name = algo == "NVFP4" ? "nvfp4" : "fp8";
    out.ignore = string_list(algo_holder, "exclude_modules");
  } else {
    throw_unknown(origin + ": quantization_config.quant_method '" + m +
                  "' is not supported (gptq, awq, compressed-tensors, fp8, bitsandbytes, mxfp4, modelopt)");
  }
  // The scheme is derived from the file's fields: a value no scheme has (bits 0) is the file's
  // fault, named as such, not an unknown --weights flag the user never gave.
  try {
    out.scheme = parse_weight_scheme(name, catalog);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::UnknownName && e.kind() != ErrorKind::Usage) throw;
    throw_input(origin, "quantization_config", "its fields describe '" + name + "', which is no weight scheme vramplan knows");
  }
  if (!activation.empty()) out.scheme.activation = activation;
  out.scheme.source = "checkpoint quantization_config (quant_method " + m + ")";
  return out;
}

bool module_ignored(std::string_view module, const std::vector<std::string>& ignore) {
  for (const auto& entry : ignore) {
    if (entry.starts_with("re:")) {
      if (std::regex_search(std::string(module), std::regex(entry.substr(3)))) return true;
      continue;
    }
    if (entry.find('*') != std::string::npos) {
      std::string pattern;
      for (char c : entry) pattern += c == '*' ? std::string("[^.]*") : c == '.' ? std::string("\\.") : std::string(1, c);
      if (std::regex_search(std::string(module), std::regex("(^|\\.)" + pattern + "($|\\.)"))) return true;
      continue;
    }
    // A plain entry names a module or a module prefix ("lm_head", "model.layers.0.mlp.gate").
    if (module == entry || module.ends_with("." + entry) || module.starts_with(entry + ".")) return true;
  }
  return false;
}

}  // namespace vramplan
