// vramplan/memory/vllm_multi_step.hpp — vLLM V0's multi-step scheduling (--num-scheduler-steps N),
// resolved per release as the engine resolves it (read in the 0.5.5 - 0.11.0 source releases;
// docs/research/vllm-0.6-multi-step.md):
//   0.5.5 - 0.10.0 have the flag; 0.10.1 removed it (PR #22138), so argparse rejects it there;
//   0.8.0 - 0.10.0 default to the V1 engine and fall back to V0 for it (engine/arg_utils.py
//   _is_v1_supported_oracle), which vramplan plans only through its 0.6 - 0.7 profiles;
//   with chunked prefill 0.6.0 - 0.6.2 refuse it ("Chunked prefill is not supported with
//   multi-step"); 0.6.3 runs both together (PR #8378): every round N steps, whole prompts beside
//   the decodes in its first, max_num_batched_tokens max(max_model_len, 2048) (config.py
//   SchedulerConfig), but not with pipeline parallelism;
//   streaming: one output a round up to 0.6.2; from 0.6.3 --multi-step-stream-outputs defaults
//   on and each step's tokens stream (PR #9047).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

struct VllmMultiStep {
  std::uint64_t steps = 1;         //!< decode steps a scheduler round runs (1: every step scheduled)
  bool streams_each_step = true;   //!< false: the client gets one chunk of a round's tokens at its end
  std::string why;                 //!< for the plan's notes (empty with one step)
};

//! `release`: the vLLM release asked for (empty or unparsable: the current one); `v0_profile`:
//! the profile plans the V0 engine. Error(Usage) for a step count outside 1..4096, a release
//! without the flag, a V1 profile, and chunked prefill where the release refuses it (before 0.6.3,
//! or with `pp` > 1).
VllmMultiStep vllm_multi_step(std::string_view release, bool v0_profile, bool chunked_prefill, std::uint64_t pp,
                              const EngineArgs& args);

}  // namespace vramplan::memory
