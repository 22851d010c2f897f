// Hugging Face transformers generate() / PyTorch eager profile: weights + a DynamicCache that grows
// to batch x (prompt + new tokens) for EVERY layer (sliding layers are not trimmed by DynamicCache)
// + the activation peak of generate() + the CUDA context. The activation peak is the larger of two
// moments that are never live together (docs/accuracy-hf.md): one layer's prefill live set (plus
// eager attention scores) and the logits after the last layer — fp32 logits of the last position
// where generate() passes logits_to_keep=1, of every prompt position before that.
#include "vramplan/core/error.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/memory/engine_setup.hpp"
#include "vramplan/model/encoder.hpp"

namespace vramplan::memory {

namespace {

class HfEngine final : public Engine {
 public:
  explicit HfEngine(EngineProfileData d) : d_(std::move(d)) {}
  std::string_view name() const override { return "hf"; }
  std::string_view version() const override { return d_.version(); }
  std::string_view release() const override { return d_.release(); }
  std::vector<EngineOption> options() const override {
    return {{"dtype", "torch_dtype: auto, bfloat16, float16, float32", false, {}},
            {"attn-implementation", "sdpa (default), flash_attention_2, eager", false, {}},
            {"kv-cache-dtype", "cache dtype (default: the model dtype)", false, {}},
            {"max-new-tokens", "generate(max_new_tokens): the prompt is --context minus this (default 0)", false, {}, OptionValue::whole},
            {"kept-embeddings", "pooling models: N embeddings kept on the GPU until encode() returns (convert_to_tensor=True; "
                                "plan --documents N --keep-embeddings-on-gpu sets it)", false, {}, OptionValue::whole}};
  }

  // One rule for every command: encode(batch_size=32) at min(longest input, 512) for a pooling
  // model; generate() at the profile's default length (data/engines/hf.json default_context).
  Workload default_workload(const ModelSpec& model, const EngineArgs& /*args*/) const override {
    if (is_pooling_model(model)) return hf_pooling_default_workload(model);
    return {std::nullopt, d_.u64("default_context")};
  }

  MemoryPlan plan(const PlanInput& in) const override {
    // An encoder (BERT, XLM-R, ...) or a decoder embedder is a pooling model: sentence-transformers
    // encode(), one forward pass per batch (use_cache is off for AutoModel's Qwen3Model in encode).
    if (is_pooling_model(in.model)) return plan_pooling_transformers(*this, d_, in);
    MemoryPlan p = start_plan(*this, d_, in);
    const auto& a = in.args;
    if (a.count("kept-embeddings"))
      throw_usage("--kept-embeddings applies to pooling models (encoders, embedders); " + in.model.id + " generates");
    const auto& arch = in.model.arch;
    const std::uint64_t B = in.workload.batch.value_or(1);
    const std::uint64_t S = in.workload.context.value_or(d_.u64("default_context"));
    if (B == 0 || S == 0) throw_usage("--batch and --context must be >= 1");
    const std::string attn = arg_string(a, "attn-implementation").value_or("sdpa");
    if (attn != "sdpa" && attn != "eager" && attn != "flash_attention_2")
      throw_usage("--attn-implementation: expected sdpa, flash_attention_2 or eager, got '" + attn + "'");
    const ResolvedWeights rw = place_weights(p, in, {arg_string(a, "dtype"), std::nullopt, in.weights, false}, {1, 1, 0, 1, false});
    const KvLayout kv = place_kv_layout(p, in, rw, 1);
    const std::uint64_t new_tokens = arg_u64(a, "max-new-tokens").value_or(0);
    if (new_tokens >= S) throw_usage("--max-new-tokens must be below --context (the prompt is context - new tokens)");
    const std::uint64_t P = S - new_tokens, ab = rw.compute_bytes, T = checked_mul(B, P, "prompt tokens");
    add_causal_mask_buffers(p, arch);
    std::vector<Component> layer, logits;
    layer.push_back({"activation.prefill", Bytes(checked_mul(T * ab, 3 * arch.hidden_size + 3 * arch.intermediate_size, "activation")),
                     "prefill live set B·P·a·(3h + 3I) for one layer"});
    if (attn == "eager") {
      // Scores in the model dtype plus the fp32 softmax copy, one layer at a time.
      const std::uint64_t scores = checked_mul(checked_mul(checked_mul(B, arch.num_heads), P), P * (ab + 4), "attention scores");
      layer.push_back({"activation.attention_scores", Bytes(scores), "eager attention: B·heads·P²·(a + 4 B fp32 softmax)"});
    }
    if (d_.flag("logits_over_prompt")) {
      logits.push_back({"activation.logits", Bytes(checked_mul(checked_mul(T, arch.vocab_size, "logits"), ab + 4, "logits")),
                        "logits of every prompt position in the model dtype + their fp32 copy: B·P·vocab·(a + 4)"});
    } else {
      logits.push_back({"activation.logits", Bytes(checked_mul(B * arch.vocab_size, 4, "logits")), "fp32 logits of the last position: B x vocab x 4 B"});
    }
    const bool logits_peak = sum_bytes(logits) > sum_bytes(layer);
    // Two candidate moments: the prefill (the cache holds the prompt's B·P tokens while the
    // activations above are live) and the last decode step (B·S tokens cached, one token's
    // activations and fp32 logits, B·V·4, live). The plan shows the larger.
    const Bytes prefill_act = logits_peak ? sum_bytes(logits) : sum_bytes(layer);
    const Bytes decode_logits(checked_mul(B * arch.vocab_size, 4, "logits"));
    const auto kv_of = [&](std::uint64_t tokens) { return Bytes(checked_mul(checked_mul(kv.bytes_per_token, B), tokens, "KV cache")); };
    const bool prefill_peak = kv_of(P) + prefill_act >= kv_of(S) + decode_logits;
    const std::uint64_t kv_tokens = prefill_peak ? P : S;
    p.kv_cache.push_back({"kv_cache", kv_of(kv_tokens),
                          "DynamicCache: batch " + std::to_string(B) + " x " + std::to_string(kv_tokens) + " tokens x " +
                              grouped(kv.bytes_per_token) + " B/token (all layers, no window trimming)" +
                              (prefill_peak && P < S ? "; at the prefill peak, before the " + std::to_string(new_tokens) + " new tokens" : "")});
    if (prefill_peak) {
      for (const auto& c : logits_peak ? logits : layer) p.activation.push_back(c);
    } else {
      p.activation.push_back({"activation.logits", decode_logits, "last decode step: fp32 logits of one position, B x vocab x 4 B"});
    }
    if (!prefill_peak) {
      p.notes.push_back("peak at the last decode step: the cache of " + std::to_string(S) + " tokens outweighs the prefill (" +
                        std::to_string(P) + " cached tokens + its activation peak)");
    } else if (logits_peak) {
      p.notes.push_back("activation peak: the logits (" + format_gib(sum_bytes(logits)) + ") exceed one layer's prefill live set (" +
                        format_gib(sum_bytes(layer)) + "), which is freed before them");
    } else {
      p.notes.push_back("activation peak: one layer's prefill live set (" + format_gib(sum_bytes(layer)) + ") exceeds the logits (" +
                        format_gib(sum_bytes(logits)) + "), computed after it");
    }
    p.overhead.push_back({"overhead.cuda_context", in.measured_context.value_or(Bytes::from_gib(d_.number("cuda_context_gib"))),
                          in.measured_context ? in.measured_context_source : d_.source("cuda_context_gib")});
    const Bytes fixed = p.weights_bytes() + p.activation_bytes() + p.overhead_bytes();
    p.kv.capacity_tokens = fixed < in.gpu.total && kv.bytes_per_token ? (in.gpu.total - fixed).count() / kv.bytes_per_token : 0;
    p.kv.max_concurrency = static_cast<double>(*p.kv.capacity_tokens) / static_cast<double>(S);
    if (p.total_bytes() > in.gpu.total) {
      p.fits = false;
      p.reason = "CUDA out of memory: weights + KV cache + activation peak need " + format_gib(p.total_bytes()) +
                 " of " + format_gib(in.gpu.total);
    }
    p.notes.push_back("first-order HF generate() profile on one GPU; the caching allocator's fragmentation is not included");
    p.engine_view = {{"batch", B}, {"sequence_length", S}, {"prompt_tokens", P}, {"attn_implementation", attn}, {"activation_peak", prefill_peak ? (logits_peak ? "prefill logits" : "prefill layer") : "decode"}};
    return p;
  }

 private:
  // Causal-mask buffers some modeling files register at load time (bool, max_positions²): counted by
  // torch.cuda.max_memory_allocated like a weight. Profiles whose transformers builds the mask per
  // forward set causal_mask_buffers = 0.
  void add_causal_mask_buffers(MemoryPlan& p, const ModelArch& arch) const {
    struct MaskBuffer { std::string_view model_type; bool per_layer; std::string_view source; };
    static constexpr MaskBuffer kBuffers[] = {
        {"gpt_bigcode", false, "GPTBigCodeModel: register_buffer(\"bias\", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)), persistent=False)"},
        {"gpt_neox", true, "GPTNeoXAttention (before the 4.48 attention refactor): register_buffer(\"bias\", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions), persistent=False) in every layer"},
    };
    if (!d_.flag("causal_mask_buffers")) return;
    for (const auto& b : kBuffers) {
      if (b.model_type != arch.model_type) continue;
      const std::uint64_t one = checked_mul(arch.max_position_embeddings, arch.max_position_embeddings, "causal mask");
      p.weights.push_back({"buffers.causal_mask", Bytes(checked_mul(one, b.per_layer ? arch.num_layers : 1, "causal mask")),
                           std::string(b.source) + " (modeling_" + std::string(b.model_type) + ".py)"});
    }
  }

  EngineProfileData d_;
};

}  // namespace

std::unique_ptr<Engine> make_hf_engine(const std::filesystem::path& data_dir, std::string_view version) {
  return std::make_unique<HfEngine>(EngineProfileData::load(data_dir, "hf", version));
}

}  // namespace vramplan::memory
