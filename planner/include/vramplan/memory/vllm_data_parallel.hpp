// vramplan/memory/vllm_data_parallel.hpp — vLLM's data parallelism on one node (`vllm serve
// --data-parallel-size D [--tensor-parallel-size T] [--enable-expert-parallel]`), resolved per
// release as the engine resolves it. Read in the 0.8.5 - 0.34.0 source releases
// (docs/research/vllm-data-parallel.md has every rule with its file and function):
//   D engine cores of T GPUs each (D x T GPUs), each with its own scheduler, KV pool, prefix cache,
//   max_num_seqs and max_num_batched_tokens;
//   weights: every layer over the rank's T GPUs, except the routed experts, which span all D x T
//   (fused_moe/config.py FusedMoEParallelConfig.make: TP flattened across DP, or whole experts
//   over D x T with --enable-expert-parallel);
//   lockstep: MoE models, and every model up to 0.13, run DPEngineCoreProc: all ranks step
//   together, a rank with nothing scheduled runs a one-token dummy forward, and a wave ends only
//   at a sync step where every rank is empty (every 32 steps 0.9.2 - 0.28, every 16 from 0.30);
//   from 0.14 a dense model's ranks are independent engines (v1/engine/core.py run_engine_core);
//   padding: each rank's forward padded to the largest CUDA-graph-padded count over the ranks
//   (0.9.2 - 0.16), from 0.17 only when every rank can replay a graph (v1/worker/dp_utils.py);
//   the MoE's tokens gathered over the ranks: D broadcasts + an all-reduce ("naive", 0.9 - 0.10)
//   or an all-gather + a reduce-scatter ("allgather_reducescatter", from 0.11);
//   routing (v1/engine/core_client.py DPLBAsyncMPClient.get_core_engine_for_request): fewest
//   waiting then running (0.9.2 - 0.10.0), lowest 4 x waiting + running (0.10.1 - 0.26), from
//   0.28 max(in flight, waiting + running) + a KV-pressure term; counts refreshed by the
//   coordinator at most every 100 ms, bumped locally per request between refreshes; dense ranks
//   0.14 - 0.26 publish no counts, so the router deals them round-robin.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "vramplan/memory/engine.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

//! How a router in front of vLLM's data-parallel engines picks one (the engine_view's
//! "dp_router" names them).
enum class VllmDpRouter {
  WaitingThenRunning,  //!< fewest waiting, then fewest running (0.9.2 - 0.10.0)
  WeightedQueue,       //!< lowest 4 x waiting + running (0.10.1 - 0.26)
  InflightKvPressure,  //!< max(in flight, waiting + running) + waiting x 6 x max(0, KV usage - 0.5) (0.28 -)
  RoundRobin,          //!< dense ranks 0.14 - 0.26: no counts published, load-blind
};

//! How each rank's forward is padded across the ranks (engine_view "dp_padding").
enum class VllmDpPadding {
  None,               //!< --enforce-eager: every rank runs its own token count
  ToLargest,          //!< to the largest graph-padded count over the ranks (0.9.2 - 0.16)
  ToLargestIfGraphed, //!< the same when every rank replays a graph, else none (0.17 -)
};

struct VllmDataParallel {
  std::uint64_t dp = 1;              //!< engine cores (--data-parallel-size); 1 = off
  bool lockstep = false;             //!< ranks step together (DPEngineCoreProc)
  std::uint64_t expert_group = 1;    //!< GPUs the routed experts span: dp x tp (MoE), else 1
  VllmDpPadding padding = VllmDpPadding::None;
  bool naive_combine = false;        //!< broadcasts + all-reduce (true) or all-gather + reduce-scatter
  VllmDpRouter router = VllmDpRouter::WeightedQueue;
  std::uint64_t wave_sync_steps = 0; //!< a wave can end only every this many steps (lockstep)
  //! Sequence-parallel MoE (config/parallel.py use_sequence_parallel_moe, from 0.11: the default
  //! all2all backend, --enable-expert-parallel, TP > 1 and DP > 1) in a DeepSeek-style model: the
  //! shared experts are built whole on every GPU (deepseek_v2.py DeepseekV2MLP disable_tp).
  bool shared_experts_whole = false;
  std::string explain;               //!< one sentence for the plan's notes ("" when off)
};

//! Why a plan of lockstep engines shows no decode / TTFT figures, for `plan` and `check` to say.
inline constexpr std::string_view kVllmDpLockstepUnmodelled =
    "vLLM data parallelism: the engines step in lockstep, every MoE layer over all engines' tokens gathered, which "
    "'vramplan simulate' times (perf::vllm_dp_step_seconds); the single-engine decode, TTFT and batch figures of plan "
    "and check do not apply (docs/simulator.md#vllm-data-parallelism)";

std::string_view vllm_dp_router_name(VllmDpRouter r);
std::string_view vllm_dp_padding_name(VllmDpPadding p);

//! Reads --data-parallel-size for a plan of `tp` GPUs a rank and `pp` stages of the vLLM
//! `release` asked for (empty or unparsable: the current one); `v0_profile`: the profile plans V0;
//! `eager`: --enforce-eager. Error(Usage) for 0, a V0 profile or a release before 0.9.2 (whose
//! DP forced eager mode: not modelled), pipeline parallelism beside it (not modelled), and
//! --enable-expert-parallel over D x tp GPUs that the experts do not divide evenly.
VllmDataParallel vllm_data_parallel(const EngineArgs& args, const ModelArch& arch, std::string_view release,
                                    bool v0_profile, std::uint64_t tp, std::uint64_t pp, bool eager);

}  // namespace vramplan::memory
