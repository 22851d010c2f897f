// Builds the facts of a compatibility query from the GPU catalogue and a --weights scheme.
#include <algorithm>

#include "vramplan/compat/compat.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/quant/format.hpp"
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

}  // namespace vramplan::compat
