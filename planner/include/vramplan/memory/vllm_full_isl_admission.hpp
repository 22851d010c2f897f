// vramplan/memory/vllm_full_isl_admission.hpp — whether a vLLM V1 scheduler admits a waiting
// request only when the KV blocks of its whole sequence are free (SchedulerConfig
// scheduler_reserve_full_isl, vllm/config/scheduler.py), resolved per release:
//   from 0.19.0 on by default (PR #37307; read in the 0.19.0, 0.28.0 and 0.34.0 wheels, absent
//   from 0.17.0, 0.18.0 and 0.18.1): v1/core/sched/scheduler.py Scheduler.schedule asks
//   kv_cache_manager.can_fit_full_sequence (0.19) / allocate_slots(full_sequence_must_fit=True)
//   (0.28+) before it allocates a waiting request's first chunk, and stops admitting when the
//   blocks of min(num_tokens, max_model_len) tokens, less its prefix-cache hit, exceed the free
//   blocks; `--no-scheduler-reserve-full-isl` (argparse.BooleanOptionalAction,
//   engine/arg_utils.py) turns it off.
//   Before 0.19 only the first chunk's blocks are asked for, so a long prompt can be admitted into
//   a nearly full pool and preempt running requests when its later chunks find no block.
#pragma once

#include <string_view>

#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

//! `release` as for vllm_async_scheduling ("" or unparsable: the current release). `v0`: the V0
//! engine (0.6 - 0.7 profiles), whose block manager checks the whole sequence's blocks when it
//! admits a prompt (on, and no flag for it). Error(Usage)
//! for both flags at once and for either flag on a release without the option.
bool vllm_full_isl_admission(std::string_view release, const EngineArgs& args, bool v0);

}  // namespace vramplan::memory
