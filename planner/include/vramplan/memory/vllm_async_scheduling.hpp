// vramplan/memory/vllm_async_scheduling.hpp — whether a vLLM configuration schedules
// asynchronously (the next step's batch formed while the GPU runs the current one), resolved as
// vllm/config/vllm.py VllmConfig.__post_init__ resolves SchedulerConfig.async_scheduling:
//   --async-scheduling / --no-async-scheduling (argparse.BooleanOptionalAction, engine/arg_utils.py)
//   win; with neither, the release's default: off before 0.14.0, on from 0.14.0 (PR #27614),
//   except that 0.14.x turns it off with pipeline_parallel_size > 1 (read in the 0.14.0 wheel;
//   the 0.15.1 wheel no longer has that condition: PR #32359 supports async scheduling with PP).
// The other conditions of __post_init__ are not inputs of vramplan: a speculative method outside
// EAGLE / MTP (no speculative decoding here), an executor other than mp / uni /
// external_launcher (vramplan plans one node, where ParallelConfig picks uni or mp), and, in
// releases after 0.15.1, the pooling runner (no decode steps to time).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

struct VllmAsyncScheduling {
  bool on = true;
  std::string why;  //!< the rule that decided, for the plan's notes
};

//! `release` is the vLLM release asked for ("0.15.1"; empty or unparsable, e.g. "nightly": the
//! current release). Error(Usage) for both flags at once, and for --async-scheduling with
//! `pp` > 1 before 0.15 (vLLM raises "Async scheduling is not yet compatible with
//! pipeline_parallel_size > 1").
VllmAsyncScheduling vllm_async_scheduling(std::string_view release, const EngineArgs& args, std::uint64_t pp);

}  // namespace vramplan::memory
