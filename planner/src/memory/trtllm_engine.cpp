// TensorRT-LLM profile (first order): the KV budget is free_gpu_memory_fraction of the memory
// still free after weights, activation buffers and the runtime are in place (KvCacheConfig;
// https://nvidia.github.io/TensorRT-LLM/reference/memory.html). The budget becomes blocks the way
// TensorRT-LLM does it (trtllm_kv_blocks below); docs/accuracy-trtllm.md checks it against logs.
#include <algorithm>
#include <cmath>
#include <optional>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/memory/engine_setup.hpp"

namespace vramplan::memory {

namespace {

//! Budget bytes -> blocks as TensorRT-LLM sizes its pool. Both backends turn the budget into a
//! token count first, rounding down (PyTorch: _util.py KvCacheCreator, `max_tokens =
//! int(kv_cache_max_memory // kv_size_per_token)`; C++: kvCacheManager.cpp calculateMaxNumBlocks,
//! `maxTokens = freeMemFraction * freeMem / cacheSizeBytesPerToken`), and the block count is that
//! token count rounded UP to whole blocks ("rounded up to the next multiple of block size during
//! allocation", NVIDIA/TensorRT-LLM#224). Logged: 860308 -> 860320 tokens (#6294), 40,347 tokens
//! -> 631 blocks of 64 (#2268). An explicit max_tokens / max_gpu_total_bytes caps the budget: "The
//! smaller value will be used" (KvCacheConfig).
struct KvBlocks {
  std::uint64_t tokens_budget = 0;  //!< before rounding to blocks
  std::uint64_t blocks = 0;
};
KvBlocks trtllm_kv_blocks(std::uint64_t budget_bytes, std::uint64_t bytes_per_token, std::uint64_t block,
                          std::optional<std::uint64_t> max_tokens) {
  KvBlocks k;
  if (bytes_per_token == 0) return k;
  k.tokens_budget = budget_bytes / bytes_per_token;
  if (max_tokens) k.tokens_budget = std::min(k.tokens_budget, *max_tokens);
  k.blocks = ceil_div(k.tokens_budget, block);
  return k;
}

class TrtllmEngine final : public Engine {
 public:
  explicit TrtllmEngine(EngineProfileData d) : d_(std::move(d)) {}
  std::string_view name() const override { return "trtllm"; }
  std::string_view version() const override { return d_.version(); }
  std::string_view release() const override { return d_.release(); }
  std::vector<EngineOption> options() const override {
    // Aliases: trtllm-serve's own underscore spellings (tensorrt_llm/commands/serve.py), as the
    // launch line writes them.
    return {{"free-gpu-memory-fraction", "share of free memory (after weights/activations) for KV", false, {"kv_cache_free_gpu_memory_fraction"}, OptionValue::number},
            {"max-batch-size", "max sequences", false, {"max_batch_size"}, OptionValue::whole},
            {"max-num-tokens", "max tokens per step (activation buffers)", false, {"max_num_tokens"}, OptionValue::whole},
            {"max-seq-len", "max sequence length", false, {"max_seq_len"}, OptionValue::whole},
            {"tokens-per-block", "KV block size", false, {}, OptionValue::whole},
            {"max-tokens", "KvCacheConfig.max_tokens: cap on KV tokens (the smaller budget wins)", false, {}, OptionValue::whole},
            {"max-gpu-total-bytes", "KvCacheConfig.max_gpu_total_bytes: cap on KV bytes (the smaller budget wins)", false, {}, OptionValue::whole},
            {"kv-cache-dtype", "auto, fp8, int8", false, {}},
            {"tp-size", "tensor parallel size", false, {"tp", "tp_size"}, OptionValue::whole},
            // Not "pp": layout searches leave TensorRT-LLM at one stage.
            {"pp-size", "pipeline parallel size: 1 (TensorRT-LLM pipeline parallelism is not modelled)", false, {"pp_size"}, OptionValue::whole},
            {"dtype", "auto, bfloat16, float16", false, {}},
            {"quantization", "fp8 or the checkpoint's method", false, {}},
            {"capacity-scheduler-policy", "scheduler_config.capacity_scheduler_policy: GUARANTEED_NO_EVICT (default), MAX_UTILIZATION or STATIC_BATCH", false, {}},
            {"enable-block-reuse", "kv_cache_config.enable_block_reuse: true or false (reuse the KV blocks of a shared prompt prefix)", false, {}},
            {"enable-chunked-prefill", "enable_chunked_prefill: true or false (split a context over several steps)", false, {}}};
  }

  MemoryPlan plan(const PlanInput& in) const override {
    MemoryPlan p = start_plan(*this, d_, in);
    const auto& a = in.args;
    const auto& arch = in.model.arch;
    const std::uint64_t tp = place_tp_size(p, a);
    if (const auto pp = arg_u64(a, "pp-size"); pp && *pp != 1)
      throw_usage("--pp-size " + std::to_string(*pp) + ": TensorRT-LLM pipeline parallelism is not modelled (plan it at 1)");
    const double frac = arg_double(a, "free-gpu-memory-fraction").value_or(d_.number("free_gpu_memory_fraction"));
    if (!(frac > 0 && frac <= 1)) throw_usage("--free-gpu-memory-fraction must be in (0, 1]");
    const std::uint64_t T = arg_u64(a, "max-num-tokens").value_or(d_.u64("max_num_tokens"));
    const std::uint64_t B = arg_u64(a, "max-batch-size").value_or(d_.u64("max_batch_size"));
    const std::uint64_t block = arg_u64(a, "tokens-per-block").value_or(d_.u64("tokens_per_block"));
    if (block == 0) throw_usage("--tokens-per-block must be >= 1");
    // Zero would let no request run (a batch of none, a step of no tokens, a pool of no tokens).
    if (T == 0) throw_usage("--max-num-tokens must be >= 1");
    if (B == 0) throw_usage("--max-batch-size must be >= 1");
    const ResolvedWeights rw = place_weights(p, in, {arg_string(a, "dtype"), arg_string(a, "quantization"), in.weights},
                                             {tp, 1, 0, tp, false});
    const std::uint64_t ab = rw.compute_bytes;
    // A calibration's figures of this deployment (reconcile --update-calibration): what the C++
    // runtime logged (runtime/tllmRuntime.cpp: the execution context; batch_manager/
    // trtGptModelInflightBatching.cpp: runtime and decoder buffers, allocated before the pool is
    // sized) and the free memory kvCacheManager.cpp calculateMaxNumBlocks sized the pool from.
    const auto& dep = in.deployment;
    if (dep && dep->execution_context) {
      p.activation.push_back({"activation.execution_context", *dep->execution_context,
                              "the engine's execution context memory, logged, " + dep->source});
    } else {
      // Activation buffers: one layer's live set for max_num_tokens (memory.md: "activation size is
      // max_num_tokens x constant", blocks reused across layers) + fp32 logits of the batch.
      const std::uint64_t fwd = T * ab * (3 * arch.hidden_size + 3 * arch.intermediate_size / tp);
      const std::uint64_t logits = std::min(B, T) * arch.vocab_size * 4;
      p.activation.push_back({"activation.forward", Bytes(fwd), "max_num_tokens " + std::to_string(T) + " x a x (3h + 3 I/TP)"});
      p.activation.push_back({"activation.logits", Bytes(logits), "min(max_batch_size, max_num_tokens) x vocab x 4 B (fp32 logits)"});
    }
    if (dep && dep->runtime_buffers)
      p.overhead.push_back({"overhead.runtime_buffers", *dep->runtime_buffers, "the C++ runtime's buffers, logged, " + dep->source});
    if (dep && dep->decoder_buffers)
      p.overhead.push_back({"overhead.decoder", *dep->decoder_buffers, "the decoder's buffers, logged, " + dep->source});
    Bytes runtime = in.measured_context.value_or(Bytes::from_gib(d_.number("runtime_gib")));
    std::string runtime_explain = "CUDA context, cuBLAS workspaces, NCCL (" +
                                  (in.measured_context ? in.measured_context_source : d_.source("runtime_gib")) + ")";
    std::uint64_t free = 0;
    if (dep && dep->free_for_kv) {
      // The logged free memory is what the pool is a fraction of; what the card held besides the
      // planned components is the rest of the runtime (floored at 0: the planned weights or
      // buffers may exceed what the log implies).
      if (*dep->free_for_kv > in.gpu.total)
        throw_usage("calibration: the deployment's free memory for the KV cache (" + format_gib(*dep->free_for_kv) +
                    ") exceeds the card's total (" + format_gib(in.gpu.total) + "): plan it on the card its log came from");
      free = dep->free_for_kv->count();
      const Bytes held = in.gpu.total - *dep->free_for_kv;
      const Bytes planned = p.weights_bytes() + p.activation_bytes() + p.overhead_bytes();
      runtime = held > planned ? held - planned : Bytes(0);
      runtime_explain = "total " + format_gib(in.gpu.total) + " - logged free " + format_gib(*dep->free_for_kv) +
                        " - the components above (" + dep->source + ")";
      p.overhead.push_back({"overhead.runtime", runtime, runtime_explain});
    } else {
      p.overhead.push_back({"overhead.runtime", runtime, runtime_explain});
      const Bytes used = p.weights_bytes() + p.activation_bytes() + p.overhead_bytes();
      free = used < in.gpu.total ? (in.gpu.total - used).count() : 0;
    }
    const std::uint64_t from_fraction = static_cast<std::uint64_t>(std::floor(static_cast<double>(free) * frac));
    const auto byte_cap = arg_u64(a, "max-gpu-total-bytes");
    const auto token_cap = arg_u64(a, "max-tokens");
    if (token_cap && *token_cap == 0) throw_usage("--max-tokens must be >= 1");
    const std::uint64_t budget = byte_cap ? std::min(from_fraction, *byte_cap) : from_fraction;
    const KvLayout kv = place_kv_layout(p, in, rw, tp);
    const std::uint64_t block_bytes = kv.bytes_per_token * block;
    const KvBlocks kb = trtllm_kv_blocks(budget, kv.bytes_per_token, block, token_cap);
    const std::uint64_t blocks = kb.blocks;
    const std::uint64_t pool = checked_mul(blocks, block_bytes);  // "[MemUsageChange] Allocated X GiB ..."
    const bool capped = budget < from_fraction || (token_cap && kb.tokens_budget == *token_cap);
    p.kv_cache.push_back({"kv_cache", Bytes(pool),
                          std::to_string(kb.tokens_budget) + " tokens (" +
                              (capped ? std::string("--max-tokens / --max-gpu-total-bytes, smaller than ") : "") +
                              "free " + format_gib(Bytes(free)) + " x " + std::to_string(frac).substr(0, 4) + " / " +
                              std::to_string(kv.bytes_per_token) + " B) rounded up to " + std::to_string(blocks) +
                              " blocks x " + std::to_string(block) + " tokens"});
    p.kv.capacity_tokens = blocks * block;
    const std::uint64_t len = arg_u64(a, "max-seq-len").value_or(in.workload.context.value_or(arch.max_position_embeddings));
    if (len == 0) throw_usage("--max-seq-len must be >= 1 (the model gives no max_position_embeddings)");
    p.kv.max_concurrency = len ? static_cast<double>(blocks) / static_cast<double>(ceil_div(len, block)) : 0.0;
    if (blocks == 0 || (len && blocks < ceil_div(len, block))) {
      p.fits = false;
      p.reason = "the KV pool (" + format_gib(Bytes(budget)) + ") cannot hold one sequence of max_seq_len " + std::to_string(len);
    } else if (in.workload.batch && *p.kv.max_concurrency < static_cast<double>(*in.workload.batch)) {
      p.fits = false;
      p.reason = "the KV pool holds fewer than --batch sequences of the planned length";
    }
    if (dep && (dep->free_for_kv || dep->execution_context || dep->runtime_buffers || dep->decoder_buffers))
      p.notes.push_back("free memory, execution context, runtime and decoder buffers where the deployment's log gave them: " +
                        dep->source);
    else
      p.notes.push_back("first-order TensorRT-LLM profile: activation buffers estimated from max_num_tokens, not read from an engine");
    const std::string policy = arg_string(a, "capacity-scheduler-policy").value_or(d_.string("capacity_scheduler_policy"));
    if (policy != "GUARANTEED_NO_EVICT" && policy != "MAX_UTILIZATION" && policy != "STATIC_BATCH")
      throw_usage("--capacity-scheduler-policy: expected GUARANTEED_NO_EVICT, MAX_UTILIZATION or STATIC_BATCH, got '" +
                  policy + "'");
    // STATIC_BATCH (tensorrt_llm/llmapi/llm_args.py CapacitySchedulerPolicy; batch_manager
    // capacityScheduler.cpp StaticBatchScheduler) admits a new batch only when the whole running one
    // has finished. The KV pool is sized the same way under every policy, so the memory holds; the
    // batching is not modelled (simulate refuses it: sim/engine_rules.cpp), and plan / check say so.
    if (policy == "STATIC_BATCH") {
      p.flag_warnings.push_back("--capacity-scheduler-policy STATIC_BATCH: not modelled beyond memory (the KV pool is sized as "
                        "under every policy; the figures of throughput and latency assume in-flight batching, and "
                        "simulate refuses it)");
      p.notes.push_back(p.flag_warnings.back());
    }
    const auto setting = [&](const std::string& flag, const std::string& param) {
      return arg_string(a, flag) ? arg_switch(a, flag) : d_.flag(param);
    };
    p.engine_view = {{"free_gpu_memory_fraction", frac}, {"kv_pool_gib", static_cast<double>(pool) / static_cast<double>(kGiB)},
                     {"max_tokens", blocks * block}, {"tokens_per_block", block},
                     // What the log prints beside them (reconcile): the free memory the budget is a
                     // fraction of, the block count, the token budget before rounding up to blocks.
                     {"free_gib", static_cast<double>(free) / static_cast<double>(kGiB)}, {"kv_blocks", blocks},
                     {"kv_tokens_budget", kb.tokens_budget},
                     {"max_batch_size", B}, {"max_num_tokens", T}, {"max_seq_len", len},
                     {"capacity_scheduler_policy", policy},
                     {"enable_block_reuse", setting("enable-block-reuse", "enable_block_reuse")},
                     {"enable_chunked_prefill", setting("enable-chunked-prefill", "enable_chunked_prefill")}};
    return p;
  }

 private:
  EngineProfileData d_;
};

}  // namespace

std::unique_ptr<Engine> make_trtllm_engine(const std::filesystem::path& data_dir, std::string_view version) {
  return std::make_unique<TrtllmEngine>(EngineProfileData::load(data_dir, "trtllm", version));
}

}  // namespace vramplan::memory
