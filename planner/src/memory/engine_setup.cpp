#include "vramplan/memory/engine_setup.hpp"

#include <cstdint>
#include <string>

#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"

namespace vramplan::memory {

namespace {

void check_count(std::optional<std::uint64_t> value, std::string_view option, std::uint64_t max) {
  if (!value || (*value >= 1 && *value <= max)) return;
  throw_usage(std::string(option) + ": must be in 1.." + std::to_string(max) + ", got " + count_text(*value));
}

}  // namespace

void check_workload(const Workload& workload) {
  check_count(workload.batch, "--batch", kMaxBatch);
  check_count(workload.context, "--context", kMaxContextTokens);
}

MemoryPlan start_plan(const Engine& engine, const EngineProfileData& data, const PlanInput& in) {
  check_workload(in.workload);
  check_known_args(in.args, engine.options(), engine.name());
  MemoryPlan p;
  p.engine = std::string(engine.name());
  p.engine_version = data.version();
  p.engine_profile_note = data.note();
  p.gpu_total = in.gpu.total;
  // hf, sglang and trtllm start here (vllm_engine.cpp plans the encoder's profile run,
  // vllm_encoder_profile.cpp; llama.cpp loads no tower): image inputs are not planned for them.
  if (in.model.arch.multimodal)
    p.notes.push_back(in.model.arch.architecture + " takes images: under " + std::string(engine.name()) +
                      " the plan counts the vision tower's weights only; image inputs (their tokens, pixel values and "
                      "the vision encoder's activations) are not planned: the workload is text");
  return p;
}

std::uint64_t place_tp_size(MemoryPlan& plan, const EngineArgs& args) {
  const std::uint64_t tp = arg_u64(args, "tp-size").value_or(1);
  if (tp == 0) throw_usage("--tp-size must be >= 1");
  plan.gpu_count = tp;
  return tp;
}

ResolvedWeights place_weights(MemoryPlan& plan, const PlanInput& in, const WeightRequest& request,
                              const ShardOptions& shard) {
  ResolvedWeights rw = resolve_weights(in.model, in.quant, request);
  plan.weights_precision = rw.weights_precision;
  plan.compute_precision = rw.compute_precision;
  plan.planned_weights = rw.planned;
  plan.weights = shard_weights(in.model, rw, shard);
  return rw;
}

KvLayout place_kv_layout(MemoryPlan& plan, const PlanInput& in, const ResolvedWeights& weights,
                         std::uint64_t tp, std::string_view auto_kv_dtype, DsaFp8Latent dsa_latent,
                         KvDtype* resolved) {
  std::string asked = arg_string(in.args, "kv-cache-dtype").value_or("auto");
  if (asked == "auto" && !auto_kv_dtype.empty()) asked = auto_kv_dtype;
  const KvDtype dtype = resolve_kv_dtype(asked, weights.compute_precision, in.quant);
  KvLayout kv = kv_layout(in.model.arch, dtype, tp, dsa_latent);
  if (resolved) *resolved = dtype;
  plan.kv.bytes_per_token = kv.bytes_per_token;
  plan.kv.explain = kv.explain;
  return kv;
}

void note_expert_parallel(MemoryPlan& plan, std::string_view flag, const ModelArch& arch, std::uint64_t tp,
                          std::uint64_t ep) {
  if (ep <= 1) return;
  plan.notes.push_back(std::string(flag) + ": each GPU holds " + std::to_string(arch.num_experts / ep) + " of the " +
                       std::to_string(arch.num_experts) + " routed experts" +
                       (tp > ep ? ", each split over " + std::to_string(tp / ep) + " ranks" : " whole") +
                       ", the bytes of a plain TP " + std::to_string(tp) +
                       " split; a step waits for the GPU whose chosen experts take longest");
}

}  // namespace vramplan::memory
