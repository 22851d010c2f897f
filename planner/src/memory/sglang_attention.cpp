// SGLang's attention backend choice and the page size it forces; the rules and their sources are
// in vramplan/memory/sglang_attention.hpp.
#include "vramplan/memory/sglang_attention.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "vramplan/core/error.hpp"

namespace vramplan::memory {

namespace {

//! A backend that runs only on some page sizes: the sizes it accepts (the first is what
//! server_args.py sets when --page-size is another one) and whether the rule is for MHA models
//! only (fa4 leaves MLA models' pages alone).
struct PagedBackend {
  std::string_view name;
  std::array<std::uint64_t, 3> accepted;  //!< 0 = unused slot
  std::uint64_t forced;
  bool mha_only;
};

// server_args.py _handle_attention_backend_compatibility (0.5.6.post1).
constexpr std::array<PagedBackend, 5> kPagedBackends = {{
    {"trtllm_mla", {32, 64, 0}, 64, false},
    {"trtllm_mha", {16, 32, 64}, 64, false},
    {"flashmla", {64, 0, 0}, 64, false},
    {"cutlass_mla", {128, 0, 0}, 128, false},
    {"fa4", {128, 0, 0}, 128, true},
}};

//! The backend SGLang picks when none is given (server_args.py _handle_model_specific_adjustments,
//! then _handle_attention_backend_compatibility). Only the choices that force a page size are
//! named; the others ("fa3", "flashinfer", "aiter", "triton") keep the default page.
std::string default_backend(const ModelArch& arch, int cc_major, std::string& why) {
  const bool mla = arch.kv_lora_rank > 0;
  const std::string& a = arch.architecture;
  // Capability 12 (is_blackwell but not is_sm100_supported) gets trtllm_mha from the generic
  // choice and is then refused by the same function: not modelled, the default page is kept.
  if (cc_major != 10) return "";  // a compute capability is NVIDIA's; ROCm GPUs have none here
  if (a == "DeepseekV3ForCausalLM") {
    why = "trtllm_mla, SGLang's choice for DeepseekV3ForCausalLM on compute capability 10";
    return "trtllm_mla";
  }
  if (a == "Qwen3NextForCausalLM") {
    why = "triton, SGLang's choice for Qwen3NextForCausalLM on compute capability 10";
    return "triton";
  }
  if (mla) return "";  // flashinfer
  why = "trtllm_mha, SGLang's default for MHA models on compute capability 10";
  return "trtllm_mha";
}

}  // namespace

SglangAttention sglang_attention(const ModelArch& arch, int cc_major, const EngineArgs& args,
                                 std::uint64_t default_page) {
  SglangAttention out;
  const auto user_page = arg_u64(args, "page-size");
  if (user_page && *user_page == 0) throw_usage("--page-size must be >= 1");
  out.page_size = user_page.value_or(default_page);
  const auto given = arg_string(args, "attention-backend");
  const auto decode = arg_string(args, "decode-attention-backend");
  if (given) {
    out.backend = *given;
    out.why = *given + " (--attention-backend)";
  } else if (decode) {
    out.backend = *decode;
    out.why = *decode + " (--decode-attention-backend)";
  } else {
    out.backend = default_backend(arch, cc_major, out.why);
  }
  const auto rule = std::find_if(kPagedBackends.begin(), kPagedBackends.end(),
                                 [&](const PagedBackend& b) { return b.name == out.backend; });
  if (rule == kPagedBackends.end() || (rule->mha_only && arch.kv_lora_rank > 0)) return out;
  const bool accepted = user_page && std::find(rule->accepted.begin(), rule->accepted.end(), *user_page) != rule->accepted.end();
  if (!accepted) out.page_size = rule->forced;
  out.why += ": KV pages of " + std::to_string(out.page_size) + " tokens" +
             (accepted ? "" : " (server_args.py _handle_attention_backend_compatibility sets them)");
  return out;
}

}  // namespace vramplan::memory
