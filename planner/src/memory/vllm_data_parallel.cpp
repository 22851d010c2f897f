// vLLM data parallelism per release; the rules and their sources are in vllm_data_parallel.hpp
// and docs/research/vllm-data-parallel.md.
#include "vramplan/memory/vllm_data_parallel.hpp"

#include <cstddef>
#include <utility>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/core/version.hpp"

namespace vramplan::memory {

namespace {

// The names the plan's engine_view gives them (sim/engine_rules.cpp reads them back).
constexpr std::pair<VllmDpRouter, std::string_view> kRouterNames[] = {
    {VllmDpRouter::WaitingThenRunning, "waiting-then-running"},
    {VllmDpRouter::WeightedQueue, "4-waiting-plus-running"},
    {VllmDpRouter::InflightKvPressure, "inflight-kv-pressure"},
    {VllmDpRouter::RoundRobin, "round-robin"},
};
constexpr std::pair<VllmDpPadding, std::string_view> kPaddingNames[] = {
    {VllmDpPadding::None, "none"},
    {VllmDpPadding::ToLargest, "largest"},
    {VllmDpPadding::ToLargestIfGraphed, "largest-if-graphed"},
};

template <typename E, std::size_t N>
std::string_view name_of(const std::pair<E, std::string_view> (&names)[N], E value) {
  for (const auto& [e, name] : names)
    if (e == value) return name;
  throw_internal("vllm data parallelism: a value without a name");
}

}  // namespace

std::string_view vllm_dp_router_name(VllmDpRouter r) { return name_of(kRouterNames, r); }
std::string_view vllm_dp_padding_name(VllmDpPadding p) { return name_of(kPaddingNames, p); }

VllmDataParallel vllm_data_parallel(const EngineArgs& args, const ModelArch& arch, std::string_view release,
                                    bool v0_profile, std::uint64_t tp, std::uint64_t pp, bool eager) {
  VllmDataParallel d;
  const std::uint64_t dp = arg_u64(args, "data-parallel-size").value_or(1);
  if (dp == 0) throw_usage("--data-parallel-size must be >= 1");
  // The bound is vramplan's (a node of D x T GPUs simulated rank by rank), not vLLM's.
  if (dp > 1024) throw_usage("--data-parallel-size must be at most 1024, got " + std::to_string(dp));
  if (dp == 1) return d;
  using V = std::vector<std::uint64_t>;
  const V v = release_numbers(release);
  const std::string name = v.empty() ? std::string("the current vLLM release") : "vLLM " + std::string(release);
  if (v0_profile || released_before(v, {0, 8, 3}))
    throw_usage("--data-parallel-size: " + name + " has no data parallelism for `vllm serve` (the flag and the V1 "
                "engine cores it starts came in 0.8.3, engine/arg_utils.py; V0 never starts several engines)");
  if (released_before(v, {0, 9, 1}))
    throw_usage("--data-parallel-size: " + name + " runs data parallelism in eager mode (platforms/cuda.py "
                "check_and_update_config forces enforce_eager when data_parallel_size > 1, up to 0.9.0), which is "
                "not modelled: plan vllm@0.9.1 or later");
  if (pp > 1)
    throw_usage("--data-parallel-size with --pipeline-parallel-size " + std::to_string(pp) +
                ": data parallelism over pipeline stages is not modelled");
  const bool moe = arch.num_experts > 0;
  d.dp = dp;
  // v1/engine/core.py run_engine_core: DPEngineCoreProc for every model up to 0.13, for MoE
  // models only from 0.14 ("Non-MoE DP ranks are completely independent").
  d.lockstep = moe || released_before(v, {0, 14, 0});
  d.expert_group = moe ? dp * tp : 1;
  if (moe && arg_switch(args, "enable-expert-parallel") && arch.num_experts % d.expert_group != 0)
    throw_usage("--enable-expert-parallel: " + std::to_string(arch.num_experts) + " routed experts over " +
                std::to_string(d.expert_group) + " GPUs (--data-parallel-size x --tensor-parallel-size) is an uneven "
                "split (vLLM gives the first ranks one more), not modelled");
  d.shared_experts_whole = moe && arg_switch(args, "enable-expert-parallel") && tp > 1 && arch.kv_lora_rank > 0 &&
                          !released_before(v, {0, 11, 0});
  // gpu_model_runner.py get_dp_padding (0.9.1 - 0.11) / v1/worker/dp_utils.py
  // coordinate_batch_across_dp: no padding under --enforce-eager; to the largest graph-padded count
  // up to 0.16; from 0.17 only when every rank can replay a graph (_synchronize_dp_ranks).
  d.padding = eager ? VllmDpPadding::None
              : released_before(v, {0, 17, 0}) ? VllmDpPadding::ToLargest
                                                 : VllmDpPadding::ToLargestIfGraphed;
  // envs.py VLLM_ALL2ALL_BACKEND: "naive" up to 0.10.2, "allgather_reducescatter" from 0.11.
  d.naive_combine = released_before(v, {0, 11, 0});
  // v1/engine/core_client.py DPLBAsyncMPClient.get_core_engine_for_request. Dense engines of
  // 0.14 - 0.26 never publish their counts (only DPEngineCoreProc did until PR #49204), so the
  // router sees zeros and its local bumps deal them round-robin.
  const bool current = !released_before(v, {0, 28, 0});
  if (current) d.router = VllmDpRouter::InflightKvPressure;
  else if (v < V{0, 10, 1}) d.router = VllmDpRouter::WaitingThenRunning;
  else if (!moe && v >= V{0, 14, 0}) d.router = VllmDpRouter::RoundRobin;
  else d.router = VllmDpRouter::WeightedQueue;
  // DPEngineCoreProc._has_global_unfinished_reqs: every 32 steps (0.9.2 - 0.28), every 16 from 0.30.
  d.wave_sync_steps = d.lockstep ? (released_before(v, {0, 30, 0}) ? 32 : 16) : 0;
  const std::string gpus = std::to_string(dp * tp);
  d.explain = "data parallelism: " + std::to_string(dp) + " engines of " + std::to_string(tp) + " GPU(s) each (" + gpus +
              " GPUs), each with its own scheduler, KV pool, prefix cache, max_num_seqs and max_num_batched_tokens; " +
              (moe ? "the routed experts span all " + gpus + " GPUs (fused_moe/config.py FusedMoEParallelConfig.make" +
                         std::string(arg_switch(args, "enable-expert-parallel") ? ": whole experts)" : ": TP flattened across DP)") +
                         ", every other layer the engine's " + std::to_string(tp) + "; "
                   : std::string("a dense model is copied whole into every engine; ")) +
              (d.lockstep ? "the engines step in lockstep (v1/engine/core.py DPEngineCoreProc: an idle engine runs a "
                            "one-token dummy forward)"
                          : "the engines run independently (v1/engine/core.py run_engine_core, from 0.14)") +
              "; requests routed by " + std::string(vllm_dp_router_name(d.router)) +
              " (v1/engine/core_client.py DPLBAsyncMPClient)";
  return d;
}

}  // namespace vramplan::memory
