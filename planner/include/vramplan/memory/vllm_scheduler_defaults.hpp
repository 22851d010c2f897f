// vramplan/memory/vllm_scheduler_defaults.hpp — the scheduler limits vLLM picks when the user
// gives none, per engine generation (data/engines/vllm.json `engine_generation`).
//
// V1 (0.8+; vllm/engine/arg_utils.py get_batch_defaults / _set_default_args_v1, server context):
// by GPU class — >= 70 GiB (and, from 0.9, not an A100) gets the large limits; chunked prefill
// always on unless --no-enable-chunked-prefill.
// V0 (0.6 - 0.7; vllm/engine/arg_utils.py create_engine_config, vllm/config.py SchedulerConfig):
// max_num_seqs 256; chunked prefill on by default only for max_model_len > 32768 on a text model
// without sliding window or LoRA; max_num_batched_tokens = 512 (0.6.0 - 0.6.4) or 2048 (0.6.5+)
// with chunked prefill, else max(max_model_len, 2048).
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct VllmSchedulerDefaults {
  std::uint64_t max_num_seqs = 0;
  std::uint64_t max_num_batched_tokens = 0;
  bool chunked_prefill = true;
  std::string explain;  //!< which rule gave them, for the plan's notes
};

VllmSchedulerDefaults v1_scheduler_defaults(const EngineProfileData& d, const GpuTarget& gpu, const EngineArgs& args);

VllmSchedulerDefaults v0_scheduler_defaults(const EngineProfileData& d, const ModelArch& arch,
                                            std::uint64_t max_model_len, bool lora, const EngineArgs& args);

}  // namespace vramplan::memory
