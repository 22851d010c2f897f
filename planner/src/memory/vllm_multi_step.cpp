// vLLM V0 multi-step scheduling per release; the rules and their sources are in
// vllm_multi_step.hpp.
#include "vramplan/memory/vllm_multi_step.hpp"

#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/core/version.hpp"

namespace vramplan::memory {

VllmMultiStep vllm_multi_step(std::string_view release, bool v0_profile, bool chunked_prefill, std::uint64_t pp,
                              const EngineArgs& args) {
  const std::uint64_t n = arg_u64(args, "num-scheduler-steps").value_or(1);
  // The upper bound is vramplan's (a round's block allocation walks its steps), not vLLM's.
  if (n == 0 || n > 4096) throw_usage("--num-scheduler-steps must be in 1..4096, got " + std::to_string(n));
  if (n == 1) return {};
  const std::vector<std::uint64_t> v = release_numbers(release);
  const std::string name = v.empty() ? std::string("the current vLLM release") : "vLLM " + std::string(release);
  if (!released_before(v, {0, 10, 1}))
    throw_usage("--num-scheduler-steps: " + name + " has no such flag (multi-step scheduling was removed in 0.10.1, "
                "PR #22138): plan it with --engine vllm@0.7.3 or earlier");
  if (!v0_profile)
    throw_usage("--num-scheduler-steps: " + name + " falls back to its V0 engine for it (engine/arg_utils.py "
                "_is_v1_supported_oracle), which vramplan plans with the 0.6 - 0.7 profiles: give --engine vllm@0.7.3");
  if (chunked_prefill) {
    if (v < std::vector<std::uint64_t>{0, 6, 3})
      throw_usage("--num-scheduler-steps: " + name + " refuses multi-step with chunked prefill (engine/arg_utils.py: "
                  "\"Chunked prefill is not supported with multi-step\"); chunked prefill is on by default above "
                  "--max-model-len 32768: lower it or give --no-enable-chunked-prefill");
    if (pp > 1)
      throw_usage("--num-scheduler-steps: " + name + " refuses multi-step chunked prefill with pipeline parallelism "
                  "(engine/arg_utils.py: \"Multi-Step Chunked-Prefill is not supported for pipeline-parallel-size > 1\")");
  }
  VllmMultiStep m;
  m.steps = n;
  m.streams_each_step = v >= std::vector<std::uint64_t>{0, 6, 3};
  m.why = "multi-step scheduling (--num-scheduler-steps " + std::to_string(n) + "): " +
          (chunked_prefill ? "with chunked prefill every round runs " + std::to_string(n) +
                                 " steps, whole prompts and decodes in its first (sequence.py "
                                 "init_multi_step_from_lookahead_slots), "
                           : "a decode round runs " + std::to_string(n) + " steps over the batch formed at its start, ") +
          "and the scheduler runs only between rounds (engine/async_llm_engine.py step_async); " +
          (m.streams_each_step ? "each step's tokens stream (--multi-step-stream-outputs, on by default from 0.6.3)"
                               : "the client gets a round's tokens as one chunk (" + name +
                                     " streams once a round; --multi-step-stream-outputs came in 0.6.2, on by default from 0.6.3)");
  return m;
}

}  // namespace vramplan::memory
