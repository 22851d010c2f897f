#include "vramplan/plan/compatibility.hpp"

namespace vramplan::plan {

compat::Verdict scenario_compatibility(const PlanSession& session, const GpuSpec& gpu,
                                       const memory::EngineArgs& args, const std::optional<std::string>& weights) {
  compat::Query q;
  q.engine = std::string(session.engine().name());
  q.engine_version = std::string(session.engine().release());
  compat::set_gpu_facts(q, gpu);
  q.weight_families = compat::model_weight_families(session.model(), session.quant(), weights);
  q.gguf_types = compat::model_gguf_types(session.model(), session.quant(), weights);
  // llama.cpp is built per platform (CUDA, HIP, Vulkan, CPU): --llamacpp-backend names the build,
  // else the GPU vendor's (data/compat/formats.json).
  if (const auto backend = memory::arg_string(args, "llamacpp-backend")) q.backend = *backend;
  const auto dtype = memory::arg_string(args, "dtype");
  q.dtype = compat::float_dtype(dtype && *dtype != "auto" ? *dtype : session.model().arch.torch_dtype);
  const auto kv = memory::arg_string(args, "kv-cache-dtype");
  if (kv && kv->starts_with("fp8")) q.kv = "fp8";
  const Parallel p = session.parallel_of(args);
  q.tensor_parallel = p.tp;
  q.pipeline_parallel = p.pp;
  // vLLM's engines (memory/vllm_data_parallel.hpp); other engines have no such flag.
  q.data_parallel = memory::arg_u64(args, "data-parallel-size").value_or(1);
  if (!session.model().arch.architecture.empty()) q.architectures = {session.model().arch.architecture};
  return session.compat().evaluate(q);
}

std::string unsupported_line(const compat::Verdict& v) {
  for (const auto& f : v.findings)
    if (f.support == compat::Support::Unsupported) return compat::finding_line(f);
  return {};
}

std::vector<std::string> compatibility_warnings(const compat::Verdict& v) {
  std::vector<std::string> out;
  for (const auto& f : v.findings)
    if (f.support == compat::Support::Fallback) out.push_back(compat::finding_line(f));
  for (const auto& u : v.unchecked) out.push_back("compatibility: " + u);
  return out;
}

}  // namespace vramplan::plan
