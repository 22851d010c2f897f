#include "vramplan/memory/vllm_encoder_profile.hpp"

#include <algorithm>
#include <cstdio>

#include "vramplan/core/bytes.hpp"

namespace vramplan::memory {

namespace {

// vllm/config/multimodal.py get_limit_per_prompt: "Unspecified modality is set to 999 by default".
constexpr std::uint64_t kDefaultItemsPerPrompt = 999;

}  // namespace

VllmEncoderProfile vllm_encoder_profile(const ModelArch& a, std::uint64_t max_num_batched_tokens,
                                        std::uint64_t max_num_seqs, std::uint64_t max_model_len,
                                        std::uint64_t compute_bytes) {
  VllmEncoderProfile p;
  const std::uint64_t P = a.mm_tokens_per_item;
  if (!a.multimodal || P == 0) return p;
  p.budget_tokens = std::max(max_num_batched_tokens, P);
  const std::uint64_t per_prompt = std::max<std::uint64_t>(1, std::min(kDefaultItemsPerPrompt, max_model_len / P));
  p.items = std::max<std::uint64_t>(1, std::min(p.budget_tokens / P, checked_mul(max_num_seqs, per_prompt)));
  const double n = static_cast<double>(p.items), ab = static_cast<double>(compute_bytes);
  const double pixels = n * static_cast<double>(a.mm_pixel_values_per_item) * ab;
  const std::uint64_t width = a.mm_embedding_width > 0 ? a.mm_embedding_width : a.hidden_size;
  const double embeds = n * static_cast<double>(P) * static_cast<double>(width) * ab;
  p.held_bytes = pixels + embeds;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "encoder profiling keeps N=%llu items = min(budget %llu // %llu tokens, %llu seqs x %llu per prompt) "
                "x (%llu pixel values + %llu x width %llu) x a=%llu B = %.3f GiB pixels + %.3f GiB embeddings",
                static_cast<unsigned long long>(p.items), static_cast<unsigned long long>(p.budget_tokens),
                static_cast<unsigned long long>(P), static_cast<unsigned long long>(max_num_seqs),
                static_cast<unsigned long long>(per_prompt),
                static_cast<unsigned long long>(a.mm_pixel_values_per_item), static_cast<unsigned long long>(P),
                static_cast<unsigned long long>(width), static_cast<unsigned long long>(compute_bytes),
                pixels / static_cast<double>(kGiB), embeds / static_cast<double>(kGiB));
  p.explain = buf;
  return p;
}

}  // namespace vramplan::memory
