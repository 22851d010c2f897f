#include "vramplan/memory/weights.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::memory {

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
    case TensorRole::Audio: return Split::Column;
    case TensorRole::AttnOutput:
    case TensorRole::FfnDown:
    case TensorRole::FfnDownShexp:
    case TensorRole::FfnDownExps: return Split::Row;
    case TensorRole::Mtp: return Split::NotResident;  // loaded only for speculative decoding
    default: return Split::Replicated;
  }
}

// Linear-layer weights: what --quantization / --weights converts (vLLM LinearBase layers).
bool is_linear(const TensorInfo& t) {
  if (t.is_bias || t.shape.size() < 2) return false;
  switch (t.role) {
    case TensorRole::AttnQ: case TensorRole::AttnK: case TensorRole::AttnV:
    case TensorRole::AttnQKV: case TensorRole::AttnOutput: case TensorRole::AttnQA:
    case TensorRole::AttnQB: case TensorRole::AttnKVAMqa: case TensorRole::AttnKVB:
    case TensorRole::FfnGate: case TensorRole::FfnUp: case TensorRole::FfnDown:
    case TensorRole::FfnGateUp: case TensorRole::FfnGateExps: case TensorRole::FfnUpExps:
    case TensorRole::FfnDownExps: case TensorRole::FfnGateUpExps: case TensorRole::FfnGateShexp:
    case TensorRole::FfnUpShexp: case TensorRole::FfnDownShexp: return true;
    default: return false;
  }
}

std::uint64_t out_rows(const TensorInfo& t) {
  std::uint64_t rows = 1;
  for (std::size_t i = 0; i + 1 < t.shape.size(); ++i) rows = checked_mul(rows, t.shape[i]);
  return rows;
}

// The checkpoint's own quantization, read from quantization_config (the interim rules until the
// precision plan covers them): fp8 (per-tensor or 128x128 blocks) and compressed-tensors float8.
struct CheckpointQuant {
  std::string method;
  bool fp8 = false;
  std::uint64_t block_rows = 0, block_cols = 0;  // fp8 block scales (fp32 each)
  bool per_channel = false;                       // one fp32 scale per output row
};

CheckpointQuant checkpoint_quant(const ModelSpec& model) {
  CheckpointQuant q;
  if (model.quantization_config_json.empty()) return q;
  const auto cfg = nlohmann::json::parse(model.quantization_config_json, nullptr, false);
  if (!cfg.is_object()) return q;
  q.method = cfg.value("quant_method", std::string());
  if (q.method == "fp8") {
    q.fp8 = true;
    if (cfg.contains("weight_block_size") && cfg["weight_block_size"].is_array() &&
        cfg["weight_block_size"].size() == 2) {
      q.block_rows = cfg["weight_block_size"][0].get<std::uint64_t>();
      q.block_cols = cfg["weight_block_size"][1].get<std::uint64_t>();
    }
    return q;
  }
  if (q.method == "compressed-tensors" && cfg.contains("config_groups") &&
      cfg["config_groups"].is_object()) {
    for (const auto& [name, group] : cfg["config_groups"].items()) {
      const auto w = group.value("weights", nlohmann::json::object());
      if (w.value("num_bits", 0) == 8 && w.value("type", std::string()) == "float") {
        q.fp8 = true;
        q.per_channel = w.value("strategy", std::string()) == "channel";
      }
    }
    if (q.fp8) return q;
  }
  throw_usage("checkpoint quantization '" + q.method +
              "' is not modelled by this planner yet (supported here: fp8, compressed-tensors "
              "float8); give --weights to choose the stored format explicitly");
}

std::uint64_t fp8_linear_bytes(const TensorInfo& t, const CheckpointQuant& q) {
  const std::uint64_t elems = t.elements();
  const std::uint64_t rows = out_rows(t);
  const std::uint64_t cols = t.shape.back();
  if (q.block_rows != 0) {
    const std::uint64_t experts = t.shape.size() > 2 ? t.shape[0] : 1;
    const std::uint64_t r = rows / experts;
    return elems + experts * ceil_div(r, q.block_rows) * ceil_div(cols, q.block_cols) * 4;
  }
  if (q.per_channel) return elems + rows * 4;
  return elems + 4;  // one fp32 per-tensor scale
}

std::string dtype_name(std::string_view requested, const ModelSpec& model, std::vector<std::string>& notes) {
  std::string d(requested);
  if (d.empty() || d == "auto") {
    d = model.arch.torch_dtype;
    if (d.empty()) {
      notes.push_back("checkpoint dtype not given: bf16 assumed (pass --dtype)");
      return "bf16";
    }
    if (d == "float32") {
      notes.push_back("float32 checkpoint served in bf16 (vLLM's dtype=auto downcasts fp32)");
      return "bf16";
    }
  }
  return d;
}

}  // namespace

ResolvedWeights resolve_weights(const ModelSpec& model, const QuantCatalog& quant,
                                const WeightRequest& request) {
  ResolvedWeights out;
  const QuantFormat& compute = quant.get(dtype_name(request.dtype.value_or(""), model, out.notes));
  if (!compute.is_float) throw_usage("--dtype " + compute.name + " is not a floating-point type");
  out.compute_precision = compute.name;
  out.compute_bytes = compute.block_bytes;

  CheckpointQuant ckpt = checkpoint_quant(model);
  const QuantFormat* linear_format = nullptr;
  bool online_fp8 = false;
  if (request.quantization && !request.quantization->empty()) {
    if (*request.quantization == "fp8") {
      online_fp8 = !ckpt.fp8;
    } else if (*request.quantization != ckpt.method) {
      throw_usage("--quantization " + *request.quantization +
                  " is not modelled by this planner yet (supported: fp8; a quantized checkpoint's "
                  "own method is read from its config)");
    }
  }
  if (request.weights) linear_format = &quant.get(*request.weights);

  std::set<std::string> linear_names;
  out.tensor_bytes.reserve(model.tensors.size());
  for (const auto& t : model.tensors) {
    std::uint64_t bytes = 0;
    const bool linear = is_linear(t);
    if (linear && linear_format != nullptr && row_fits(*linear_format, t.shape.back())) {
      bytes = tensor_bytes(*linear_format, t.shape, t.name);
      linear_names.insert(linear_format->name);
    } else if (linear && (ckpt.fp8 || online_fp8)) {
      bytes = fp8_linear_bytes(t, online_fp8 ? CheckpointQuant{"fp8", true, 0, 0, false} : ckpt);
      linear_names.insert("fp8-e4m3");
    } else if (!t.stored_format.empty() && t.stored_bytes &&
               quant.find(t.stored_format) != nullptr && quant.get(t.stored_format).quantized) {
      bytes = *t.stored_bytes;  // a quantized tensor stays as stored
      linear_names.insert(quant.get(t.stored_format).name);
    } else {
      bytes = tensor_bytes(compute, t.shape, t.name);
    }
    out.tensor_bytes.push_back(bytes);
  }
  std::string lin;
  for (const auto& n : linear_names) lin += (lin.empty() ? "" : "+") + n;
  out.weights_precision = lin.empty() || lin == compute.name ? compute.name
                                                             : lin + " (linear layers) + " + compute.name;
  if (online_fp8)
    out.notes.push_back("--quantization fp8: linear weights quantized to fp8-e4m3 at load, one "
                        "fp32 scale per tensor; embeddings, lm_head and norms stay " + compute.name);
  return out;
}

std::pair<std::uint64_t, std::uint64_t> pp_layer_range(std::uint64_t num_layers, std::uint64_t pp,
                                                        std::uint64_t stage) {
  if (pp == 0 || stage >= pp) throw_internal("pp_layer_range: bad stage");
  if (pp > num_layers)
    throw_usage("pipeline parallel size " + std::to_string(pp) + " exceeds the " +
                std::to_string(num_layers) + " layers of the model");
  std::vector<std::uint64_t> parts(pp, num_layers / pp);
  // vllm/distributed/utils.py get_pp_indices: partitions[-i] += 1 for i in 2..remaining+1.
  const std::uint64_t remaining = num_layers % pp;
  for (std::uint64_t i = 2; i < remaining + 2; ++i) parts[pp - i] += 1;
  std::uint64_t start = 0;
  for (std::uint64_t s = 0; s < stage; ++s) start += parts[s];
  return {start, start + parts[stage]};
}

std::vector<Component> shard_weights(const ModelSpec& model, const ResolvedWeights& weights,
                                     const ShardOptions& o) {
  if (weights.tensor_bytes.size() != model.tensors.size())
    throw_internal("shard_weights: resolved weights do not match the inventory");
  const auto& a = model.arch;
  const std::uint64_t tp = o.tp;
  const auto [first, end] = pp_layer_range(a.num_layers, o.pp, o.stage);
  const bool first_stage = o.stage == 0, last_stage = o.stage + 1 == o.pp;

  const std::uint64_t vocab_padded = round_up(a.vocab_size, o.vocab_pad);
  const std::uint64_t vocab_rows = ceil_div(vocab_padded, tp);
  const std::uint64_t kv_rank = a.num_kv_heads == 0 ? 0 : std::max<std::uint64_t>(1, a.num_kv_heads / tp);

  auto share = [&](const TensorInfo& t, std::uint64_t bytes) -> std::uint64_t {
    switch (split_of(t.role)) {
      case Split::Vocab: {
        // Rows padded to vocab_pad and split; bytes are linear in rows.
        const std::uint64_t rows = t.shape.empty() ? 1 : t.shape.front();
        return rows == 0 ? 0 : ceil_div(checked_mul(bytes, vocab_rows), rows);
      }
      case Split::KvProjection:
        return a.num_kv_heads == 0 ? ceil_div(bytes, tp)
                                   : ceil_div(checked_mul(bytes, kv_rank), a.num_kv_heads);
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
  };

  std::uint64_t layers = 0, embed = 0, head = 0, other = 0, embed_full = 0;
  bool has_output = false;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const auto& t = model.tensors[i];
    const std::uint64_t b = share(t, weights.tensor_bytes[i]);
    if (t.role == TensorRole::TokenEmbedding) embed_full = b;
    if (t.layer) {
      const auto l = static_cast<std::uint64_t>(*t.layer);
      if (l >= first && l < end) layers += b;
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
  const std::string tp_text = tp > 1 ? " / TP " + std::to_string(tp) : "";
  parts.push_back({"weights.layers", Bytes(layers),
                   "decoder layers " + std::to_string(first) + "-" + std::to_string(end - 1) +
                       " (" + std::to_string(end - first) + " layers" + tp_text +
                       ", norms replicated" +
                       (tp > a.num_kv_heads && a.num_kv_heads > 0 ? ", KV projections replicated" : "") +
                       ") = " + grouped(layers) + " B"});
  if (first_stage)
    parts.push_back({"weights.embedding", Bytes(embed),
                     "token embedding: vocab " + std::to_string(a.vocab_size) + " padded to " +
                         std::to_string(vocab_padded) + " (x" + std::to_string(o.vocab_pad) + ")" +
                         tp_text + " = " + std::to_string(vocab_rows) + " rows x " +
                         std::to_string(a.hidden_size) + " = " + grouped(embed) + " B"});
  if (last_stage) {
    if (!has_output && o.pp > 1) {
      head = embed_full;  // tied embeddings: the last stage builds its own lm_head
      parts.push_back({"weights.lm_head", Bytes(head),
                       "lm_head (tied embeddings; own copy on the last PP stage) = " + grouped(head) + " B"});
    } else if (has_output) {
      parts.push_back({"weights.lm_head", Bytes(head),
                       "lm_head: " + std::to_string(vocab_rows) + " padded vocab rows" + tp_text +
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
