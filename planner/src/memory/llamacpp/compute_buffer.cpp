// llama.cpp compute buffer: the worst-case graph of one micro-batch (graph_reserve with
// n_tokens = n_outputs = n_ubatch), packed by ggml-alloc. Terms and their derivation:
// docs/llamacpp.md#compute-buffer.
#include <algorithm>
#include <cstdio>
#include <string>

#include "vramplan/core/bytes.hpp"
#include "vramplan/memory/llamacpp.hpp"

namespace vramplan::llamacpp {
namespace {

constexpr std::uint64_t kF32 = 4;  // graph intermediates, logits and the KQ mask are f32
constexpr std::uint64_t kF16 = 2;

std::string mib(std::uint64_t bytes) {
  const double v = static_cast<double>(bytes) / (1024.0 * 1024.0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", v);
  return buf;
}

bool any_moe(const ModelArch& a) {
  if (a.num_experts == 0) return false;
  if (a.layer_is_moe.empty()) return true;
  return std::any_of(a.layer_is_moe.begin(), a.layer_is_moe.end(), [](bool b) { return b; });
}

}  // namespace

ComputeEstimate compute_buffer(const ModelArch& a, const Context& c,
                               const std::vector<KvCache>& caches, Device device) {
  const std::uint64_t ub = c.n_ubatch;
  const bool mla = a.kv_lora_rank > 0;
  ComputeEstimate e;

  // Output phase: fp32 logits of every token of the micro-batch, plus the residual stream and
  // the normed hidden state feeding lm_head; MoE models also hold the gate and up activations of
  // the selected experts ([n_ff_exp, n_expert_used, n_ubatch] f32 each).
  e.logits = checked_mul(checked_mul(a.vocab_size, ub), kF32, "logits");
  const std::uint64_t hidden = checked_mul(checked_mul(a.hidden_size, ub), kF32);
  const std::uint64_t moe =
      any_moe(a) ? 2 * checked_mul(checked_mul(a.experts_per_token, a.moe_intermediate_size),
                                   checked_mul(ub, kF32))
                 : 0;
  e.output_phase = checked_add(checked_add(e.logits, 2 * hidden), moe);
  e.explain = "output phase = logits " + mib(e.logits) + " (n_vocab " + std::to_string(a.vocab_size) +
              " x n_ubatch " + std::to_string(ub) + " x 4 B) + 2 hidden " + mib(2 * hidden) +
              (moe ? " + MoE expert activations " + mib(moe) : std::string()) + " = " +
              mib(e.output_phase);

  // Attention phase (flash attention off): KQ = n_head x n_kv x n_ubatch f32 for the largest
  // cache, the f32 KQ masks of every cache (graph inputs, live through all layers), MLA's
  // contiguous copy of the transposed latent V, and the per-token working set of the block:
  // residual + normed input, Q, K, V, KQV and its merged copy.
  std::uint64_t mask = 0, kq = 0, max_cells = 0;
  for (const auto& kv : caches) {
    if (kv.layers.empty()) continue;
    mask = checked_add(mask, checked_mul(checked_mul(kv.cells, ub), kF32));
    kq = std::max(kq, checked_mul(checked_mul(checked_mul(a.num_heads, kv.cells), ub), kF32));
    max_cells = std::max(max_cells, kv.cells);
  }
  if (!c.flash_attn) {
    const std::uint64_t dk = mla ? a.kv_lora_rank + a.qk_rope_head_dim : a.head_dim;
    const std::uint64_t dv = mla ? a.kv_lora_rank : (a.v_head_dim ? a.v_head_dim : a.head_dim);
    const std::uint64_t n_kv_heads = mla ? 1 : a.num_kv_heads;
    const std::uint64_t per_token = 2 * a.hidden_size + a.num_heads * dk +
                                    n_kv_heads * (dk + dv) + 2 * a.num_heads * dv;
    const std::uint64_t work = checked_mul(checked_mul(per_token, ub), kF32);
    const std::uint64_t vcont = mla ? checked_mul(checked_mul(max_cells, a.kv_lora_rank), kF16) : 0;
    e.attention_phase = kq + mask + vcont + work;
    e.explain += "; attention phase (FA off) = KQ " + mib(kq) + " + masks " + mib(mask) +
                 (vcont ? " + latent V copy " + mib(vcont) : std::string()) + " + working set " +
                 mib(work) + " = " + mib(e.attention_phase);
  }
  e.bytes = std::max(e.output_phase, e.attention_phase);
  // CUDA: the graph inputs (token embeddings gathered on the host, KQ masks) live in a
  // CUDA_Host buffer.
  if (device == Device::Cuda) e.host_bytes = hidden + mask;
  return e;
}

std::uint64_t output_buffer_bytes(const ModelArch& a, const Context& c) {
  // llama_context reserves logits for n_seq_max outputs at creation (output_reserve).
  return checked_mul(checked_mul(a.vocab_size, c.n_seq_max), kF32, "output buffer");
}

}  // namespace vramplan::llamacpp
