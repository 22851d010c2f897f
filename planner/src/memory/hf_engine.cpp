// Hugging Face transformers generate() / PyTorch eager profile (first order): weights + a
// DynamicCache that grows to batch x (prompt + new tokens) for EVERY layer (sliding layers are
// not trimmed by DynamicCache) + the prefill peak of one layer + fp32 logits of the last
// position (generate() passes logits_to_keep=1) + the CUDA context.
#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/memory/engine_setup.hpp"

namespace vramplan::memory {

namespace {

class HfEngine final : public Engine {
 public:
  explicit HfEngine(EngineProfileData d) : d_(std::move(d)) {}
  std::string_view name() const override { return "hf"; }
  std::string_view version() const override { return d_.version(); }
  std::vector<EngineOption> options() const override {
    return {{"dtype", "torch_dtype: auto, bfloat16, float16, float32", false, {}},
            {"attn-implementation", "sdpa (default), flash_attention_2, eager", false, {}},
            {"kv-cache-dtype", "cache dtype (default: the model dtype)", false, {}}};
  }

  MemoryPlan plan(const PlanInput& in) const override {
    MemoryPlan p = start_plan(*this, d_, in);
    const auto& a = in.args;
    const auto& arch = in.model.arch;
    const std::uint64_t B = in.workload.batch.value_or(1);
    const std::uint64_t S = in.workload.context.value_or(d_.u64("default_context"));
    if (B == 0 || S == 0) throw_usage("--batch and --context must be >= 1");
    const std::string attn = arg_string(a, "attn-implementation").value_or("sdpa");
    if (attn != "sdpa" && attn != "eager" && attn != "flash_attention_2")
      throw_usage("--attn-implementation: expected sdpa, flash_attention_2 or eager, got '" + attn + "'");
    const ResolvedWeights rw = place_weights(p, in, {arg_string(a, "dtype"), std::nullopt, in.weights, false}, {1, 1, 0, 1, false});
    const KvLayout kv = place_kv_layout(p, in, rw, 1);
    const std::uint64_t kv_bytes_total = checked_mul(checked_mul(kv.bytes_per_token, B), S, "KV cache");
    p.kv_cache.push_back({"kv_cache", Bytes(kv_bytes_total),
                          "DynamicCache: batch " + std::to_string(B) + " x " + std::to_string(S) + " tokens x " +
                              grouped(kv.bytes_per_token) + " B/token (all layers, no window trimming)"});
    const std::uint64_t ab = rw.compute_bytes, T = B * S;
    const std::uint64_t fwd = checked_mul(T * ab, 3 * arch.hidden_size + 3 * arch.intermediate_size, "activation");
    p.activation.push_back({"activation.prefill", Bytes(fwd), "prefill live set B·S·a·(3h + 3I) for one layer"});
    if (attn == "eager") {
      // Scores in the model dtype plus the fp32 softmax copy, one layer at a time.
      const std::uint64_t scores = checked_mul(checked_mul(checked_mul(B, arch.num_heads), S), S * (ab + 4), "attention scores");
      p.activation.push_back({"activation.attention_scores", Bytes(scores), "eager attention: B·heads·S²·(a + 4 B fp32 softmax)"});
    }
    p.activation.push_back({"activation.logits", Bytes(B * arch.vocab_size * 4), "fp32 logits of the last position: B x vocab x 4 B"});
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
    p.engine_view = {{"batch", B}, {"sequence_length", S}, {"attn_implementation", attn}};
    return p;
  }

 private:
  EngineProfileData d_;
};

}  // namespace

std::unique_ptr<Engine> make_hf_engine(const std::filesystem::path& data_dir, std::string_view version) {
  return std::make_unique<HfEngine>(EngineProfileData::load(data_dir, "hf", version));
}

}  // namespace vramplan::memory
