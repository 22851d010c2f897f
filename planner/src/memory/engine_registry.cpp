// THE list of engine profiles. Adding an engine = one line here + its implementation file +
// data/engines/<name>.json (docs/engines.md).
#include <algorithm>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_profiles.hpp"

namespace vramplan::memory {

const std::vector<EngineEntry>& engine_registry() {
  static const std::vector<EngineEntry> table = {
      {"hf", "Hugging Face transformers generate() / PyTorch eager: weights + dynamic KV + peak", make_hf_engine},
      {"llamacpp", "llama.cpp: model, KV, output and compute buffers as a load logs them (-c -ngl -ub -fa -ctk -ctv -np)", make_llamacpp_engine},
      {"sglang", "SGLang: mem_fraction_static covers weights + KV token pool", make_sglang_engine},
      {"tei", "text-embeddings-inference: embedders / rerankers, weights + one --max-batch-tokens batch, no KV cache", make_tei_engine},
      {"trtllm", "TensorRT-LLM: KV = free_gpu_memory_fraction of memory left after weights and activations", make_trtllm_engine},
      {"vllm", "vLLM (V1 0.8+, V0 0.6-0.7): KV pool = total x gpu_memory_utilization - weights - activation peak - non-torch", make_vllm_engine},
  };
  return table;
}

std::unique_ptr<Engine> make_engine(std::string_view spec, const std::filesystem::path& data_dir) {
  const auto at = spec.find('@');
  const std::string_view name = spec.substr(0, at);
  const std::string_view version = at == std::string_view::npos ? std::string_view() : spec.substr(at + 1);
  if (at != std::string_view::npos && version.empty())
    throw_usage("--engine " + std::string(spec) + ": give a version after '@' (e.g. vllm@0.17)");
  const auto& reg = engine_registry();
  const auto it = std::find_if(reg.begin(), reg.end(), [&](const EngineEntry& e) { return e.name == name; });
  if (it == reg.end()) {
    std::string known;
    for (const auto& e : reg) known += (known.empty() ? "" : ", ") + std::string(e.name);
    throw_unknown("unknown engine '" + std::string(name) + "' (known: " + known + ")");
  }
  return it->make(data_dir, version);
}

}  // namespace vramplan::memory
