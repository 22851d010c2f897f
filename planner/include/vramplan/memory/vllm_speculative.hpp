// vramplan/memory/vllm_speculative.hpp — vLLM V1's speculative decoding with the checkpoint's own
// MTP layer as the draft (`--speculative-config '{"method": "mtp", "num_speculative_tokens": k}'`),
// read in the vllm 0.19.0 wheel and modelled from 0.19 on (docs/engines.md, vLLM item 14):
//   * config/speculative.py SpeculativeConfig.__post_init__: deepseek_mtp, glm4_moe_mtp, ... are
//     renamed "mtp"; with no draft "model" the draft is the target's checkpoint in its quantization,
//     and num_speculative_tokens is required (> 0);
//   * the draft's attention layer is one more layer in the same KV cache group, block table and pool
//     (gpu_model_runner.py get_kv_cache_spec): bytes per token = target layers + 1 (DeepSeek-V3: 62);
//   * its weights (memory/mtp_draft.hpp) load with the model, before the profile run sizes the pool;
//   * async scheduling stays on for "mtp" (config/vllm.py VllmConfig.__post_init__), the token
//     budget is unchanged (max_num_new_slots_for_drafting 0).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/memory/engine.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct VllmSpeculative {
  bool on = false;
  std::string method;       //!< "mtp"
  std::uint64_t tokens = 0; //!< num_speculative_tokens (k)
  std::vector<std::string> notes;
};

//! The run's speculative settings from --speculative-config (a JSON object); `on` false without
//! it. Throws Error(Usage), naming the flag, for JSON that does not parse, a method other than MTP,
//! a separate draft model, a missing or zero num_speculative_tokens, a model without a modelled MTP
//! layer, a release before 0.19 (0.11 kept its own copy of the LM head in the MTP layer:
//! deepseek_mtp.py compute_logits used shared_head.head), the V0 engine and pipeline parallelism.
//! `release`: the vLLM release asked for ("" or a name without numbers: the newest).
VllmSpeculative vllm_speculative(const EngineArgs& args, const ModelSpec& model, std::string_view release, bool v0,
                                 std::uint64_t pp);

}  // namespace vramplan::memory
