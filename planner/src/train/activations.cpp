// Saved activations per GPU (train/activations.hpp has the per-token accounting and its sources).
#include "vramplan/train/activations.hpp"

#include <algorithm>
#include <array>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "train/component_part.hpp"

namespace vramplan::train {
namespace {

using memory::Component;
using memory::grouped;

// One layer's saved bytes per token, split by what parallelism divides them.
struct LayerTerms {
  std::uint64_t sequence_sized = 0;  //!< norms, linear inputs of h width: divided by TP only with SP
  std::uint64_t tp_sized = 0;        //!< inside attention / MLP: divided by TP
  std::uint64_t quadratic = 0;       //!< eager attention's s-proportional terms (inside tp_sized)
  std::uint64_t adapter = 0;
};

LayerTerms layer_terms(const ActivationInput& in, std::size_t layer) {
  const auto& a = in.arch;
  const std::uint64_t b = in.act_bytes, h = a.hidden_size;
  const std::uint64_t rb = in.residual_bytes ? in.residual_bytes : b;  // fp32 hidden states (activations.hpp)
  // Per layer: Gemma 4's full layers have their own head size and KV-head count.
  const std::uint64_t d = a.layer_head_dim(layer);
  const std::uint64_t q = a.num_heads * d, kv = a.layer_kv_heads(layer) * d;
  LayerTerms t;
  // RMSNorm: fp32 input + rstd + the normalised output (fp32 with fp32 hidden states); LayerNorm:
  // its input in the hidden states' dtype + mean and rstd (activations.hpp).
  const std::uint64_t norm = in.layer_norm ? rb * h + 8 : 4 * h + 4 + rb * h;
  t.sequence_sized = in.norms_per_layer * norm + (in.saved.qkv ? b * h : 0) + (in.saved.gate_up ? b * h : 0);
  if (in.attention == AttentionImpl::Flash) {
    t.tp_sized = b * (2 * q + 2 * kv) + 4 * a.num_heads;
  } else {
    t.quadratic = checked_mul(a.num_heads * in.seq_len / in.parallel.cp, 4 + b, "eager attention scores");
    t.tp_sized = b * (q + 2 * kv) + b * q + t.quadratic;
  }
  if (in.saved.o) t.tp_sized += b * q;
  // q / k RMSNorms (activations.hpp): fp32 input + an fp32 rstd per row + the normalised output.
  if (in.qk_norm_width > 0) {
    // Over head_dim: one row per head (a layer with its own head size too); else rows of the width.
    const bool per_head = in.qk_norm_width == a.head_dim;
    const std::uint64_t rows_q = per_head ? a.num_heads : ceil_div(q, in.qk_norm_width);
    const std::uint64_t rows_k = per_head ? a.layer_kv_heads(layer) : ceil_div(kv, in.qk_norm_width);
    t.tp_sized += (4 + rb) * (q + kv) + 4 * (rows_q + rows_k);
  }

  const bool moe = a.num_experts > 0 && (a.layer_is_moe.empty() || (layer < a.layer_is_moe.size() && a.layer_is_moe[layer]));
  auto mlp = [&](std::uint64_t inter) {
    return (in.gated_mlp ? 3 * rb * inter : rb * inter) + (in.saved.down ? b * inter : 0);
  };
  if (moe) {
    const std::uint64_t k = a.experts_per_token;
    t.tp_sized += mlp(a.moe_intermediate_size * k) + b * h * k + 4 * a.num_experts;  // + fp32 router logits
    if (a.num_shared_experts > 0) {
      const auto shared = a.shared_expert_intermediate_size ? a.shared_expert_intermediate_size
                                                            : a.moe_intermediate_size * a.num_shared_experts;
      t.tp_sized += mlp(shared);
    }
  } else {
    t.tp_sized += mlp(a.intermediate_size);
  }
  t.adapter = in.adapter_bytes_per_token_layer;
  return t;
}

// torchtitan's op-level policy (activations.hpp): block input + every other mm output + SDPA's.
std::uint64_t op_level_saved_per_token(const ActivationInput& in, std::uint64_t tp, std::uint64_t sp) {
  const auto& a = in.arch;
  if (!in.gated_mlp || a.num_experts > 0 || in.attention != AttentionImpl::Flash)
    throw Error(ErrorKind::Usage, "selective-op recomputation is modelled for dense SwiGLU models with flash attention only");
  const std::uint64_t b = in.act_bytes, h = a.hidden_size;
  const std::uint64_t q = a.num_heads * a.head_dim, kv = a.num_kv_heads * a.head_dim;
  return ceil_div(b * h, sp) + ceil_div(b * (q + kv + a.intermediate_size + h + q) + 4 * a.num_heads, tp);
}

std::uint64_t saved_per_token(const LayerTerms& t, Recompute r, std::uint64_t tp, std::uint64_t sp) {
  const std::uint64_t inner = r == Recompute::Selective ? t.tp_sized - t.quadratic : t.tp_sized;
  return ceil_div(t.sequence_sized, sp) + ceil_div(inner, tp) + t.adapter;
}

constexpr std::array<std::pair<std::string_view, Recompute>, 5> kRecompute{{
    {"none", Recompute::None}, {"selective", Recompute::Selective}, {"full", Recompute::Full},
    {"off", Recompute::None}, {"on", Recompute::Full}}};
constexpr std::array<std::pair<std::string_view, AttentionImpl>, 4> kAttention{{
    {"flash", AttentionImpl::Flash}, {"eager", AttentionImpl::Eager}, {"sdpa", AttentionImpl::Flash},
    {"flash-attention-2", AttentionImpl::Flash}}};

}  // namespace

Recompute recompute_from_name(std::string_view name) {
  for (const auto& [n, r] : kRecompute)
    if (n == name) return r;
  throw Error(ErrorKind::Usage, "unknown recomputation '" + std::string(name) + "' (known: none, selective, full)");
}
AttentionImpl attention_from_name(std::string_view name) {
  for (const auto& [n, a] : kAttention)
    if (n == name) return a;
  throw Error(ErrorKind::Usage, "unknown attention implementation '" + std::string(name) + "' (known: flash, sdpa, eager)");
}
std::string_view recompute_name(Recompute r) {
  return r == Recompute::None ? "none" : r == Recompute::Selective ? "selective" : "full";
}
std::string_view attention_name(AttentionImpl a) { return a == AttentionImpl::Flash ? "flash" : "eager"; }

LossImpl loss_from_name(std::string_view name) {
  if (name == "fp32") return LossImpl::Fp32;
  if (name == "bf16") return LossImpl::Bf16;
  if (name == "hf-legacy") return LossImpl::HfLegacy;
  throw Error(ErrorKind::Usage, "unknown loss '" + std::string(name) + "' (known: fp32, bf16, hf-legacy)");
}
std::string_view loss_name(LossImpl l) {
  return l == LossImpl::Fp32 ? "fp32" : l == LossImpl::Bf16 ? "bf16" : "hf-legacy";
}

bool has_gated_mlp(const ModelSpec& spec) {
  return std::any_of(spec.tensors.begin(), spec.tensors.end(), [](const TensorInfo& t) {
    return t.role == TensorRole::FfnGate || t.role == TensorRole::FfnGateUp || t.role == TensorRole::FfnGateExps ||
           t.role == TensorRole::FfnGateUpExps;
  });
}

void norm_layout(const ModelSpec& spec, ActivationInput& in) {
  std::uint64_t norms = 0;
  bool bias = false;
  for (const auto& t : spec.tensors) {
    if (!t.layer || *t.layer != 0) continue;
    if (!t.is_bias && !t.shape.empty() && (t.role == TensorRole::AttnQNorm || t.role == TensorRole::AttnKNorm))
      in.qk_norm_width = t.shape.back();  // head_dim ({d} or {heads, d}), or the whole projection
    if (t.role != TensorRole::AttnNorm && t.role != TensorRole::FfnNorm && t.role != TensorRole::AttnPostNorm &&
        t.role != TensorRole::FfnPostNorm)
      continue;
    if (t.is_bias) bias = true;
    else ++norms;
  }
  in.norms_per_layer = norms > 0 ? norms : 2;
  in.layer_norm = bias;
}

Activations activations(const ActivationInput& in) {
  const auto& par = in.parallel;
  if (in.micro_batch == 0 || in.seq_len == 0) throw Error(ErrorKind::Usage, "micro-batch and sequence length must be > 0");
  if (in.seq_len % par.cp != 0)
    throw Error(ErrorKind::Usage, "sequence length " + std::to_string(in.seq_len) + " is not divisible by CP " + std::to_string(par.cp));
  const std::uint64_t L = in.arch.num_layers, tp = par.tp, pp = par.pp;
  const std::uint64_t sp = in.sequence_parallel ? tp : 1;
  const std::uint64_t tokens = checked_mul(in.micro_batch, in.seq_len / par.cp, "tokens");
  const std::uint64_t stage_layers = ceil_div(L, pp);

  Activations out;
  std::uint64_t stage0 = 0, last_stage = 0, widest_layer = 0, widest_scores = 0;
  for (std::size_t l = 0; l < L; ++l) {
    const auto t = layer_terms(in, l);
    if (l == 0) out.per_token_layer = t.sequence_sized + t.tp_sized + t.adapter;
    const bool op_level = in.recompute == Recompute::Selective && in.selective_op;
    const std::uint64_t block_input = in.residual_bytes ? in.residual_bytes : in.act_bytes;
    const std::uint64_t kept = in.recompute == Recompute::Full ? ceil_div(block_input * in.arch.hidden_size, sp)
                               : op_level                      ? op_level_saved_per_token(in, tp, sp)
                                                               : saved_per_token(t, in.recompute, tp, sp);
    widest_layer = std::max(widest_layer, saved_per_token(t, Recompute::None, tp, sp));
    widest_scores = std::max(widest_scores, ceil_div(t.quadratic, tp));
    if (l < stage_layers) stage0 = checked_add(stage0, kept);
    if (l >= L - stage_layers) last_stage = checked_add(last_stage, kept);
  }
  // 1F1B: the first stage holds min(PP, micro-batches per step) micro-batches' activations
  // (activations.hpp: Megatron's warmup of min(PP - 1, m) forwards, + 1 in the steady state), the
  // last stage one.
  const std::uint64_t in_flight = std::min(pp, std::max<std::uint64_t>(in.micro_batches, 1));
  const std::uint64_t first_bytes = checked_mul(checked_mul(stage0, tokens), in_flight);
  const std::uint64_t last_bytes = checked_mul(last_stage, tokens);

  // Logits and loss on the last stage. The logits (returned by the model, so alive) and the
  // log-softmax output cross_entropy saves for backward are kept for every token, chunked or not;
  // chunking (torchtune CEWithChunkedOutputLoss, LitGPT chunked_cross_entropy) only bounds the
  // transient: one chunk's fp32 upcast in forward, its gradient in backward.
  const std::uint64_t vocab = ceil_div(in.arch.vocab_size, tp);  // vocabulary-parallel output
  const std::uint64_t chunk_tokens = ceil_div(tokens, in.loss_chunks);
  const std::uint64_t loss_b = in.loss == LossImpl::Bf16 ? in.act_bytes : 4;
  const std::uint64_t kept = in.loss == LossImpl::HfLegacy ? 12 : in.act_bytes + loss_b;
  const std::uint64_t logits = checked_add(checked_mul(checked_mul(tokens, vocab), kept),
                                           checked_mul(checked_mul(chunk_tokens, vocab), loss_b));
  const std::string kept_text = in.loss == LossImpl::HfLegacy
                                    ? "12 B: fp32 logits, shifted fp32 copy, log-softmax"
                                    : std::to_string(in.act_bytes) + " B logits + " + std::to_string(loss_b) + " B log-softmax";
  const std::string logits_explain =
      grouped(tokens) + " tokens x " + grouped(vocab) + " vocab x (" + kept_text + ") + " + grouped(chunk_tokens) + " tokens" +
      (in.loss_chunks > 1 ? " (one chunk)" : "") + " x vocab x " + std::to_string(loss_b) +
      " B (upcast / gradient)";
  const bool show_first = pp > 1 && first_bytes > checked_add(last_bytes, logits);

  const bool op_level = in.recompute == Recompute::Selective && in.selective_op;
  const std::string per_layer_kept = in.recompute == Recompute::Full ? "block input only (full recomputation)"
                                     : op_level ? "op-level selective recomputation (block input, every other mm output, SDPA output)"
                                                : std::string(recompute_name(in.recompute)) + " recomputation";
  if (show_first) {
    out.parts.push_back(part("activations", first_bytes,
                             std::to_string(stage_layers) + " layers x " + grouped(tokens) + " tokens x " +
                                 std::to_string(in_flight) + " micro-batches in flight (1F1B, first stage: min(PP " +
                                 std::to_string(pp) + ", " + std::to_string(in.micro_batches) + " per step)), " + per_layer_kept +
                                 " = " + grouped(stage0) + " B per token over the stage"));
  } else {
    out.parts.push_back(part("activations", last_bytes,
                             std::to_string(pp > 1 ? stage_layers : L) + " layers x " + grouped(tokens) + " tokens, " +
                                 per_layer_kept + " = " + grouped(last_stage) + " B per token over the layers"));
    out.parts.push_back(part("logits_and_loss", logits, logits_explain));
  }
  if (op_level) {
    const std::uint64_t op_kept = op_level_saved_per_token(in, tp, sp);
    const std::uint64_t rest = widest_layer > op_kept ? widest_layer - op_kept : 0;
    out.parts.push_back(part("recomputed_block", checked_mul(rest, tokens),
                             "the rest of one block rematerialised in backward: " + grouped(widest_layer) + " - " +
                                 grouped(op_kept) + " B per token x " + grouped(tokens) + " tokens"));
  }
  // Selective recomputation with eager attention: backward re-runs one layer's attention core, so
  // its s x s softmax output (fp32) and bf16 cast are materialised again while that layer's
  // backward runs (Korthikanti §4.2: the core is recomputed, not dropped; transformers
  // eager_attention_forward: softmax(dtype=float32).to(query.dtype), both kept for backward).
  if (in.recompute == Recompute::Selective && !op_level && in.attention == AttentionImpl::Eager && widest_scores > 0)
    out.parts.push_back(part("recomputed_attention", checked_mul(widest_scores, tokens),
                             "one layer's attention scores rematerialised in backward: " + grouped(widest_scores) +
                                 " B per token (heads x s x (4 B fp32 softmax + " + std::to_string(in.act_bytes) +
                                 " B cast)) x " + grouped(tokens) + " tokens"));
  if (in.recompute == Recompute::Full)
    out.parts.push_back(part("recomputed_block", checked_mul(widest_layer, tokens),
                             "one block rematerialised in backward: " + grouped(widest_layer) + " B per token x " +
                                 grouped(tokens) + " tokens"));
  return out;
}

}  // namespace vramplan::train
