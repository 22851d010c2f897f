#include "vramplan/model/checkpoint.hpp"

#include <map>
#include <set>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/safetensors.hpp"
#include "vramplan/model/hf_names.hpp"

namespace vramplan {
namespace {

std::string format_name(const FormatTable& formats, const std::string& dtype) {
  if (const auto* f = formats.find_safetensors(dtype)) return f->name;
  std::string out = dtype;
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

// Present in any form: a directory or FIFO under the name is then refused by the reader (it was
// skipped, and the plan silently came from config.json alone).
// Any other *.safetensors file counts too: without an index vLLM loads them all (read_safetensors_dir).
bool has_safetensors(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(dir / "model.safetensors", ec)) ||
         std::filesystem::exists(dir / "model.safetensors.index.json", ec) || !safetensors_files_in(dir).empty();
}

ModelSpec model_from_checkpoint_dir(const std::filesystem::path& dir, const FormatTable& formats,
                                    const HfLoadOptions& options) {
  auto spec = model_from_hf_config_file(dir, options);
  if (!has_safetensors(dir)) return spec;
  const auto file_tensors = read_safetensors_dir(dir, formats);

  std::map<std::string, std::size_t> by_key;
  for (std::size_t i = 0; i < spec.tensors.size(); ++i)
    by_key.emplace(hf_inventory_key(spec.tensors[i].name), i);
  std::vector<bool> seen(spec.tensors.size(), false);
  std::vector<std::set<std::string>> weight_formats(spec.tensors.size());
  // Elements the files hold for each inventory tensor, summed over the tensors stored one value
  // per element (float and fp8 dtypes; per-expert tensors add up to the stacked one); `countable`
  // turns false when a packed tensor (GPTQ int32, bitsandbytes uint8) contributes.
  std::vector<std::uint64_t> file_elements(spec.tensors.size(), 0);
  std::vector<bool> countable(spec.tensors.size(), true);
  std::vector<std::string> first_file_tensor(spec.tensors.size());
  std::vector<TensorInfo> extra;
  std::vector<std::string> skipped_lm_head;
  for (const auto& st : file_tensors) {
    bool companion = false;
    const auto key = hf_inventory_key(st.name, &companion);
    const auto fmt = format_name(formats, st.dtype);
    if (const auto it = by_key.find(key); it != by_key.end()) {
      auto& t = spec.tensors[it->second];
      if (!seen[it->second]) t.stored_bytes = 0, seen[it->second] = true;
      t.stored_bytes = checked_add(*t.stored_bytes, st.data_bytes, "tensor '" + t.name + "' bytes");
      if (!companion) {
        weight_formats[it->second].insert(fmt);
        const QuantFormat* f = formats.find_safetensors(st.dtype);
        if (f && (f->family == "float" || f->family == "fp8") && f->block_elems == 1 && f->block_bytes > 0) {
          std::uint64_t n = 1;
          for (const auto d : st.shape) n = checked_mul(n, d, "tensor '" + st.name + "' elements");
          file_elements[it->second] = checked_add(file_elements[it->second], n, "tensor '" + t.name + "' elements");
          if (first_file_tensor[it->second].empty()) first_file_tensor[it->second] = st.name;
        } else {
          countable[it->second] = false;
        }
      }
      continue;
    }
    const auto cls = role_from_hf_tensor_name(st.name, spec.arch);
    // Tied embeddings: the output head is the token embedding. vLLM never allocates lm_head and
    // skips "lm_head." weights while loading (LlamaForCausalLM / Qwen2ForCausalLM.load_weights:
    // AutoWeightsLoader(self, skip_prefixes=["lm_head."] if config.tie_word_embeddings),
    // vllm/model_executor/models/llama.py, qwen2.py), so a stored copy costs nothing.
    if (spec.arch.tied_embeddings && cls.role == TensorRole::Output && !cls.layer) {
      skipped_lm_head.push_back(st.name);
      continue;
    }
    TensorInfo t;
    t.name = st.name;
    t.role = cls.role;
    t.shape = st.shape;
    t.layer = cls.layer;
    t.is_bias = cls.is_bias;
    t.stored_format = fmt;
    t.stored_bytes = st.data_bytes;
    extra.push_back(std::move(t));
  }

  // A file tensor whose size is not the config's: vLLM's weight loaders assert
  // param.size() == loaded_weight.size() (default_weight_loader, weight_utils.py) and refuse to
  // start, so the plan must not mix the config's parameters with the file's bytes.
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    const auto& t = spec.tensors[i];
    if (!seen[i] || !countable[i] || first_file_tensor[i].empty() || file_elements[i] == t.elements()) continue;
    std::string shape;
    for (const auto d : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    const std::string why = "tensor '" + first_file_tensor[i] + "': the safetensors files hold " +
                            std::to_string(file_elements[i]) + " elements for '" + t.name + "', config.json gives [" +
                            shape + "] = " + std::to_string(t.elements()) +
                            "; vLLM refuses such a checkpoint (its weight loader asserts param.size() == loaded_weight.size())";
    if (!options.allow_missing_tensors) throw Error(ErrorKind::InputFile, dir.string() + ": " + why);
    spec.warnings.push_back(why);
  }
  std::vector<TensorInfo> kept;
  std::size_t missing = 0;
  std::string first_missing;
  bool pooler_absent = false;
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    auto& t = spec.tensors[i];
    // BertPooler is optional: transformers initialises a missing one with a load warning, and
    // vLLM's BERT / RoBERTa embedding models build none (BertModel add_pooling_layer=False,
    // vllm/model_executor/models/bert.py) and skip "pooler" weights. Not counted when absent.
    if (!seen[i] && t.name.find("pooler.dense.") != std::string::npos) {
      pooler_absent = true;
      continue;
    }
    if (!seen[i]) {
      if (missing++ == 0) first_missing = t.name;
      continue;
    }
    // Only companions seen (GPTQ qweight/scales): the bytes are exact, the format is the
    // quantization method's, which the precision plan reads from quantization_config.
    const auto& fmts = weight_formats[i];
    t.stored_format = fmts.size() == 1 ? *fmts.begin() : "";
    if (fmts.size() > 1)
      spec.warnings.push_back("tensor '" + t.name + "' is stored in several dtypes; format left open");
    kept.push_back(std::move(t));
  }
  // vLLM allocates every parameter the model code creates from the config, then refuses to start
  // when a checkpoint left one unfilled: DefaultModelLoader.track_weights_loading
  // (vllm/model_executor/model_loader/default_loader.py) raises "Following weights were not
  // initialized from checkpoint". A plan for such a checkpoint would describe a server that never
  // starts, so planning refuses it; `inspect` reads it with a warning to show what is there.
  if (missing > 0 && !options.allow_missing_tensors)
    throw Error(ErrorKind::InputFile,
                dir.string() + ": tensor '" + first_missing + "' of config.json is in no safetensors file" +
                    (missing > 1 ? " (" + std::to_string(missing) + " tensors missing)" : std::string()) +
                    "; vLLM refuses such a checkpoint (\"weights were not initialized from checkpoint\"); "
                    "'vramplan inspect' lists what the files hold");
  if (missing > 0)
    spec.warnings.push_back(std::to_string(missing) +
                            " tensor(s) the config describes are not in the safetensors files "
                            "(first: " + first_missing + "); counted from the files only, and vLLM refuses "
                            "to load such a checkpoint");
  if (pooler_absent) spec.warnings.push_back("the checkpoint has no pooler (pooler.dense): not counted");
  if (!skipped_lm_head.empty())
    spec.warnings.push_back("tie_word_embeddings is true: '" + skipped_lm_head.front() +
                            "' in the files is not counted (vLLM shares the token embedding and skips lm_head weights)");
  for (auto& t : extra) kept.push_back(std::move(t));
  spec.tensors = std::move(kept);
  spec.source.kind = "safetensors";
  spec.source.path = dir.string();
  return spec;
}

}  // namespace vramplan
