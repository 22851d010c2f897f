#include "vramplan/memory/vllm_admission.hpp"

#include <cstdint>
#include <string>

#include "vramplan/core/error.hpp"
#include "vramplan/core/version.hpp"

namespace vramplan::memory {

bool vllm_full_isl_admission(std::string_view release, const EngineArgs& args, bool v0) {
  const bool has_option = !v0 && !released_before(release_numbers(release), {0, 19});
  const bool on = arg_switch(args, "scheduler-reserve-full-isl"), off = arg_switch(args, "no-scheduler-reserve-full-isl");
  if (on && off)
    throw_usage("--scheduler-reserve-full-isl and --no-scheduler-reserve-full-isl contradict each other: give one");
  if ((on || off) && !has_option)
    throw_usage(std::string(on ? "--scheduler-reserve-full-isl" : "--no-scheduler-reserve-full-isl") + ": vLLM " +
                std::string(release) +
                " has no such flag (SchedulerConfig.scheduler_reserve_full_isl arrived in 0.19.0, PR #37307): plan it "
                "with --engine vllm@0.19 or later");
  // V0's block manager checks, then allocates, the blocks of the whole sequence when it admits a
  // prompt (core/block_manager_v2.py can_allocate, allocate): the same gate, with no flag.
  if (v0) return true;
  return has_option && !off;
}

double vllm_watermark(std::string_view release, const EngineArgs& args, bool v0) {
  const auto w = arg_double(args, "watermark");
  if (!w) return 0;
  if (v0 || released_before(release_numbers(release), {0, 24}))
    throw_usage("--watermark: vLLM " + std::string(release) +
                " has no such flag (SchedulerConfig.watermark arrived in 0.24.0): plan it with --engine vllm@0.24 or later");
  if (!(*w >= 0 && *w < 1))
    throw_usage("--watermark must be in [0, 1): the share of the KV blocks kept free (vllm/config/scheduler.py SchedulerConfig.watermark)");
  return *w;
}

}  // namespace vramplan::memory
