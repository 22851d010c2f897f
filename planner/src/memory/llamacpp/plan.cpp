// llama.cpp: one load, every buffer.
#include "vramplan/core/bytes.hpp"
#include "vramplan/memory/llamacpp.hpp"

namespace vramplan::llamacpp {

Plan plan(const ModelSpec& model, const Settings& s, const LlamacppProfile& profile,
          const QuantCatalog& quant) {
  Plan p;
  p.model = model_buffers(model, s, profile, quant);  // logged before the context is refused
  const ContextResult ctx = make_context(model.arch, s, profile);
  if (!ctx.context) {
    p.refusal = ctx.refusal;
    return p;
  }
  p.ok = true;
  p.context = *ctx.context;
  p.kv = kv_caches(model.arch, p.context, s, quant);
  // KV of a layer lives with the layer (offload_kqv is on by default).
  const Offload off = offload_split(model.arch.num_layers, s);
  for (const auto& kv : p.kv) {
    if (kv.layers.empty()) continue;
    const std::uint64_t per_layer = kv.bytes() / kv.layers.size();  // every layer has the same row
    for (int l : kv.layers) {
      auto& bucket = static_cast<std::uint64_t>(l) >= off.first_gpu_layer ? p.kv_gpu_bytes : p.kv_host_bytes;
      bucket = checked_add(bucket, per_layer);
    }
  }
  // The recurrent state of a layer lives with it too (llama_memory_recurrent: offload).
  p.recurrent = recurrent_cache(model.arch, p.context);
  if (p.recurrent) {
    const std::uint64_t per_layer = p.recurrent->bytes() / p.recurrent->layers.size();
    for (int l : p.recurrent->layers) {
      auto& bucket = static_cast<std::uint64_t>(l) >= off.first_gpu_layer ? p.rs_gpu_bytes : p.rs_host_bytes;
      bucket = checked_add(bucket, per_layer);
    }
  }
  p.output_bytes = output_buffer_bytes(model.arch, p.context);
  p.compute = compute_buffer(model, p.context, p.kv, s.device);
  return p;
}

}  // namespace vramplan::llamacpp
