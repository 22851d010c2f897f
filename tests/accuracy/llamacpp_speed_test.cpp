// Accuracy of the llama.cpp speed model (docs/performance.md §5, "llama.cpp") against published
// llama.cpp speed tables, every layer on one GPU (-ngl 99):
//  - llama-bench pp512 (prompt tokens per second of one 512-token prompt) and tgN (tokens per
//    second generating N tokens after an empty prompt);
//  - ./main's "eval time" (tokens per second of the generated tokens after a prompt, with the
//    context shifting of a full -c).
// The llama.cpp CUDA scoreboard rows (discussion #15013, llama 7B Q4_0 pp512 / tg128 per GPU, builds
// of 2024-2025 with one commit per row, -fa 0 and -fa 1) are held out but for the two A100 rows,
// which the MMVQ rate per SM cycle is fitted on (below).
//
// Data: tests/accuracy/data/llamacpp_bench.jsonl, copied from the PR threads and benchmark
// notebooks named in each record's `source`. Every prediction goes through `vramplan plan`'s own
// path (sim::run_serving_plan: the GGUF file type's tensors, the llama.cpp memory plan, the
// performance model), with --llamacpp-cuda-graphs as the record's build had them.
//
// Two data/perf_defaults.json step-overhead entries are FITTED here, one per build era:
//  - llamacpp-nograph (builds before CUDA graphs): on the two RTX 3090 llama-bench tg128 records
//    of llama.cpp PR #4766 (January 2024); every other record of that era is held out;
//  - llamacpp (builds with CUDA graphs, the default): on the llama-bench tg512 records of the
//    two GeForce cards of the XiongjieDai tables (May 2024); the other cards are held out.
// One more, llamacpp_mmvq_bytes_per_sm_cycle (perf/llamacpp_mmvq.hpp: the one-token quantized
// mat-vec kernel's rate per SM cycle on NVIDIA), on the scoreboard's A100 rows; the H100 rows and
// every other record are held out.
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
#include "support/sanitizer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/perf/llamacpp_mmvq.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/sim/serving_plan.hpp"

namespace vramplan {
namespace {

struct LlamaBenchRecord {
  nlohmann::json raw;
  std::string id, gpu, model, file_type, test, source;
  bool cuda_graphs = false;
  bool flash_attn = false;    // the run's -fa (absent in a record: off, those builds' default)
  std::uint64_t n_ctx = 0;    // the run's context size (-c; llama-bench: prompt + generated)
  std::uint64_t context = 0;  // decode: the mean cached context of its steps
  double measured = 0;        // tokens per second
  double predicted = 0;       // expected, tokens per second
  double low = 0, high = 0;   // the model's range
  double kernels_s = 0;       // decode: the step without the engine overhead
  double layers = 0;
  // decode, for the MMVQ fit (perf/llamacpp_mmvq.hpp): the step's weight bytes, the bandwidth and
  // the weight-stream rate of the plan, and the card's SM cycles per second (0: not NVIDIA-rated).
  double weight_bytes = 0, bandwidth = 0, weight_bandwidth = 0, sm_hz = 0;
};

bool llama_bench_is_decode(const LlamaBenchRecord& r) { return r.test != "pp512"; }

// A row of llama.cpp's CUDA scoreboard (discussion #15013); never fitted on.
bool llama_bench_is_scoreboard(const LlamaBenchRecord& r) {
  return r.source.find("llama.cpp/discussions/15013") != std::string::npos;
}

// ./main of December 2023 (examples/main/main.cpp, "infinite text generation via context
// swapping"): before a token is evaluated, when n_past + 1 > n_ctx, n_discard = (n_past - n_keep
// - 1) / 2 cached tokens after the kept ones are dropped. Its eval timing covers n_gen such steps
// after the prompt; the mean of their cached contexts, rounded. Decode time is linear in the
// context (the KV read), so one plan at the mean gives the mean step time.
std::uint64_t llama_main_mean_context(std::uint64_t n_prompt, std::uint64_t n_gen, std::uint64_t n_ctx,
                                      std::uint64_t n_keep) {
  std::uint64_t n_past = n_prompt, sum = 0;
  for (std::uint64_t i = 0; i < n_gen; ++i) {
    if (n_past + 1 > n_ctx) n_past -= (n_past - n_keep - 1) / 2;
    sum += n_past++;
  }
  return (sum + n_gen / 2) / n_gen;
}

// The mean cached context of a decode record: llama-bench tgN starts from an empty cache, so its
// N steps attend to N / 2 cached tokens on average; ./main as above.
std::uint64_t llama_bench_mean_context(const nlohmann::json& raw, const std::string& test) {
  if (test == "main-eval")
    return llama_main_mean_context(raw.at("n_prompt"), raw.at("n_gen"), raw.at("n_ctx"), raw.at("n_keep"));
  return std::stoull(test.substr(2)) / 2;  // "tg128" -> 64
}

sim::ServingPlan llama_bench_plan(const LlamaBenchRecord& r, std::uint64_t prompt) {
  memory::PlanRequest q;
  q.model = r.model;
  q.gpu = r.gpu;
  q.engine = "llamacpp";
  q.weights = "gguf:" + r.file_type;
  // f16 KV (llama-bench's default); flash attention as the record ran it (-fa 0 unless stated).
  q.args = {{"ctx-size", std::to_string(r.n_ctx)},
            {"n-gpu-layers", "99"},
            {"flash-attn", r.flash_attn ? "on" : "off"},
            {"llamacpp-cuda-graphs", r.cuda_graphs ? "on" : "off"}};
  q.workload.batch = 1;
  q.workload.context = r.context;
  q.prompt_tokens = prompt;
  return sim::run_serving_plan(q, test::source_root());
}

std::vector<LlamaBenchRecord> llama_bench_predictions() {
  std::ifstream in(test::source_dir() / "tests" / "accuracy" / "data" / "llamacpp_bench.jsonl");
  const GpuCatalog catalog = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  std::vector<LlamaBenchRecord> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    LlamaBenchRecord r;
    r.raw = nlohmann::json::parse(line);
    r.id = r.raw.at("id");
    r.gpu = r.raw.at("gpu");
    r.model = r.raw.at("model");
    r.file_type = r.raw.at("file_type");
    r.test = r.raw.at("test");
    r.source = r.raw.at("source");
    r.measured = r.raw.at("t_per_s");
    r.cuda_graphs = r.raw.at("cuda_graphs");
    r.flash_attn = r.raw.value("flash_attn", false);
    r.n_ctx = r.raw.at("n_ctx");
    const bool decode = llama_bench_is_decode(r);
    r.context = decode ? llama_bench_mean_context(r.raw, r.test) : 64;
    const sim::ServingPlan o = llama_bench_plan(r, 512);
    const auto& est = o.performance.estimate;
    if (!est) ADD_FAILURE() << r.id << ": " << o.performance.unavailable;
    if (!est) continue;
    if (!decode) {
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
      r.weight_bytes = s.weight_bytes;
      const perf::HardwareRates& hw = o.performance.hardware->expected;
      r.bandwidth = hw.bandwidth_bytes_per_s;
      r.weight_bandwidth = hw.weight_bandwidth_bytes_per_s > 0 ? hw.weight_bandwidth_bytes_per_s : hw.bandwidth_bytes_per_s;
      r.sm_hz = perf::sm_cycles_per_s(catalog.resolve_one(r.gpu)).value_or(0);
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

// One step-overhead fit per build era (the data/perf_defaults.json entry it sets).
struct LlamacppEra {
  const char* entry;  // data/perf_defaults.json step_overhead entry
  bool cuda_graphs;
};
constexpr LlamacppEra kLlamacppEras[] = {{"llamacpp-nograph", false}, {"llamacpp", true}};

// The fit sets, chosen before fitting:
//  - no CUDA graphs: the RTX 3090 tg128 records of PR #4766 whose decode kernel streams at the
//    bandwidth the model assumes (F16, Q4_0: their own per-layer excess agrees, 88 and 96 us). The
//    K-quant records (Q2_K, Q3_K_S) of the same run leave 229-233 us per layer: a per-token
//    overhead cannot depend on the file type, so theirs is kernel time (the k-quant mat-vec kernels
//    of these builds did not reach the bandwidth); they bound that range from above instead.
//  - CUDA graphs: the tg512 records of the GeForce cards (RTX 3090, 4090: the cards of the table
//    the XiongjieDai README publishes that data/gpus.json rates); the professional and data-centre
//    cards are held out.
bool llama_bench_in_overhead_fit(const LlamaBenchRecord& r) {
  if (llama_bench_is_scoreboard(r)) return false;
  if (!r.cuda_graphs)
    return r.test == "tg128" && r.gpu == "rtx-3090" && (r.file_type == "F16" || r.file_type == "Q4_0");
  return r.test == "tg512" && (r.gpu == "rtx-3090" || r.gpu == "rtx-4090");
}
// The records whose own per-layer excess sets the top of an era's range.
bool llama_bench_bounds_range(const LlamaBenchRecord& r) {
  if (llama_bench_is_scoreboard(r)) return false;
  return r.cuda_graphs ? llama_bench_in_overhead_fit(r) : r.test == "tg128" && r.gpu == "rtx-3090";
}

// The MMVQ rate per SM cycle (data/perf_defaults.json llamacpp_mmvq_bytes_per_sm_cycle), chosen
// before fitting: expected on the scoreboard's A100 rows (-fa 0 and -fa 1: the model's decode does
// not depend on -fa); the H100 rows, the other cards and the older builds are held out. The range
// ends are the same fit on other sets: min on the May 2024 builds' HBM Q4_K_M rows (an older MMVQ),
// max on the scoreboard's H100 rows.
bool llama_bench_in_mmvq_fit(const LlamaBenchRecord& r) {
  return llama_bench_is_scoreboard(r) && r.test == "tg128" && r.gpu == "a100-pcie-80";
}
bool llama_bench_in_mmvq_min_set(const LlamaBenchRecord& r) {
  return r.test == "tg512" && r.file_type == "Q4_K_M" && (r.gpu.starts_with("a100") || r.gpu.starts_with("h100"));
}
bool llama_bench_in_mmvq_max_set(const LlamaBenchRecord& r) {
  return llama_bench_is_scoreboard(r) && r.test == "tg128" && r.gpu == "h100-sxm-80";
}
// Fitted on: a step-overhead fit or the MMVQ fit (the range-end sets are not the expected value's).
bool llama_bench_in_fit(const LlamaBenchRecord& r) { return llama_bench_in_overhead_fit(r) || llama_bench_in_mmvq_fit(r); }

// Least squares of the relative time errors over x = 1 / k (k: bytes per SM cycle). On a record the
// cap binds on, the modelled token time is linear in x:
//   t = q W x / S + (1 - q) W / BW + rest,   rest = 1 / predicted - W / BW_w
// (q the block-quantized share of the weight bytes W, S the SM cycles per second, BW the bandwidth,
// BW_w the plan's weight-stream rate, rest the KV, the roofline's math term and the overhead). q is
// read back from the plan's BW_w = 1 / (q / (k_file S) + (1 - q) / BW), so the fit does not depend on
// the value the file holds. x = sum(a_i (t_i - c_i) / t_i^2) / sum(a_i^2 / t_i^2), a_i = q W / S.
struct MmvqFit {
  double bytes_per_sm_cycle = 0;
  int points = 0;
  bool binds = true;  // the cap is below the bandwidth on every fitted record at the fitted k
};

template <class Pred>
MmvqFit fit_mmvq_bytes_per_sm_cycle(const std::vector<LlamaBenchRecord>& records, double k_file, Pred in_set) {
  double num = 0, den = 0;
  MmvqFit f;
  std::vector<const LlamaBenchRecord*> used;
  for (const LlamaBenchRecord& r : records) {
    if (!in_set(r) || !(r.sm_hz > 0)) continue;
    const double cap = k_file * r.sm_hz, bw = r.bandwidth, bww = r.weight_bandwidth;
    if (!(cap < bw)) continue;  // the file's k does not bind here: no q to read back
    const double q = (1 / bww - 1 / bw) / (1 / cap - 1 / bw);
    const double t = 1 / r.measured, a = q * r.weight_bytes / r.sm_hz;
    const double c = (1 - q) * r.weight_bytes / bw + (1 / r.predicted - r.weight_bytes / bww);
    num += a * (t - c) / (t * t);
    den += a * a / (t * t);
    used.push_back(&r);
  }
  f.points = static_cast<int>(used.size());
  f.bytes_per_sm_cycle = num > 0 ? den / num : 0;
  for (const LlamaBenchRecord* r : used) f.binds = f.binds && f.bytes_per_sm_cycle * r->sm_hz < r->bandwidth;
  return f;
}

// Least squares of the relative time errors over layer_us with step_ms = 0: per-step and
// per-layer terms are nearly collinear on these records (32 or 40 layers), as for trtllm.
// Minimising sum ((k_i + L_i u - t_i) / t_i)^2 over u: u = sum(L_i (t_i - k_i) / t_i^2) / sum(L_i^2 / t_i^2).
struct LlamacppLayerFit {
  double layer_us = 0, max_us = 0;  // min is 0 (see data/perf_defaults.json)
  int points = 0;
};

LlamacppLayerFit fit_llamacpp_layer_overhead(const std::vector<LlamaBenchRecord>& records, bool cuda_graphs) {
  double num = 0, den = 0;
  LlamacppLayerFit f;
  for (const LlamaBenchRecord& r : records) {
    if (r.cuda_graphs != cuda_graphs || !llama_bench_is_decode(r)) continue;
    const double t = 1 / r.measured;
    if (llama_bench_bounds_range(r)) f.max_us = std::max(f.max_us, 1e6 * (t - r.kernels_s) / r.layers);  // this record alone
    if (!llama_bench_in_overhead_fit(r)) continue;
    num += r.layers * (t - r.kernels_s) / (t * t);
    den += r.layers * r.layers / (t * t);
    ++f.points;
  }
  f.layer_us = den > 0 ? 1e6 * num / den : 0;
  return f;
}

std::string llama_pct(double v) { return test::fmt("%.1f %%", 100 * v); }

// One summary row: the decode records a predicate selects.
template <class Pred>
std::string llama_summary_row(const std::vector<LlamaBenchRecord>& records, const std::string& label, Pred pred) {
  std::vector<double> e;
  for (const LlamaBenchRecord& r : records)
    if (pred(r)) e.push_back(llama_bench_error(r));
  return "| " + label + " | " + std::to_string(e.size()) + " | " + llama_pct(llama_bench_median_abs(e)) + " |\n";
}

// The scoreboard's -fa 0 tg128 rows, one per card: the measured time per token against the modelled
// step without its overhead (weights + KV over 0.8 x the datasheet bandwidth), and what is left per
// layer: (1 / measured - kernels) / layers. The era's fitted overhead is the model's value for it.
std::string llama_scoreboard_excess_table(const std::vector<LlamaBenchRecord>& records) {
  std::string md =
      "\n## CUDA scoreboard: time per token over the bandwidth term (tg128, -fa 0)\n\n"
      "| id | GPU | graphs | measured ms / token | model without overhead, ms | excess per layer, us | model's overhead per layer, us |\n"
      "|---|---|---|---:|---:|---:|---:|\n";
  const auto d = perf::load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  for (const LlamaBenchRecord& r : records) {
    if (!llama_bench_is_scoreboard(r) || r.test != "tg128" || r.flash_attn) continue;
    const double t = 1 / r.measured;
    const double model_us = 1e6 * d.step_overhead.at(r.cuda_graphs ? "llamacpp" : "llamacpp-nograph").per_layer_s.expected;
    md += "| " + r.id + " | " + r.gpu + " | " + (r.cuda_graphs ? "on" : "off") + " | " + test::fmt("%.3f", 1e3 * t) +
          " | " + test::fmt("%.3f", 1e3 * r.kernels_s) + " | " + test::fmt("%.1f", 1e6 * (t - r.kernels_s) / r.layers) +
          " | " + test::fmt("%.1f", model_us) + " |\n";
  }
  return md;
}

struct MmvqFits {
  MmvqFit expected, low, high;
};

MmvqFits fit_mmvq_all(const std::vector<LlamaBenchRecord>& records, double k_file) {
  return {fit_mmvq_bytes_per_sm_cycle(records, k_file, llama_bench_in_mmvq_fit),
          fit_mmvq_bytes_per_sm_cycle(records, k_file, llama_bench_in_mmvq_min_set),
          fit_mmvq_bytes_per_sm_cycle(records, k_file, llama_bench_in_mmvq_max_set)};
}

bool llama_bench_is_hbm(const LlamaBenchRecord& r) {
  return r.gpu.starts_with("a100") || r.gpu.starts_with("h100") || r.gpu.starts_with("v100");
}

std::string render_llamacpp_speed_doc(const std::vector<LlamaBenchRecord>& records, const LlamacppLayerFit& nograph,
                                      const LlamacppLayerFit& graphs, const MmvqFits& mmvq) {
  std::vector<double> tg128, tg128_jan;
  for (const LlamaBenchRecord& r : records) {
    if (r.test != "tg128") continue;
    tg128.push_back(llama_bench_error(r));
    if (!llama_bench_is_scoreboard(r)) tg128_jan.push_back(llama_bench_error(r));
  }
  const auto decode = [](const LlamaBenchRecord& r) { return llama_bench_is_decode(r); };
  const auto held = [](const LlamaBenchRecord& r) { return llama_bench_is_decode(r) && !llama_bench_in_fit(r); };
  std::string md =
      "# Accuracy: llama.cpp speed (llama-bench pp512 / tgN, ./main eval)\n\n"
      "Generated by `tests/accuracy/llamacpp_speed_test.cpp` (`VRAMPLAN_WRITE_ACCURACY_DOC=1`); model in "
      "[performance.md](performance.md) §5 \"llama.cpp\". Every prediction is `vramplan plan --engine llamacpp "
      "--model <MODEL> --weights gguf:<TYPE> --gpu <GPU> -c <n_ctx> -ngl 99 -fa off --llamacpp-cuda-graphs "
      "on|off --batch 1 --context <C> --prompt-len 512`: a decode record's t/s = the decode tokens/s at C, the "
      "mean cached context of its steps (llama-bench tgN: N / 2; ./main: its context shifting replayed), "
      "pp512 = 512 / TTFT. Uncalibrated: datasheet x default efficiencies.\n\n"
      "Records: `tests/accuracy/data/llamacpp_bench.jsonl`, four sets, each with its build:\n\n"
      "- llama.cpp PR #4766 (January 2024 master, before CUDA graphs): llama-bench pp512 / tg128 of llama 7B "
      "(LLaMA / Llama 2 / CodeLlama 7B, the same shapes; planned as `llama-2-7b`) on an RTX 3090 and an RTX "
      "4090;\n"
      "- XiongjieDai/GPU-Benchmarks-on-LLM-Inference, LLaMA 2 notebooks (December 2023, builds 1671-1691, "
      "before CUDA graphs): ./main eval t/s of Llama 2 7B / 13B Q4_0 and F16 after a 494-token prompt, "
      "1023 tokens at -c 512;\n"
      "- the same repository's LLaMA 3 notebooks (May 2024, builds 2824-2843, compiled with "
      "GGML_CUDA_USE_GRAPHS: CUDA graphs): llama-bench tg512 of Llama 3 8B Q4_K_M and F16 on seven cards;\n"
      "- llama.cpp's CUDA scoreboard (discussion #15013, opened 2025-08-01; one commit per row, "
      "those dated from 2025: 51f5a45 January 2025, 5143fa8 pinned 2025-09-05): "
      "`llama-bench -m llama-2-7b.Q4_0.gguf -ngl 99 -fa 0,1`, pp512 / tg128 of llama 7B Q4_0 on seven cards of "
      "data/gpus.json (RTX 3090 / 4090 / 5090, A40, V100 32 GB, A100 80 GB, H100 80 GB HBM3), -fa 0 on all "
      "and -fa 1 where the stored copy has that column (RTX 3090 / 4090 / 5090, A100, H100). CUDA graphs on "
      "(CMake builds since PR #6766 / #8140) except on the V100: ggml-cuda.cu disables them below compute "
      "capability 8.0 until PR #25749 (July 2026). The discussion page is not stored here; the rows come "
      "from third-party copies of its table, named in each record, which agree on every figure they share. "
      "The A100 rows are the MMVQ fit's (below); every other row is held out.\n\n"
      "Left out: the notebooks' RTX 4080, RTX 6000 Ada and RTX A6000 runs and the scoreboard's RTX 4080, RTX "
      "5080, RTX 6000 Ada, RTX A5000, RTX A6000 and RTX PRO 6000 rows (data/gpus.json has no sourced fp16 "
      "tensor rate for them, so `plan` gives no speed; the L40 has no bandwidth there), the cards not in "
      "data/gpus.json (RTX 3070 / 3080 / 3080 Ti / 4070 Ti, RTX 4000 / 5000 Ada; from the scoreboard RTX "
      "3060, 3090 Ti, 4090 D, 4080 SUPER, 4070 Ti SUPER, 5070 Ti, 5070, 5060 Ti, RTX PRO 4000, A30, Quadro RTX "
      "6000 / 8000, P40, M40, K80, DGX Spark), the Vulkan and ROCm scoreboards (not CUDA) and every "
      "multi-GPU run.\n\n"
      "## Summary\n\n| decode records | records | median abs error |\n|---|---:|---:|\n" +
      llama_summary_row(records, "all (tg128, tg512, ./main)", decode) +
      llama_summary_row(records, "held out (not fitted on)", held) +
      llama_summary_row(records, "tg128, all", [](const LlamaBenchRecord& r) { return r.test == "tg128"; }) +
      llama_summary_row(records, "tg128, held out (all but the 2 RTX 3090 overhead-fit and the 2 A100 MMVQ-fit rows)",
                        [](const LlamaBenchRecord& r) { return r.test == "tg128" && !llama_bench_in_fit(r); }) +
      llama_summary_row(records, "HBM cards (V100, A100, H100), all decode tests, held out",
                        [](const LlamaBenchRecord& r) { return llama_bench_is_decode(r) && llama_bench_is_hbm(r) && !llama_bench_in_fit(r); }) +
      llama_summary_row(records, "HBM cards, block-quantized files (the MMVQ path), held out", [](const LlamaBenchRecord& r) {
        return llama_bench_is_decode(r) && llama_bench_is_hbm(r) && !llama_bench_in_fit(r) && r.file_type != "F16";
      }) +
      llama_summary_row(records, "tg128, January 2024 (PR #4766, no CUDA graphs)",
                        [](const LlamaBenchRecord& r) { return r.test == "tg128" && !llama_bench_is_scoreboard(r); }) +
      llama_summary_row(records, "tg128, CUDA scoreboard (A100 rows fitted on)",
                        [](const LlamaBenchRecord& r) { return r.test == "tg128" && llama_bench_is_scoreboard(r); }) +
      llama_summary_row(records, "tg128, CUDA scoreboard, -fa 0 only (one row per card)", [](const LlamaBenchRecord& r) {
        return r.test == "tg128" && llama_bench_is_scoreboard(r) && !r.flash_attn;
      }) +
      llama_summary_row(records, "./main eval (December 2023, no CUDA graphs; all held out)",
                        [](const LlamaBenchRecord& r) { return r.test == "main-eval"; }) +
      llama_summary_row(records, "tg512 (May 2024, CUDA graphs)", [](const LlamaBenchRecord& r) { return r.test == "tg512"; }) +
      llama_summary_row(records, "tg512, held out (professional / data-centre cards)",
                        [](const LlamaBenchRecord& r) { return r.test == "tg512" && !llama_bench_in_fit(r); }) +
      "\n| prompt records | records | median abs error |\n|---|---:|---:|\n" +
      llama_summary_row(records, "pp512, January 2024",
                        [](const LlamaBenchRecord& r) { return r.test == "pp512" && !llama_bench_is_scoreboard(r); }) +
      llama_summary_row(records, "pp512, CUDA scoreboard",
                        [](const LlamaBenchRecord& r) { return r.test == "pp512" && llama_bench_is_scoreboard(r); }) +
      "\nTarget (issue 17): tg128 median |error| <= 15 % on CUDA: " +
      std::string(llama_bench_median_abs(tg128) <= 0.15 ? "**met**" : "**not met**") + " on the " +
      std::to_string(tg128.size()) + " tg128 records (" + llama_pct(llama_bench_median_abs(tg128)) + "; the " +
      std::to_string(tg128_jan.size()) + " January 2024 records alone: " + llama_pct(llama_bench_median_abs(tg128_jan)) +
      "). Step overheads (data/perf_defaults.json, step_ms pinned at 0):\n\n"
      "- `llamacpp-nograph` (`--llamacpp-cuda-graphs off`): fitted on the " + std::to_string(nograph.points) +
      " RTX 3090 tg128 records (F16, Q4_0): " + test::fmt("%.1f", nograph.layer_us) + " us per layer, range 0-" +
      test::fmt("%.1f", nograph.max_us) + " us (0: a decode step in one CUDA graph; the top: the largest RTX 3090 "
      "record's own per-layer excess, Q3_K_S);\n"
      "- `llamacpp` (the default, CUDA graphs): fitted on the " + std::to_string(graphs.points) +
      " GeForce tg512 records: " + test::fmt("%.1f", graphs.layer_us) + " us per layer, range 0-" +
      test::fmt("%.1f", graphs.max_us) + " us (the top: the largest fitted record's own per-layer excess).\n"
      "- `llamacpp_mmvq_bytes_per_sm_cycle` (NVIDIA, block-quantized weights, decode): fitted on the " +
      std::to_string(mmvq.expected.points) + " CUDA scoreboard A100 80GB tg128 rows (lcb-59, lcb-61): " +
      test::fmt("%.2f", mmvq.expected.bytes_per_sm_cycle) + " B per SM cycle, range " +
      test::fmt("%.2f", mmvq.low.bytes_per_sm_cycle) + "-" + test::fmt("%.2f", mmvq.high.bytes_per_sm_cycle) +
      " (the same fit on the " + std::to_string(mmvq.low.points) + " May 2024 HBM Q4_K_M tg512 rows, an older MMVQ; and on the " +
      std::to_string(mmvq.high.points) + " scoreboard H100 rows alone). Held out: every other record, the scoreboard's H100 "
      "rows among them.\n\n"
      "## Records\n\n| id | GPU | model | file type | test | graphs | fa | measured t/s | predicted t/s [range] | error | fitted on | source |\n"
      "|---|---|---|---|---|---|---|---:|---:|---:|---|---|\n";
  for (const LlamaBenchRecord& r : records)
    md += "| " + r.id + " | " + r.gpu + " | " + r.model + " | " + r.file_type + " | " + r.test + " | " +
          (r.cuda_graphs ? "on" : "off") + " | " + (r.flash_attn ? "on" : "off") + " | " + test::fmt("%.2f", r.measured) + " | " + test::fmt("%.1f", r.predicted) +
          " [" + test::fmt("%.1f", r.low) + "-" + test::fmt("%.1f", r.high) + "] | " +
          test::fmt("%+.1f %%", 100 * llama_bench_error(r)) + " | " + (llama_bench_in_fit(r) ? "yes" : "no") + " | " +
          r.source + " |\n";
  md += "\n## Reading\n\n"
        "- Decode is bandwidth-bound: the GGUF bytes of every streamed tensor (the file type's mixture, e.g. Q4_0 = "
        "18 B per 32 weights, output.weight Q6_K) and the KV of the mean context over 0.8 x the datasheet "
        "bandwidth, plus the per-layer overhead of the build's era: 94.9 us without CUDA graphs (every kernel "
        "launched from the host per token), 55 us with them (the launches go, each kernel's fill and drain stay).\n"
        "- On NVIDIA cards the block-quantized weights (every file type but F16) stream through llama.cpp's one-token "
        "kernel `mul_mat_vec_q` (ggml/src/ggml-cuda/mmvq.cu; `ggml_cuda_should_use_mmvq`: a quantized type and at "
        "most MMVQ_MAX_BATCH_SIZE = 8 columns). Its launch (`calc_launch_params`, GENERIC table: `calc_nwarps(1)` = 4, "
        "`calc_rows_per_block(1)` = 1) gives every output row one 128-thread block that walks vdr x 32 / qi weight "
        "blocks per thread per iteration: a 4096-wide Q4_0 row is two iterations, then a shared-memory reduction. The "
        "bytes in flight are SMs x resident blocks x a few hundred bytes, so the rate scales with SM count x clock, "
        "not with the memory: k bytes per SM cycle, SM cycles per second = the catalogue's fp32 dense rate / (2 x "
        "fp32 lanes per SM of the compute capability, CUDA C++ Programming Guide). The weight stream reads at "
        "min(0.8 x bandwidth, k x SM cycles/s) (perf/llamacpp_mmvq.hpp). k = " +
        test::fmt("%.2f", mmvq.expected.bytes_per_sm_cycle) +
        " B per SM cycle, fitted on the scoreboard's two A100 rows, caps the A100 80GB at " +
        // SM cycles per second, G: A100 19.5 TFLOPS fp32 / 128, H100 SXM 66.9 / 256, RTX 3090 35.6 / 256,
        // V100 15.7 / 128 (the catalogue's fp32 rates; 64 / 128 fp32 lanes per SM, capability 8.0 / 9.0 / 8.6 / 7.0).
        test::fmt("%.0f", mmvq.expected.bytes_per_sm_cycle * 19.5e3 / 128) + " GB/s (0.59 of 1940) and the H100 SXM at " +
        test::fmt("%.0f", mmvq.expected.bytes_per_sm_cycle * 66.9e3 / 256) +
        " GB/s (0.58 of 3350); the GDDR cards (RTX 3090 " +
        test::fmt("%.0f", mmvq.expected.bytes_per_sm_cycle * 35.6e3 / 256) +
        " GB/s against 749, A40, L40S, RTX 4090 / 5090) and the V100 (" +
        test::fmt("%.0f", mmvq.expected.bytes_per_sm_cycle * 15.7e3 / 128) +
        " against 718) stay bandwidth-bound, so their predictions do not move. The "
        "held-out H100 scoreboard rows land at +1.2 and -3.5 % (were +17.3 and +11.9 %); the fit on the H100 rows alone "
        "gives " + test::fmt("%.2f", mmvq.high.bytes_per_sm_cycle) + ", the A100 one " +
        test::fmt("%.2f", mmvq.expected.bytes_per_sm_cycle) + ": one rate per SM cycle serves both generations.\n"
        "- Before: tg128 median |error| 16.7 % over the 18 records (target missed), 16.6 % over the held-out decode "
        "records; the A100 and H100 scoreboard rows +12 to +24 %. After: the table above (target met on the 18; "
        "the held-out tg128 median is set by the January 2024 RTX 4090 and K-quant rows, below, which the cap does not "
        "touch).\n"
        "- Still off, held out: the May 2024 HBM Q4_K_M rows +21 to +41 % (that build's MMVQ streamed at the lower "
        "end of the range, " + test::fmt("%.2f", mmvq.low.bytes_per_sm_cycle) + " B per SM cycle, fitted on exactly those "
        "rows and kept as the range's slow end); the F16 rows on HBM cards (May 2024: +32 to +70 %): F16 does not "
        "run MMVQ (ggml-cuda.cu sends it to the mmv.cu / cuBLAS paths) and its rate on HBM is not modelled; the "
        "December 2023 H100 PCIe Q4_0 rows +25 to +32 % (the cap gives that card 1496 GB/s, barely below 0.8 x "
        "2000).\n"
        "- GDDR cards (RTX 3090, RTX 4090, RTX 5090, A40, L40S): within 25 % in every era but for the January 2024 "
        "K-quant rows (below). The RTX 4090 and 5090 rows are 11-25 % slow: their F16 runs took less than the "
        "bandwidth term alone (0.8 x 1008 GB/s), so those cards stream above 0.8 of their datasheet figure, and on "
        "the scoreboard those builds leave 19-24 us per layer over the bandwidth term there against the fitted 55 us "
        "(the last table); the RTX 3090 and A40 leave 37 us. The model keeps one bandwidth efficiency for every "
        "card and one overhead per build era; a per-card efficiency would need a fit set and a held-out set of "
        "Ada / Blackwell cards, and the records hold two.\n"
        "- The K-quant rows of January 2024 (Q2_K, Q3_K_S on the RTX 3090; the two largest errors) are predicted 63-66 % "
        "fast. Taking the modelled 32 x 94.9 us = 3.04 ms of per-layer overhead off each measured token time, the "
        "weight stream took 7.75 ms (Q2_K) and 8.42 ms (Q3_K_S) against the model's 3.46 and 3.99 ms, 0.45 and 0.47 "
        "of the bandwidth term, while Q4_0 and F16 on the same card and build streamed at 0.99 and 1.01 of it. That "
        "build's MMVQ ran one 32-thread warp per row, and each loop iteration of a warp covers `vdr x 32 / qi` "
        "blocks (vecdotq.cuh VDR_*_MMVQ, QI*): Q4_0 2 x 32 / 4 = 16 blocks x 18 B = 288 B, Q8_0 8 x 34 B = 272 B, "
        "Q4_K 2 x 144 B = 288 B, but Q2_K 1 x 32 / 16 = 2 blocks x 84 B = 168 B and Q3_K 2 x 110 B = 220 B, each "
        "followed by a longer dependent dot product. The bytes alone predict 168 / 288 = 0.58 of Q4_0's rate for "
        "Q2_K and 0.76 for Q3_K (measured 0.45 and 0.47), and that build's rate per SM cycle is not measured by any "
        "other record, so no per-format term is fitted on these two. The May 2024 Q4_K_M rows (vdr 2, 288 B per "
        "iteration) show no such gap on GDDR cards.\n"
        "- pp512 is compute-bound at the catalogue's fp16 tensor rate x 0.65. It over-predicts: these builds "
        "dequantised the weights to fp16 and ran cuBLAS, and the achieved rate is close to the FP32-accumulate "
        "figure on GeForce cards (RTX 3090: 71 of 142 TFLOPS), which the catalogue does not list for every card. "
        "Newer builds run MMQ kernels on int8 tensor cores (llama.cpp PR #7676); not modelled: the scoreboard's "
        "pp512 rows are such builds, median |error| 48.0 %, from -49 % (RTX 4090, -fa 1) to +292 % (H100; a prompt's "
        "logits are taken at its last token only since 2026-12-07, as llama-bench's llama_batch_get_one asks: the "
        "medians were 39.8 / 47.1 % with the output head on every prompt token). The MMVQ "
        "cap does not apply to prompts (a 512-token micro-batch runs MMQ / cuBLAS).\n"
        "- -fa 1: the model's decode time does not depend on flash attention (at 64 cached tokens the KV is "
        "under 1 % of the bytes read); the measured -fa 1 rows are 1.5-5.2 % faster than -fa 0 in tg128 "
        "and 6-23 % in pp512.\n"
        "- The last table takes the modelled weight and KV time (the MMVQ cap included) off each scoreboard -fa 0 "
        "row's measured token time: the A100 and H100 now leave 56-59 us per layer, the 55 us of the CUDA-graph "
        "era (before the cap: 72-86 us), the V100 74 us without graphs against the 94.9 us of January 2024.\n";
  md += llama_scoreboard_excess_table(records);
  return md;
}

TEST(LlamacppSpeedAccuracy, DecodeAndPromptAgainstPublishedTables) {
  const std::vector<LlamaBenchRecord> records = llama_bench_predictions();
  ASSERT_GE(records.size(), 65u);
  std::vector<double> tg128, decode, held;
  for (const LlamaBenchRecord& r : records) {
    if (r.test == "tg128") tg128.push_back(llama_bench_error(r));
    if (llama_bench_is_decode(r)) decode.push_back(llama_bench_error(r));
    if (llama_bench_is_decode(r) && !llama_bench_in_fit(r)) held.push_back(llama_bench_error(r));
    RecordProperty(r.id, test::fmt("%+.1f %%", 100 * llama_bench_error(r)));
  }
  RecordProperty("tg128_median_abs_error", test::fmt("%.4f", llama_bench_median_abs(tg128)));
  RecordProperty("decode_median_abs_error", test::fmt("%.4f", llama_bench_median_abs(decode)));
  RecordProperty("held_out_median_abs_error", test::fmt("%.4f", llama_bench_median_abs(held)));
  // Regression guards: the figures of docs/accuracy-llamacpp-speed.md rounded up, not the target.
  EXPECT_LE(llama_bench_median_abs(tg128), 0.15);   // the issue 17 target; 9.4 % (18 records)
  EXPECT_LE(llama_bench_median_abs(tg128), 0.095);  // 9.4 %
  EXPECT_LE(llama_bench_median_abs(decode), 0.095); // 9.4 %
  EXPECT_LE(llama_bench_median_abs(held), 0.15);    // 14.7 %
  const LlamacppLayerFit nograph = fit_llamacpp_layer_overhead(records, false);
  const LlamacppLayerFit graphs = fit_llamacpp_layer_overhead(records, true);
  const auto d = perf::load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  const MmvqFits mmvq = fit_mmvq_all(records, d.llamacpp_mmvq_bytes_per_sm_cycle.value().expected);
  test::write_accuracy_doc_if_asked("accuracy-llamacpp-speed.md", render_llamacpp_speed_doc(records, nograph, graphs, mmvq));
}

// The context a ./main record is planned at: 494-token prompt, 1023 steps at -c 512, n_keep 0.
// By hand: steps 0-17 attend 494..511 cached tokens (sum 18 x 1005 / 2 = 9045); step 18 finds
// 512 + 1 > 512 and drops (512 - 0 - 1) / 2 = 255, so the cache cycles 257..511, 255 steps a cycle
// (sum 255 x 768 / 2 = 97920): three full cycles (steps 18-782), then 240 steps 257..496 (sum
// 240 x 753 / 2 = 90360). Total 393165 over 1023 steps = 384.3, rounded 384.
// The MMVQ cap's rate per SM cycle is the least-squares value on its fit set (the scoreboard A100
// rows), and the range ends are the same fit on theirs; every fit record is one the cap binds on.
TEST(LlamacppSpeedAccuracy, MmvqRateIsTheFittedValue) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const std::vector<LlamaBenchRecord> records = llama_bench_predictions();
  const auto d = perf::load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  ASSERT_TRUE(d.llamacpp_mmvq_bytes_per_sm_cycle);
  const perf::DefaultRange& k = *d.llamacpp_mmvq_bytes_per_sm_cycle;
  const auto [fit, low, high] = fit_mmvq_all(records, k.expected);
  RecordProperty("fitted_bytes_per_sm_cycle", test::fmt("%.3f", fit.bytes_per_sm_cycle));
  RecordProperty("min_set_bytes_per_sm_cycle", test::fmt("%.3f", low.bytes_per_sm_cycle));
  RecordProperty("max_set_bytes_per_sm_cycle", test::fmt("%.3f", high.bytes_per_sm_cycle));
  EXPECT_EQ(fit.points, 2);
  EXPECT_EQ(low.points, 3);
  EXPECT_EQ(high.points, 2);
  EXPECT_TRUE(fit.binds && low.binds && high.binds);
  // The file stores k to 0.01 B per cycle.
  EXPECT_NEAR(k.expected, fit.bytes_per_sm_cycle, 0.005 + 1e-9);
  EXPECT_NEAR(k.min, low.bytes_per_sm_cycle, 0.005 + 1e-9);
  EXPECT_NEAR(k.max, high.bytes_per_sm_cycle, 0.005 + 1e-9);
}

// SM cycles per second from the catalogue's fp32 rate (CUDA C++ Programming Guide, arithmetic
// instruction throughput: 64 fp32 lanes per SM on 7.0 / 8.0, 128 on 8.6 / 9.0). By hand:
// A100 19.5 TFLOPS / (2 x 64) = 152.34 G (108 SMs x 1410 MHz = 152.28 G); H100 SXM 66.9 / (2 x 128)
// = 261.33 G (132 x 1980 MHz = 261.36 G); RTX 3090 35.6 / 256 = 139.06 G (82 x 1695 MHz = 138.99 G).
TEST(LlamacppSpeedAccuracy, SmCyclesFromTheFp32Rate) {
  const GpuCatalog catalog = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  EXPECT_NEAR(*perf::sm_cycles_per_s(catalog.resolve_one("a100-pcie-80")), 152.34375e9, 1e6);
  EXPECT_NEAR(*perf::sm_cycles_per_s(catalog.resolve_one("h100-sxm-80")), 261.328125e9, 1e6);
  EXPECT_NEAR(*perf::sm_cycles_per_s(catalog.resolve_one("rtx-3090")), 139.0625e9, 1e6);
  EXPECT_FALSE(perf::sm_cycles_per_s(catalog.resolve_one("mi300x")));  // not NVIDIA: no cap
  EXPECT_EQ(perf::fp32_lanes_per_sm(7, 0), 64);
  EXPECT_EQ(perf::fp32_lanes_per_sm(8, 6), 128);
}

TEST(LlamacppSpeedAccuracy, MainContextShiftMeanContext) {
  EXPECT_EQ(llama_main_mean_context(494, 1023, 512, 0), 384u);
  EXPECT_EQ(llama_main_mean_context(10, 4, 512, 0), 12u);  // 10, 11, 12, 13: 11.5, rounded 12
  EXPECT_EQ(llama_main_mean_context(494, 1, 512, 0), 494u);
}

// --llamacpp-cuda-graphs picks the step-overhead entry: on (the default) `llamacpp`, off
// `llamacpp-nograph`; the plan echoes the setting as engine_view.cuda_graphs.
TEST(LlamacppSpeedAccuracy, CudaGraphsSettingPicksTheOverheadEntry) {
  for (const LlamacppEra& era : kLlamacppEras) {
    LlamaBenchRecord r;
    r.model = "llama-2-7b";
    r.gpu = "rtx-3090";
    r.file_type = "Q4_0";
    r.n_ctx = 640;
    r.context = 64;
    r.cuda_graphs = era.cuda_graphs;
    const sim::ServingPlan o = llama_bench_plan(r, 512);
    ASSERT_TRUE(o.performance.estimate) << o.performance.unavailable;
    EXPECT_NE(o.performance.estimate->basis.find("step overhead (" + std::string(era.entry) + ", fitted)"),
              std::string::npos)
        << o.performance.estimate->basis;
    EXPECT_EQ(o.plan.engine_view.at("cuda_graphs"), era.cuda_graphs);
  }
}

TEST(LlamacppSpeedAccuracy, StepOverheadIsTheFittedValue) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const std::vector<LlamaBenchRecord> records = llama_bench_predictions();
  const auto d = perf::load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  for (const LlamacppEra& era : kLlamacppEras) {
    const LlamacppLayerFit fit = fit_llamacpp_layer_overhead(records, era.cuda_graphs);
    RecordProperty(std::string(era.entry) + "_fitted_layer_us", test::fmt("%.3f", fit.layer_us));
    RecordProperty(std::string(era.entry) + "_max_us", test::fmt("%.3f", fit.max_us));
    ASSERT_EQ(fit.points, era.cuda_graphs ? 4 : 2) << era.entry;
    const perf::StepOverheadDefaults& o = d.step_overhead.at(era.entry);
    EXPECT_TRUE(o.fitted) << era.entry;
    EXPECT_EQ(o.per_step_s.expected, 0) << era.entry;
    // The file stores layer_us to 0.1 us; the kernel times do not depend on the overhead, so the
    // fit is the same whatever the file holds.
    EXPECT_NEAR(o.per_layer_s.expected * 1e6, fit.layer_us, 0.05 + 1e-9) << era.entry;
    EXPECT_EQ(o.per_layer_s.min, 0) << era.entry;
    EXPECT_NEAR(o.per_layer_s.max * 1e6, fit.max_us, 0.05 + 1e-9) << era.entry;
  }
}

}  // namespace
}  // namespace vramplan
