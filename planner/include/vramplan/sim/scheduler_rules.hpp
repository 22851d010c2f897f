// vramplan/sim/scheduler_rules.hpp — how one engine schedules, as plain data: the KV pool the
// plan gave it, its per-step limits and the policy it follows when memory runs short. One
// simulator (simulator.hpp) runs every engine; what differs between engines is only this record,
// built per engine from its plan by the table in engine_rules.cpp (docs/simulator.md lists every
// rule with the engine source it comes from).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/plan_request.hpp"

namespace vramplan::sim {

//! What a request must have reserved before it is admitted from the waiting queue.
enum class Admission {
  //! Only the blocks of the tokens scheduled in this step (vLLM V1 allocate_slots;
  //! TensorRT-LLM max-utilization; llama.cpp slots).
  OnDemand,
  //! The blocks of the whole request, prompt + every output token (TensorRT-LLM
  //! GUARANTEED_NO_EVICT): a request once admitted never runs out of memory.
  FullLength,
  //! The prompt plus `reserve_ratio` x the output tokens of every running request still to
  //! come (SGLang PrefillAdder with new_token_ratio).
  ExpectedOutput,
};

//! What happens when a running request needs a block and none is free.
enum class OutOfBlocks {
  //! Preempt the most recently admitted running request, free its blocks and put it back at the
  //! head of the waiting queue; it recomputes prompt + generated tokens when readmitted (vLLM V1
  //! Scheduler.schedule, FCFS policy).
  PreemptNewest,
  //! Retract running requests (SGLang retract_decode), freeing their tokens; they re-enter the
  //! waiting queue and the reservation ratio is raised. Victims: fewest output tokens first,
  //! then the longest prompt; until the free tokens cover `retract_decode_steps` more decode
  //! steps of every request left.
  Retract,
  //! Cannot happen by construction (FullLength admission) or the request fails (llama.cpp slot).
  Fail,
};

//! What of a preempted (vLLM) or retracted (SGLang) request's KV stays cached for its
//! readmission, which then recomputes only the rest.
enum class PreemptedCache {
  None,  //!< everything freed (no prefix cache)
  //! Every full block of its computed tokens, outputs included, evicted a block at a time from
  //! its tail (vLLM V1: kv_cache_manager.py cache_blocks hashes every full block; free() returns
  //! a request's blocks tail first; get_computed_blocks finds the longest surviving prefix).
  AllBlocks,
  //! The prompt tokens it computed, which the radix tree already holds, evicted as a whole (SGLang:
  //! schedule_batch.py retract_decode -> release_kv_cache(is_insert=False) frees only the tokens
  //! past cache_protected_len, the prompt inserted by cache_unfinished_req; radix_cache.py evicts
  //! leaf nodes whole).
  Prompt,
};

//! How a server of several lockstep ranks (SGLang DP attention, vLLM data parallelism) picks the
//! rank for each request.
enum class RankDispatch {
  RoundRobin,          //!< request i to rank i mod D (SGLang data_parallel_controller.py round_robin_scheduler)
  WaitingThenRunning,  //!< fewest waiting, then fewest running (vLLM 0.9.2 - 0.10.0 DPLBAsyncMPClient)
  WeightedQueue,       //!< lowest 4 x waiting + running (vLLM 0.10.1 - 0.26)
  InflightKvPressure,  //!< max(in flight, waiting + running) + waiting x 6 x max(0, KV usage - 0.5) (vLLM 0.28 -)
};

//! The name a plan's engine_view gives a dispatch policy ("round-robin", "waiting-then-running",
//! "4-waiting-plus-running", "inflight-kv-pressure": memory/vllm_data_parallel.hpp), and back;
//! rank_dispatch_from throws Error(Internal) for a name it does not know.
std::string_view rank_dispatch_name(RankDispatch d);
RankDispatch rank_dispatch_from(std::string_view name);

struct SchedulerRules {
  std::string engine;             //!< "vllm", "sglang", "trtllm", "llamacpp", "hf"
  std::uint64_t kv_blocks = 0;    //!< blocks in the KV pool (per replica; same on every GPU)
  std::uint32_t block_tokens = 16;  //!< tokens per block; 1 = token-granular pool (SGLang)
  std::uint64_t kv_block_bytes = 0; //!< bytes of one block on one GPU (for memory over time)
  std::uint64_t max_seqs = 256;   //!< running requests at most (max_num_seqs, max_running_requests, -np)
  //! Blocks every running request holds besides its tokens' (vLLM hybrids: the recurrent-state
  //! pages of its recurrent groups, MambaSpec); taken at admission, freed with the request.
  std::uint64_t state_blocks = 0;
  //! Tokens one step may process, prompts and decodes together (max_num_batched_tokens,
  //! chunked_prefill_size, max_num_tokens, n_batch); 0 = no limit.
  std::uint64_t step_tokens = 0;
  //! A prompt may be split over several steps; false = a prompt runs whole in one step, and one
  //! longer than step_tokens can never be scheduled (TensorRT-LLM without chunked context).
  bool chunked_prefill = true;
  //! Without chunking, a prompt longer than step_tokens is refused when it arrives (TensorRT-LLM
  //! llmapi/llm.py LLM._check_arguments: "The sum of prompt length (P), query length (0) should
  //! not exceed max_num_tokens (T)", PyTorch backend, chunked prefill off).
  bool refuses_prompt_over_step = false;
  //! Without chunking, a prompt longer than step_tokens still runs when it is the first of its
  //! prompt batch (SGLang schedule_policy.py PrefillAdder.add_one_req: over rem_input_tokens it
  //! waits only `if len(self.can_run_list) != 0`).
  bool runs_oversized_prompt_alone = false;
  bool mix_prefill_decode = true;    //!< one step may hold prompt and decode tokens together
  //! vLLM V0 multi-step scheduling (--num-scheduler-steps N; vllm 0.6.0, docs/research/
  //! vllm-0.6-multi-step.md): the scheduler runs only at round boundaries. A decode round is N
  //! steps over the batch formed at its start, with the blocks of all N tokens taken then
  //! (lookahead slots); requests arriving meanwhile wait for the next boundary; a request that
  //! reaches its last token inside a round keeps its place (and computes) to the round's end,
  //! which is when its final tokens reach the client. Needs mix_prefill_decode false and no
  //! speculation. 1 = every step scheduled.
  std::uint32_t decode_round_steps = 1;
  //! With decode_round_steps > 1: the client gets a round's tokens as one chunk at its end (vLLM
  //! up to 0.6.2); false: each step's tokens stream (--multi-step-stream-outputs, on from 0.6.3).
  bool stream_per_round = false;
  //! The batch of a step is formed when the previous step starts, while that one runs on the GPU
  //! (SGLang's overlap scheduler, scheduler.py event_loop_overlap; vLLM's async scheduling from
  //! 0.14, v1/engine/core.py EngineCore.step_with_batch_queue): a request that arrives during a
  //! step waits one step more than in an engine that forms the batch at the step's start.
  bool overlap_schedule = false;
  //! With overlap_schedule, a request that finished in a step is decoded once more in the next
  //! one, its token discarded (SGLang: the next batch was formed before the result was known).
  //! vLLM's async scheduler skips a request sure to have reached max_tokens (v1/core/sched/
  //! scheduler.py Scheduler.schedule: num_computed_tokens + 2 - num_output_placeholders >=
  //! num_prompt_tokens + max_tokens), so it has no such step.
  bool finished_rides_next_step = false;
  //! Speculative decoding (SGLang EAGLE / NEXTN, vLLM mtp): tokens each decoding request runs
  //! through the target in a step, the last accepted one plus the drafted ones it verifies
  //! (1 = no speculation). They count against step_tokens where prompts and decodes mix (vLLM
  //! schedules 1 + k tokens per request: v1/core/sched/scheduler.py Scheduler.schedule).
  std::uint32_t decode_query_tokens = 1;
  //! Mean tokens a decode step keeps per request (1 without speculation; with it the accept
  //! length the user gives, 1..decode_query_tokens). Every decoding request keeps
  //! floor((n + 1) L) - floor(n L) tokens in the n-th decode step: the same for all of them, so
  //! the O(1)-per-step bookkeeping holds, and the mean is L.
  double accept_length = 1;
  //! Speculative decoding: draft forwards over one token per decoding request in each decode
  //! step, besides the draft extend over all of the step's tokens (SGLang: steps - 1; vLLM: k - 1).
  std::uint32_t draft_forwards = 0;
  //! Speculative decoding: host rounds (the fixed per-step term each) the draft adds to a step
  //! (perf::DraftForwards::host_rounds: SGLang 2, vLLM 0).
  std::uint32_t draft_host_rounds = 0;
  Admission admission = Admission::OnDemand;
  //! OnDemand: blocks a waiting request must leave free beyond its own to be admitted (vLLM V0's
  //! block manager, watermark 0.01 x the pool: core/block_manager_v2.py can_allocate; vLLM 0.24+
  //! --watermark); 0 = none.
  std::uint64_t admission_watermark_blocks = 0;
  //! The watermark applies only while some request runs, and never refuses a request outright
  //! (vLLM 0.24+: allocate_slots has_scheduled_reqs); false: always, and a request that could
  //! never leave it free is refused (V0: AllocStatus.NEVER).
  bool watermark_beside_running_only = false;
  //! OnDemand: a waiting request (new, or preempted with its generated tokens) is admitted only
  //! when the blocks of its whole sequence so far, less its prefix-cache hit, are free or
  //! evictable, though only the first chunk's are taken (vLLM from 0.19:
  //! scheduler_reserve_full_isl, kv_cache_manager.py can_fit_full_sequence; V0's block manager).
  bool full_sequence_admission = false;
  double reserve_ratio = 0;          //!< ExpectedOutput: share of future output tokens reserved
  //! ExpectedOutput: the ratio falls by `reserve_ratio_decay` after every decode step, down to
  //! `reserve_ratio_min`; it returns to `reserve_ratio` when the engine goes idle (SGLang
  //! new_token_ratio, scheduler.py). A retraction sets it to (output tokens generated by the
  //! running requests + retract_decode_steps x running requests) / (their max output tokens + 1),
  //! at most 1 (schedule_batch.py retract_decode).
  double reserve_ratio_min = 0;
  double reserve_ratio_decay = 0;
  //! ExpectedOutput: a request's outstanding output counts at most this many tokens in the
  //! reservation (SGLang CLIP_MAX_NEW_TOKENS_ESTIMATION); 0 = no clip.
  std::uint64_t reserve_clip_tokens = 0;
  //! Retract: free tokens kept for this many more decode steps of every request left.
  std::uint64_t retract_decode_steps = 0;
  OutOfBlocks out_of_blocks = OutOfBlocks::PreemptNewest;
  bool prefix_caching = true;        //!< full prompt blocks shared by requests with the same prefix
  PreemptedCache preempted_cache = PreemptedCache::None;
  std::uint64_t max_model_len = 0;   //!< prompt + output longer than this is rejected; 0 = none
  //! llama.cpp: tokens each slot holds (n_ctx / np); a request whose prompt + output outgrows
  //! it fails as the server fails it. 0 = no per-request slot.
  std::uint64_t slot_tokens = 0;
  //! With slot_tokens: a prompt of slot_tokens or more is rejected, and generation stops
  //! (finish_reason "length", the response truncated) once prompt + output reaches slot_tokens
  //! (llama.cpp server without --context-shift, server-context.cpp process_token: the slot's
  //! cached tokens + 1 >= n_ctx); false = a request that outgrows its slot fails as a whole.
  bool truncate_at_slot = false;
  //! HF transformers: static batches of this many requests, none joining until the batch is
  //! done (generate() with padding). 0 = continuous batching.
  std::uint64_t static_batch = 0;
  //! Memory per GPU that does not change over a run: weights, activation peak, overheads.
  std::uint64_t non_kv_bytes = 0;
  std::uint64_t gpu_total_bytes = 0;  //!< capacity per GPU (runtime-reported)
  //! Several ranks in lockstep (SGLang DP attention, vLLM data parallelism of a MoE model): each
  //! rank one scheduler under these rules (one rank's pool and limits), stepping together
  //! (simulate_dp_attention). 1 = one engine.
  std::uint64_t dp_ranks = 1;
  //! The ranks step together (SGLang DP attention, vLLM's DPEngineCoreProc); false: each steps on
  //! its own behind the router (vLLM's dense engines from 0.14, simulate_independent_engines).
  bool dp_lockstep = true;
  RankDispatch dp_dispatch = RankDispatch::RoundRobin;
  //! The router's view of the ranks' waiting / running counts is refreshed at most this often
  //! (vLLM's DP coordinator: min_stats_update_interval_ms 100), bumped locally per request sent in
  //! between; 0 = the ranks' state itself.
  double dp_stats_refresh_s = 0;
  //! Every rank runs a forward while any has work, an idle one a one-token dummy (vLLM
  //! DPEngineCoreProc); once all are idle the wave ends only at a step count that is a multiple of
  //! this (its all-reduce of the unfinished requests). 0 = ranks with nothing to run wait idle
  //! and the server stops at once (SGLang).
  std::uint64_t dp_wave_sync_steps = 0;
  //! Lockstep ranks never mix prompt and decode batches in one step: a step in which any rank
  //! can form a prompt batch runs only prompt batches, every other rank an idle batch, and its
  //! decoding requests wait (SGLang DP attention with speculative decoding: scheduler.py
  //! get_next_batch_to_run syncs the new prefill batch over the ranks before the decode batch).
  bool dp_prompt_steps_alone = false;
  std::string dp_name;  //!< "DP-attention ranks" / "vLLM data-parallel engines", for the verdict
  //! One line per rule: "max_num_seqs 256 (engine_view; vllm/v1/core/sched/scheduler.py)".
  std::vector<std::string> basis;
};

//! The rules of the engine that made `outcome`, from its plan (engine_view) and the flags the
//! user gave. Throws Error(Usage) for an engine the simulator does not model, or a plan that
//! does not fit (there is nothing to simulate).
//! `accept_length`: --spec-accept-length, required for a speculative plan and refused without one.
SchedulerRules scheduler_rules(const memory::PlanOutcome& outcome, const memory::EngineArgs& args,
                               std::optional<double> accept_length = std::nullopt);

//! Whether the engine's plan runs a speculative draft (the engine_view key its memory profile sets
//! for it: SGLang speculative_algorithm, vLLM speculative_method).
bool speculative_plan(const memory::MemoryPlan& plan);

}  // namespace vramplan::sim
