#include "vramplan/memory/weights.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/precision_plan.hpp"

namespace vramplan::memory {

const QuantFormat& config_dtype_format(const ModelSpec& model, const QuantCatalog& quant) {
  // The config's own field: a value no format has is the file's fault, named with the file.
  const QuantFormat* format = quant.find(model.arch.torch_dtype);
  const std::string file = model.source.path.empty() ? model.id : model.source.path;
  if (format == nullptr)
    throw_input(file, "torch_dtype",
                "unknown dtype '" + model.arch.torch_dtype +
                    "' (float16, bfloat16, float32, or a format of data/quant_formats.json)");
  // The model dtype is what the engine computes in: vLLM takes float16, bfloat16 and float32
  // (vllm/config/model.py _STR_DTYPE_TO_TORCH_DTYPE / ModelConfig._resolve_auto_dtype). An integer
  // torch_dtype is no model dtype, and fp64 is none an engine serves: the file's field is at
  // fault, not a --dtype / --weights flag the user never gave.
  if (!format->is_float || format->quantized || (format->family == "float" && format->block_bytes > 4))
    throw_input(file, "torch_dtype",
                "'" + model.arch.torch_dtype + "' is not a model dtype an engine serves (float16, bfloat16, float32)");
  return *format;
}

namespace {

enum class Split { Column, Row, Replicated, Vocab, KvProjection, FusedQkv, NotResident };

// How vLLM-style tensor parallelism splits each role (vllm/model_executor/layers/linear.py:
// ColumnParallelLinear / RowParallelLinear / ReplicatedLinear; vocab_parallel_embedding.py).
Split split_of(TensorRole role) {
  switch (role) {
    case TensorRole::TokenEmbedding:
    case TensorRole::Output: return Split::Vocab;
    case TensorRole::AttnK:
    case TensorRole::AttnV: return Split::KvProjection;
    case TensorRole::AttnQKV: return Split::FusedQkv;
    case TensorRole::AttnQ:
    case TensorRole::AttnQB:
    case TensorRole::AttnKVB:
    case TensorRole::AttnSinks:
    case TensorRole::FfnGate:
    case TensorRole::FfnUp:
    case TensorRole::FfnGateUp:
    case TensorRole::FfnGateShexp:
    case TensorRole::FfnUpShexp:
    case TensorRole::FfnGateExps:
    case TensorRole::FfnUpExps:
    case TensorRole::FfnGateUpExps:
    case TensorRole::Vision:
    case TensorRole::Audio:
    // Linear-attention / SSM layers: vLLM shards in_proj_qkvz / in_proj_ba (column), the conv1d
    // channels, dt_bias and A_log by head (qwen_gdn_linear_attn.py; mamba_mixer2.py); their
    // out_proj is role AttnOutput (row). The gated norm over head_v_dim is replicated there and
    // split here: head_v_dim x (1 - 1/TP) values per layer under.
    case TensorRole::Recurrent: return Split::Column;
    case TensorRole::AttnOutput:
    case TensorRole::FfnDown:
    case TensorRole::FfnDownShexp:
    case TensorRole::FfnDownExps: return Split::Row;
    case TensorRole::Mtp: return Split::NotResident;  // loaded only for speculative decoding
    default: return Split::Replicated;
  }
}



// The dtype an engine loads unquantized tensors in. dtype=auto follows the config, except that
// float32 checkpoints are served in bf16 (vLLM ModelConfig._resolve_auto_dtype; SGLang and
// TRT-LLM do the same).
std::string serving_dtype(const ModelSpec& model, const QuantCatalog& quant, const WeightRequest& request,
                          std::vector<std::string>& notes) {
  const std::string requested = request.dtype.value_or("auto");
  if (requested != "auto") {
    // --dtype is the compute dtype of the unquantized tensors: vLLM's choices are auto, half,
    // float16, bfloat16, float, float32 (vllm/config/model.py ModelDType; _STR_DTYPE_TO_TORCH_DTYPE),
    // SGLang's the same (server_args.py --dtype choices), transformers' torch_dtype a torch float
    // type. An 8-bit name there is refused by the engine; fp8 weights are a quantization.
    const std::string name = quant.get(requested).name;
    if (name != "fp16" && name != "bf16" && name != "fp32")
      throw_usage("--dtype " + requested + ": not a compute dtype (auto, float16 / half, bfloat16, float32 / float); "
                  "for 8-bit weights give --weights fp8 (or the engine's --quantization fp8)");
    return name;
  }
  const std::string& config = model.arch.torch_dtype;
  if (config.empty()) {
    notes.push_back("checkpoint dtype not given: bf16 assumed (pass --dtype)");
    return "bf16";
  }
  const std::string name = config_dtype_format(model, quant).name;
  if (name == "fp32" && request.downcast_fp32) {
    notes.push_back("float32 checkpoint served in bf16 (dtype=auto downcasts fp32)");
    return "bf16";
  }
  return name;
}

bool read_from_file(const ModelSpec& model) {
  return !model.tensors.empty() && std::all_of(model.tensors.begin(), model.tensors.end(),
                                               [](const TensorInfo& t) { return t.stored_bytes.has_value(); });
}

}  // namespace

ResolvedWeights resolve_weights(const ModelSpec& model, const QuantCatalog& quant,
                                const WeightRequest& request) {
  ResolvedWeights out;
  // The precision plan (quant/precision_plan.hpp) decides every tensor's stored format. What it
  // is asked for: the user's --weights; else the engine's --quantization method ("vllm:fp8" =
  // online fp8 unless the checkpoint is quantized); else, for a config-only inventory, the
  // checkpoint's own quantization method or the serving dtype; a file inventory keeps its bytes.
  PrecisionRequest pr;
  pr.dtype = serving_dtype(model, quant, request, out.notes);
  if (request.weights) {
    pr.weights = *request.weights;
  } else if (request.quantization && !request.quantization->empty()) {
    pr.weights = "vllm:" + *request.quantization;
  } else if (!read_from_file(model)) {
    const auto cq = checkpoint_quantization(model, quant);
    pr.weights = cq ? "vllm:" + cq->scheme.engine_method : pr.dtype;
  }
  const PrecisionPlan plan = plan_precision(model, quant, pr);
  out.tensor_bytes.reserve(plan.tensors.size());
  // The plan's distinct formats (a handful) are looked up once, not once per tensor; a tensor stored
  // in parts ("Q5_0+Q4_K") names no format row.
  std::vector<std::string_view> block_fp8_formats;
  for (const auto& f : plan.by_format)
    if (const QuantFormat* q = quant.find(f.format); q && q->layout == QuantLayout::Block2D && q->family == "fp8")
      block_fp8_formats.push_back(f.format);
  out.block_scaled_fp8.reserve(plan.tensors.size());
  for (const auto& t : plan.tensors) {
    out.tensor_bytes.push_back(t.bytes);
    out.block_scaled_fp8.push_back(std::find(block_fp8_formats.begin(), block_fp8_formats.end(), t.format) !=
                                   block_fp8_formats.end());
  }
  out.weights_precision = plan.weights_precision;
  out.compute_precision = plan.model_dtype;
  out.compute_bytes = quant.get(plan.model_dtype).block_bytes;
  for (const auto& w : plan.warnings) out.notes.push_back(w);
  if (plan.compute_precision != plan.model_dtype) out.notes.push_back("compute precision: " + plan.compute_precision);
  if (request.weights && plan.scheme.kind != SchemeKind::Checkpoint && plan.scheme.name != plan.model_dtype)
    out.planned = PlannedWeights{plan.scheme.name, plan.scheme.engine_method,
                                 checkpoint_quantization(model, quant).has_value() || read_from_file(model)};
  return out;
}

std::pair<std::uint64_t, std::uint64_t> pp_layer_range(std::uint64_t num_layers, std::uint64_t pp,
                                                        std::uint64_t stage, bool extra_layers_last) {
  if (pp == 0 || stage >= pp) throw_internal("pp_layer_range: bad stage");
  if (pp > num_layers)
    throw_usage("pipeline parallel size " + std::to_string(pp) + " exceeds the " +
                std::to_string(num_layers) + " layers of the model");
  std::vector<std::uint64_t> parts(pp, num_layers / pp);
  // vllm/distributed/utils.py get_pp_indices: partitions[-i] += 1 for i in 2..remaining+1;
  // SGLang's: the last `remaining` partitions get one more.
  const std::uint64_t remaining = num_layers % pp;
  for (std::uint64_t i = extra_layers_last ? 1 : 2; i < remaining + (extra_layers_last ? 1 : 2); ++i) parts[pp - i] += 1;
  std::uint64_t start = 0;
  for (std::uint64_t s = 0; s < stage; ++s) start += parts[s];
  return {start, start + parts[stage]};
}

std::string pad_moe_experts(const ModelSpec& model, ResolvedWeights& weights, std::uint64_t tp,
                            const MoePadding& pad) {
  const auto& a = model.arch;
  const std::uint64_t inter = a.moe_intermediate_size ? a.moe_intermediate_size : a.intermediate_size;
  for (const std::uint64_t m : {pad.intermediate_multiple, pad.hidden_multiple, pad.value_n_multiple,
                                pad.value_k_multiple, pad.scale_n_multiple, pad.scale_k_multiple})
    if (m == 0) throw_internal("pad_moe_experts: a multiple of 0");
  if (tp == 0 || inter == 0 || inter % tp != 0)
    throw_usage("MXFP4 MoE: intermediate size " + std::to_string(inter) + " does not split over TP " +
                std::to_string(tp));
  // vLLM pads the rank's own slice: intermediate_size_per_partition = I / tp, then round_up.
  const std::uint64_t i_pad = round_up(inter / tp, pad.intermediate_multiple);
  const std::uint64_t h_pad = round_up(a.hidden_size, pad.hidden_multiple);
  struct Gemm { std::uint64_t n, k; };
  const Gemm w13{2 * i_pad, h_pad}, w2{h_pad, i_pad};
  auto values = [&](std::uint64_t e, Gemm g) {  // packed fp4: 2 values per byte
    return checked_mul(e, checked_mul(round_up(g.n, pad.value_n_multiple), round_up(g.k, pad.value_k_multiple))) / 2;
  };
  auto scales = [&](std::uint64_t e, Gemm g) {  // one e8m0 byte per 32 K elements
    return checked_mul(e, checked_mul(round_up(g.n, pad.scale_n_multiple), round_up(g.k, pad.scale_k_multiple) / 32));
  };
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::uint64_t experts = 0;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const auto& t = model.tensors[i];
    const bool gate_up = t.role == TensorRole::FfnGateUpExps;
    if ((!gate_up && t.role != TensorRole::FfnDownExps) || t.shape.empty()) continue;
    const std::uint64_t e = experts = t.shape.front();
    const Gemm g = gate_up ? w13 : w2;
    std::uint64_t rank = 0;
    if (t.is_bias || ends_with(t.name, "_bias"))
      rank = checked_mul(checked_mul(e, g.n), pad.bias_bytes);
    else if (ends_with(t.name, "_scales"))
      rank = scales(e, g);
    else if (ends_with(t.name, "_blocks"))
      rank = values(e, g);
    else  // one inventory tensor in the MXFP4 format: values and scales together
      rank = checked_add(values(e, g), scales(e, g));
    // The down bias is whole on every rank (RowParallel bias); everything else is split by TP.
    weights.tensor_bytes[i] = !gate_up && t.is_bias ? rank : checked_mul(rank, tp);
  }
  if (experts == 0) return {};
  auto shape = [&](Gemm g) {
    return "[" + std::to_string(experts) + ", " + std::to_string(round_up(g.n, pad.value_n_multiple)) + ", " +
           std::to_string(round_up(g.k, pad.value_k_multiple)) + "]";
  };
  return "MXFP4 experts as held by the " + pad.backend + " MoE backend, per rank: w13 " + shape(w13) + ", w2 " +
         shape(w2) + " fp4 values (intermediate " + std::to_string(inter / tp) + " -> " + std::to_string(i_pad) +
         ", hidden " + std::to_string(a.hidden_size) + " -> " + std::to_string(h_pad) + "), biases " +
         std::to_string(pad.bias_bytes) + " B per element";
}

bool copied_into_value_slot(const ModelArch& a, const TensorInfo& t, const ShardOptions& o) {
  return o.k_eq_v_value_slot && a.attention_k_eq_v && t.role == TensorRole::AttnK && !t.is_bias && t.layer &&
         a.layer_has_global_geometry(static_cast<std::size_t>(*t.layer));
}

std::uint64_t tensor_rank_bytes(const ModelSpec& model, const TensorInfo& t, std::uint64_t bytes, std::uint64_t tp,
                                std::uint64_t vocab_pad) {
  const auto& a = model.arch;
  const std::uint64_t vocab_rows = ceil_div(round_up(a.vocab_size, vocab_pad), tp);
  const std::uint64_t kv_rank = a.num_kv_heads == 0 ? 0 : std::max<std::uint64_t>(1, a.num_kv_heads / tp);
  switch (split_of(t.role)) {
    case Split::Vocab: {
      // Rows padded to vocab_pad and split; bytes are linear in rows.
      const std::uint64_t rows = t.shape.empty() ? 1 : t.shape.front();
      return rows == 0 ? 0 : ceil_div(checked_mul(bytes, vocab_rows), rows);
    }
    case Split::KvProjection: {
      // Per layer: Gemma 4's full layers have their own KV-head count (replicated below TP too).
      const std::uint64_t heads = t.layer ? a.layer_kv_heads(static_cast<std::size_t>(*t.layer)) : a.num_kv_heads;
      if (heads == 0) return ceil_div(bytes, tp);
      return ceil_div(checked_mul(bytes, std::max<std::uint64_t>(1, heads / tp)), heads);
    }
    case Split::FusedQkv: {
      const std::uint64_t q = a.num_heads * a.head_dim;
      const std::uint64_t kv = 2 * a.num_kv_heads * a.head_dim;
      const std::uint64_t rank = q / tp + 2 * kv_rank * a.head_dim;
      return q + kv == 0 ? ceil_div(bytes, tp) : ceil_div(checked_mul(bytes, rank), q + kv);
    }
    case Split::Column: return ceil_div(bytes, tp);
    case Split::Row: return t.is_bias ? bytes : ceil_div(bytes, tp);
    case Split::Replicated: return bytes;
    case Split::NotResident: return 0;
  }
  return bytes;
}

// The ranks one tensor is split over: the attention projections, the token embedding and the
// lm_head may have groups of their own (ShardOptions, SGLang DP attention), the routed experts too
// (vLLM data parallelism), everything else TP.
std::uint64_t split_degree(TensorRole role, const ShardOptions& o) {
  const auto or_tp = [&](std::uint64_t d) { return d ? d : o.tp; };
  if (is_routed_expert_role(role)) return or_tp(o.expert_tp);
  switch (role) {
    case TensorRole::FfnGateShexp:
    case TensorRole::FfnUpShexp:
    case TensorRole::FfnDownShexp: return or_tp(o.shared_expert_tp);
    case TensorRole::AttnQ:
    case TensorRole::AttnK:
    case TensorRole::AttnV:
    case TensorRole::AttnQKV:
    case TensorRole::AttnOutput:
    case TensorRole::AttnSinks:
    case TensorRole::AttnQB:
    case TensorRole::AttnKVB: return or_tp(o.attention_tp);
    case TensorRole::TokenEmbedding: return or_tp(o.embedding_tp);
    case TensorRole::Output: return or_tp(o.head_tp);
    default: return o.tp;
  }
}

std::vector<Component> shard_weights(const ModelSpec& model, const ResolvedWeights& weights,
                                     const ShardOptions& o) {
  if (weights.tensor_bytes.size() != model.tensors.size())
    throw_internal("shard_weights: resolved weights do not match the inventory");
  const auto& a = model.arch;
  const std::uint64_t tp = o.tp;
  const auto [first, end] = pp_layer_range(a.num_layers, o.pp, o.stage, o.pp_extra_layers_last);
  const bool first_stage = o.stage == 0, last_stage = o.stage + 1 == o.pp;

  const std::uint64_t vocab_padded = round_up(a.vocab_size, o.vocab_pad);
  const std::uint64_t embed_tp = split_degree(TensorRole::TokenEmbedding, o), head_tp = split_degree(TensorRole::Output, o);
  const std::uint64_t attn_tp = split_degree(TensorRole::AttnOutput, o);
  auto share = [&](const TensorInfo& t, std::uint64_t bytes) {
    return tensor_rank_bytes(model, t, bytes, split_degree(t.role, o), o.vocab_pad);
  };

  std::uint64_t layers = 0, embed = 0, head = 0, other = 0, embed_full = 0, v_slots = 0, v_slot_layers = 0;
  bool has_output = false;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const auto& t = model.tensors[i];
    const std::uint64_t b = share(t, weights.tensor_bytes[i]);
    if (t.role == TensorRole::TokenEmbedding) embed_full = b;
    if (t.layer) {
      const auto l = static_cast<std::uint64_t>(*t.layer);
      if (l >= first && l < end) layers += b;
      // attention_k_eq_v: the engine's fused QKV keeps a V slot the checkpoint lacks, a copy of k_proj.
      if (l >= first && l < end && copied_into_value_slot(a, t, o)) {
        v_slots = checked_add(v_slots, b, "k_eq_v value slots");
        v_slot_layers += 1;
      }
    } else if (t.role == TensorRole::TokenEmbedding || t.role == TensorRole::PositionEmbedding ||
               t.role == TensorRole::Vision || t.role == TensorRole::Audio) {
      if (first_stage) (t.role == TensorRole::TokenEmbedding ? embed : other) += b;
    } else if (t.role == TensorRole::Output) {
      has_output = true;
      if (last_stage) head += b;
    } else if (t.role == TensorRole::OutputNorm) {
      if (last_stage) other += b;
    } else {
      other += b;
    }
  }
  std::vector<Component> parts;
  const auto tp_text_of = [](std::uint64_t degree) { return degree > 1 ? " / TP " + std::to_string(degree) : std::string(); };
  const std::string tp_text = tp_text_of(tp);
  std::string layers_split =
      attn_tp == tp ? tp_text
                    : ", attention projections / attention TP " + std::to_string(attn_tp) + ", the rest" + tp_text;
  if (o.expert_tp && o.expert_tp != tp && a.num_experts > 0)
    layers_split += ", routed experts / " + std::to_string(o.expert_tp) + " GPUs";
  if (o.shared_expert_tp && o.shared_expert_tp != tp) layers_split += ", shared experts whole";
  layers = checked_add(layers, v_slots, "decoder layer weights");
  parts.push_back({"weights.layers", Bytes(layers),
                   "decoder layers " + std::to_string(first) + "-" + std::to_string(end - 1) +
                       " (" + std::to_string(end - first) + " layers" + layers_split +
                       ", norms replicated" +
                       (attn_tp > a.num_kv_heads && a.num_kv_heads > 0 ? ", KV projections replicated" : "") + ")" +
                       (v_slots ? " + " + grouped(v_slots) + " B V slots of " + std::to_string(v_slot_layers) +
                                      " attention_k_eq_v layers (k_proj copied into the fused QKV's V part at load)"
                                : std::string()) +
                       " = " + grouped(layers) + " B"});
  if (first_stage)
    parts.push_back({"weights.embedding", Bytes(embed),
                     "token embedding: vocab " + std::to_string(a.vocab_size) + " padded to " +
                         std::to_string(vocab_padded) + " (x" + std::to_string(o.vocab_pad) + ")" +
                         tp_text_of(embed_tp) + " = " + std::to_string(ceil_div(vocab_padded, embed_tp)) + " rows x " +
                         std::to_string(a.hidden_size) + " = " + grouped(embed) + " B"});
  if (last_stage) {
    if (!has_output && o.pp > 1) {
      head = embed_full;  // tied embeddings: the last stage builds its own lm_head
      parts.push_back({"weights.lm_head", Bytes(head),
                       "lm_head (tied embeddings; own copy on the last PP stage) = " + grouped(head) + " B"});
    } else if (has_output) {
      parts.push_back({"weights.lm_head", Bytes(head),
                       "lm_head: " + std::to_string(ceil_div(vocab_padded, head_tp)) + " padded vocab rows" + tp_text_of(head_tp) +
                           " = " + grouped(head) + " B"});
    }
  }
  parts.push_back({"weights.other", Bytes(other),
                   "final norm, vision/audio towers and other global tensors on this stage = " +
                       grouped(other) + " B"});
  if (o.count_rope_tables) {
    std::uint64_t rope = 0;
    std::string terms;
    for (const auto& r : a.rope_tables) {
      const std::uint64_t b = checked_mul(checked_mul(r.max_positions, r.rotary_dim), weights.compute_bytes);
      rope = checked_add(rope, b);
      terms += (terms.empty() ? "" : " + ") + std::to_string(r.max_positions) + " positions x " +
               std::to_string(r.rotary_dim) + " x " + std::to_string(weights.compute_bytes) + " B";
    }
    if (!terms.empty())
      parts.push_back({"weights.rope_cache", Bytes(rope),
                       "rotary cos/sin caches (one per distinct rope config, not sharded): " + terms +
                           " = " + grouped(rope) + " B"});
  }
  return parts;
}

}  // namespace vramplan::memory
