// Pooling models (embedders, rerankers) per engine: weights + one forward pass's activation
// peak + pooled outputs + fixed overhead; no KV cache. Formulas and sources: docs/encoders.md.
#include "vramplan/memory/encoder_memory.hpp"

#include <algorithm>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine_setup.hpp"
#include "vramplan/memory/hf_encoder_replay.hpp"
#include "vramplan/memory/vllm_scheduler_defaults.hpp"
#include "vramplan/model/encoder.hpp"

namespace vramplan::memory {
namespace {

bool encoder_mlp_is_gated(const ModelSpec& m) {
  return std::any_of(m.tensors.begin(), m.tensors.end(), [](const TensorInfo& t) {
    return t.role == TensorRole::FfnGate || t.role == TensorRole::FfnGateUp;
  });
}

std::string model_kind(const ModelSpec& m) {
  return is_encoder(m.arch) ? "encoder " + m.arch.architecture : m.arch.architecture + " as a pooling model";
}

//! The weights of the pooling model on one GPU; `vocab_pad` as the engine pads the embedding.
ResolvedWeights place_pooling_weights(MemoryPlan& p, const PlanInput& in, std::optional<std::string> dtype,
                                      bool downcast_fp32, std::uint64_t vocab_pad) {
  return place_weights(p, in, {std::move(dtype), std::nullopt, in.weights, downcast_fp32}, {1, 1, 0, vocab_pad, false});
}

// The pooled vector of every input ([CLS] / mean / last token), in the compute dtype.
void add_pooled(MemoryPlan& p, const ModelSpec& m, std::uint64_t inputs, std::uint64_t bytes) {
  p.activation.push_back({"activation.pooled", Bytes(checked_mul(inputs * m.arch.hidden_size, bytes, "pooled")),
                          "pooled outputs: " + std::to_string(inputs) + " inputs x hidden " +
                              std::to_string(m.arch.hidden_size) + " x " + std::to_string(bytes) + " B"});
}

void add_forward(MemoryPlan& p, const ModelSpec& m, const EncoderForward& f) {
  for (auto& c : encoder_forward_activation(m, f)) p.activation.push_back(std::move(c));
  add_pooled(p, m, f.inputs, f.compute_bytes);
}

// sentence-transformers SentenceTransformer.encode: without convert_to_numpy each batch's
// embeddings stay on the GPU (`all_embeddings.extend(embeddings)`), and convert_to_tensor ends with
// `torch.stack(all_embeddings)`, a second N x dim copy while the list still holds the first. The peak
// is then N·dim·a + max(one batch's forward, N·dim·a): the forward components are replaced by the
// stacked copy when that is larger.
void add_kept_outputs(MemoryPlan& p, const ModelSpec& m, std::uint64_t n, std::uint64_t bytes) {
  if (n == 0) throw_usage("--kept-embeddings must be >= 1");
  const Bytes kept(checked_mul(checked_mul(n, m.arch.hidden_size, "kept embeddings"), bytes, "kept embeddings"));
  const std::string shape = std::to_string(n) + " inputs x dim " + std::to_string(m.arch.hidden_size) + " x " +
                            std::to_string(bytes) + " B";
  Bytes forward(0);
  for (const auto& c : p.activation) forward = forward + c.bytes;
  if (kept > forward) {
    p.activation.clear();
    p.activation.push_back({"activation.stacked_embeddings", kept,
                            "torch.stack(all_embeddings) at the end of encode: " + shape + " (larger than one batch's forward, " +
                                format_gib(forward) + ")"});
  }
  p.activation.push_back({"activation.kept_embeddings", kept, "embeddings kept on the GPU (convert_to_tensor=True): " + shape});
}

// What PyTorch's caching allocator holds beyond the weights and the closed-form live set: the
// replay of transformers' forward (memory/hf_encoder_replay.hpp) gives memory_reserved() after the
// forwards — every segment cudaMalloc'd, never released — which is what the process holds and what
// runs out first. The difference covers the tensors the live set leaves out (the operand copies
// at::matmul makes of permuted q / k / v views, the context's .contiguous() copy, LayerNorm
// statistics), the cuBLAS workspace, segment rounding and blocks split for smaller tensors.
void add_caching_allocator(MemoryPlan& p, const ModelSpec& m, const std::vector<std::uint64_t>& tensor_bytes,
                           const EncoderForward& f, const std::optional<ComputeCapability>& capability) {
  // An unknown GPU (no compute capability) gets the pre-Hopper workspace, the smaller one.
  const int major = capability ? capability->major : 8;
  const auto r = replay_hf_encoder_forward(m, tensor_bytes, f, cublas_workspace_bytes(major));
  Bytes counted = p.weights_bytes();
  for (const auto& c : p.activation) counted = counted + c.bytes;
  if (r.reserved <= counted.count()) return;
  p.activation.push_back(
      {"activation.caching_allocator", Bytes(r.reserved - counted.count()),
       "PyTorch caching allocator (replay of transformers' " + m.arch.architecture +
           " forward through CUDACachingAllocator's rules, memory/hf_encoder_replay.cpp): memory_reserved " +
           format_mib(Bytes(r.reserved)) + " after " + std::to_string(r.forwards) + " forwards against max_memory_allocated " +
           format_mib(Bytes(r.peak_allocated)) + " (cuBLAS workspace " + format_mib(Bytes(r.workspace)) +
           " included), less the weights and the live set above"});
}

void no_kv(MemoryPlan& p, const ModelSpec& m) {
  p.kv.bytes_per_token = 0;
  p.kv.capacity_tokens = std::nullopt;
  p.kv.explain = "no KV cache: " + model_kind(m) + " runs each input in one forward pass and keeps nothing between requests";
}

void check_fit(MemoryPlan& p, Bytes budget, const std::string& what) {
  if (p.total_bytes() > budget) {
    p.fits = false;
    p.reason = what + ": weights + activation peak + overhead need " + format_gib(p.total_bytes()) + " of " +
               format_gib(budget);
  }
}

MemoryPlan named_plan(const Engine& engine, const EngineProfileData& d, const PlanInput& in) {
  check_workload(in.workload);
  check_known_args(in.args, engine.options(), engine.name());
  MemoryPlan p;
  p.engine = std::string(engine.name());
  p.engine_version = d.version();
  p.engine_profile_note = d.note();
  p.gpu_total = in.gpu.total;
  return p;
}

// The positions an input may use: max_position_embeddings, less RoBERTa's offset (position ids
// from padding_idx + 1: an input of max_position_embeddings - offset tokens already reaches the
// table's last row).
void check_encoder_length(const ModelSpec& m, std::uint64_t seq_len, const std::string& flag) {
  const auto max = encoder_max_input(m.arch);
  if (max > 0 && seq_len > max)
    throw_usage(flag + " " + std::to_string(seq_len) + " exceeds " + m.arch.architecture + "'s " +
                (m.arch.position_offset ? "longest input " + std::to_string(max) + " (max_position_embeddings " +
                                              std::to_string(m.arch.max_position_embeddings) + " less its position ids' offset " +
                                              std::to_string(m.arch.position_offset) + ", pad_token_id + 1)"
                                        : "max_position_embeddings " + std::to_string(max)));
}

// A pooling model's longest input; a config without positions takes `fallback`.
std::uint64_t longest_input_or(const ModelSpec& m, std::uint64_t fallback) {
  const std::uint64_t n = encoder_max_input(m.arch);
  return n ? n : fallback;
}

}  // namespace

Workload hf_pooling_default_workload(const ModelSpec& model) {
  // SentenceTransformer.encode(batch_size=32); the model's max_seq_length (512 for BERT-style
  // checkpoints) when --context is not given.
  return {32, std::min<std::uint64_t>(longest_input_or(model, 512), 512)};
}

std::uint64_t tei_base_input_length(const ModelSpec& model) { return encoder_max_input(model.arch); }

void refuse_pooling_workload_flags(const ModelSpec& model, std::string_view engine, const PoolingWorkloadFlags& given) {
  const std::string what = model.id + " (" + model_kind(model) + ")";
  if (given.spec_accept_length)
    throw_usage("--spec-accept-length does not apply to " + what + ": a pooling model generates no tokens, so nothing is drafted");
  // TEI forms its batches by tokens (core/src/queue.rs queue_blocking_task): it takes no input count.
  if (engine == "tei" && given.batch)
    throw_usage("--batch: TEI forms its batches by --max-batch-tokens and --max-batch-requests");
  // router/src/main.rs Args has no length flag: every input is served up to max_input_length
  // (router/src/lib.rs: the model's, or --max-batch-tokens under --auto-truncate).
  if (engine == "tei" && given.context)
    throw_usage("--context: TEI has no input-length flag; it serves inputs up to the model's max input length (" +
                std::to_string(tei_base_input_length(model)) + " tokens for " + model.id +
                ", or --max-batch-tokens with --auto-truncate): give --max-batch-tokens");
  // The pooling runner's peak is its token budget (plan_pooling_vllm): a count of inputs moves nothing.
  if (engine == "vllm" && given.batch && is_encoder(model.arch))
    throw_usage("--batch does not apply to " + what + " under vllm: the pooling runner batches by --max-num-batched-tokens "
                "and --max-num-seqs");
}

std::vector<Component> encoder_forward_activation(const ModelSpec& model, const EncoderForward& f) {
  const auto& a = model.arch;
  const std::uint64_t T = checked_mul(f.inputs, f.seq_len, "tokens"), d = f.compute_bytes;
  const std::uint64_t q = a.num_heads * a.head_dim, kv = a.num_kv_heads * a.head_dim;
  // Attention: the layer input (kept for the residual), q, k, v and the attention output.
  const std::uint64_t attn_width = a.hidden_size + 2 * q + 2 * kv;
  // MLP: the input (residual) and the intermediate activations: up and its activation
  // (BertIntermediate dense + GELU), or up, gate and act(gate) for a gated MLP (GeGLU / SwiGLU).
  const bool gated = encoder_mlp_is_gated(model);
  const std::uint64_t mlp_width = a.hidden_size + (gated ? 3 : 2) * a.intermediate_size;
  std::uint64_t scores = 0;
  if (f.eager_scores)  // eager_attention_forward: matmul scores and their softmax, both in the compute dtype
    scores = checked_mul(checked_mul(checked_mul(f.inputs, a.num_heads, "scores"), checked_mul(f.seq_len, f.seq_len, "scores"), "scores"),
                         2 * d, "scores");
  const std::uint64_t attn = checked_add(checked_mul(T * d, attn_width, "attention"), scores, "attention");
  const std::uint64_t mlp = checked_mul(T * d, mlp_width, "mlp");
  const std::string tokens = std::to_string(f.inputs) + " x " + std::to_string(f.seq_len) + " tokens x " + std::to_string(d) + " B";
  std::vector<Component> out;
  if (attn >= mlp) {
    out.push_back({"activation.attention", Bytes(checked_mul(T * d, attn_width, "attention")),
                   "one layer's attention live set: " + tokens + " x (h + 2 x heads·head_dim + 2 x kv_heads·head_dim) = x " +
                       std::to_string(attn_width)});
    if (scores > 0)
      out.push_back({"activation.attention_scores", Bytes(scores),
                     "eager attention: " + std::to_string(f.inputs) + " x " + std::to_string(a.num_heads) + " heads x " +
                         std::to_string(f.seq_len) + "² scores + their softmax x " + std::to_string(d) + " B"});
  } else {
    out.push_back({"activation.mlp", Bytes(mlp), "one layer's MLP live set: " + tokens + " x (h + " + (gated ? "3" : "2") +
                                                     " x intermediate) = x " + std::to_string(mlp_width)});
  }
  return out;
}

double encoder_flops_per_input(const ModelSpec& model, std::uint64_t seq_len) {
  double layer_params = 0;
  for (const auto& t : model.tensors)
    if (t.layer) layer_params += static_cast<double>(t.elements());
  const auto& a = model.arch;
  const double s = static_cast<double>(seq_len);
  const double attention = 4.0 * s * static_cast<double>(a.num_heads * a.head_dim) * static_cast<double>(a.num_layers);
  return s * (2.0 * layer_params + attention);
}

void refuse_non_pooling_flags(const EngineArgs& args, std::string_view engine, const ModelSpec& model,
                              const std::vector<std::string>& applicable) {
  for (const auto& [flag, value] : args) {
    if (std::find(applicable.begin(), applicable.end(), flag) != applicable.end()) continue;
    // A sweep states every layout's degrees: one GPU is the layout an encoder runs on.
    if ((flag == "tensor-parallel-size" || flag == "pipeline-parallel-size") && value == "1") continue;
    std::string names;
    for (const auto& a : applicable) names += (names.empty() ? "--" : ", --") + a;
    throw_usage("--" + flag + " does not apply to " + model.id + " (" + model_kind(model) +
                ": no KV cache, no generation) under " + std::string(engine) + "; flags that apply: " + names);
  }
}

MemoryPlan plan_pooling_transformers(const Engine& engine, const EngineProfileData& d, const PlanInput& in) {
  MemoryPlan p = named_plan(engine, d, in);
  const auto& m = in.model;
  refuse_non_pooling_flags(in.args, engine.name(), m, {"dtype", "attn-implementation", "kept-embeddings"});
  // hf_pooling_default_workload: encode(batch_size=32) at min(longest input, 512) unless given.
  // Inputs are padded to the longest of the batch.
  const Workload defaults = hf_pooling_default_workload(m);
  const std::uint64_t B = in.workload.batch.value_or(*defaults.batch);
  const std::uint64_t S = in.workload.context.value_or(*defaults.context);
  check_encoder_length(m, S, "--context");
  const std::string attn = arg_string(in.args, "attn-implementation").value_or("sdpa");
  if (attn != "sdpa" && attn != "eager")
    throw_usage("--attn-implementation: expected sdpa or eager for " + m.arch.architecture + ", got '" + attn + "'");
  // from_pretrained keeps the checkpoint dtype unless --dtype says otherwise (fp32 for BGE / e5).
  const auto rw = place_pooling_weights(p, in, arg_string(in.args, "dtype"), false, 1);
  add_forward(p, m, {B, S, rw.compute_bytes, attn == "eager"});
  const auto kept = arg_u64(in.args, "kept-embeddings");
  // The replay first, kept embeddings on top: what the allocator reserved for the forwards stays
  // reserved (CUDACachingAllocator frees nothing back to the device), and the kept batches'
  // outputs, each below 1 MiB at sentence-transformers' batch sizes, come from its small-block
  // pool (kSmallSize), apart from the large blocks the forwards used. A plan that holds more
  // embeddings never plans less than the plain one.
  const bool replayed = hf_encoder_replay_applies(m);
  if (replayed) add_caching_allocator(p, m, rw.tensor_bytes, {B, S, rw.compute_bytes, attn == "eager"}, in.gpu.capability());
  if (kept) add_kept_outputs(p, m, *kept, rw.compute_bytes);
  p.overhead.push_back({"overhead.cuda_context", in.measured_context.value_or(Bytes::from_gib(d.number("cuda_context_gib"))),
                        in.measured_context ? in.measured_context_source : d.source("cuda_context_gib")});
  no_kv(p, m);
  check_fit(p, in.gpu.total, "CUDA out of memory");
  p.notes.push_back("pooling model under transformers / sentence-transformers: batch " + std::to_string(B) + " padded to " +
                    std::to_string(S) + " tokens, " + attn + " attention; " +
                    (kept
                         ? std::string("encode(convert_to_tensor=True) keeps every batch's embeddings on the GPU and stacks them at the end")
                         : std::string("encode() moves each batch's embeddings to the CPU (convert_to_numpy), so only one batch of "
                                       "pooled outputs is on the GPU")));
  if (!replayed)
    p.notes.push_back("the caching allocator's reserved memory beyond the live set is not included (the allocator replay "
                      "follows transformers' BERT / RoBERTa code)");
  p.engine_view = {{"runner", "pooling"}, {"batch", B}, {"sequence_length", S}, {"attn_implementation", attn},
                   {"task", std::string(encoder_task_name(encoder_task(m.arch)))}};
  return p;
}

MemoryPlan plan_pooling_vllm(const Engine& engine, const EngineProfileData& d, const PlanInput& in) {
  MemoryPlan p = named_plan(engine, d, in);
  const auto& m = in.model;
  refuse_non_pooling_flags(in.args, engine.name(), m,
                           {"gpu-memory-utilization", "max-model-len", "max-num-seqs", "max-num-batched-tokens", "dtype",
                            "enforce-eager"});
  const double util = arg_double(in.args, "gpu-memory-utilization").value_or(d.number("gpu_memory_utilization"));
  if (!(util > 0.0 && util <= 1.0)) throw_usage("--gpu-memory-utilization must be in (0, 1]");
  // The length as the decoder path takes it: the flag, else the workload's (check / sweep pass a
  // --context as the engine's length), else the model's positions.
  const auto given_len = arg_u64(in.args, "max-model-len");
  // vLLM's derived length of a sentence-transformers model is its max_seq_length (config/model.py
  // _get_and_verify_max_len: derived_max_model_len = encoder_config["max_seq_length"]); the
  // catalogue does not carry that file, so the longest input the position table serves stands in
  // for it: max_position_embeddings less RoBERTa's offset (8192 for XLM-R-based BGE-M3, whose
  // sentence_bert_config.json says 8192).
  const std::uint64_t positions = encoder_max_input(m.arch);
  const std::uint64_t max_len = given_len.value_or(in.workload.context.value_or(positions));
  if (max_len == 0) throw_usage("--max-model-len is required: " + m.id + " has no max_position_embeddings");
  // vLLM refuses a longer max_model_len for every model at start-up (config/model.py
  // _get_and_verify_max_len), before anything is loaded: a refusal of the flag, not a usage error,
  // so a sweep over lengths lists it as a miss.
  const bool too_long = positions > 0 && max_len > positions;
  // The token budget when the user gives none. From 0.11 (data/engines/vllm.json
  // pooling_budget_from_usage_defaults) EngineArgs._set_default_max_num_seqs_and_batched_tokens_args
  // (vllm/engine/arg_utils.py) fills it from get_batch_defaults before SchedulerConfig exists:
  // max(max_model_len, the GPU class's server default) — an encoder runs without chunked
  // prefill — capped at max_num_seqs x max_model_len; SchedulerConfig.__post_init__'s raise to
  // POOLING_MODEL_MAX_NUM_BATCHED_TOKENS only applies to a budget still unset, which older
  // profiles keep.
  const bool usage_defaults = d.flag("pooling_budget_from_usage_defaults");
  std::uint64_t seqs = 0, T = 0;
  std::string budget_rule;
  if (usage_defaults) {
    const auto sd = v1_scheduler_defaults(d, in.gpu, in.args);
    seqs = arg_u64(in.args, "max-num-seqs").value_or(sd.max_num_seqs);
    T = arg_u64(in.args, "max-num-batched-tokens")
            .value_or(std::min(std::max(max_len, sd.max_num_batched_tokens), checked_mul(seqs, max_len, "tokens")));
    budget_rule = "max(max_model_len, " + std::to_string(sd.max_num_batched_tokens) + ": the server default of the " + sd.explain +
                  ") capped at max_num_seqs x max_model_len";
  } else {
    seqs = arg_u64(in.args, "max-num-seqs").value_or(d.u64("large_gpu_max_num_seqs"));
    T = arg_u64(in.args, "max-num-batched-tokens")
            .value_or(std::max<std::uint64_t>(max_len, d.u64("pooling_max_num_batched_tokens")));
    budget_rule = "max(max_model_len, POOLING_MODEL_MAX_NUM_BATCHED_TOKENS " + std::to_string(d.u64("pooling_max_num_batched_tokens")) + ")";
  }
  if (T < max_len)
    throw_usage("--max-num-batched-tokens " + std::to_string(T) + " is below --max-model-len " + std::to_string(max_len) +
                ": a pooling model runs each input in one step (no chunked prefill)");
  const auto rw = place_pooling_weights(p, in, arg_string(in.args, "dtype"), true, 64);
  // The peak is the first step that schedules a full budget: T unpadded tokens (varlen attention)
  // in min(T, max_num_seqs) requests, then the pooler. Nothing reserves it at start-up: a model
  // whose layers all lack a KV cache spec (encoder-only attention) skips
  // determine_available_memory and its profile_run (vllm/v1/engine/core.py
  // EngineCore._initialize_kv_caches: has_kv_cache false -> no profiling); the warm-up after graph
  // capture runs only min(max_num_seqs, max_num_batched_tokens) tokens
  // (vllm/v1/worker/gpu_worker.py compile_or_warm_up_model: _dummy_run + _dummy_pooler_run).
  // Varlen attention keeps no per-request padding or scores, so the layer live sets follow the
  // token count alone (counted as one run of T tokens); the pooler then holds one vector per request.
  const std::uint64_t reqs = std::max<std::uint64_t>(1, std::min(T, seqs));
  for (auto& c : encoder_forward_activation(m, {1, T, rw.compute_bytes, false})) p.activation.push_back(std::move(c));
  add_pooled(p, m, reqs, rw.compute_bytes);
  const Bytes non_torch = Bytes::from_gib(d.number("non_torch_gib_tp1"));
  p.overhead.push_back({"non_torch", non_torch, d.source("non_torch_gib_tp1")});
  no_kv(p, m);
  // Without a profile run gpu_memory_utilization caps nothing: vLLM only requires that much free
  // memory at start-up (vllm/v1/worker/gpu_worker.py init_device: "Free memory on device ... on
  // startup is less than desired GPU memory utilization"), and a full batch then allocates on
  // demand, up to the whole GPU.
  check_fit(p, in.gpu.total, "CUDA out of memory when a full batch of " + std::to_string(T) + " tokens runs");
  p.notes.push_back("vLLM pooling runner: encoder-only attention has no KV cache spec, so vLLM allocates no pool and runs no "
                    "memory profile at start-up; gpu_memory_utilization (" + std::to_string(util).substr(0, 4) +
                    ") is only the free memory it requires at start-up, and the peak above is reached by the first full batch");
  p.notes.push_back("max_num_batched_tokens " + std::to_string(T) + " = " +
                    (arg_u64(in.args, "max-num-batched-tokens") ? std::string("--max-num-batched-tokens") : budget_rule));
  p.notes.push_back("CUDA graph pool not counted: pooling models capture piecewise graphs up to 512 tokens "
                    "(vllm/config/vllm.py: full cudagraphs not supported for pooling models); logged 0.01 GiB for "
                    "nomic-embed-text-v1.5 under 0.13 (docs/accuracy-encoders.md), no estimate for encoders");
  p.engine_view = {{"runner", "pooling"}, {"max_num_batched_tokens", T}, {"max_model_len", max_len}, {"max_num_seqs", seqs},
                   {"peak_batch_requests", reqs}, {"gpu_memory_utilization", util},
                   {"task", std::string(encoder_task_name(encoder_task(m.arch)))}};
  if (too_long) {
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "User-specified max_model_len (" + std::to_string(max_len) + ") is greater than the derived max_model_len (" +
               (m.arch.position_offset ? "max_seq_length=" : "max_position_embeddings=") + std::to_string(positions) +
               " in model's config.json" +
               (m.arch.position_offset ? "; max_position_embeddings " + std::to_string(m.arch.max_position_embeddings) +
                                             " less the position offset " + std::to_string(m.arch.position_offset)
                                       : std::string()) +
               "). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1";
  }
  return p;
}

MemoryPlan plan_pooling_tei(const Engine& engine, const EngineProfileData& d, const PlanInput& in) {
  MemoryPlan p = named_plan(engine, d, in);
  const auto& m = in.model;
  const std::uint64_t T = arg_u64(in.args, "max-batch-tokens").value_or(d.u64("max_batch_tokens"));
  const std::uint64_t concurrent = arg_u64(in.args, "max-concurrent-requests").value_or(d.u64("max_concurrent_requests"));
  if (T == 0 || concurrent == 0) throw_usage("--max-batch-tokens and --max-concurrent-requests must be >= 1");
  // router/src/lib.rs: base_input_length = the sentence-transformers max_seq_length, else
  // max_position_embeddings - position_offset (pad_token_id + 1 for xlm-roberta / roberta /
  // camembert); the catalogue carries no sentence-transformers config, so the latter. Above
  // --max-batch-tokens TEI bails unless --auto-truncate is on (false by default up to 1.8, true
  // from 1.9.0, PR #829: data/engines/tei.json auto_truncate), then truncates inputs to it.
  const std::uint64_t base = tei_base_input_length(m) ? tei_base_input_length(m) : T;
  const auto truncate_arg = arg_string(in.args, "auto-truncate");
  if (truncate_arg && *truncate_arg != "true" && *truncate_arg != "false")
    throw_usage("--auto-truncate: expected true or false, got '" + *truncate_arg + "'");
  const bool auto_truncate = truncate_arg ? *truncate_arg == "true" : d.flag("auto_truncate");
  const std::uint64_t max_input = std::min(base, T);
  const bool truncated = base > T;
  // Backend::warmup (GPU, not padded): max_batch_tokens tokens in requests of max_input tokens,
  // at most --max-batch-requests of them.
  std::uint64_t reqs = (T + max_input - 1) / max_input;
  if (auto r = arg_u64(in.args, "max-batch-requests")) {
    if (*r == 0) throw_usage("--max-batch-requests must be >= 1 (0 batches no input)");
    reqs = std::min(reqs, *r);
  }
  const std::string dtype = arg_string(in.args, "dtype").value_or(d.string("dtype"));
  if (dtype != "float16" && dtype != "bfloat16" && dtype != "float32")
    throw_usage("--dtype: expected float16, bfloat16 or float32, got '" + dtype + "'");
  const auto rw = place_pooling_weights(p, in, dtype, false, 1);
  add_forward(p, m, {reqs, std::min(T, reqs * max_input) / reqs, rw.compute_bytes, false});
  p.overhead.push_back({"overhead.cuda_context", in.measured_context.value_or(Bytes::from_gib(d.number("cuda_context_gib"))),
                        in.measured_context ? in.measured_context_source : d.source("cuda_context_gib")});
  no_kv(p, m);
  check_fit(p, in.gpu.total, "TEI warmup runs out of memory");
  if (truncated && !auto_truncate) {
    // TEI 1.8.3 router/src/lib.rs, its own words.
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "`--max-batch-tokens` cannot be lower than the model `max_input_length` (" + std::to_string(base) + " < " +
               std::to_string(T) + ") when `--auto-truncate` is disabled, add the `--auto-truncate` flag to truncate the "
               "input sequences to match the `--max-batch-tokens`";
  } else if (truncated) {
    p.notes.push_back("--auto-truncate: inputs are truncated to --max-batch-tokens " + std::to_string(T) + " tokens (the model's max "
                      "input length is " + std::to_string(base) + "; router/src/lib.rs warns and truncates)");
  }
  p.notes.push_back("text-embeddings-inference: --max-concurrent-requests (" + std::to_string(concurrent) +
                    ") bounds the router's queue on the host; GPU memory follows --max-batch-tokens (" + std::to_string(T) + ")");
  p.engine_view = {{"runner", "pooling"}, {"max_batch_tokens", T}, {"max_input_length", max_input}, {"auto_truncate", auto_truncate},
                   {"warmup_requests", reqs},
                   {"max_concurrent_requests", concurrent}, {"dtype", dtype},
                   {"task", std::string(encoder_task_name(encoder_task(m.arch)))}};
  return p;
}

}  // namespace vramplan::memory
