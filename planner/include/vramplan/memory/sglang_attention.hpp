// vramplan/memory/sglang_attention.hpp — the attention backend an SGLang server picks and the
// KV page size that backend forces (read in sglang 0.5.6.post1 python/sglang/srt/server_args.py):
//
//   * `_handle_model_specific_adjustments`, before the generic choice, on compute capability 10
//     (is_sm100_supported) with no backend given: DeepseekV3ForCausalLM -> trtllm_mla,
//     GptOssForCausalLM and Llama4* -> trtllm_mha, Qwen3NextForCausalLM -> triton;
//   * `_handle_attention_backend_compatibility`, the generic choice: an MHA model gets fa3 on
//     Hopper (for the architectures is_fa3_default_architecture lists), trtllm_mha on Blackwell
//     (capability 10 or 12, is_blackwell) without EAGLE top-k > 1, aiter on ROCm, else flashinfer;
//     an MLA model fa3 on Hopper, flashinfer on capability 10, aiter or triton on ROCm
//     (capability 12 is not modelled: the generic choice gives it trtllm_mha, which the same
//     function then refuses off capability 10);
//   * the same function then forces the page size: trtllm_mla 64 (unless 32 or 64 was given),
//     trtllm_mha 64 (unless 16, 32 or 64), flashmla 64, cutlass_mla 128, fa4 128 (MHA models);
//     every other backend keeps --page-size, default 1 (`_handle_page_size`).
// DeepSeek sparse attention runs its own nsa backend on 64-token pages (memory/sglang_dsa.hpp).
// The page size matters beyond rounding the pool: with pages of more than one token SGLang
// allocates KV through PagedTokenToKVPoolAllocator, whose Triton kernels compile per batch shape
// (docs/simulator.md#cold-start: tested, not simulated), and the radix cache matches prefixes in
// whole pages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vramplan/memory/engine.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct SglangAttention {
  std::string backend;         //!< "trtllm_mha", "fa3", ... ("" = the generic default, not named)
  std::uint64_t page_size = 1;  //!< tokens per KV page
  std::string why;             //!< how it was chosen, for the plan's notes
};

//! The backend and page size for `arch` on a GPU of compute capability major `cc_major` (0 =
//! unknown or not NVIDIA), from --attention-backend / --decode-attention-backend / --page-size
//! in `args`; `default_page` where neither the user nor the backend sets one (the engine data's
//! page_size). Error(Usage) for --page-size 0.
SglangAttention sglang_attention(const ModelArch& arch, int cc_major, const EngineArgs& args,
                                 std::uint64_t default_page);

}  // namespace vramplan::memory
