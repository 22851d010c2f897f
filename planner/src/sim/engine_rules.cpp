// sim::scheduler_rules: how each engine schedules, read off its plan. One row per engine in
// kEngineRules; each builder turns the engine_view its memory profile filled (the engine's own
// figures, with the user's flags and the version's defaults already resolved there) into
// SchedulerRules. docs/simulator.md "Engine rules" lists every rule with the engine source read.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/sim/scheduler_rules.hpp"
#include "vramplan/sim/simulate.hpp"

namespace vramplan::sim {

namespace {

// ---- engine_view access: a missing figure is a planner bug, not a user error ------------------

const nlohmann::json& figure(const memory::PlanOutcome& o, const std::string& key) {
  const auto& view = o.plan.engine_view;
  const auto it = view.find(key);
  if (it == view.end() || it->is_null())
    throw_internal(o.plan.engine + " plan: engine_view has no '" + key + "', which the simulator needs");
  return *it;
}

std::uint64_t view_u64(const memory::PlanOutcome& o, const std::string& key) {
  const auto& v = figure(o, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw_internal(o.plan.engine + " plan: engine_view '" + key + "' is not a non-negative integer");
  return v.get<std::uint64_t>();
}

double view_number(const memory::PlanOutcome& o, const std::string& key) {
  const auto& v = figure(o, key);
  if (!v.is_number()) throw_internal(o.plan.engine + " plan: engine_view '" + key + "' is not a number");
  return v.get<double>();
}

bool view_flag(const memory::PlanOutcome& o, const std::string& key) {
  const auto& v = figure(o, key);
  if (!v.is_boolean()) throw_internal(o.plan.engine + " plan: engine_view '" + key + "' is not true/false");
  return v.get<bool>();
}

std::string view_string(const memory::PlanOutcome& o, const std::string& key) {
  const auto& v = figure(o, key);
  if (!v.is_string()) throw_internal(o.plan.engine + " plan: engine_view '" + key + "' is not a string");
  return v.get<std::string>();
}

std::string on_off(bool b) { return b ? "on" : "off"; }

// Dispatch policies by the names the plans' engine_view use (memory/vllm_data_parallel.cpp).
constexpr std::pair<RankDispatch, std::string_view> kRankDispatchNames[] = {
    {RankDispatch::RoundRobin, "round-robin"},
    {RankDispatch::WaitingThenRunning, "waiting-then-running"},
    {RankDispatch::WeightedQueue, "4-waiting-plus-running"},
    {RankDispatch::InflightKvPressure, "inflight-kv-pressure"},
};

// ---- one builder per engine -------------------------------------------------------------------

// The basis line of vLLM's admission rule: which blocks must be free, and the watermark beside them.
std::string vllm_admission_basis(const SchedulerRules& r, bool v0) {
  std::string line = "blocks allocated as tokens are scheduled, a waiting request admitted only when " +
                     std::string(r.full_sequence_admission ? "the blocks of its whole sequence are free "
                                                           : "its first chunk's blocks are free ");
  const std::string wm = std::to_string(r.admission_watermark_blocks);
  if (v0)
    return line + "and 1 % of the pool (" + wm +
           " blocks) stays free beside them (vllm/core/block_manager_v2.py can_allocate, watermark 0.01)";
  if (r.admission_watermark_blocks)
    line += "and, while any request runs, " + wm + " blocks stay free beside them (--watermark, kv_cache_manager.py allocate_slots) ";
  return line + (r.full_sequence_admission
                     ? "(scheduler_reserve_full_isl, on from 0.19: v1/core/sched/scheduler.py Scheduler.schedule, "
                       "kv_cache_manager.py can_fit_full_sequence)"
                     : "(vllm/v1/core/kv_cache_manager.py KVCacheManager.allocate_slots; scheduler_reserve_full_isl off or "
                       "before 0.19)");
}

// vLLM V1: vllm/v1/core/sched/scheduler.py Scheduler.schedule, kv_cache_manager.py,
// config/scheduler.py; figures from memory/vllm_engine.cpp.
void vllm_rules(const memory::PlanOutcome& o, SchedulerRules& r) {
  const std::uint64_t blocks = view_u64(o, "gpu_blocks");
  // A hybrid model's KV groups (full attention, sliding window) take one block each per
  // block_size tokens from the one shared pool (kv_cache_utils.py get_kv_cache_configs): the
  // simulator's block is one block of every group.
  std::uint64_t groups = std::max<std::uint64_t>(1, view_u64(o, "kv_cache_groups"));
  // Attention + recurrent hybrids: the recurrent groups take a fixed number of pages per running
  // request (MambaSpec), not one per block_size tokens; the token blocks are the attention groups'.
  std::uint64_t state_pages = 0;
  if (const auto& view = o.plan.engine_view; view.contains("hybrid")) {
    const auto& h = view.at("hybrid");
    const std::uint64_t recurrent = h.at("recurrent_groups").get<std::uint64_t>();
    if (recurrent >= groups) throw_internal("vllm plan: every KV group is recurrent");
    groups -= recurrent;
    state_pages = recurrent * h.at("recurrent_pages_per_request").get<std::uint64_t>();
  }
  r.kv_blocks = blocks / groups;
  r.state_blocks = ceil_div(state_pages, groups);
  r.block_tokens = static_cast<std::uint32_t>(view_u64(o, "block_size"));
  r.kv_block_bytes = blocks ? o.plan.kv_cache_bytes().count() / blocks * groups : 0;
  r.max_seqs = view_u64(o, "max_num_seqs");
  r.step_tokens = view_u64(o, "max_num_batched_tokens");
  // V0 multi-step scheduling (memory/vllm_multi_step.hpp): rounds of N decode steps.
  r.decode_round_steps = static_cast<std::uint32_t>(o.plan.engine_view.value("num_scheduler_steps", std::uint64_t{1}));
  r.stream_per_round = r.decode_round_steps > 1 && !view_flag(o, "multi_step_stream_outputs");
  const bool chunked_flag = view_flag(o, "enable_chunked_prefill");
  // V0 without chunked prefill runs _schedule_default: prompts first, and a step that admits any
  // runs no decode ("Don't schedule decodes if prefills are scheduled"); a prompt above
  // min(max_model_len, max_num_batched_tokens) is ignored (FINISHED_IGNORED, _get_prompt_limit).
  // V0 with chunked prefill (_schedule_chunked_prefill) and V1 put decodes and prompt chunks in one
  // step, running requests first (vllm 0.6.0 vllm/core/scheduler.py); multi-step with chunked
  // prefill (0.6.3+) runs its prompts whole, and ignores one over the step's tokens, as
  // _schedule_default does (core/scheduler.py _get_num_new_tokens, _get_prompt_limit).
  const bool v0 = o.plan.engine_view.value("engine_generation", std::string("v1")) == "v0";
  const bool v0_default = v0 && !chunked_flag;
  r.chunked_prefill = chunked_flag && r.decode_round_steps == 1;
  r.mix_prefill_decode = !v0_default;
  r.refuses_prompt_over_step = v0 && !r.chunked_prefill;
  r.admission = Admission::OnDemand;
  // V0's block manager admits a prompt only if 1 % of the pool stays free beside it
  // (core/block_manager_v2.py can_allocate: watermark 0.01, int(watermark x num_gpu_blocks)). V1
  // has no such reserve before 0.24; from 0.24 --watermark keeps int(watermark x num_blocks) free
  // while any request runs (kv_cache_manager.py allocate_slots; memory/vllm_admission.hpp), a
  // share of the physical blocks, so of the simulator's blocks of every group.
  const double watermark = view_number(o, "watermark");
  r.admission_watermark_blocks =
      v0 ? r.kv_blocks / 100 : static_cast<std::uint64_t>(watermark * static_cast<double>(blocks)) / groups;
  r.watermark_beside_running_only = !v0;
  r.full_sequence_admission = view_flag(o, "scheduler_reserve_full_isl");  // memory/vllm_admission.cpp
  r.out_of_blocks = OutOfBlocks::PreemptNewest;
  r.prefix_caching = view_flag(o, "enable_prefix_caching");
  // Not for recurrent hybrids: a readmission needs the recurrent state at the hit, which block
  // hashes of the attention groups do not give back (not modelled: recomputed whole).
  r.preempted_cache = r.prefix_caching && state_pages == 0 ? PreemptedCache::AllBlocks : PreemptedCache::None;
  r.max_model_len = view_u64(o, "max_model_len");
  r.overlap_schedule = view_flag(o, "async_scheduling");  // memory/vllm_async_scheduling.cpp
  r.basis = {
      "KV pool " + std::to_string(r.kv_blocks) + " blocks of " + std::to_string(r.block_tokens) + " tokens (gpu_blocks " +
          std::to_string(blocks) + " / " + std::to_string(groups) +
          " attention KV group(s); vllm/v1/core/kv_cache_utils.py get_kv_cache_configs)" +
          (r.state_blocks ? "; each running request also holds " + std::to_string(r.state_blocks) +
                                " block(s) of recurrent state (kv_cache_interface.py MambaSpec)"
                          : std::string()),
      "max_num_seqs " + std::to_string(r.max_seqs) + ", max_num_batched_tokens " + std::to_string(r.step_tokens) +
          (v0_default ? " per step; V0 without chunked prefill: waiting prompts first, FCFS, and a step that admits any "
                        "runs no decode; a longer prompt is ignored (vllm/core/scheduler.py _schedule_default, _schedule_prefills)"
                      : " per step, running requests first, then waiting ones FCFS (vllm/v1/core/sched/scheduler.py Scheduler.schedule)"),
      "chunked prefill " + on_off(r.chunked_prefill) +
          " (vllm/config/scheduler.py SchedulerConfig.enable_chunked_prefill; Scheduler.schedule caps a prompt at the token budget)",
      vllm_admission_basis(r, v0),
      "out of blocks: preempt the last running request (running.pop()), free its blocks, prepend it to the waiting "
      "queue, recompute on readmission; no waiting request admitted in that step (scheduler.py Scheduler.schedule, _preempt_request)" +
          std::string(r.preempted_cache == PreemptedCache::AllBlocks
                          ? "; its full blocks stay cached, evicted tail first, and a readmission recomputes only what was "
                            "evicted (prefix caching: kv_cache_manager.py cache_blocks, get_computed_blocks)"
                          : ""),
      std::string(r.overlap_schedule
                      ? "async scheduling (the default from 0.14): a step's batch is formed when the previous step starts, "
                        "so a request arriving during a step waits for the next one too; a request at max_tokens is not "
                        "scheduled again (v1/engine/core.py EngineCore.step_with_batch_queue, batch queue of 2; "
                        "v1/core/sched/scheduler.py Scheduler.schedule)"
                      : "serial scheduling (before 0.14, --no-async-scheduling, or PP > 1 on 0.14: the plan's notes say "
                        "which; vllm/config/vllm.py VllmConfig.__post_init__): a step's batch is formed when it starts "
                        "(v1/engine/core.py EngineCore.step)"),
      "prefix caching " + on_off(r.prefix_caching) +
          ": full prompt blocks hashed and shared, freed cached blocks reused LRU, the last prompt token always "
          "recomputed (kv_cache_manager.py get_computed_blocks; block_pool.py)",
      "max_model_len " + std::to_string(r.max_model_len) +
          ": a longer prompt + max_tokens is rejected (vllm/entrypoints/openai/serving_engine.py _validate_input; "
          "vllm/v1/engine/processor.py _validate_model_input)",
  };
  // Data parallelism (memory/vllm_data_parallel.hpp): D engines in lockstep, one scheduler each.
  if (o.plan.engine_view.value("data_parallel_size", std::uint64_t{1}) > 1) {
    r.dp_ranks = view_u64(o, "data_parallel_size");
    r.dp_lockstep = view_flag(o, "dp_lockstep");
    const std::string router = view_string(o, "dp_router");
    r.dp_dispatch = rank_dispatch_from(router);
    r.dp_stats_refresh_s = r.dp_dispatch == RankDispatch::RoundRobin ? 0 : 0.1;
    r.dp_wave_sync_steps = view_u64(o, "dp_wave_sync_steps");
    r.dp_name = "vLLM data-parallel engines";
    r.basis.push_back(
        std::to_string(r.dp_ranks) + " data-parallel engines, each with these limits and its own KV pool and prefix cache, " +
        (r.dp_lockstep ? "stepping in lockstep: an engine with nothing scheduled runs a one-token dummy forward, and once "
                         "all are idle the wave ends at a step count divisible by " + std::to_string(r.dp_wave_sync_steps) +
                             " (v1/engine/core.py DPEngineCoreProc.run_busy_loop, _has_global_unfinished_reqs)"
                       : std::string("each stepping on its own (a dense model's engines from 0.14: v1/engine/core.py "
                                     "run_engine_core)")) +
        "; requests routed by " + router +
        " over the engines' waiting / running counts, refreshed every 100 ms and bumped per request sent between "
        "(v1/engine/core_client.py DPLBAsyncMPClient.get_core_engine_for_request, v1/engine/coordinator.py)");
  }
  if (r.decode_round_steps > 1)
    r.basis.push_back(
        "multi-step rounds of " + std::to_string(r.decode_round_steps) +
        " steps (--num-scheduler-steps): the scheduler runs only between rounds, a round's batch is frozen and "
        "its blocks taken at its start (lookahead slots), a request done inside a round keeps its place to the round's "
        "end, the host's per-step work is paid once a round (engine/async_llm_engine.py step_async, core/scheduler.py "
        "_append_slots, worker/multi_step_model_runner.py); " +
        std::string(r.mix_prefill_decode ? "with chunked prefill whole prompts run in a round's first step beside the decodes and "
                                           "decode in its others (sequence.py init_multi_step_from_lookahead_slots); "
                                         : "a round that admits prompts is one prompt step, the decodes paused (core/scheduler.py "
                                           "_schedule_default); ") +
        std::string(r.stream_per_round ? "the client gets a round's tokens as one chunk at its end (engine/llm_engine.py _process_model_outputs)"
                                       : "each step's tokens stream (--multi-step-stream-outputs)"));
}

// SGLang: python/sglang/srt/managers/scheduler.py get_new_batch_prefill, schedule_policy.py
// PrefillAdder, schedule_batch.py retract_decode; figures from memory/sglang_engine.cpp.
void sglang_rules(const memory::PlanOutcome& o, SchedulerRules& r) {
  const std::uint64_t tokens = view_u64(o, "max_total_num_tokens");
  const std::uint64_t page = view_u64(o, "page_size");
  r.block_tokens = static_cast<std::uint32_t>(page);
  r.kv_blocks = tokens / page;
  r.kv_block_bytes = o.plan.kv.bytes_per_token * page;
  r.max_seqs = view_u64(o, "max_running_requests");
  const std::uint64_t chunk = view_u64(o, "chunked_prefill_size");
  const std::uint64_t max_prefill = view_u64(o, "max_prefill_tokens");
  r.chunked_prefill = chunk > 0;
  r.runs_oversized_prompt_alone = true;
  // A prefill batch takes at most max_prefill_tokens (rem_input_tokens) and, chunked, at most
  // chunked_prefill_size (rem_chunk_tokens) new tokens.
  r.step_tokens = r.chunked_prefill ? std::min(chunk, max_prefill) : max_prefill;
  r.mix_prefill_decode = view_flag(o, "enable_mixed_chunk");
  r.overlap_schedule = view_flag(o, "overlap_schedule");
  r.finished_rides_next_step = r.overlap_schedule;
  r.admission = Admission::ExpectedOutput;
  r.reserve_ratio = view_number(o, "init_new_token_ratio");
  r.reserve_ratio_min = view_number(o, "min_new_token_ratio");
  r.reserve_ratio_decay = view_number(o, "new_token_ratio_decay");
  r.reserve_clip_tokens = view_u64(o, "clip_max_new_tokens");
  r.retract_decode_steps = view_u64(o, "retract_decode_steps");
  r.out_of_blocks = OutOfBlocks::Retract;
  r.prefix_caching = view_flag(o, "radix_cache");
  // Not for Mamba hybrids (MambaRadixCache keeps recurrent states at its own points; not modelled:
  // recomputed whole).
  r.preempted_cache = r.prefix_caching && !o.plan.engine_view.contains("max_mamba_cache_size") ? PreemptedCache::Prompt
                                                                                              : PreemptedCache::None;
  if (view_flag(o, "enable_dp_attention")) {  // memory/sglang_dp_attention.hpp
    r.dp_ranks = view_u64(o, "dp_size");
    r.dp_dispatch = RankDispatch::RoundRobin;
    r.dp_name = "SGLang DP-attention ranks";
  }
  // tokenizer_manager.py _validate_one_request: prompt + max_new_tokens >= context_len is refused.
  const std::uint64_t context_len = view_u64(o, "context_length");
  r.max_model_len = context_len ? context_len - 1 : 0;
  r.basis = {
      "token pool " + std::to_string(tokens) + " tokens in pages of " + std::to_string(page) +
          " (model_runner.py init_memory_pool max_total_num_tokens)",
      "max_running_requests " + std::to_string(r.max_seqs) +
          " (model_runner.py: unset, min(request pool, max_total_num_tokens / 2); set, the release's rule, docs/simulator.md)",
      "prefill batch at most " + std::to_string(r.step_tokens) + " new tokens: max_prefill_tokens " +
          std::to_string(max_prefill) + ", chunked_prefill_size " + std::to_string(chunk) +
          " (schedule_policy.py PrefillAdder rem_input_tokens / rem_chunk_tokens)" +
          (r.chunked_prefill ? "" : "; unchunked, a longer prompt runs whole as the first of its batch (add_one_req)"),
      std::string("prefill and decode ") + (r.mix_prefill_decode ? "mixed in one step (--enable-mixed-chunk)" : "in separate steps, a prefill batch first when one can be formed") +
          " (scheduler.py get_next_batch_to_run)",
      std::string("overlap scheduler ") +
          (r.overlap_schedule ? "on: a step's batch is formed when the previous step starts, so a request "
                                "arriving during a step waits for the next one too"
                              : "off (--disable-overlap-schedule): a step's batch is formed when it starts") +
          " (scheduler.py event_loop_overlap: recv_requests, get_next_batch_to_run, run_batch, then the last "
          "batch's result)",
      "admission: prompt + reserve_ratio x min(remaining max_new_tokens, " + std::to_string(r.reserve_clip_tokens) +
          ") of every running and admitted request must fit the free + evictable tokens "
          "(schedule_policy.py PrefillAdder.add_one_req, rem_total_tokens)",
      "reserve ratio " + std::to_string(r.reserve_ratio) + " falling by " + std::to_string(r.reserve_ratio_decay) +
          " per decode step to " + std::to_string(r.reserve_ratio_min) +
          " (scheduler.py init_new_token_ratio / min_new_token_ratio / new_token_ratio_decay)",
      "out of tokens in decode: retract the requests with the fewest output tokens (then the longest prompt) until " +
          std::to_string(r.retract_decode_steps) +
          " more decode steps fit; they re-enter the waiting queue and the ratio is raised (schedule_batch.py retract_decode)" +
          std::string(r.preempted_cache == PreemptedCache::Prompt
                          ? "; a retracted request's prompt stays in the radix tree (evicted whole, as a leaf) and its "
                            "readmission recomputes only its output tokens (release_kv_cache with is_insert=False frees "
                            "the tokens past cache_protected_len)"
                          : ""),
      "radix-tree prefix reuse " + on_off(r.prefix_caching) +
          " at token granularity, unused nodes evicted LRU (mem_cache/radix_cache.py match_prefix / evict)",
      "prompt + output >= context_length " + std::to_string(r.max_model_len + 1) +
          " rejected (tokenizer_manager.py _validate_one_request)",
  };
}

// TensorRT-LLM: cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp, microBatchScheduler.cpp;
// figures from memory/trtllm_engine.cpp.
void trtllm_rules(const memory::PlanOutcome& o, SchedulerRules& r) {
  const std::uint64_t block = view_u64(o, "tokens_per_block");
  r.block_tokens = static_cast<std::uint32_t>(block);
  r.kv_blocks = view_u64(o, "max_tokens") / block;
  r.kv_block_bytes = o.plan.kv.bytes_per_token * block;
  r.max_seqs = view_u64(o, "max_batch_size");
  r.step_tokens = view_u64(o, "max_num_tokens");
  r.chunked_prefill = view_flag(o, "enable_chunked_prefill");
  r.refuses_prompt_over_step = !r.chunked_prefill;
  r.mix_prefill_decode = true;
  r.prefix_caching = view_flag(o, "enable_block_reuse");
  r.max_model_len = view_u64(o, "max_seq_len");
  const std::string policy = view_string(o, "capacity_scheduler_policy");
  std::string policy_rule;
  if (policy == "GUARANTEED_NO_EVICT") {
    r.admission = Admission::FullLength;
    r.out_of_blocks = OutOfBlocks::Fail;
    policy_rule = "GUARANTEED_NO_EVICT: in-progress requests keep the blocks to run to completion; a new request "
                  "is admitted only when the blocks of its whole length (prompt + max_tokens) are free, in arrival "
                  "order, stopping at the first that does not fit (capacityScheduler.cpp GuaranteedNoEvictScheduler::impl)";
  } else if (policy == "MAX_UTILIZATION") {
    r.admission = Admission::OnDemand;
    r.out_of_blocks = OutOfBlocks::PreemptNewest;
    policy_rule = "MAX_UTILIZATION: requests scheduled in order with the blocks of their next step; when one does "
                  "not fit, the last started request is paused, its blocks freed, its context recomputed later "
                  "(capacityScheduler.cpp MaxUtilizationScheduler::operator())";
  } else {
    throw_usage("the simulator does not model TensorRT-LLM capacity_scheduler_policy " + policy +
                " (it models GUARANTEED_NO_EVICT and MAX_UTILIZATION)");
  }
  r.basis = {
      "KV pool " + std::to_string(r.kv_blocks) + " blocks of " + std::to_string(block) +
          " tokens (kvCacheManager.cpp calculateMaxNumBlocks)",
      "max_batch_size " + std::to_string(r.max_seqs) + ", max_num_tokens " + std::to_string(r.step_tokens) +
          " per step, context and generation requests in one step (microBatchScheduler.cpp MicroBatchScheduler::operator())",
      "chunked context " + on_off(r.chunked_prefill) +
          (r.chunked_prefill ? "" : ": a prompt longer than max_num_tokens is refused when it arrives (llmapi/llm.py "
                                    "LLM._check_arguments)") +
          " (llm_args.py enable_chunked_prefill; microBatchScheduler.cpp)",
      policy_rule,
      "KV block reuse " + on_off(r.prefix_caching) + " (kvCacheManager.cpp BlockManager, KvCacheConfig.enable_block_reuse)",
      "max_seq_len " + std::to_string(r.max_model_len) + ": a longer prompt + output is rejected (llm_args.py max_seq_len)",
  };
}

// llama.cpp server: tools/server/server-context.cpp (slots, update_slots, process_token);
// figures from memory/llamacpp_engine.cpp.
void llamacpp_rules(const memory::PlanOutcome& o, SchedulerRules& r) {
  // Cells of the full-attention cache: one stream of n_ctx_seq cells per sequence, or one shared
  // stream with -kvu (llama-kv-cache.cpp). Sliding-window caches are extra bytes per cell.
  std::uint64_t cells = 0;
  for (const auto& kv : figure(o, "kv_caches"))
    if (kv.value("role", "") != "SWA") cells = kv.at("cells").get<std::uint64_t>() * kv.at("streams").get<std::uint64_t>();
  if (cells == 0) throw_internal("llamacpp plan: engine_view kv_caches has no full-attention cache");
  r.block_tokens = 1;
  r.kv_blocks = cells;
  r.kv_block_bytes = o.plan.kv_cache_bytes().count() / cells;
  r.max_seqs = view_u64(o, "n_seq_max");
  r.step_tokens = view_u64(o, "n_batch");
  r.chunked_prefill = true;
  r.mix_prefill_decode = true;
  r.admission = Admission::OnDemand;
  r.out_of_blocks = OutOfBlocks::Fail;
  r.prefix_caching = false;
  r.max_model_len = 0;
  r.slot_tokens = view_u64(o, "n_ctx_seq");
  r.truncate_at_slot = true;
  r.basis = {
      std::to_string(r.max_seqs) + " slots (-np) of n_ctx_seq " + std::to_string(r.slot_tokens) + " cells, " +
          std::to_string(cells) + " cells reserved at start (server-context.cpp load_model; llama-context.cpp n_ctx_seq)",
      "continuous batching: each step decodes one token of every generating slot, then fills the batch with prompt "
      "tokens up to n_batch " + std::to_string(r.step_tokens) + " (server-context.cpp update_slots)",
      "a free slot takes the next queued task in arrival order (server-queue.cpp, server-context.cpp get_available_slot)",
      "a prompt of n_ctx_seq tokens or more is rejected ('exceeds the available context size'); generation stops "
      "truncated when the slot is full, context shift being off by default (server-context.cpp process_token; "
      "common/common.h ctx_shift = false)",
      "prefix sharing across requests not modelled: cache_prompt reuses only a slot's own previous prompt "
      "(server-context.cpp get_available_slot / update_slots)",
  };
}

// Hugging Face transformers generate(): static batches (GenerationMixin.generate, DynamicCache);
// figures from memory/hf_engine.cpp.
void hf_rules(const memory::PlanOutcome& o, SchedulerRules& r) {
  const std::uint64_t batch = view_u64(o, "batch");
  r.block_tokens = 1;
  r.kv_blocks = o.plan.kv.capacity_tokens.value_or(0);
  r.kv_block_bytes = o.plan.kv.bytes_per_token;
  r.max_seqs = batch;
  r.static_batch = batch;
  r.step_tokens = 0;
  r.chunked_prefill = false;
  r.mix_prefill_decode = false;
  r.admission = Admission::FullLength;
  r.out_of_blocks = OutOfBlocks::Fail;
  r.prefix_caching = false;
  r.max_model_len = o.model.arch.max_position_embeddings;
  r.basis = {
      "static batches of --batch " + std::to_string(batch) +
          ": prompts left-padded to the longest, every sequence decoded until the longest output ends, none joining "
          "before (generation/utils.py GenerationMixin.generate)",
      "KV cache grows by one token per sequence per step in a DynamicCache, " + std::to_string(r.kv_blocks) +
          " tokens fit beside weights and activations; more is a CUDA out-of-memory error (cache_utils.py DynamicCache)",
      "no prefix sharing between sequences, no preemption (generation/utils.py GenerationMixin.generate)",
      "max_position_embeddings " + std::to_string(r.max_model_len) +
          ": longer sequences are not served (configuration_utils.py PretrainedConfig)",
  };
}

// ---- speculative decoding with the checkpoint's MTP layer (memory/mtp_draft.hpp) ---------------

// The engine_view keys a speculative plan carries (memory/sglang_engine.cpp, vllm_engine.cpp).
constexpr const char* kSglangSpeculation = "speculative_algorithm";
constexpr const char* kVllmSpeculation = "speculative_method";

// What one decode step of each engine runs, read in sglang 0.5.9 and vllm 0.19.0.
struct Speculation {
  std::uint64_t verify = 0;       // tokens per decoding request through the target
  std::uint64_t draft_steps = 0;  // single-token draft forwards besides the draft extend
  std::uint64_t held = 0;         // slots a running request holds beyond its tokens
  std::uint64_t host_rounds = 0;  // forwards of the draft prepared and synced from the host apart
  // Lockstep ranks run a step of prompt batches alone (SchedulerRules::dp_prompt_steps_alone).
  bool prompt_steps_alone_across_ranks = false;
  std::string basis;
};

std::optional<Speculation> speculation(const memory::PlanOutcome& o) {
  const auto& view = o.plan.engine_view;
  if (view.contains(kSglangSpeculation)) {
    // SGLang EAGLE (NEXTN is renamed EAGLE): speculative/eagle_worker.py
    // forward_batch_generation runs draft() (steps - 1 forwards of the draft over batch x top-k
    // tokens after the first, whose top-k came from the last draft extend), verify() (one target
    // forward over batch x num_draft_tokens, CUDA graph TARGET_VERIFY) and
    // forward_draft_extend_after_decode (one draft forward over the verified tokens, graph-padded
    // to batch x (steps + 1)); a prefill batch is followed by forward_draft_extend over its tokens.
    const std::uint64_t steps = view_u64(o, "speculative_num_steps");
    const std::uint64_t topk = view_u64(o, "speculative_eagle_topk");
    const std::uint64_t draft = view_u64(o, "speculative_num_draft_tokens");
    if (topk != 1)
      throw_usage("simulate: --speculative-eagle-topk " + std::to_string(topk) +
                  " drafts a tree; the simulator models top-k 1 (a chain of --speculative-num-steps drafts)");
    if (steps == 0 || draft != steps + 1) throw_internal("sglang plan: top-k 1 with draft tokens != steps + 1");
    Speculation s;
    s.verify = draft;
    s.draft_steps = steps - 1;
    // The decode check keeps max(steps x top-k, draft tokens) free slots per running request for
    // the draft's and the verify's KV (schedule_batch.py new_tokens_required_next_decode).
    s.held = std::max(steps * topk, draft);
    // draft() and forward_draft_extend_after_decode each build a ForwardBatch, replay a graph and
    // sync to the host (_draft_preprocess_decode: seq_lens_sum .item(); the verify's accepted
    // lengths are read on the CPU before the extend): two host rounds besides the verify's.
    s.host_rounds = 2;
    // Under DP attention the new prefill batch is synced over the ranks first (scheduler.py
    // get_next_batch_to_run: "makes sure prefill and decode batches will not be mixed when spec
    // and dp-attn is enabled"): when any rank has one, the others run an idle batch.
    s.prompt_steps_alone_across_ranks = true;
    s.basis = "speculative decoding (EAGLE, " + std::to_string(steps) + " steps, top-k 1, " + std::to_string(draft) +
              " draft tokens): a decode step runs " + std::to_string(steps - 1) +
              " draft forward(s) over one token per request, one target verify over " + std::to_string(draft) +
              " tokens per request and a draft extend over them; a prefill batch is followed by a draft extend over "
              "its tokens (speculative/eagle_worker.py forward_batch_generation, draft, verify, "
              "forward_draft_extend_after_decode)";
    return s;
  }
  if (view.contains(kVllmSpeculation)) {
    // vLLM: Scheduler.schedule gives a decoding request 1 + k tokens of the budget and allocates
    // k lookahead slots (KVCacheManager.allocate_slots num_lookahead_tokens); after the target's
    // forward EagleProposer.propose runs the drafter once over the step's tokens and k - 1 times
    // over one token per request (v1/spec_decode/eagle.py).
    const std::uint64_t k = view_u64(o, "num_speculative_tokens");
    if (k == 0) throw_internal("vllm plan: speculative decoding with 0 tokens");
    Speculation s;
    s.verify = 1 + k;
    s.draft_steps = k - 1;
    s.held = k;
    s.basis = "speculative decoding (mtp, " + std::to_string(k) + " tokens): a decoding request takes " +
              std::to_string(1 + k) + " tokens of the step budget and " + std::to_string(k) +
              " lookahead slots (v1/core/sched/scheduler.py Scheduler.schedule, kv_cache_manager.py allocate_slots); the "
              "drafter runs once over the step's tokens and " + std::to_string(k - 1) +
              " more time(s) over one token per request (v1/spec_decode/eagle.py EagleProposer.propose)";
    return s;
  }
  return std::nullopt;
}

void apply_speculation(const memory::PlanOutcome& o, SchedulerRules& r, std::optional<double> accept_length) {
  const std::optional<Speculation> s = speculation(o);
  if (!s) {
    if (accept_length)
      throw_usage(kAcceptLengthWithoutSpeculation);
    return;
  }
  // Flags that plan can hold (memory only) but no step runs: keep the counters in their width.
  if (s->verify > std::numeric_limits<std::uint32_t>::max() || s->held > std::numeric_limits<std::uint32_t>::max())
    throw_usage("simulate: speculative decoding of " + std::to_string(s->verify) + " tokens a step is beyond what the simulator runs");
  // One request's verify must fit one step's token budget, or no decode is ever scheduled.
  if (r.step_tokens && s->verify > r.step_tokens)
    throw_usage("simulate: speculative decoding verifies " + std::to_string(s->verify) + " tokens a request, more than the " +
                std::to_string(r.step_tokens) + " tokens a step schedules: no decode step could run");
  const double d = static_cast<double>(s->verify);
  if (!accept_length)
    throw_usage("simulate: speculative decoding needs --spec-accept-length L, the mean tokens one verify keeps "
                "(1 to " + std::to_string(s->verify) + "; SGLang's bench_serving prints it as 'Accept length'): it "
                "depends on the model and the text, so the simulator does not guess it");
  if (!(*accept_length >= 1 && *accept_length <= d))
    throw_usage("--spec-accept-length: must be between 1 and " + std::to_string(s->verify) +
                " (the tokens one verify runs), got " + format_number("%g", *accept_length));
  r.decode_query_tokens = static_cast<std::uint32_t>(s->verify);
  r.draft_forwards = static_cast<std::uint32_t>(s->draft_steps);
  r.draft_host_rounds = static_cast<std::uint32_t>(s->host_rounds);
  r.accept_length = *accept_length;
  r.state_blocks = checked_add(r.state_blocks, ceil_div(s->held, r.block_tokens), "speculative slots");
  if (r.dp_ranks > 1 && r.dp_lockstep && s->prompt_steps_alone_across_ranks) {
    // server_args.py turns both off for EAGLE (spec v1); a formed batch riding into the next step
    // would not survive the prompt-only pass.
    if (r.mix_prefill_decode || r.overlap_schedule)
      throw_internal("sglang plan: mixed chunks or the overlap scheduler under speculative decoding");
    r.dp_prompt_steps_alone = true;
    r.basis.push_back("with speculative decoding the ranks never mix prompt and decode batches: a step in which any rank "
                      "forms a prompt batch runs only prompt batches, each other rank an idle one, its decodes waiting "
                      "(scheduler.py get_next_batch_to_run, maybe_prepare_mlp_sync_batch on the new prefill batch); "
                      "every forward of the iteration (target, draft, draft extend) gathers all ranks' tokens");
  }
  r.basis.push_back(s->basis + "; each request keeps " + format_number("%g", *accept_length) +
                    " tokens a decode step on average (--spec-accept-length) and holds " + std::to_string(s->held) +
                    " more slots while it runs");
}

using RulesBuilder = void (*)(const memory::PlanOutcome&, SchedulerRules&);

struct EngineRulesRow {
  std::string_view engine;
  RulesBuilder build;
};

constexpr EngineRulesRow kEngineRules[] = {
    {"vllm", vllm_rules}, {"sglang", sglang_rules}, {"trtllm", trtllm_rules},
    {"llamacpp", llamacpp_rules}, {"hf", hf_rules},
};

}  // namespace

std::string_view rank_dispatch_name(RankDispatch d) {
  for (const auto& [policy, name] : kRankDispatchNames)
    if (policy == d) return name;
  throw_internal("simulate: a dispatch policy without a name");
}

RankDispatch rank_dispatch_from(std::string_view name) {
  for (const auto& [policy, known] : kRankDispatchNames)
    if (known == name) return policy;
  throw_internal("simulate: unknown dispatch policy '" + std::string(name) + "' in a plan");
}

bool speculative_plan(const memory::MemoryPlan& plan) {
  return plan.engine_view.contains(kSglangSpeculation) || plan.engine_view.contains(kVllmSpeculation);
}

// The engine flags were resolved by the engine's plan (engine_view holds the settings they
// produced), so the builders read the plan alone.
SchedulerRules scheduler_rules(const memory::PlanOutcome& outcome, const memory::EngineArgs& /*args*/,
                               std::optional<double> accept_length) {
  const auto& plan = outcome.plan;
  const auto row = std::find_if(std::begin(kEngineRules), std::end(kEngineRules),
                                [&](const EngineRulesRow& e) { return e.engine == plan.engine; });
  if (row == std::end(kEngineRules)) {
    std::string known;
    for (const auto& e : kEngineRules) known += (known.empty() ? "" : ", ") + std::string(e.engine);
    throw_usage("the simulator does not model engine '" + plan.engine + "' (it models " + known + ")");
  }
  if (!plan.fits) throw_usage("nothing to simulate: the " + plan.engine + " plan does not fit: " + plan.reason);
  SchedulerRules r;
  r.engine = plan.engine;
  r.non_kv_bytes = (plan.weights_bytes() + plan.activation_bytes() + plan.overhead_bytes()).count();
  r.gpu_total_bytes = plan.gpu_total.count();
  row->build(outcome, r);
  apply_speculation(outcome, r, accept_length);
  r.basis.push_back("memory per GPU: weights + activation peak + overheads = " + std::to_string(r.non_kv_bytes) +
                    " B, then " + std::to_string(r.kv_block_bytes) + " B per KV block in use (planner/src/memory/" +
                    plan.engine + "_engine.cpp)");
  return r;
}

}  // namespace vramplan::sim
