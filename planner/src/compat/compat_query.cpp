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
  std::vector<std::string> out;
  for (const auto& t : model.tensors) {
    const QuantFormat* f = catalog.find(t.stored_format);
    if (f && !f->family.empty() && std::find(out.begin(), out.end(), f->family) == out.end()) out.push_back(f->family);
  }
  if (out.empty()) out.push_back("float");
  return out;
}

std::string float_dtype(std::string_view dtype) {
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "float16" || dtype == "half") return "fp16";
  if (dtype == "float32" || dtype == "float") return "fp32";
  return std::string(dtype);
}

}  // namespace vramplan::compat
