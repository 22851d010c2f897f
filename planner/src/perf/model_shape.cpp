// PerfModelShape from a ModelSpec; the rules are in model_shape.hpp's file comment.
#include "vramplan/perf/model_shape.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "vramplan/core/error.hpp"
#include "vramplan/model/dsa_cache_rows.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan::perf {
namespace {

enum class Streamed { Always, Replicated, ReplicatedAttention, Gathered, RoutedExpert, NotInDecode };

Streamed how_streamed(TensorRole role) {
  switch (role) {
    case TensorRole::TokenEmbedding:
    case TensorRole::PositionEmbedding:
      return Streamed::Gathered;
    case TensorRole::Mtp:
    case TensorRole::Vision:
    case TensorRole::Audio:
      return Streamed::NotInDecode;
    // DeepSeek sparse attention's indexer is not tensor-parallel: its wq_b, wk and weights_proj
    // are ReplicatedLinear in vLLM (v0.11.0 deepseek_v2.py Indexer, "no tensor parallel, just
    // replicated") and SGLang (layers/attention/nsa/nsa_indexer.py), so every rank reads them all.
    case TensorRole::IndexerQB:
    case TensorRole::IndexerK:
    case TensorRole::IndexerKNorm:
    case TensorRole::IndexerProj:
    // A latent MoE's projections are ReplicatedLinear too (vLLM nemotron_h.py, SGLang
    // models/nemotron_h.py NemotronHMoE fc1_latent_proj / fc2_latent_proj).
    case TensorRole::FfnLatentDown:
    case TensorRole::FfnLatentUp:
      return Streamed::Replicated;
    // MLA's down-projections (q_a_proj and kv_a_proj_with_mqa, fused or not) are ReplicatedLinear
    // in both engines (vLLM v0.11.0 deepseek_v2.py: fused_qkv_a_proj disable_tp=True; SGLang
    // 0.5.6.post1 models/deepseek_v2.py DeepseekV2AttentionMLA), as the memory plan has them.
    case TensorRole::AttnQA:
    case TensorRole::AttnKVAMqa:
      return Streamed::ReplicatedAttention;
    default:
      return is_routed_expert_role(role) ? Streamed::RoutedExpert : Streamed::Always;
  }
}

// The attention projections split over the tensor-parallel ranks: what SGLang's DP attention
// splits over a rank's attention_tp GPUs instead (models/deepseek_v2.py DeepseekV2AttentionMLA,
// qwen3_moe.py Qwen3MoeAttention: tp_size = attn_tp_size). MLA's replicated down-projections
// are attention too (Streamed::ReplicatedAttention).
bool is_attention_projection(TensorRole role) {
  using R = TensorRole;
  switch (role) {
    case R::AttnQ: case R::AttnK: case R::AttnV: case R::AttnQKV: case R::AttnOutput:
    case R::AttnQB: case R::AttnKVB:
      return true;
    default:
      return false;
  }
}

// The GEMM launch a weight tensor belongs to in a decoder layer, as SGLang and vLLM fuse them
// (sglang python/sglang/srt/models/deepseek_v2.py DeepseekV2AttentionMLA: q_a_proj and
// kv_a_proj_with_mqa run as one fused_qkv_a_proj_with_mqa GEMM; QKVParallelLinear and
// MergedColumnParallelLinear fuse q/k/v and gate/up in every model file; the routed experts run
// as two grouped GEMMs, fused_moe's w13 and w2). kv_b_proj is not a GEMM launch of the absorbed
// MLA decode (its halves w_kc / w_vc are batched matmuls), and the router, norms and embeddings
// are not block-quantised. -1 = not a block-scaled GEMM launch.
int gemm_launch(TensorRole role) {
  using R = TensorRole;
  switch (role) {
    case R::AttnQ: case R::AttnK: case R::AttnV: case R::AttnQKV: return 0;
    case R::AttnOutput: return 1;
    case R::AttnQA: case R::AttnKVAMqa: return 2;
    case R::AttnQB: return 3;
    case R::FfnGate: case R::FfnUp: case R::FfnGateUp: return 4;
    case R::FfnDown: return 5;
    case R::FfnGateShexp: case R::FfnUpShexp: return 6;
    case R::FfnDownShexp: return 7;
    case R::FfnGateExps: case R::FfnUpExps: case R::FfnGateUpExps: return 8;
    case R::FfnDownExps: return 9;
    case R::IndexerQB: return 10;  // DeepSeek sparse attention's indexer: wq_b and wk run apart
    case R::IndexerK: return 11;   // (vLLM deepseek_v2.py Indexer.forward, SGLang nsa_indexer.py)
    case R::FfnLatentDown: return 12;  // a latent MoE's projections, before and after the experts
    case R::FfnLatentUp: return 13;
    default: return -1;
  }
}
// GEMM launches per forward of the whole model whose weights are block-scaled FP8: the distinct
// launches of each decoder layer with at least one such tensor.
double block_fp8_launches(const ModelSpec& spec, const std::vector<bool>& block_fp8) {
  if (block_fp8.empty()) return 0;
  if (block_fp8.size() != spec.tensors.size())
    throw_internal("performance model: block-scaled FP8 flags do not match the tensors");
  std::set<std::pair<int, int>> launches;  // (layer, launch)
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorInfo& t = spec.tensors[i];
    const int launch = gemm_launch(t.role);
    if (!block_fp8[i] || launch < 0 || !t.layer || t.is_bias) continue;
    if (static_cast<std::uint64_t>(*t.layer) >= spec.arch.num_layers) continue;  // MTP / draft layers
    launches.emplace(*t.layer, launch);
  }
  return static_cast<double>(launches.size());
}

// Counts `g` into the shape's group that attends the same way, or opens a group for it.
void merge_group(PerfModelShape& shape, AttentionGroup g) {
  for (AttentionGroup& have : shape.attention) {
    if (have.q_heads == g.q_heads && have.qk_dim == g.qk_dim && have.v_dim == g.v_dim &&
        have.kv_bytes_per_token == g.kv_bytes_per_token && have.window == g.window &&
        have.decode_kv_reads == g.decode_kv_reads && have.fixed_row == g.fixed_row &&
        have.per_query_reads == g.per_query_reads) {
      have.layers += 1;
      return;
    }
  }
  g.layers = 1;
  shape.attention.push_back(g);
}

// DeepSeek sparse attention's lightning indexer (vLLM v0.11.0 deepseek_v2.py Indexer, SGLang
// layers/attention/nsa/nsa_indexer.py Indexer): index_n_heads heads of index_head_dim score
// every cached indexer key of the sequence (fp8_paged_mqa_logits: a dot product per head and
// key, no value sum). Its projections are ReplicatedLinear, so every TP rank runs all heads, and
// its key rows keep the size the format fixes whatever the KV dtype.
AttentionGroup indexer_group(const ModelArch& arch) {
  AttentionGroup g;
  g.q_heads = static_cast<double>(arch.index_n_heads);
  g.qk_dim = static_cast<double>(arch.index_head_dim);
  g.v_dim = 0;
  g.kv_bytes_per_token = static_cast<double>(dsa_indexer_row(arch));
  g.fixed_row = true;
  g.per_query_reads = true;
  return g;
}

// One attention group per distinct way of attending, whole model (divided by pp later).
void add_layer(PerfModelShape& shape, const ModelArch& arch, std::size_t layer, LayerAttention kind,
               const ShapeOptions& opt) {
  AttentionGroup g;
  const double tp = opt.attention_tp ? opt.attention_tp : opt.tp;  // a DP-attention rank's heads
  g.q_heads = std::ceil(static_cast<double>(arch.num_heads) / tp);
  if (kind == LayerAttention::Mla) {
    // Absorbed MLA: every head scores against the cached latent + RoPE key and sums the latent.
    const double latent = static_cast<double>(arch.kv_lora_rank);
    g.qk_dim = latent + static_cast<double>(arch.qk_rope_head_dim);
    g.v_dim = latent;
    g.kv_bytes_per_token = g.qk_dim * opt.kv_element_bytes;  // replicated on every TP rank
    if (arch.index_topk > 0) {
      // DeepSeek sparse attention: each query reads only the index_topk latent rows its indexer
      // picks (FlashMLA sparse decode / prefill over topk_indices), i.e. min(context, index_topk)
      // rows as a window does; an fp8 cache stores them as fp8_ds_mla rows (an engine that keeps
      // plain fp8 rows says so through the memory plan's bytes per token, use_planned_kv_bytes).
      g.window = arch.index_topk;
      g.per_query_reads = true;
      if (opt.kv_element_bytes < 2) g.kv_bytes_per_token = static_cast<double>(fp8_ds_mla_row(arch));
      if (layer < arch.layer_has_indexer.size() && arch.layer_has_indexer[layer])
        merge_group(shape, indexer_group(arch));
    }
  } else {
    // Per layer: Gemma 4's full layers have their own head size and KV-head count.
    const double d_k = static_cast<double>(arch.layer_head_dim(layer));
    const double d_v = static_cast<double>(arch.layer_v_head_dim(layer));
    const double kv_heads = std::max(1.0, std::floor(static_cast<double>(arch.layer_kv_heads(layer)) / tp));
    g.qk_dim = d_k;
    g.v_dim = d_v;
    g.kv_bytes_per_token = kv_heads * (d_k + d_v) * opt.kv_element_bytes;
    if (opt.decode_kv_read_per_query_head) g.decode_kv_reads = std::max(1.0, g.q_heads / kv_heads);
    if (kind == LayerAttention::Sliding) g.window = arch.sliding_window;
    if (kind == LayerAttention::Chunked) g.window = arch.attention_chunk_size;
  }
  merge_group(shape, g);
}

// Scales every group's KV bytes per token so that their sum over the GPU's layers is the memory
// plan's figure: the one KV size both models use. The plan may differ from the even per-stage split
// here (its worst pipeline stage, engine-specific head replication, quantized KV scales).
void use_planned_kv_bytes(PerfModelShape& shape, double planned) {
  double scaled = 0, fixed = 0;
  for (const AttentionGroup& g : shape.attention) (g.fixed_row ? fixed : scaled) += g.layers * g.kv_bytes_per_token;
  if (scaled <= 0 || planned <= fixed) return;  // nothing to scale (recurrent state is not KV)
  const double ratio = (planned - fixed) / scaled;
  for (AttentionGroup& g : shape.attention)
    if (!g.fixed_row) g.kv_bytes_per_token *= ratio;
  if (std::fabs(ratio - 1) > 0.005) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "KV bytes per token per GPU taken from the memory plan (%.0f B; the config alone gives %.0f B)",
                  planned, scaled + fixed);
    shape.notes.push_back(buf);
  }
}

// Sums the counted kernels over the model's layers: the attention part by each layer's kind, the
// MLP part by whether the layer has routed experts. A layer kind the count lacks leaves the model
// uncounted (0), with a note.
void count_kernels(PerfModelShape& shape, const ModelArch& arch, const std::set<int>& moe_layers,
                   const LayerKernelCounts& c, double pp) {
  double kernels = 0, launches = 0;
  for (std::uint64_t l = 0; l < arch.num_layers; ++l) {
    const LayerAttention kind = l < arch.layer_attention.size() ? arch.layer_attention[l] : LayerAttention::Full;
    const auto it = c.attention.find(layer_attention_name(kind));
    const auto launched = c.launches.attention.find(layer_attention_name(kind));
    if (it == c.attention.end() || launched == c.launches.attention.end()) {
      shape.notes.push_back("kernels not counted for " + std::string(layer_attention_name(kind)) +
                            " layers of this architecture: the per-layer overhead terms apply");
      return;
    }
    const bool moe = moe_layers.contains(static_cast<int>(l));
    kernels += it->second + (moe ? c.moe_mlp : c.dense_mlp);
    launches += launched->second + (moe ? c.launches.moe_mlp : c.launches.dense_mlp);
  }
  shape.decode_kernels = kernels / pp;
  shape.prompt_launches = launches / pp;
  shape.extra_allreduces = c.extra_allreduces * static_cast<double>(arch.num_layers) / pp;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "kernels counted in the engine's source (%s, %s weights; data/perf_defaults.json kernel_counts): "
                "%.0f per decode step, %.0f launched per step with prompt tokens, per GPU",
                arch.architecture.c_str(), c.weights.c_str(), shape.decode_kernels, shape.prompt_launches);
  shape.notes.push_back(buf);
}

}  // namespace

PerfModelShape shape_from_model(const ModelSpec& spec, std::span<const std::uint64_t> tensor_bytes,
                                const ShapeOptions& opt) {
  const ModelArch& arch = spec.arch;
  if (tensor_bytes.size() != spec.tensors.size())
    throw_usage("performance model: " + std::to_string(tensor_bytes.size()) +
                " tensor sizes for " + std::to_string(spec.tensors.size()) + " tensors of " + spec.id);
  if (arch.num_layers == 0 || arch.hidden_size == 0 || arch.num_heads == 0)
    throw_usage("performance model: " + spec.id + " lacks layers, hidden size or heads");
  if (opt.tp == 0 || opt.pp == 0 || opt.ep == 0)
    throw_usage("performance model: tp, pp and ep must be >= 1");
  if (opt.pp > arch.num_layers)
    throw_usage("performance model: " + std::to_string(opt.pp) + " pipeline stages for " +
                std::to_string(arch.num_layers) + " layers");
  if (opt.ep > 1 && opt.tp > opt.ep && opt.tp % opt.ep != 0)
    throw_usage("performance model: ep " + std::to_string(opt.ep) + " does not divide tp " + std::to_string(opt.tp));
  if (opt.attention_tp && opt.tp % opt.attention_tp != 0)
    throw_usage("performance model: attention tp " + std::to_string(opt.attention_tp) + " does not divide tp " + std::to_string(opt.tp));
  if (opt.dp_attention_ranks == 0) throw_usage("performance model: DP attention needs at least one rank");
  if (opt.ep > 1 && arch.num_experts % opt.ep != 0)
    throw_usage("performance model: " + std::to_string(arch.num_experts) +
                " experts do not split evenly over ep " + std::to_string(opt.ep));

  bool has_output = false;
  for (const TensorInfo& t : spec.tensors) has_output = has_output || t.role == TensorRole::Output;
  // A tied embedding with no separate lm_head is read in full by the output projection.
  const bool embedding_is_head = arch.tied_embeddings && !has_output;

  double dense_bytes = 0, dense_params = 0, routed_bytes = 0, routed_params = 0;
  double replicated_bytes = 0, replicated_params = 0;  // read and multiplied in full on every rank
  double attn_bytes = 0, attn_params = 0, head_bytes = 0, head_params = 0;  // over attention_tp / head_tp
  double attn_replicated_bytes = 0, attn_replicated_params = 0;                // whole on every rank
  double tied_head_params = 0;  // a tied embedding used as the output head (split over tp with the dense part)
  std::set<int> moe_layers;
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorInfo& t = spec.tensors[i];
    const double bytes = static_cast<double>(tensor_bytes[i]);
    const double params = static_cast<double>(t.elements());
    switch (how_streamed(t.role)) {
      case Streamed::Gathered:
        if (t.role == TensorRole::TokenEmbedding && embedding_is_head) {
          dense_bytes += bytes;
          dense_params += params;
          tied_head_params += params;
        }
        break;
      case Streamed::NotInDecode:
        break;
      case Streamed::RoutedExpert:
        routed_bytes += bytes;
        routed_params += params;
        moe_layers.insert(t.layer.value_or(-1));
        break;
      case Streamed::Always:
        if (is_attention_projection(t.role)) {
          attn_bytes += bytes;
          attn_params += params;
        } else if (t.role == TensorRole::Output) {
          head_bytes += bytes;
          head_params += params;
        } else {
          dense_bytes += bytes;
          dense_params += params;
        }
        break;
      case Streamed::Replicated:
        replicated_bytes += bytes;
        replicated_params += params;
        break;
      case Streamed::ReplicatedAttention:
        attn_replicated_bytes += bytes;
        attn_replicated_params += params;
        break;
    }
  }

  PerfModelShape shape;
  const double tp = opt.tp, pp = opt.pp;
  shape.tp = opt.tp;
  shape.pp = opt.pp;
  shape.hidden = static_cast<double>(arch.hidden_size);
  shape.activation_bytes = opt.activation_bytes;
  shape.layers = static_cast<double>(arch.num_layers) / pp;
  // Nemotron-H's layers are one block each (a Mamba-2 mixer, attention, an MLP or experts), which
  // vLLM and SGLang reduce once, at the block's output (nemotron_h.py: out_proj / o_proj /
  // down_proj RowParallelLinear, NemotronHMoE.forward's all-reduce).
  if (arch.family == "nemotron_h") shape.allreduces_per_layer = 1;
  shape.block_fp8_gemms = block_fp8_launches(spec, opt.block_scaled_fp8) / pp;
  shape.attention_tp = opt.attention_tp ? opt.attention_tp : opt.tp;
  shape.dp_attention_ranks = opt.dp_attention_ranks;
  const double attn_tp = shape.attention_tp, head_tp = opt.head_tp ? opt.head_tp : tp;
  shape.attention_weight_bytes = attn_bytes / (attn_tp * pp) + attn_replicated_bytes / pp;
  shape.attention_params = attn_params / (attn_tp * pp) + attn_replicated_params / pp;
  shape.dense_weight_bytes = dense_bytes / (tp * pp) + shape.attention_weight_bytes + head_bytes / (head_tp * pp) + replicated_bytes / pp;
  double active = dense_params;
  if (routed_bytes > 0) {
    if (arch.num_experts == 0 || arch.experts_per_token == 0)
      throw_usage("performance model: " + spec.id + " has routed-expert tensors but no expert count");
    const double experts = static_cast<double>(arch.num_experts);
    const double layers = static_cast<double>(moe_layers.size());
    const double one_expert = routed_bytes / (layers * experts);  // one expert, one layer
    shape.num_experts = experts;
    shape.experts_per_token = static_cast<double>(arch.experts_per_token);
    shape.moe_layers = layers / pp;
    // The GPUs the experts span: tp, or under vLLM data parallelism D x tp (sliced: expert_tp;
    // whole: ep).
    const double expert_group = std::max({tp, static_cast<double>(opt.expert_tp), static_cast<double>(opt.ep)});
    if (opt.ep > 1) {
      // SGLang FusedMoE.__init__: num_experts / ep whole experts a rank, each sliced over the
      // remaining tp / ep ranks (moe_tp_size); vLLM's EP spans tp x dp ranks, experts whole.
      shape.local_experts = experts / opt.ep;
      shape.expert_ranks = opt.ep;
      shape.expert_bytes = opt.tp > opt.ep ? one_expert / (opt.tp / opt.ep) : one_expert;
    } else {
      shape.local_experts = experts;
      shape.expert_bytes = one_expert / expert_group;
    }
    shape.routed_active_params = routed_params * shape.experts_per_token / experts / (expert_group * pp);
  }
  // FLOPs spread evenly over the tp x pp GPUs (with ep > 1 on average over the ranks).
  shape.active_params = active / (tp * pp) + shape.routed_active_params + shape.attention_params +
                        head_params / (head_tp * pp) + replicated_params / pp;
  shape.head_params = head_params / (head_tp * pp) + tied_head_params / (tp * pp);
  shape.vllm_dp = opt.vllm_dp;

  if (arch.layer_attention.empty()) {
    for (std::uint64_t l = 0; l < arch.num_layers; ++l) add_layer(shape, arch, l, LayerAttention::Full, opt);
  } else {
    double recurrent_layers = 0;
    for (std::size_t l = 0; l < arch.layer_attention.size(); ++l) {
      const LayerAttention kind = arch.layer_attention[l];
      if (kind == LayerAttention::Recurrent || (arch.recurrent_in_every_layer && kind != LayerAttention::None))
        ++recurrent_layers;  // Falcon-H1: a Mamba mixer beside each attention
      if (kind == LayerAttention::Recurrent || kind == LayerAttention::None) continue;
      add_layer(shape, arch, l, kind, opt);
    }
    // The recurrent layers' weights are streamed like any others (their tensors are in the
    // inventory); their per-sequence state is the extra traffic: the plan's figure (the engine's
    // state dtypes), else the config's in the model dtype.
    const double tp_state = static_cast<double>(recurrent_state_bytes(arch, opt.tp));
    shape.recurrent_state_bytes = opt.state_bytes_per_seq_per_gpu > 0 ? opt.state_bytes_per_seq_per_gpu
                                                                      : recurrent_layers * tp_state / pp;
  }
  for (AttentionGroup& g : shape.attention) g.layers /= pp;
  if (opt.counted_kernels) count_kernels(shape, arch, moe_layers, *opt.counted_kernels, pp);
  if (opt.kv_bytes_per_token_per_gpu > 0) use_planned_kv_bytes(shape, opt.kv_bytes_per_token_per_gpu);

  if (opt.tp > 1)
    shape.notes.push_back(std::string("weights divided evenly over tp ranks (replicated norms/routers ignored)") +
                          (attn_replicated_bytes > 0 ? ", MLA's down-projections read in full on every rank" : "") +
                          (replicated_bytes > 0 ? ", the sparse-attention indexer and latent projections read in full on every rank" : ""));
  if (opt.pp > 1) shape.notes.push_back("layers divided evenly over pipeline stages");
  return shape;
}

PerfModelShape one_layer_draft_shape(const PerfModelShape& target, const OneLayerDraft& d) {
  if (target.pp != 1) throw_usage("performance model: a speculative draft under pipeline parallelism is not modelled");
  if (!(target.layers >= 1)) throw_internal("performance model: a draft needs a target with layers");
  const double layers = target.layers;
  PerfModelShape s;
  s.tp = target.tp;
  s.pp = 1;
  s.hidden = target.hidden;
  s.activation_bytes = target.activation_bytes;
  s.layers = 1;
  s.dense_weight_bytes = std::max(0.0, target.dense_weight_bytes - d.head_bytes) / layers + d.head_bytes + d.input_proj_bytes;
  // The head's weights are read every forward, but it multiplies one token per request (the
  // engines take logits at each request's last position: vLLM EagleProposer.propose
  // last_token_indices, SGLang's draft extend with CaptureHiddenMode.LAST), not every token of an
  // extend over a prompt: its FLOPs are left out, a read of its weights outweighs them.
  s.active_params = std::max(0.0, target.active_params - d.head_params) / layers + d.input_proj_params;
  s.expert_bytes = target.expert_bytes;
  s.local_experts = target.local_experts;
  s.expert_ranks = target.expert_ranks;
  s.num_experts = target.num_experts;
  s.experts_per_token = target.experts_per_token;
  s.moe_layers = target.moe_layers > 0 ? 1 : 0;
  s.block_fp8_gemms = target.block_fp8_gemms / layers;
  s.attention = target.attention;
  for (AttentionGroup& g : s.attention) g.layers /= layers;
  s.decode_kernels = target.decode_kernels / layers;
  s.prompt_launches = target.prompt_launches / layers;
  s.extra_allreduces = target.extra_allreduces / layers;
  // Lockstep ranks (SGLang DP attention, vLLM's data-parallel engines) run the draft with the
  // target's ranks: its attention over the rank's own tokens, its MoE over all ranks' gathered.
  s.vllm_dp = target.vllm_dp;
  s.dp_attention_ranks = target.dp_attention_ranks;
  s.attention_tp = target.attention_tp;
  s.attention_weight_bytes = target.attention_weight_bytes / layers;
  s.attention_params = target.attention_params / layers;
  s.routed_active_params = target.routed_active_params / layers;
  s.notes.push_back("draft: one decoder layer (the target's mean layer, its few dense-MLP layers counted in) + the shared "
                    "output head + the input projection, per GPU");
  return s;
}

}  // namespace vramplan::perf
