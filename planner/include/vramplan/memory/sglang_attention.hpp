// vramplan/memory/sglang_attention.hpp — the attention backend an SGLang server picks and the
// KV page size that backend forces, read in python/sglang/srt/server_args.py of 0.5.6.post1, 0.5.7,
// 0.5.8 and 0.5.9 (releases before 0.5.6 are taken as 0.5.6):
//
//   * --prefill-attention-backend equal to --decode-attention-backend overrides --attention-backend;
//   * `_handle_model_specific_adjustments`, on compute capability 10 (is_sm100_supported) with no
//     backend setting given: DeepseekV3ForCausalLM -> trtllm_mla, GptOssForCausalLM and
//     Olmo2ForCausalLM -> trtllm_mha, Qwen3NextForCausalLM -> triton;
//   * `_handle_attention_backend_compatibility`, the generic choice when --attention-backend is
//     still unset (even with a prefill or decode backend given): an MHA model gets fa3 on Hopper,
//     trtllm_mha on Blackwell, aiter on ROCm, else flashinfer; an MLA model fa3 on Hopper,
//     flashinfer on capability 10, aiter or triton on ROCm. "Blackwell" is capability 10 or 12 in
//     0.5.6 (is_blackwell) and 10 only from 0.5.7; either way only without EAGLE top-k above one
//     (utils/common.py is_no_spec_infer_or_topk_one, read before the speculative defaults: no
//     top-k, or top-k 1 with no page size above one given), and from 0.5.7 not for EAGLE without
//     an explicit top-k;
//   * the same function then forces the page size: trtllm_mla 64 (unless 32 or 64 was given),
//     trtllm_mha 64 (unless 16, 32 or 64; also when it is only the prefill backend), flashmla 64,
//     cutlass_mla 128, and fa4 as an MHA model's prefill backend 128; every other backend keeps
//     --page-size, default 1 (`_handle_page_size`);
//   * and refuses: trtllm_mha off capability 10 (so 0.5.6's own default on capability 12 does not
//     start), and before 0.5.8 fa4 as the attention or decode backend.
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
#include "vramplan/memory/sglang_dsa.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct SglangAttention {
  std::string backend;         //!< "trtllm_mha", "fa3", ... ("" = the generic default, not named)
  std::uint64_t page_size = 1;  //!< tokens per KV page
  std::string why;             //!< how it was chosen, for the plan's notes
  std::string refusal;         //!< server_args.py's error when it refuses the setting ("" = starts)
};

//! The backend and page size for `arch` on a GPU of compute capability major `cc_major` (0 =
//! unknown or not NVIDIA) under `release`, from the backend, page-size and speculative flags in
//! `args`; `default_page` where neither the user nor the backend sets one (the engine data's
//! page_size). Error(Usage) for --page-size 0.
SglangAttention sglang_attention(const ModelArch& arch, int cc_major, const EngineArgs& args,
                                 std::uint64_t default_page, const SglangRelease& release = {});

//! Whether SGLang on ROCm runs `arch` on its aiter attention backend at TP `tp` with the backend
//! flags of `args` (server_args.py _handle_attention_backend_compatibility, 0.5.5 - 0.5.9 read;
//! arg_groups/attention_hook.py from 0.5.19): given, --attention-backend (or equal prefill and
//! decode backends) says; unset, an MHA model takes aiter, an MLA model aiter at 16 or 128 KV heads
//! a rank and triton otherwise, gpt-oss and Gemma 4 triton (_handle_model_specific_adjustments),
//! DeepSeek sparse attention nsa. aiter above 8,192 tokens of context scales mem_fraction_static
//! by 0.85 (from 0.5.5), a given fraction too.
bool sglang_rocm_runs_aiter(const ModelArch& arch, const EngineArgs& args, std::uint64_t tp);

}  // namespace vramplan::memory
