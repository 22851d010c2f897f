// The serving figures of `vramplan plan` from the step model (perf_model.hpp).
#include "vramplan/perf/serving.hpp"

#include <string>

#include "vramplan/core/error.hpp"

namespace vramplan::perf {

ServingEstimate estimate_serving(const PerfModelShape& shape, const PerfHardware& hw,
                                 const ServingQuery& q) {
  if (q.batch == 0) throw_usage("--batch must be >= 1");
  if (q.prompt_tokens == 0) throw_usage("--prompt-len must be >= 1");
  ServingEstimate out;
  out.basis = hw.basis;
  out.notes = shape.notes;
  out.decode = estimate_decode(shape, hw, DecodeBatch{q.batch, q.decode_context});
  out.ttft_s = estimate_ttft(shape, hw, q.prompt_tokens, q.token_budget);
  if (q.max_batch == 0) {
    out.notes.push_back("throughput vs batch: no memory-limited concurrency (the plan does not fit, or its KV "
                        "capacity is unknown)");
  } else {
    out.curve = throughput_vs_batch(shape, hw, q.decode_context, q.max_batch);
    if (q.batch > q.max_batch)
      out.notes.push_back("--batch " + std::to_string(q.batch) + " exceeds the " + std::to_string(q.max_batch) +
                          " sequences of " + std::to_string(q.decode_context) +
                          " tokens the KV cache holds: the engine would queue the rest; the decode figures "
                          "assume all of them decode together");
  }
  return out;
}

}  // namespace vramplan::perf
