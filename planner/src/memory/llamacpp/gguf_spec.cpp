// The tensors of the GGUF file llama-quantize would write for a model and a file type, in file
// order, so that the buffer model can work on them as on a GGUF the user gives.
#include <algorithm>
#include <iterator>
#include <map>
#include <string_view>

#include "vramplan/memory/llamacpp.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/gguf_mixture.hpp"

namespace vramplan::llamacpp {
namespace {

// The HF model types whose GGUF architecture llama.cpp windows (the loaders that set a SWA layout,
// model/gguf_model.cpp kWindowLayouts; convert_hf_to_gguf.py maps Gemma2ForCausalLM -> gemma2,
// Gemma3* -> gemma3, Cohere2ForCausalLM -> cohere2, GptOssForCausalLM -> gpt-oss, Llama4* -> llama4,
// Gemma4* -> gemma4). The config's own pattern is the loader's there (set_swa_pattern 2 / 6 / 4 / 2,
// chunked 3 + 1; conversion/gemma.py Gemma4Model writes layer_types as sliding_window_pattern, one
// flag a layer, which gemma4.cpp load_arch_hparams reads back).
constexpr std::string_view kWindowedModelTypes[] = {"gemma2", "gemma3", "gemma3_text", "cohere2", "gpt_oss",
                                                    "llama4", "llama4_text", "gemma4", "gemma4_text"};

// Any other converted checkpoint runs every layer with full attention in llama.cpp, whatever its
// config.json says: Mistral-7B-v0.1's sliding_window 4096 (MistralForCausalLM converts to the llama
// architecture, whose loader reads no window) and Phi-3's 2047 ("Phi SWA is currently disabled").
void full_attention_unless_windowed(ModelArch& arch) {
  if (std::find(std::begin(kWindowedModelTypes), std::end(kWindowedModelTypes), arch.model_type) !=
      std::end(kWindowedModelTypes))
    return;
  bool changed = false;
  for (auto& a : arch.layer_attention)
    if (a == LayerAttention::Sliding || a == LayerAttention::Chunked) {
      a = LayerAttention::Full;
      changed = true;
    }
  if (changed) arch.sliding_window = arch.attention_chunk_size = 0;
}

}  // namespace

ModelSpec gguf_model_spec(const ModelSpec& model, const GgufFileType& file_type, const QuantCatalog& quant) {
  // convert_hf_to_gguf.py writes a multimodal checkpoint's vision / audio tower to a separate mmproj
  // GGUF (--mmproj), which llama.cpp loads apart from the text model (tools/mtmd); llama-quantize
  // then sees (and counts, for its per-layer rules) the text tensors only.
  // A multi-token-prediction block is written as the last block(s) (nextn_predict_layers) but not
  // loaded unless a draft context asks for it (qwen35.cpp / glm4-moe.cpp load_arch_tensors:
  // TENSOR_SKIP without load_mtp; convert skips DeepSeek's): it takes no buffer and no KV.
  ModelSpec text = model;
  std::erase_if(text.tensors, [](const TensorInfo& t) { return is_mmproj_role(t.role) || t.role == TensorRole::Mtp; });
  // File order: llama-quantize writes llama_model_loader's weights_map order (the global tensors,
  // then the blocks in layer order, each by GGUF name: weight_name_comparer), which is what places
  // the repacked tensors and so the CPU_Mapped span's ends. (An F16 file keeps the converter's
  // order, but nothing in it is repacked.)
  std::vector<TensorInfo> globals;
  std::map<int, std::vector<TensorInfo>> blocks;
  for (const auto& tp : plan_gguf_file_type(text, file_type, quant)) {
    const TensorInfo& src = text.tensors.at(tp.tensor_index);
    for (const auto& part : tp.parts) {
      TensorInfo t = src;
      t.name = part.gguf_name;
      t.shape = part.shape;
      t.stored_format = quant.get(part.type).name;
      t.stored_bytes = part.bytes;
      if (t.layer) blocks[*t.layer].push_back(std::move(t));
      else globals.push_back(std::move(t));
    }
  }
  // convert_hf_to_gguf.py (LlamaModel.generate_extra_tensors) writes the llama3 rope factors as
  // rope_freqs.weight, F32 {rotary_dim / 2}, before every checkpoint tensor; conversion/gemma.py
  // (Gemma4Model.generate_extra_tensors) writes Gemma 4's full layers' "proportional" rope as the same
  // tensor of global_head_dim / 2 factors (1 for the rotated pairs, 1e30 for the others).
  const bool has_rope_freqs = std::any_of(globals.begin(), globals.end(),
                                          [](const TensorInfo& t) { return t.role == TensorRole::RopeFreqs; });
  for (const auto& rope : model.arch.rope_tables) {
    if ((rope.scaling_type != "llama3" && rope.scaling_type != "proportional") || has_rope_freqs) continue;
    TensorInfo t;
    t.name = "rope_freqs.weight";
    t.role = TensorRole::RopeFreqs;
    t.shape = {rope.rotary_dim / 2};
    t.stored_format = quant.get("fp32").name;
    t.stored_bytes = tensor_bytes(quant.get("fp32"), t.shape, t.name);
    globals.insert(globals.begin(), std::move(t));
    break;
  }
  // The converted model: the text model with the file's tensors (the checkpoint's are no longer read).
  ModelSpec out = std::move(text);
  full_attention_unless_windowed(out.arch);
  std::sort(globals.begin(), globals.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  out.tensors = std::move(globals);
  for (auto& [layer, tensors] : blocks) {
    std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
    out.tensors.insert(out.tensors.end(), tensors.begin(), tensors.end());
  }
  return out;
}

}  // namespace vramplan::llamacpp
