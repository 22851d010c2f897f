// vLLM's default scheduler limits per engine generation; the rules and their sources are in
// vllm_scheduler_defaults.hpp and data/engines/vllm.json.
#include "vramplan/memory/vllm_scheduler_defaults.hpp"

#include <algorithm>

namespace vramplan::memory {

VllmSchedulerDefaults v1_scheduler_defaults(const EngineProfileData& d, const GpuTarget& gpu, const EngineArgs& args) {
  // get_batch_defaults: device memory >= 70 GiB is the large class; from 0.9 an A100 never is
  // ("a100" not in device_name), 0.8 had no such exception.
  // From 0.28 a GPU of >= 160 GiB (B200, B300, MI300X) is a class of its own, checked first.
  const bool huge = d.has("huge_gpu_min_gib") && gpu.total.gib() >= d.number("huge_gpu_min_gib");
  const bool a100_excluded = d.flag("large_gpu_excludes_a100") && gpu.name.find("A100") != std::string::npos;
  const bool large = gpu.total.gib() >= d.number("large_gpu_min_gib") && !a100_excluded;
  const std::string size_class = huge ? "huge_gpu" : large ? "large_gpu" : "small_gpu";
  VllmSchedulerDefaults s;
  s.max_num_seqs = d.u64(size_class + "_max_num_seqs");
  s.max_num_batched_tokens = d.u64(size_class + "_max_num_batched_tokens");
  s.chunked_prefill = arg_on_off(args, "enable-chunked-prefill", d.flag("enable_chunked_prefill"));
  s.explain = huge ? ">= " + std::to_string(static_cast<int>(d.number("huge_gpu_min_gib"))) + " GiB GPU class"
                   : std::string(large ? ">= " : "< ") + std::to_string(static_cast<int>(d.number("large_gpu_min_gib"))) +
                         " GiB GPU class" + (a100_excluded ? " (A100: small class)" : "");
  return s;
}

VllmSchedulerDefaults v0_scheduler_defaults(const EngineProfileData& d, const ModelArch& arch,
                                            std::uint64_t max_model_len, bool lora, const EngineArgs& args) {
  // arg_utils.py create_engine_config: enable_chunked_prefill left unset is turned on for
  // max_model_len > 32K (use_long_context) on a GPU, without sliding window, LoRA or a
  // multimodal model; otherwise off.
  const bool long_context = max_model_len > d.u64("v0_long_context_len");
  const bool auto_chunked = long_context && !arch.multimodal && arch.sliding_window == 0 && !lora;
  VllmSchedulerDefaults s;
  s.chunked_prefill = arg_on_off(args, "enable-chunked-prefill", auto_chunked);
  s.max_num_seqs = d.u64("v0_max_num_seqs");
  // config.py SchedulerConfig: with chunked prefill a fixed budget, else the whole context
  // (at least 2048) so one prompt fits in one step; multi-step with chunked prefill (0.6.3+) does
  // not chunk prompts and keeps the whole context too ("Multi-step Chunked-Prefill doesn't allow
  // prompt-chunking").
  const bool multi_step = arg_u64(args, "num-scheduler-steps").value_or(1) > 1;
  s.max_num_batched_tokens = s.chunked_prefill && !multi_step
                                 ? d.u64("v0_chunked_max_num_batched_tokens")
                                 : std::max(max_model_len, d.u64("v0_min_max_num_batched_tokens"));
  s.explain = std::string("V0 scheduler, chunked prefill ") + (s.chunked_prefill ? "on" : "off") +
              (long_context && !s.chunked_prefill ? " (max_model_len > 32K but not enabled)" : "");
  return s;
}

}  // namespace vramplan::memory
