// vramplan/memory/engine_setup.hpp — the steps the first-order engine profiles (sglang, trtllm,
// hf) all take before their own memory rules: validate the flags, name the plan, read --tp-size,
// place the weights of one rank and lay out its KV per token. Kept in one place so that the
// profiles differ only where the engines do.
#pragma once

#include <cstdint>
#include <string_view>

#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/memory/weights.hpp"

namespace vramplan::memory {

//! --batch and --context within plausibility limits (core/limits.hpp: kMaxBatch sequences,
//! kMaxContextTokens tokens, each at least 1); Error(Usage) naming the option otherwise. Every
//! engine's plan() starts with it: a wrapped-around negative count or 10^15 tokens is refused
//! here instead of overflowing a byte count later or planning for it.
void check_workload(const Workload& workload);

//! Checks the workload (check_workload) and in.args against engine.options() (Error(Usage) naming an unknown flag) and returns an
//! empty plan carrying the engine's name, its version profile and the GPU's capacity.
MemoryPlan start_plan(const Engine& engine, const EngineProfileData& data, const PlanInput& in);

//! --tp-size (default 1), recorded as the plan's GPU count: one rank per GPU. Throws
//! Error(Usage) for 0.
std::uint64_t place_tp_size(MemoryPlan& plan, const EngineArgs& args);

//! Resolves `request`, records the weight and compute precisions in `plan` and adds the weight
//! components of one rank sharded by `shard`. Returns the resolution (compute bytes, ...).
ResolvedWeights place_weights(MemoryPlan& plan, const PlanInput& in, const WeightRequest& request,
                              const ShardOptions& shard);

//! KV per token on one of `tp` ranks for --kv-cache-dtype (default "auto": `auto_kv_dtype` when
//! the engine picks one for this model, else the compute dtype); records bytes per token and its
//! derivation in plan.kv. `dsa_latent`: how an fp8 cache stores DeepSeek sparse attention's latent.
KvLayout place_kv_layout(MemoryPlan& plan, const PlanInput& in, const ResolvedWeights& weights,
                         std::uint64_t tp, std::string_view auto_kv_dtype = "",
                         DsaFp8Latent dsa_latent = DsaFp8Latent::Scaled, KvDtype* resolved = nullptr);

//! The plan's note for expert parallelism over `ep` of the `tp` GPUs (`flag` as the engine spells
//! it): how many whole experts a GPU holds, each sliced over tp / ep ranks where ep < tp, and that
//! the step model times the busiest GPU. Nothing when ep is 1.
void note_expert_parallel(MemoryPlan& plan, std::string_view flag, const ModelArch& arch, std::uint64_t tp,
                          std::uint64_t ep);

}  // namespace vramplan::memory
