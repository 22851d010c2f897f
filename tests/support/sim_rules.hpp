// sim_rules.hpp — one rank's scheduler rules as the lockstep-server tests use them (SGLang DP
// attention, vLLM data parallelism): a 1,000-block pool of 16 tokens, 256 requests, 2,048 tokens a
// step, max_model_len 8,192.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/sim/scheduler_rules.hpp"

namespace vramplan::test {

inline sim::SchedulerRules lockstep_rank_rules(const std::string& engine, std::uint64_t blocks = 1000) {
  sim::SchedulerRules r;
  r.engine = engine;
  r.kv_blocks = blocks;
  r.block_tokens = 16;
  r.kv_block_bytes = 2 << 20;
  r.max_seqs = 256;
  r.step_tokens = 2048;
  r.max_model_len = 8192;
  r.non_kv_bytes = 20ull << 30;
  return r;
}

}  // namespace vramplan::test
