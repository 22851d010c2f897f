// Decision-layer speed targets (issue 5): a sweep of 1,000,000 (GPU, context, batch) evaluations
// under 1 s on one core; the inner point under 1 us. `check` as a whole process is timed by
// tools/bench/time_check.sh (process start-up and file loading are most of it).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "vramplan/plan/check.hpp"
#include "vramplan/plan/sweep.hpp"

namespace {

using namespace vramplan;

// Llama-3.1-70B's config.json (meta-llama/Llama-3.1-70B-Instruct).
const std::string& llama70b_path() {
  static const std::string path = [] {
    const auto p = std::filesystem::temp_directory_path() / "vramplan_bench_llama70b.json";
    std::ofstream(p) << R"({"architectures":["LlamaForCausalLM"],"hidden_size":8192,"intermediate_size":28672,
"max_position_embeddings":131072,"model_type":"llama","num_attention_heads":64,"num_hidden_layers":80,
"num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_theta":500000.0,"tie_word_embeddings":false,
"torch_dtype":"bfloat16","vocab_size":128256})";
    return p.string();
  }();
  return path;
}

DataRoot root() { return DataRoot{VRAMPLAN_SOURCE_DIR}; }

// The whole sweep, files loaded once: 26 cards x TP {1,2,4,8} x 10 contexts x 1000 batches
// = 1,040,000 evaluations per iteration.
void BM_Sweep1M(benchmark::State& state) {
  plan::SweepRequest r;
  r.models = {llama70b_path()};
  r.contexts = {1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 65536, 131072};
  r.batches.clear();
  for (std::uint64_t b = 1; b <= 1000; ++b) r.batches.push_back(b);
  r.periods = plan::parse_periods("3d,7d,30d");
  std::uint64_t evaluations = 0;
  for (auto _ : state) {
    const auto result = plan::run_sweep(r, root());
    evaluations += result.evaluations;
    benchmark::DoNotOptimize(result.rows.data());
  }
  state.counters["evaluations/s"] = benchmark::Counter(static_cast<double>(evaluations), benchmark::Counter::kIsRate);
  state.counters["evaluations"] = static_cast<double>(evaluations / state.iterations());
}
BENCHMARK(BM_Sweep1M)->Unit(benchmark::kMillisecond);

// The inner point alone (memory arithmetic + one roofline step).
void BM_SweepPoint(benchmark::State& state) {
  plan::GpuFixed g;
  g.capacity = Bytes(139ull << 30);
  g.kv_pool = Bytes(55ull << 30);
  g.kv_pool_upper = 55ull << 30;
  g.non_kv_1 = 70ull << 30;
  g.rates = perf::HardwareRates{3.84e12, 6.4e14, 5e-4, 3.15e11, 1e-5};
  perf::PerfModelShape shape;
  shape.dense_weight_bytes = 70e9;
  shape.active_params = 35e9;
  shape.layers = 80;
  shape.hidden = 8192;
  shape.tp = 2;
  shape.attention = {perf::AttentionGroup{80, 32, 128, 128, 2048, 0}};
  std::uint64_t b = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(plan::evaluate_point(g, shape, 1342177280, 8192, b, plan::FitPolicy{0.1}));
    b = b % 64 + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepPoint);

// `check` in the library: model + catalogues loaded, two engine plans, the decision.
void BM_CheckLibrary(benchmark::State& state) {
  plan::CheckRequest r;
  r.model = llama70b_path();
  r.gpu = "h100-sxm-80";
  r.args = {{"tensor-parallel-size", "2"}, {"max-model-len", "8192"}};
  for (auto _ : state) benchmark::DoNotOptimize(plan::run_check(r, root()).eval.fit.fits);
}
BENCHMARK(BM_CheckLibrary)->Unit(benchmark::kMicrosecond);

}  // namespace
