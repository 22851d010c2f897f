#include "vramplan/memory/vllm_async_scheduling.hpp"

#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/core/version.hpp"

namespace vramplan::memory {

VllmAsyncScheduling vllm_async_scheduling(std::string_view release, const EngineArgs& args, std::uint64_t pp) {
  const std::vector<std::uint64_t> v = release_numbers(release);
  const bool current = v.empty();
  const bool before_014 = released_before(v, {0, 14});
  const bool before_015 = released_before(v, {0, 15});
  const std::string name = current ? std::string("the current release") : "vLLM " + std::string(release);
  const bool on = arg_switch(args, "async-scheduling"), off = arg_switch(args, "no-async-scheduling");
  if (on && off) throw_usage("--async-scheduling and --no-async-scheduling contradict each other: give one");
  if (off) return {false, "async scheduling off (--no-async-scheduling): each step's batch is formed when it starts"};
  if (on) {
    // VllmConfig.__post_init__, async_scheduling explicitly set: hard fail on PP before 0.15.
    if (pp > 1 && before_015)
      throw_usage("--async-scheduling with pipeline parallel size " + std::to_string(pp) + ": " + name +
                  " rejects it (vllm/config/vllm.py VllmConfig.__post_init__: \"Async scheduling is not yet "
                  "compatible with pipeline_parallel_size > 1\"; supported from 0.15, PR #32359)");
    return {true, "async scheduling on (--async-scheduling)"};
  }
  if (before_014)
    return {false, "async scheduling off: " + name + " schedules each step serially by default (on by default from 0.14.0, PR #27614)"};
  if (pp > 1 && before_015)
    return {false, "async scheduling off: " + name + " turns it off with pipeline parallel size > 1 "
                   "(vllm/config/vllm.py VllmConfig.__post_init__; supported from 0.15, PR #32359)"};
  return {true, "async scheduling on (the default from 0.14.0, vllm/config/vllm.py VllmConfig.__post_init__)"};
}

}  // namespace vramplan::memory
