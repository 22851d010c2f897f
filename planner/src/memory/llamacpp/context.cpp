// llama.cpp context sizing (llama_context constructor + llama_init_from_model checks).
#include <algorithm>
#include <cctype>
#include <tuple>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/memory/llamacpp.hpp"

namespace vramplan::llamacpp {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_quantized_cache_type(const std::string& type) {
  // f32/f16/bf16 are plain floats; every other accepted cache type is a block format.
  const std::string t = lower(type);
  return t != "f32" && t != "f16" && t != "bf16";
}

void check_cache_type(const std::string& flag, const std::string& type,
                      const LlamacppProfile& profile) {
  const std::string t = lower(type);
  if (std::find(profile.cache_types.begin(), profile.cache_types.end(), t) !=
      profile.cache_types.end())
    return;
  std::string known;
  for (const auto& k : profile.cache_types) known += (known.empty() ? "" : ", ") + k;
  throw_usage(flag + ": unsupported cache type '" + type + "' (llama.cpp accepts " + known + ")");
}

}  // namespace

LlamacppProfile load_profile(const std::filesystem::path& file) {
  const auto doc = read_json_file(file);
  const JsonView root(doc, file.string());
  const JsonView params = root.at("parameters");
  LlamacppProfile p;
  p.commit = root.req_string("commit");
  auto positive = [&](std::string_view key) {
    const JsonView entry = params.at(key);
    entry.req_string("source");  // every parameter names its source
    const std::uint64_t v = entry.req_u64("value");
    if (v == 0) entry.fail_at("value", "must be positive");
    return v;
  };
  auto names = [&](std::string_view key) {
    const JsonView entry = params.at(key);
    entry.req_string("source");
    std::vector<std::string> out;
    for (const auto& item : entry.at("value").items()) out.push_back(item.as_string());
    if (out.empty()) entry.fail_at("value", "must not be empty");
    return out;
  };
  p.ctx_pad = positive("ctx_pad");
  p.swa_pad = positive("swa_pad");
  p.tensor_alignment = positive("tensor_alignment");
  p.repack_row_multiple = positive("repack_row_multiple");
  p.cuda_context_bytes = positive("cuda_context_bytes");
  p.cuda_context_source = params.at("cuda_context_bytes").req_string("source");
  for (auto& t : names("cache_types")) p.cache_types.push_back(lower(t));
  p.repack_types = names("repack_types");
  return p;
}

ContextResult make_context(const ModelArch& arch, const Settings& s,
                           const LlamacppProfile& profile) {
  if (s.n_ctx == 0) throw_usage("-c: context size must be positive (0 = the model's is not modelled)");
  if (s.n_ubatch == 0 || s.n_batch == 0) throw_usage("-b/-ub: batch sizes must be positive");
  if (s.n_parallel == 0) throw_usage("-np: must be at least 1");
  check_cache_type("-ctk", s.type_k, profile);
  check_cache_type("-ctv", s.type_v, profile);

  ContextResult result;
  // llama_init_from_model checks, in llama.cpp's order: MLA first (K and V share one latent row),
  // then the quantized-V rule (the non-FA path multiplies by a transposed V, which needs a plain
  // float layout).
  const bool mla = arch.kv_lora_rank > 0;
  if (mla && lower(s.type_k) != lower(s.type_v)) {
    result.refusal = "model does not support different K (" + lower(s.type_k) + ") and V (" +
                     lower(s.type_v) + ") cache types";
    return result;
  }
  // -fa auto resolves to enabled on the CPU and CUDA backends (both have FA kernels).
  const bool fa = s.flash_attn != FlashAttn::Off;
  if (!fa && is_quantized_cache_type(s.type_v)) {
    result.refusal = "quantized V cache requires flash_attn to be enabled";
    return result;
  }
  // Then, with FA, a quantized cache type's block must divide each head (llama_init_from_model:
  // "K cache type q8_0 with block size 32 does not divide n_embd_head_k=80", Phi-2's head size).
  // Every quantized type -ctk / -ctv take has 32-value blocks (ggml-common.h QK8_0, QK4_0, QK4_1,
  // QK5_0, QK5_1, QK4_NL).
  constexpr std::uint64_t kCacheBlock = 32;
  const std::uint64_t head_v = arch.v_head_dim ? arch.v_head_dim : arch.head_dim;
  for (const auto& [which, type, head] : {std::tuple{"K", s.type_k, arch.head_dim}, std::tuple{"V", s.type_v, head_v}})
    if (fa && is_quantized_cache_type(type) && head % kCacheBlock != 0) {
      result.refusal = std::string(which) + " cache type " + lower(type) +
                       " with block size " + std::to_string(kCacheBlock) + " does not divide n_embd_head_" +
                       (which[0] == 'K' ? "k" : "v") + "=" +
                       std::to_string(head);
      return result;
    }

  Context c;
  c.n_seq_max = s.n_parallel;
  c.n_ctx = round_up(s.n_ctx, profile.ctx_pad, "n_ctx");
  if (s.kv_unified || s.n_parallel == 1) {
    c.n_ctx_seq = c.n_ctx;
  } else {
    c.n_ctx_seq = round_up(c.n_ctx / s.n_parallel, profile.ctx_pad, "n_ctx_seq");
    // llama-context.cpp refuses to start then ("n_ctx_seq == 0"): fewer cells than sequences.
    if (c.n_ctx_seq == 0) {
      result.refusal = "n_ctx_seq == 0: --ctx-size " + std::to_string(c.n_ctx) + " split over " +
                       std::to_string(s.n_parallel) + " sequences (-np) gives each none";
      return result;
    }
    c.n_ctx = checked_mul(c.n_ctx_seq, s.n_parallel, "n_ctx");
  }
  c.n_streams = s.kv_unified ? 1 : s.n_parallel;
  // With causal attention the batch is limited by the (padded) context size.
  c.n_batch = std::min(c.n_ctx, s.n_batch);
  c.n_ubatch = std::min(s.n_ubatch, c.n_batch);
  c.n_outputs_max = c.n_batch;
  c.swa_pad = profile.swa_pad;
  c.flash_attn = fa;
  result.context = c;
  return result;
}

Offload offload_split(std::uint64_t n_layer, const Settings& s) {
  Offload o;
  if (s.device == Device::Cpu) {
    o.first_gpu_layer = n_layer;
    return o;
  }
  // llama-model.cpp load_tensors: i_gpu_start = max(n_layer - ngl, 0); the output layer is
  // offloaded when ngl > n_layer (act_gpu_layers = min(ngl, n_layer + 1)).
  const std::uint64_t ngl =
      s.n_gpu_layers < 0 ? n_layer + 1 : static_cast<std::uint64_t>(s.n_gpu_layers);
  o.first_gpu_layer = ngl >= n_layer ? 0 : n_layer - ngl;
  o.output_on_gpu = ngl > n_layer;
  return o;
}

}  // namespace vramplan::llamacpp
