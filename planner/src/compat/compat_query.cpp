// Builds the facts of a compatibility query from the GPU catalogue and a --weights scheme.
#include <algorithm>

#include "vramplan/compat/compat.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/precision_plan.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan::compat {

void set_gpu_facts(Query& q, const GpuSpec& gpu) {
  q.gpu_id = gpu.kind == GpuKind::Mig ? gpu.parent_id : gpu.id;
  q.vendor = gpu.vendor;
  q.compute_capability.reset();
  if (gpu.compute_capability)
    q.compute_capability = gpu.compute_capability->major + gpu.compute_capability->minor / 10.0;
  q.gfx_target = gpu.gfx_target;
  q.mig = gpu.kind == GpuKind::Mig;
  q.node_gpus = gpu.node_gpus;  // a MIG slice carries its card's
}

std::vector<std::string> weight_families(const WeightScheme& scheme, const QuantCatalog& catalog) {
  std::string format;
  switch (scheme.kind) {
    case SchemeKind::Checkpoint: return {};
    case SchemeKind::GgufFileType: return {"gguf"};
    case SchemeKind::Format: format = scheme.format; break;
    case SchemeKind::VllmMethod: {
      const SchemeTable& table = catalog.schemes();
      const VllmMethod* m = table.find_vllm_method(scheme.vllm_method);
      // compressed-tensors has no default scheme: its layout comes from the checkpoint.
      if (!m || m->scheme.empty()) return {"compressed-tensors"};
      const WeightScheme inner = parse_weight_scheme(m->scheme, catalog);
      return weight_families(inner, catalog);
    }
  }
  const QuantFormat& f = catalog.get(format);
  std::vector<std::string> out{f.family.empty() ? "float" : f.family};
  // Quantized schemes keep norms / embeddings in the model dtype (keep rules).
  if (out.front() != "float") out.push_back("float");
  return out;
}

std::vector<std::string> model_weight_families(const ModelSpec& model, const QuantCatalog& catalog,
                                               const std::optional<std::string>& weights) {
  if (weights) {
    const WeightScheme scheme = parse_weight_scheme(*weights, catalog);
    if (scheme.kind != SchemeKind::Checkpoint) return weight_families(scheme, catalog);
  }
  if (const auto cq = checkpoint_quantization(model, catalog)) return weight_families(cq->scheme, catalog);
  // A .gguf file is loaded as GGUF whatever its tensor types (MXFP4 included): the types
  // themselves are model_gguf_types' answer.
  if (model.source.kind == "gguf") return {"gguf"};
  std::vector<std::string> out;
  for (const auto& t : model.tensors) {
    const QuantFormat* f = catalog.find(t.stored_format);
    if (f && !f->family.empty() && std::find(out.begin(), out.end(), f->family) == out.end()) out.push_back(f->family);
  }
  if (out.empty()) out.push_back("float");
  return out;
}

bool weights_quantize_nothing(const ModelSpec& model, const QuantCatalog& catalog, const std::optional<std::string>& weights) {
  if (!weights || model.tensors.empty()) return false;
  const WeightScheme scheme = parse_weight_scheme(*weights, catalog);
  if (scheme.kind != SchemeKind::Format && scheme.kind != SchemeKind::VllmMethod) return false;
  return !plan_precision(model, catalog, {*weights, ""}).nothing_quantized.empty();
}

std::vector<std::string> gguf_types(const WeightScheme& scheme, const QuantCatalog& catalog) {
  if (scheme.kind == SchemeKind::GgufFileType) {
    // llama-quantize's mixture keeps the file type's base type for most weights
    // (llama_ftype_get_default_type); the rules ask about that type.
    const GgufFileType* ft = catalog.schemes().find_gguf_file_type(scheme.gguf_file_type);
    return ft ? std::vector<std::string>{ft->base} : std::vector<std::string>{};
  }
  if (scheme.kind == SchemeKind::Format) {
    const QuantFormat& f = catalog.get(scheme.format);
    if (f.gguf_type_id && f.family == "gguf") return {f.name};
  }
  return {};
}

std::vector<std::string> model_gguf_types(const ModelSpec& model, const QuantCatalog& catalog,
                                          const std::optional<std::string>& weights) {
  if (weights) {
    const WeightScheme scheme = parse_weight_scheme(*weights, catalog);
    if (scheme.kind != SchemeKind::Checkpoint) return gguf_types(scheme, catalog);
  }
  if (model.source.kind != "gguf") return {};
  std::vector<std::string> out;
  for (const auto& t : model.tensors)
    if (std::find(out.begin(), out.end(), t.stored_format) == out.end()) out.push_back(t.stored_format);
  return out;
}

std::string float_dtype(std::string_view dtype) {
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "float16" || dtype == "half") return "fp16";
  if (dtype == "float32" || dtype == "float") return "fp32";
  return std::string(dtype);
}

}  // namespace vramplan::compat
