#include "vramplan/plan/throughput.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/memory/sglang_dp_attention.hpp"
#include "vramplan/memory/vllm_data_parallel.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/llamacpp_mmvq.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/sim/serving_plan.hpp"

namespace vramplan::plan {

ThroughputModel throughput_model(const PlanSession& session, const GpuSpec& gpu, const memory::EngineArgs& args,
                                 const std::optional<std::string>& weights, const perf::PerfDefaults& defaults,
                                 std::uint64_t token_budget, const memory::MemoryPlan& plan) {
  ThroughputModel m;
  m.token_budget = token_budget;
  m.step_overhead_entry = perf::step_overhead_entry(plan.engine, plan.engine_view);
  m.decode_round_steps = plan.engine_view.value("num_scheduler_steps", std::uint64_t{1});
  const memory::WeightRequest request{memory::arg_string(args, "dtype"), memory::arg_string(args, "quantization"),
                                      weights};
  const memory::ResolvedWeights resolved = memory::resolve_weights(session.model(), session.quant(), request);
  const memory::KvDtype kv = memory::resolve_kv_dtype(memory::arg_string(args, "kv-cache-dtype").value_or("auto"),
                                                      resolved.compute_precision, session.quant());
  m.compute_dtype = resolved.compute_precision;
  const Parallel p = session.parallel_of(args);
  perf::ShapeOptions options = sim::plan_shape_options(plan, resolved, p.tp, p.pp, gpu, session.model().arch, defaults,
                                                       m.step_overhead_entry);
  options.kv_element_bytes = static_cast<double>(kv.block_bytes) / static_cast<double>(kv.block_elems);
  m.shape = perf::shape_from_model(session.model(), resolved.tensor_bytes, options);
  m.engine = plan.engine;
  m.block_quantized_share = perf::decode_quantized_share(m.engine, session.model(), resolved.tensor_bytes);
  if (plan.engine_view.value("enable_dp_attention", false)) {
    m.unavailable = std::string(memory::kDpAttentionUnmodelled);
    return m;
  }
  if (m.shape.vllm_dp.ranks > 1) {
    m.unavailable = std::string(memory::kVllmDpLockstepUnmodelled);
    return m;
  }
  try {
    m.hardware = perf::perf_hardware_from(gpu, nullptr, resolved.compute_precision, defaults, m.step_overhead_entry);
    m.decode_hardware = perf::decode_hardware(*m.hardware, m.engine, gpu, m.block_quantized_share, defaults);
    perf::amortize_step_overhead(*m.decode_hardware, m.decode_round_steps);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    m.unavailable = e.what();
  }
  return m;
}

}  // namespace vramplan::plan
