#include "vramplan/plan/throughput.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/memory/sglang_dp_attention.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/llamacpp_mmvq.hpp"
#include "vramplan/perf/model_shape.hpp"

namespace vramplan::plan {

ThroughputModel throughput_model(const PlanSession& session, const GpuSpec& gpu, const memory::EngineArgs& args,
                                 const std::optional<std::string>& weights, const perf::PerfDefaults& defaults,
                                 std::uint64_t token_budget, const memory::MemoryPlan& plan) {
  ThroughputModel m;
  m.token_budget = token_budget;
  m.step_overhead_entry = perf::step_overhead_entry(plan.engine, plan.engine_view);
  const memory::WeightRequest request{memory::arg_string(args, "dtype"), memory::arg_string(args, "quantization"),
                                      weights};
  const memory::ResolvedWeights resolved = memory::resolve_weights(session.model(), session.quant(), request);
  const memory::KvDtype kv = memory::resolve_kv_dtype(memory::arg_string(args, "kv-cache-dtype").value_or("auto"),
                                                      resolved.compute_precision, session.quant());
  m.compute_dtype = resolved.compute_precision;
  const Parallel p = session.parallel_of(args);
  perf::ShapeOptions options;
  options.tp = static_cast<std::uint32_t>(p.tp);
  options.pp = static_cast<std::uint32_t>(p.pp);
  options.ep = static_cast<std::uint32_t>(plan.engine_view.value("ep_size", std::uint64_t{1}));
  options.kv_element_bytes = static_cast<double>(kv.block_bytes) / static_cast<double>(kv.block_elems);
  options.activation_bytes = static_cast<double>(resolved.compute_bytes);
  options.block_scaled_fp8 = resolved.block_scaled_fp8;
  // The plan's own KV and state sizes, as the simulator's step model takes them
  // (sim/serving_plan.cpp plan_performance): one KV size for the batch table, the sweep and the
  // simulator, e.g. SGLang's plain fp8 DSA latent rows (memory/sglang_dsa.cpp).
  options.kv_bytes_per_token_per_gpu = static_cast<double>(plan.kv.bytes_per_token);
  options.state_bytes_per_seq_per_gpu = static_cast<double>(plan.kv.state_bytes_per_sequence);
  options.counted_kernels = defaults.step_overhead_for(m.step_overhead_entry)
                               .counted_layers(gpu.vendor, gpu.compute_capability ? gpu.compute_capability->major : 0, session.model().arch.architecture,
                                               resolved.block_scaled_fp8, resolved.weights_precision);
  m.shape = perf::shape_from_model(session.model(), resolved.tensor_bytes, options);
  m.engine = plan.engine;
  m.block_quantized_share = perf::decode_quantized_share(m.engine, session.model(), resolved.tensor_bytes);
  if (plan.engine_view.value("enable_dp_attention", false)) {
    m.unavailable = std::string(memory::kDpAttentionUnmodelled);
    return m;
  }
  try {
    m.hardware = perf::perf_hardware_from(gpu, nullptr, resolved.compute_precision, defaults, m.step_overhead_entry);
    m.decode_hardware = perf::decode_hardware(*m.hardware, m.engine, gpu, m.block_quantized_share, defaults);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    m.unavailable = e.what();
  }
  return m;
}

}  // namespace vramplan::plan
