// vramplan/memory/vllm_admission.hpp — the rules by which a vLLM scheduler admits a waiting
// request, as each release resolves them from its flags:
//
// * Whole-sequence gate (SchedulerConfig.scheduler_reserve_full_isl, vllm/config/scheduler.py):
//   from 0.19.0 on by default (PR #37307; read in the 0.19.0, 0.28.0 and 0.34.0 wheels, absent
//   from 0.17.0, 0.18.0 and 0.18.1): v1/core/sched/scheduler.py Scheduler.schedule asks
//   kv_cache_manager.can_fit_full_sequence (0.19) / allocate_slots(full_sequence_must_fit=True)
//   (0.28+) before it allocates a waiting request's first chunk, and stops admitting when the
//   blocks of min(num_tokens, max_model_len) tokens, less its prefix-cache hit, exceed the free
//   blocks; `--no-scheduler-reserve-full-isl` (argparse.BooleanOptionalAction,
//   engine/arg_utils.py) turns it off. Before 0.19 only the first chunk's blocks are asked for,
//   so a long prompt can be admitted into a nearly full pool and preempt running requests when
//   its later chunks find no block.
// * Watermark (SchedulerConfig.watermark, `--watermark`, from 0.24.0: absent from the 0.21.0 -
//   0.23.0 wheels; default 0): int(watermark x num_blocks) blocks kept free when a waiting or
//   preempted request is admitted while any request runs (kv_cache_manager.py allocate_slots,
//   has_scheduled_reqs = bool(self.running)), in the gate and in the allocation alike.
#pragma once

#include <string_view>

#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

//! Whether the whole-sequence gate is on. `release` as for vllm_async_scheduling ("" or
//! unparsable: the current release). `v0`: the V0 engine (0.6 - 0.7 profiles), whose block
//! manager checks the whole sequence's blocks when it admits a prompt (on, and no flag for it).
//! Error(Usage) for both flags at once and for either flag on a release without the option.
bool vllm_full_isl_admission(std::string_view release, const EngineArgs& args, bool v0);

//! The V1 watermark, a share of the pool in [0, 1): --watermark, 0 without it. Error(Usage) for
//! the flag on a release before 0.24 or on V0 (whose block manager keeps its own fixed 0.01),
//! and for a value outside [0, 1).
double vllm_watermark(std::string_view release, const EngineArgs& args, bool v0);

}  // namespace vramplan::memory
