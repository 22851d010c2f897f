// SGLang profile (first order): the static pool (weights + KV token pool) is mem_fraction_static
// of total memory; the rest is left for activations and CUDA graphs
// (python/sglang/srt/model_executor/model_runner.py profile_max_num_token;
//  python/sglang/srt/server_args.py _handle_gpu_memory_settings).
#include <algorithm>
#include <cmath>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/memory/engine_setup.hpp"

namespace vramplan::memory {

namespace {

class SglangEngine final : public Engine {
 public:
  explicit SglangEngine(EngineProfileData d) : d_(std::move(d)) {}
  std::string_view name() const override { return "sglang"; }
  std::string_view version() const override { return d_.version(); }
  std::vector<EngineOption> options() const override {
    return {{"mem-fraction-static", "fraction of total memory for weights + KV pool (default derived)", false, {}},
            {"max-running-requests", "max concurrent requests", false, {}},
            {"context-length", "max context length (default: the model's)", false, {}},
            {"chunked-prefill-size", "tokens per prefill chunk", false, {}},
            {"cuda-graph-max-bs", "largest CUDA-graph batch", false, {}},
            {"kv-cache-dtype", "auto, fp8_e4m3, fp8_e5m2", false, {}},
            {"tp-size", "tensor parallel size", false, {"tp"}},
            {"dtype", "auto, bfloat16, float16, float32", false, {}},
            {"quantization", "fp8 (online) or the checkpoint's method", false, {}},
            {"disable-cuda-graph", "no CUDA graphs", true, {}}};
  }

  MemoryPlan plan(const PlanInput& in) const override {
    MemoryPlan p = start_plan(*this, d_, in);
    const auto& a = in.args;
    const auto& arch = in.model.arch;
    const std::uint64_t tp = place_tp_size(p, a);
    const std::uint64_t chunk = arg_u64(a, "chunked-prefill-size").value_or(d_.u64("chunked_prefill_size"));
    const std::uint64_t graph_bs = arg_switch(a, "disable-cuda-graph") ? 0 : arg_u64(a, "cuda-graph-max-bs").value_or(d_.u64("cuda_graph_max_bs"));
    // reserved_mem (MB) = chunked_prefill_size x 1.5 + cuda_graph_max_bs x 2 (server_args.py).
    const Bytes act_reserve = Bytes(static_cast<std::uint64_t>(static_cast<double>(chunk) * 1.5 * static_cast<double>(kMB)));
    const Bytes graph_reserve = Bytes(graph_bs * 2 * kMB);
    const double total = static_cast<double>(in.gpu.total.count());
    const double f = arg_double(a, "mem-fraction-static")
                         .value_or((total - static_cast<double>((act_reserve + graph_reserve).count())) / total);
    if (!(f > 0 && f < 1)) throw_usage("--mem-fraction-static must be in (0, 1)");

    const ResolvedWeights rw = place_weights(p, in, {arg_string(a, "dtype"), arg_string(a, "quantization"), in.weights},
                                             {tp, 1, 0, d_.u64("vocab_pad"), false});
    const Bytes weights = p.weights_bytes();
    // SGLang's cell_size: every layer in full (its SWA pools are engine-specific; not modelled).
    const KvLayout kv = place_kv_layout(p, in, rw, tp);
    const Bytes ctx = in.measured_context.value_or(Bytes::from_gib(d_.number("context_gib")));
    const std::string ctx_source = in.measured_context ? in.measured_context_source : d_.source("context_gib");
    const double pool_d = total * f - static_cast<double>((weights + ctx).count());
    const std::uint64_t pool = pool_d > 0 ? static_cast<std::uint64_t>(pool_d) : 0;
    const std::uint64_t tokens = kv.bytes_per_token ? pool / kv.bytes_per_token : 0;
    p.kv_cache.push_back({"kv_cache", Bytes(tokens * kv.bytes_per_token),
                          "token pool = total x mem_fraction_static - weights - context = " + grouped(tokens) +
                              " tokens x " + grouped(kv.bytes_per_token) + " B (page size 1)"});
    p.activation.push_back({"activation.reserve", act_reserve, "chunked_prefill_size " + std::to_string(chunk) + " x 1.5 MB (server_args.py reserve)"});
    p.overhead.push_back({"overhead.cuda_graphs", graph_reserve, "cuda_graph_max_bs " + std::to_string(graph_bs) + " x 2 MB"});
    p.overhead.push_back({"overhead.context", ctx, "CUDA context + libraries (" + ctx_source + ")"});
    p.kv.capacity_tokens = tokens;
    const std::uint64_t ctx_len = arg_u64(a, "context-length").value_or(in.workload.context.value_or(arch.max_position_embeddings));
    p.kv.max_concurrency = ctx_len ? static_cast<double>(tokens) / static_cast<double>(ctx_len) : 0.0;
    if (pool == 0) {
      p.fits = false;
      p.reason = "Not enough memory. Please try to increase --mem-fraction-static (weights need " + format_gib(weights) +
                 " of the " + format_gib(Bytes(static_cast<std::uint64_t>(total * f))) + " static budget)";
    } else if (in.workload.batch && *p.kv.max_concurrency < static_cast<double>(*in.workload.batch)) {
      p.fits = false;
      p.reason = "the token pool holds " + std::to_string(tokens) + " tokens, fewer than --batch x context";
    }
    p.notes.push_back("first-order SGLang profile: pool from mem_fraction_static " + std::to_string(f).substr(0, 5) +
                      "; sliding-window pools, DP attention and speculative buffers not modelled");
    p.engine_view = {{"mem_fraction_static", f}, {"max_total_num_tokens", tokens},
                     {"kv_pool_gib", static_cast<double>(pool) / static_cast<double>(kGiB)},
                     {"weights_gib", weights.gib()}};
    return p;
  }

 private:
  EngineProfileData d_;
};

}  // namespace

std::unique_ptr<Engine> make_sglang_engine(const std::filesystem::path& data_dir, std::string_view version) {
  return std::make_unique<SglangEngine>(EngineProfileData::load(data_dir, "sglang", version));
}

}  // namespace vramplan::memory
