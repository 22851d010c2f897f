// Accuracy of the llama.cpp speed model (docs/performance.md §5, "llama.cpp") against published
// llama-bench tables: pp512 (prompt tokens per second of one 512-token prompt) and tg128 (tokens
// per second generating 128 tokens after an empty prompt), every layer on the GPU (-ngl 99).
//
// Data: tests/accuracy/data/llamacpp_bench.jsonl, copied from the PR threads named in each
// record's `source`. Every prediction goes through `vramplan plan`'s own path (sim::run_serving_plan:
// the GGUF file type's tensors, the llama.cpp memory plan, the performance model).
//
// The llamacpp step-overhead entry of data/perf_defaults.json is FITTED here on the RTX 3090
// tg128 records (one source, four file types); the RTX 4090 records are held out.
//
// VRAMPLAN_WRITE_ACCURACY_DOC=1 writes docs/accuracy-llamacpp-speed.md from this run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accuracy/accuracy_doc.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/sim/serving_plan.hpp"
#include "vramplan/perf/perf_defaults.hpp"

namespace vramplan {
namespace {

struct LlamaBenchRecord {
  nlohmann::json raw;
  std::string id, gpu, file_type, test, source;
  double measured = 0;      // tokens per second
  double predicted = 0;     // expected, tokens per second
  double low = 0, high = 0; // the model's range
  double kernels_s = 0;     // tg: the decode step without the engine overhead
  double layers = 0;
};

// llama-bench's tg128 starts from an empty cache and generates 128 tokens: on average each step
// attends to 64 cached tokens.
constexpr std::uint64_t kLlamaBenchTgMeanContext = 64;

sim::ServingPlan llama_bench_plan(const LlamaBenchRecord& r, std::uint64_t prompt) {
  memory::PlanRequest q;
  q.model = r.raw.at("model").get<std::string>();
  q.gpu = r.gpu;
  q.engine = "llamacpp";
  q.weights = "gguf:" + r.file_type;
  // llama-bench: n_ctx = prompt + generated tokens, n_ubatch 512, flash attention off, f16 KV.
  q.args = {{"ctx-size", "640"}, {"n-gpu-layers", "99"}, {"flash-attn", "off"}};
  q.workload.batch = 1;
  q.workload.context = kLlamaBenchTgMeanContext;
  q.prompt_tokens = prompt;
  return sim::run_serving_plan(q, test::source_root());
}

std::vector<LlamaBenchRecord> llama_bench_predictions() {
  std::ifstream in(test::source_dir() / "tests" / "accuracy" / "data" / "llamacpp_bench.jsonl");
  std::vector<LlamaBenchRecord> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    LlamaBenchRecord r;
    r.raw = nlohmann::json::parse(line);
    r.id = r.raw.at("id");
    r.gpu = r.raw.at("gpu");
    r.file_type = r.raw.at("file_type");
    r.test = r.raw.at("test");
    r.source = r.raw.at("source");
    r.measured = r.raw.at("t_per_s");
    const bool pp = r.test == "pp512";
    const sim::ServingPlan o = llama_bench_plan(r, 512);
    const auto& est = o.performance.estimate;
    if (!est) ADD_FAILURE() << r.id << ": " << o.performance.unavailable;
    if (!est) continue;
    if (pp) {
      r.predicted = 512 / est->ttft_s.expected;
      r.low = 512 / est->ttft_s.high;
      r.high = 512 / est->ttft_s.low;
    } else {
      r.predicted = est->decode.tokens_per_s.expected;
      r.low = est->decode.tokens_per_s.low;
      r.high = est->decode.tokens_per_s.high;
      const auto& s = est->decode.step;
      r.kernels_s = s.kernels_s + s.comm_s;
      r.layers = o.performance.shape->layers;
    }
    out.push_back(r);
  }
  return out;
}

double llama_bench_error(const LlamaBenchRecord& r) { return r.predicted / r.measured - 1; }

double llama_bench_median_abs(std::vector<double> v) {
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The fit set: the RTX 3090 tg128 records of the file types whose decode kernel streams at the
// bandwidth the model assumes (F16, Q4_0: their own per-layer excess agrees, 88 and 96 us). The
// K-quant records (Q2_K, Q3_K_S) of the same run leave 229-233 us per layer: a per-token overhead
// cannot depend on the file type, so theirs is kernel time (the k-quant mat-vec kernels of these
// builds did not reach the bandwidth); they bound the range from above instead.
bool llama_bench_in_fit(const LlamaBenchRecord& r) {
  return r.test == "tg128" && r.gpu == "rtx-3090" && (r.file_type == "F16" || r.file_type == "Q4_0");
}
bool llama_bench_bounds_range(const LlamaBenchRecord& r) { return r.test == "tg128" && r.gpu == "rtx-3090"; }

// Least squares of the relative time errors over layer_us with step_ms = 0: every record has 32
// layers, so a per-step and a per-layer term cannot be told apart (as for trtllm). Minimising
// sum ((k_i + L u - t_i) / t_i)^2 over u: u = sum(L (t_i - k_i) / t_i^2) / sum(L^2 / t_i^2).
struct LlamacppLayerFit {
  double layer_us = 0, max_us = 0;  // min is 0 (see data/perf_defaults.json)
  int points = 0;
};

LlamacppLayerFit fit_llamacpp_layer_overhead(const std::vector<LlamaBenchRecord>& records) {
  double num = 0, den = 0;
  LlamacppLayerFit f;
  for (const LlamaBenchRecord& r : records) {
    const double t = 1 / r.measured;
    if (llama_bench_bounds_range(r)) f.max_us = std::max(f.max_us, 1e6 * (t - r.kernels_s) / r.layers);  // this record alone
    if (!llama_bench_in_fit(r)) continue;
    num += r.layers * (t - r.kernels_s) / (t * t);
    den += r.layers * r.layers / (t * t);
    ++f.points;
  }
  f.layer_us = den > 0 ? 1e6 * num / den : 0;
  return f;
}

std::string render_llamacpp_speed_doc(const std::vector<LlamaBenchRecord>& records, const LlamacppLayerFit& fit) {
  std::vector<double> tg, tg_held, pp;
  for (const LlamaBenchRecord& r : records) {
    if (r.test == "tg128") tg.push_back(llama_bench_error(r));
    if (r.test == "tg128" && !llama_bench_in_fit(r)) tg_held.push_back(llama_bench_error(r));
    if (r.test == "pp512") pp.push_back(llama_bench_error(r));
  }
  std::string md =
      "# Accuracy: llama.cpp speed (llama-bench pp512 / tg128)\n\n"
      "Generated by `tests/accuracy/llamacpp_speed_test.cpp` (`VRAMPLAN_WRITE_ACCURACY_DOC=1`); model in "
      "[performance.md](performance.md) §5 \"llama.cpp\". Every prediction is `vramplan plan --engine llamacpp "
      "--model llama-2-7b --weights gguf:<TYPE> --gpu <GPU> -c 640 -ngl 99 -fa off --batch 1 --context 64 "
      "--prompt-len 512`: tg128 = the decode tokens/s at the mean cached context of the 128 steps (64), "
      "pp512 = 512 / TTFT. Uncalibrated: datasheet x default efficiencies.\n\n"
      "Records: `tests/accuracy/data/llamacpp_bench.jsonl` (llama.cpp builds of January 2024, CUDA, before "
      "CUDA graphs and before MMQ used tensor cores; llama-bench defaults). \"llama 7B\" is LLaMA / Llama 2 / "
      "CodeLlama 7B (6.74 B parameters, the same shapes); planned as `llama-2-7b`.\n\n"
      "## Summary\n\n| test | records | median abs error |\n|---|---:|---:|\n"
      "| tg128, all | " + std::to_string(tg.size()) + " | " + test::fmt("%.1f %%", 100 * llama_bench_median_abs(tg)) + " |\n"
      "| tg128, held out (not fitted on) | " + std::to_string(tg_held.size()) + " | " +
      test::fmt("%.1f %%", 100 * llama_bench_median_abs(tg_held)) + " |\n"
      "| pp512 | " + std::to_string(pp.size()) + " | " + test::fmt("%.1f %%", 100 * llama_bench_median_abs(pp)) + " |\n\n"
      "Target (issue 17): tg128 median |error| <= 15 % on CUDA: " +
      std::string(llama_bench_median_abs(tg) <= 0.15 ? "**met**" : "**not met**") + " (" + test::fmt("%.1f %%", 100 * llama_bench_median_abs(tg)) +
      "). The step overhead `llamacpp` is fitted on the " +
      std::to_string(fit.points) + " RTX 3090 tg128 records: " + test::fmt("%.1f", fit.layer_us) +
      " us per layer (step_ms pinned at 0), range 0-" + test::fmt("%.1f", fit.max_us) +
      " us (0: a decode step in one CUDA graph; the top: the largest RTX 3090 record's own per-layer excess, Q3_K_S).\n\n"
      "## Records\n\n| id | GPU | file type | test | measured t/s | predicted t/s [range] | error | fitted on | source |\n"
      "|---|---|---|---|---:|---:|---:|---|---|\n";
  for (const LlamaBenchRecord& r : records)
    md += "| " + r.id + " | " + r.gpu + " | " + r.file_type + " | " + r.test + " | " + test::fmt("%.2f", r.measured) +
          " | " + test::fmt("%.1f", r.predicted) + " [" + test::fmt("%.1f", r.low) + "-" + test::fmt("%.1f", r.high) +
          "] | " + test::fmt("%+.1f %%", 100 * llama_bench_error(r)) + " | " + (llama_bench_in_fit(r) ? "yes" : "no") + " | " + r.source + " |\n";
  md += "\n## Reading\n\n"
        "- tg128 is bandwidth-bound: the GGUF bytes of every streamed tensor (the file type's mixture, e.g. Q4_0 = "
        "18 B per 32 weights, output.weight Q6_K) over 0.8 x the datasheet bandwidth, plus the fitted per-layer "
        "overhead (kernel launches: these builds predate llama.cpp's CUDA graphs).\n"
        "- The held-out RTX 4090 rows are predicted 14-16 % slow: its F16 run took 16.4 ms per token, less than "
        "the bandwidth term alone (16.5 ms at 0.8 x 1008 GB/s), so on that host the card streamed at more than 0.8 "
        "of its datasheet bandwidth and the per-token overhead was near zero. One efficiency and one overhead for "
        "every card and host cannot capture both runs.\n"
        "- The K-quant rows (Q2_K, Q3_K_S) ran at a third of the bandwidth-bound speed: the k-quant mat-vec kernels "
        "of these builds were limited by dequantisation work, not by memory. The model has no per-format kernel "
        "efficiency (no records to fit one on per GPU), so it predicts them 63-66 % fast; they are left out of the "
        "overhead fit and set the top of its range instead.\n"
        "- pp512 is compute-bound at the catalogue's fp16 tensor rate x 0.65. It over-predicts: these builds "
        "dequantised the weights to fp16 and ran cuBLAS, and the achieved rate is close to the FP32-accumulate "
        "figure on GeForce cards (RTX 3090: 71 of 142 TFLOPS), which the catalogue does not list for every card. "
        "Newer builds run MMQ kernels on int8 tensor cores (llama.cpp PR #7676); not modelled, no records.\n";
  return md;
}

TEST(LlamacppSpeedAccuracy, Tg128AndPp512AgainstLlamaBench) {
  const std::vector<LlamaBenchRecord> records = llama_bench_predictions();
  ASSERT_GE(records.size(), 13u);
  std::vector<double> tg;
  for (const LlamaBenchRecord& r : records) {
    if (r.test == "tg128") tg.push_back(llama_bench_error(r));
    RecordProperty(r.id, test::fmt("%+.1f %%", 100 * llama_bench_error(r)));
  }
  // Issue 17 item 5 asks for a tg128 median |error| <= 15 % on CUDA. NOT met on these records:
  // 15.1 % (the two held-out RTX 4090 rows -14 % and -16 %, the K-quant rows +63 % and +66 %).
  // The bound below is that figure rounded up, a regression guard, not the target.
  RecordProperty("tg128_median_abs_error", test::fmt("%.4f", llama_bench_median_abs(tg)));
  EXPECT_LE(llama_bench_median_abs(tg), 0.16);
  // The fitted-on records reproduce within 2 % (two points, one parameter).
  for (const LlamaBenchRecord& r : records)
    if (llama_bench_in_fit(r)) {
      EXPECT_LE(std::fabs(llama_bench_error(r)), 0.02) << r.id;
    }
  const LlamacppLayerFit fit = fit_llamacpp_layer_overhead(records);
  test::write_accuracy_doc_if_asked("accuracy-llamacpp-speed.md", render_llamacpp_speed_doc(records, fit));
}

TEST(LlamacppSpeedAccuracy, StepOverheadIsTheFittedValue) {
  const std::vector<LlamaBenchRecord> records = llama_bench_predictions();
  const LlamacppLayerFit fit = fit_llamacpp_layer_overhead(records);
  RecordProperty("fitted_layer_us", test::fmt("%.3f", fit.layer_us));
  RecordProperty("max_us", test::fmt("%.3f", fit.max_us));
  ASSERT_EQ(fit.points, 2);
  const auto d = perf::load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  const perf::StepOverheadDefaults& o = d.step_overhead.at("llamacpp");
  EXPECT_TRUE(o.fitted);
  EXPECT_EQ(o.per_step_s.expected, 0);
  // The file stores layer_us to 0.1 us; the kernel times do not depend on the overhead, so the
  // fit is the same whatever the file holds.
  EXPECT_NEAR(o.per_layer_s.expected * 1e6, fit.layer_us, 0.05 + 1e-9);
  EXPECT_EQ(o.per_layer_s.min, 0);
  EXPECT_NEAR(o.per_layer_s.max * 1e6, fit.max_us, 0.05 + 1e-9);
}

}  // namespace
}  // namespace vramplan
