// vramplan/sim/scheduler_rules.hpp — how one engine schedules, as plain data: the KV pool the
// plan gave it, its per-step limits and the policy it follows when memory runs short. One
// simulator (simulator.hpp) runs every engine; what differs between engines is only this record,
// built per engine from its plan by the table in engine_rules.cpp (docs/simulator.md lists every
// rule with the engine source it comes from).
#pragma once

#include <cstdint>
#include <string>
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
  //! waiting queue and the reservation ratio is raised.
  Retract,
  //! Cannot happen by construction (FullLength admission) or the request fails (llama.cpp slot).
  Fail,
};

struct SchedulerRules {
  std::string engine;             //!< "vllm", "sglang", "trtllm", "llamacpp", "hf"
  std::uint64_t kv_blocks = 0;    //!< blocks in the KV pool (per replica; same on every GPU)
  std::uint32_t block_tokens = 16;  //!< tokens per block; 1 = token-granular pool (SGLang)
  std::uint64_t kv_block_bytes = 0; //!< bytes of one block on one GPU (for memory over time)
  std::uint64_t max_seqs = 256;   //!< running requests at most (max_num_seqs, max_running_requests, -np)
  //! Tokens one step may process, prompts and decodes together (max_num_batched_tokens,
  //! chunked_prefill_size, max_num_tokens, n_batch); 0 = no limit.
  std::uint64_t step_tokens = 0;
  bool chunked_prefill = true;       //!< a prompt may be split over several steps
  bool mix_prefill_decode = true;    //!< one step may hold prompt and decode tokens together
  Admission admission = Admission::OnDemand;
  double reserve_ratio = 0;          //!< ExpectedOutput: share of future output tokens reserved
  OutOfBlocks out_of_blocks = OutOfBlocks::PreemptNewest;
  bool prefix_caching = true;        //!< full prompt blocks shared by requests with the same prefix
  std::uint64_t max_model_len = 0;   //!< prompt + output longer than this is rejected; 0 = none
  //! llama.cpp: tokens each slot holds (n_ctx / np); a request whose prompt + output outgrows
  //! it fails as the server fails it. 0 = no per-request slot.
  std::uint64_t slot_tokens = 0;
  //! HF transformers: static batches of this many requests, none joining until the batch is
  //! done (generate() with padding). 0 = continuous batching.
  std::uint64_t static_batch = 0;
  //! Memory per GPU that does not change over a run: weights, activation peak, overheads.
  std::uint64_t non_kv_bytes = 0;
  std::uint64_t gpu_total_bytes = 0;  //!< capacity per GPU (runtime-reported)
  //! One line per rule: "max_num_seqs 256 (engine_view; vllm/v1/core/sched/scheduler.py)".
  std::vector<std::string> basis;
};

//! The rules of the engine that made `outcome`, from its plan (engine_view) and the flags the
//! user gave. Throws Error(Usage) for an engine the simulator does not model, or a plan that
//! does not fit (there is nothing to simulate).
SchedulerRules scheduler_rules(const memory::PlanOutcome& outcome, const memory::EngineArgs& args);

}  // namespace vramplan::sim
