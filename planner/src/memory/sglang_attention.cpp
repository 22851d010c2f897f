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
//! server_args.py sets when --page-size is another one), and which of the three backend settings
//! bring the rule into force (server_args.py tests attention_backend and decode_attention_backend,
//! and for trtllm_mha prefill_attention_backend too).
struct PagedBackend {
  std::string_view name;
  std::array<std::uint64_t, 3> accepted;  //!< 0 = unused slot
  std::uint64_t forced;
  bool by_prefill;
};

// server_args.py _handle_attention_backend_compatibility (0.5.6.post1 - 0.5.9 alike).
constexpr std::array<PagedBackend, 4> kPagedBackends = {{
    {"trtllm_mla", {32, 64, 0}, 64, false},
    {"trtllm_mha", {16, 32, 64}, 64, true},
    {"flashmla", {64, 0, 0}, 64, false},
    {"cutlass_mla", {128, 0, 0}, 128, false},
}};

struct Backends {
  std::string attention, prefill, decode;
  bool uses(std::string_view b, bool with_prefill) const {
    return attention == b || decode == b || (with_prefill && prefill == b);
  }
  bool any() const { return !attention.empty() || !prefill.empty() || !decode.empty(); }
};

// The three backend flags as given; a prefill backend equal to the decode one overrides
// --attention-backend.
Backends given_backends(const EngineArgs& args) {
  Backends b{arg_string(args, "attention-backend").value_or(""), arg_string(args, "prefill-attention-backend").value_or(""),
             arg_string(args, "decode-attention-backend").value_or("")};
  if (!b.prefill.empty() && b.prefill == b.decode) b.attention = b.prefill;
  return b;
}

// utils/common.py is_no_spec_infer_or_topk_one, read before _handle_speculative_decoding fills
// in a top-k: no top-k given, or top-k 1 with no page size above one given.
bool no_spec_or_topk_one(const EngineArgs& args) {
  const auto topk = arg_u64(args, "speculative-eagle-topk");
  const auto page = arg_u64(args, "page-size");
  return !topk || (*topk == 1 && (!page || *page == 1));
}

//! The backend SGLang picks when none is given (server_args.py _handle_model_specific_adjustments,
//! then the generic choice in _handle_attention_backend_compatibility). "" for a choice that
//! forces no page and is not worth naming (fa3, flashinfer, aiter, triton on other GPUs).
std::string default_backend(const ModelArch& arch, int cc_major, const EngineArgs& args, const SglangRelease& release,
                            bool any_given, std::string& why) {
  const bool mla = arch.kv_lora_rank > 0;
  const std::string& a = arch.architecture;
  if (cc_major == 10 && !any_given) {  // model-specific, only when no backend setting was given
    if (a == "DeepseekV3ForCausalLM") {
      why = "trtllm_mla, SGLang's choice for DeepseekV3ForCausalLM on compute capability 10";
      return "trtllm_mla";
    }
    if (a == "GptOssForCausalLM" || a == "Olmo2ForCausalLM") {
      why = "trtllm_mha, SGLang's choice for " + a + " on compute capability 10";
      return "trtllm_mha";
    }
    if (a == "Qwen3NextForCausalLM") {
      why = "triton, SGLang's choice for Qwen3NextForCausalLM on compute capability 10";
      return "triton";
    }
  }
  // Gemma 4's full layers have 512-wide heads: 0.5.11 picks triton for the multimodal class on
  // every GPU (_handle_model_specific_adjustments: "if self.is_attention_backend_not_set()").
  if (a == "Gemma4ForConditionalGeneration" && !any_given) {
    why = "triton, SGLang's choice for Gemma4ForConditionalGeneration (server_args.py _handle_model_specific_adjustments, 0.5.11)";
    return "triton";
  }
  if (mla) return "";  // fa3 on Hopper, flashinfer on capability 10, aiter or triton on ROCm
  const bool plain = no_spec_or_topk_one(args);
  // 0.5.6: is_blackwell() (capability 10 or 12); from 0.5.7 is_sm100_supported() (10 only), and
  // EAGLE without an explicit top-k no longer takes trtllm_mha.
  const bool newer = release.at_least({0, 5, 7});
  const bool speculative = arg_string(args, "speculative-algorithm").has_value();
  const bool takes_trtllm = newer ? cc_major == 10 && plain && (!speculative || arg_string(args, "speculative-eagle-topk"))
                                  : (cc_major == 10 || cc_major == 12) && plain;
  if (cc_major == 9 && plain) return "";  // fa3 (is_hopper_with_cuda_12_3)
  if (!takes_trtllm) return "";           // aiter on ROCm, flashinfer elsewhere
  why = "trtllm_mha, SGLang's default for MHA models on compute capability " + std::to_string(cc_major);
  return "trtllm_mha";
}

}  // namespace

SglangAttention sglang_attention(const ModelArch& arch, int cc_major, const EngineArgs& args,
                                 std::uint64_t default_page, const SglangRelease& release) {
  SglangAttention out;
  const auto user_page = arg_u64(args, "page-size");
  if (user_page && *user_page == 0) throw_usage("--page-size must be >= 1");
  out.page_size = user_page.value_or(default_page);
  Backends b = given_backends(args);
  const bool any_given = b.any();
  if (!b.attention.empty()) {
    out.why = b.attention + (b.attention == b.prefill ? " (--prefill- and --decode-attention-backend)" : " (--attention-backend)");
  } else {
    b.attention = default_backend(arch, cc_major, args, release, any_given, out.why);
    if (!b.decode.empty()) out.why = b.decode + " (--decode-attention-backend)" + (out.why.empty() ? "" : "; " + out.why);
    if (!b.prefill.empty()) out.why = b.prefill + " (--prefill-attention-backend)" + (out.why.empty() ? "" : "; " + out.why);
  }
  out.backend = !b.decode.empty() ? b.decode : b.attention;

  // What server_args.py refuses: trtllm_mha off capability 10 (this is what 0.5.6's default does on
  // capability 12), and before 0.5.8 fa4 anywhere but prefill.
  if (b.uses("trtllm_mha", true) && cc_major != 10) {
    out.refusal = "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend. "
                  "(server_args.py _handle_attention_backend_compatibility" +
                  std::string(any_given ? "" : "; SGLang's own default on this GPU: pass --attention-backend") + ")";
    return out;
  }
  if (!release.at_least({0, 5, 8}) && (b.attention == "fa4" || b.decode == "fa4")) {
    out.refusal = "FA4 backend is only supported for prefill. Please use `--prefill-attention-backend fa4` instead. "
                  "(server_args.py _handle_attention_backend_compatibility, before 0.5.8)";
    return out;
  }
  // The checks run in this order and each sets the page where it applies; fa4 as an MHA model's
  // prefill backend comes last (128-token pages, whatever was given).
  std::string set_by;
  bool paged = false;
  for (const auto& rule : kPagedBackends) {
    if (!b.uses(rule.name, rule.by_prefill)) continue;
    paged = true;
    const bool accepted = user_page && std::find(rule.accepted.begin(), rule.accepted.end(), *user_page) != rule.accepted.end();
    if (!accepted) {
      out.page_size = rule.forced;
      set_by = " (server_args.py _handle_attention_backend_compatibility sets them)";
    }
  }
  if (b.prefill == "fa4" && arch.kv_lora_rank == 0) {
    out.page_size = 128;
    set_by = " (server_args.py _handle_attention_backend_compatibility: fa4 prefill of an MHA model)";
  }
  if (paged || !set_by.empty()) out.why += ": KV pages of " + std::to_string(out.page_size) + " tokens" + set_by;
  return out;
}

bool sglang_rocm_runs_aiter(const ModelArch& arch, const EngineArgs& args, std::uint64_t tp) {
  const Backends b = given_backends(args);
  if (!b.attention.empty()) return b.attention == "aiter";
  const bool any_given = b.any();
  const std::string& a = arch.architecture;
  // _handle_model_specific_adjustments, off CUDA: gpt-oss and Gemma 4 take triton when no backend
  // setting is given; DeepSeek sparse attention runs nsa; Llama 4 aiter (the generic choice too).
  if (!any_given && (a == "GptOssForCausalLM" || a == "Gemma4ForConditionalGeneration")) return false;
  if (arch.index_topk > 0) return false;
  if (arch.kv_lora_rank == 0) return true;
  // An MLA model: aiter only at 16 or 128 KV heads a rank (model_config.get_num_kv_heads).
  const std::uint64_t heads = std::max<std::uint64_t>(1, arch.num_kv_heads / std::max<std::uint64_t>(tp, 1));
  return heads == 16 || heads == 128;
}

}  // namespace vramplan::memory
