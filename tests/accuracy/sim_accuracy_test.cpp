// Serving-simulator accuracy against real runs (issue 12, "How it is checked: Against real runs").
// Every record of tests/accuracy/data/serving_records.jsonl (benchmark_serving / bench_serving /
// inference-perf summaries copied verbatim from the ground truth) is re-simulated from its
// configuration through sim::run_simulation, the code path of `vramplan simulate`, and set against
// what the run printed; every rate / concurrency sweep of serving_sweeps.json is checked for where
// throughput stops growing. Targets (uncalibrated): request / output-token throughput median
// |error| <= 10 %; median TTFT and median TPOT (or ITL) <= 20 %; p99 TTFT / TPOT <= 35 %; saturation
// within one step. What is met is asserted; what is not is asserted as a regression guard at the
// achieved median (plus a small margin) and reported as missed in docs/accuracy-sim.md.
// Regenerate the document with:
//   VRAMPLAN_WRITE_ACCURACY_DOC=1 build/bin/vramplan_tests --gtest_filter='SimAccuracy.*'
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "accuracy/accuracy_doc.hpp"
#include "accuracy/max_rate_sweeps.hpp"
#include "accuracy/serving_records.hpp"
#include "support/sanitizer.hpp"

namespace vramplan::test {
namespace {

// The ground truth README: "169 records: 163 benchmark results and 6 timelines".
constexpr std::size_t kGroundTruthRecords = 169;

//! The metric names of one family, in the order the document shows them.
struct Family {
  const char* label;
  std::vector<std::string> names;
  double target_pct;  //!< issue 12's target for the median |error|
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"request throughput", {"req/s"}, 10},
      {"output-token throughput", {"out tok/s"}, 10},
      {"median TTFT", {"TTFT p50"}, 20},
      {"median TPOT (or ITL)", {"TPOT p50", "TPOT (means)", "ITL p50"}, 20},
      {"p99 TTFT", {"TTFT p99"}, 35},
      {"p99 TPOT (or ITL)", {"TPOT p99", "ITL p99"}, 35},
  };
  return f;
}

//! |error| inputs of one family over the records in the medians (of one source set when given).
// held_out: leave out the records a default was fitted on (sglang_overhead_fit_records()).
std::vector<double> errors(const Family& f, const std::string& source_set = "", bool held_out = false,
                           const std::vector<ServingComparison>& from = serving_comparisons()) {
  std::vector<double> e;
  for (const auto& c : from)
    if (c.median_exclusion.empty() && (source_set.empty() || c.record.at("source_set") == source_set) &&
        !(held_out && is_fit_record(c.id)))
      for (const auto& n : f.names)
        if (const auto* m = c.find(n)) e.push_back(m->err());
  return e;
}

// ---- saturation ---------------------------------------------------------------------------

//! One sweep point: the offered load and the throughput measured and predicted there.
struct SweepPoint {
  std::string id;
  double load = 0;  //!< requests / s (open loop) or users (closed loop); +inf = everything at t=0
  double measured = 0, predicted = 0;
  bool open_loop = false;  //!< a finite rate: throughput in requests / s, compared with the rate
};

struct SweepResult {
  std::string first_id;                //!< the sweep's first record id (serving_sweeps.json)
  std::string label, metric, skipped;  //!< skipped: why the sweep is not evaluated
  std::vector<SweepPoint> points;
  std::size_t measured_step = 0, predicted_step = 0;
};

// Where throughput stops growing, the same rule on both sides:
//  * open loop (finite rates): at the first rate whose completed requests per second fall below
//    90 % of the offered rate — from there on, throughput no longer follows the load;
//  * closed loop (users): at the first point whose next (higher) point raises throughput by less
//    than 10 %.
// A sweep that still grows at its last point saturates "beyond" it (index = number of points).
constexpr double kFollows = 0.90, kGrowth = 0.10;

std::size_t saturation_step(const std::vector<SweepPoint>& p, bool predicted) {
  const auto t = [&](std::size_t i) { return predicted ? p[i].predicted : p[i].measured; };
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].open_loop ? t(i) < kFollows * p[i].load : i + 1 < p.size() && t(i + 1) < t(i) * (1 + kGrowth)) return i;
  }
  return p.size();
}

std::vector<SweepResult> sweeps() {
  std::ifstream in(accuracy_data() / "serving_sweeps.json");
  const auto all = nlohmann::json::parse(in);
  std::map<std::string, const ServingComparison*> by_id;
  for (const auto& c : serving_comparisons()) by_id[c.id] = &c;
  std::vector<SweepResult> out;
  for (const auto& s : all) {
    SweepResult r;
    r.first_id = s.at("ids").at(0).get<std::string>();
    const auto& setup = s.at("setup");
    r.label = setup.at("engine").get<std::string>() + " " + setup.at("model").get<std::string>() + " on " +
              setup.at("gpu_class").get<std::string>() +
              (setup.at("tp").is_null() ? "" : " TP" + std::to_string(setup.at("tp").get<int>())) + " (" +
              s.at("ids").at(0).get<std::string>() + ", ...)";
    for (const auto& idj : s.at("ids")) {
      const std::string id = idj;
      const auto it = by_id.find(id);
      if (it == by_id.end()) {
        r.skipped = "not simulated (" + id + ": see the list below)";
        break;
      }
      const auto& c = *it->second;
      const auto& rec = c.record;
      SweepPoint p;
      p.id = id;
      const bool closed = !rec.at("max_concurrency").is_null();
      const auto& rate = rec.at("request_rate");
      p.load = closed ? rec.at("max_concurrency").get<double>()
                      : (rate.is_string() ? std::numeric_limits<double>::infinity() : rate.get<double>());
      p.open_loop = !closed && !std::isinf(p.load);
      const auto* m = p.open_loop ? c.find("req/s") : c.find("out tok/s");
      if (!m) m = c.find("req/s");
      if (!m) {
        r.skipped = "no throughput printed for " + id + " (medians of latencies only)";
        break;
      }
      r.metric = m->name;
      p.measured = m->measured;
      p.predicted = m->predicted;
      r.points.push_back(p);
    }
    if (r.skipped.empty()) {
      std::sort(r.points.begin(), r.points.end(), [](const auto& a, const auto& b) { return a.load < b.load; });
      r.measured_step = saturation_step(r.points, false);
      r.predicted_step = saturation_step(r.points, true);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::size_t step_distance(const SweepResult& s) {
  return s.measured_step > s.predicted_step ? s.measured_step - s.predicted_step : s.predicted_step - s.measured_step;
}

// ---- tests --------------------------------------------------------------------------------

TEST(SimAccuracy, EveryGroundTruthRecordIsSimulatedOrListedWithItsReason) {
  const auto setup = serving_setup();
  const auto records = serving_records();
  std::set<std::string> ids;
  for (const auto& r : records) {
    const std::string id = r.at("id");
    EXPECT_TRUE(setup.at("simulated").contains(id)) << id;
    EXPECT_FALSE(r.at("source").get<std::string>().empty()) << id;
    EXPECT_TRUE(ids.insert(id).second) << id;
  }
  EXPECT_EQ(setup.at("simulated").size(), records.size());
  for (const auto& x : setup.at("not_simulated")) {
    EXPECT_FALSE(x.at("reason").get<std::string>().empty()) << x.at("id");
    EXPECT_TRUE(ids.insert(x.at("id").get<std::string>()).second) << x.at("id");
  }
  EXPECT_EQ(ids.size(), kGroundTruthRecords);
}


// The measured request rate is the printed one unrounded where the record's own completed count
// and duration give it back, and the printed one where they do not.
TEST(SimAccuracy, MeasuredRequestRateIsThePrintedRateUnrounded) {
  std::map<std::string, double> rate;
  for (const auto& r : serving_records())
    if (const auto m = measured_request_throughput(r.at("results"))) rate[r.at("id")] = *m;
  // DeepSeek-R1 1,000 / 8,000 at one user: "Successful requests: 10 | Benchmark duration (s):
  // 411.34 | Request throughput (req/s): 0.02"; 10 / 411.34 = 0.024311 rounds to 0.02.
  EXPECT_NEAR(rate.at("sglcookbook-deepseek-r1-03"), 10 / 411.34, 1e-9);
  // Llama-4-Scout at 16 users prints 80 requests in 45.41 s (1.76 req/s) beside 2.26 req/s: the
  // page's lines disagree beyond rounding, so the printed rate stands.
  EXPECT_DOUBLE_EQ(rate.at("sglcookbook-llama4-01"), 2.26);
  // The blis records give the rate unrounded and no completed count: it stands.
  EXPECT_DOUBLE_EQ(rate.at("blis-train-20260217-155451-llama-2-7b-tp1-codegen-stage0"), 4.986841420062726);
}
// The transcribed runs: each set up, sourced, of the shape of the ground truth's records, and
// replayed in full; their ids never collide with the ground truth's.
TEST(SimAccuracy, EveryTranscribedRunIsSetUpAndRunsToCompletion) {
  const auto setup = serving_extra_setup();
  std::set<std::string> ground;
  for (const auto& r : serving_records()) ground.insert(r.at("id").get<std::string>());
  const auto ground_setup = serving_setup();  // held: a range-for over .at() of a temporary dangles
  for (const auto& x : ground_setup.at("not_simulated")) ground.insert(x.at("id").get<std::string>());
  for (const auto& r : serving_extra_records()) {
    const std::string id = r.at("id");
    EXPECT_TRUE(setup.at("simulated").contains(id)) << id;
    EXPECT_FALSE(ground.count(id)) << id;
    EXPECT_NE(r.at("source").get<std::string>().find("https://"), std::string::npos) << id;
    EXPECT_FALSE(r.at("quote").get<std::string>().empty()) << id;
  }
  EXPECT_EQ(setup.at("simulated").size(), serving_extra_records().size());
  for (const auto& c : serving_extra_comparisons()) {
    EXPECT_EQ(c.rejected, 0u) << c.id;
    EXPECT_EQ(c.completed, c.record.at("num_prompts").get<std::uint64_t>()) << c.id;
  }
}

TEST(SimAccuracy, EveryRecordRunsToCompletion) {
  for (const auto& c : serving_comparisons()) {
    EXPECT_EQ(c.rejected, 0u) << c.id;
    EXPECT_EQ(c.completed, c.record.at("num_prompts").get<std::uint64_t>()) << c.id;
    EXPECT_FALSE(c.metrics.empty()) << c.id;
  }
}

// vLLM 0.6.0 with --num-scheduler-steps 10 streams a round's ten tokens as one chunk, so its
// median ITL is a round, not a step: 129.32 and 158.63 ms printed at 4 and 8 req/s against median
// TPOTs of 14.14 and 17.09 ms (sglang benchmark/benchmark_vllm_060/README.md). Predicted
// 2026-12-06: 122.2 and 146.2 ms (-6 / -8 %), with no term fitted on these runs (the round's host
// work is the vllm-sync step term, fitted on vLLM's 2024 nightly points).
TEST(SimAccuracy, VllmMultiStepItlIsARound) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();
  int checked = 0;
  for (const auto& c : serving_comparisons()) {
    if (c.id.rfind("sglang-vllm060-llama31-8b-a100-vllm-rate", 0) != 0 || c.id.find("online") == std::string::npos) continue;
    ++checked;
    const double measured_ms = c.record.at("results").at("median_itl_ms").get<double>();
    EXPECT_NEAR(c.itl_p50_s * 1e3, measured_ms, 0.10 * measured_ms) << c.id;
    const auto* tpot = c.find("TPOT p50");
    ASSERT_NE(tpot, nullptr) << c.id;
    EXPECT_GT(c.itl_p50_s * 1e3, 8 * tpot->predicted) << c.id;  // a chunk of ten tokens a round
  }
  EXPECT_EQ(checked, 2);
}

// The runs that failed most of their requests (kept out of the medians) must at least come out
// overloaded: arrivals outpace what the engine serves.
TEST(SimAccuracy, OverloadedRunsArePredictedOverloaded) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();
  int checked = 0;
  for (const auto& c : serving_comparisons()) {
    if (c.median_exclusion.empty()) continue;
    EXPECT_EQ(c.verdict, "overloaded") << c.id;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// Medians of |error| per family. Met targets are asserted at the target; a missed one at the
// median this simulator achieved when the test was written, plus 2 points (kGuard), so that a
// regression shows while the miss stays reported in docs/accuracy-sim.md.
// Achieved when the test was written (main at 2b6a029 + this branch, 2026-12-01), in the order
// of families(): request and output throughput, median TTFT, median TPOT / ITL, p99 TTFT, p99
// TPOT / ITL. Every target is missed; see docs/accuracy-sim.md for where and why.
// Re-measured 2026-12-02 when the 11 Kimi-K2.5 (8 x H200) and Qwen3-Coder-480B (8 x MI300X)
// records joined (48 -> 59 records with throughput): from {38.18, 31.42, 66.36, 28.12, 71.00,
// 35.20} to the values below. The rise is those records (Kimi-K2.5 predicted 1.1-11x too fast,
// docs/accuracy-sim.md), not a change of the simulator.
// Re-measured 2026-12-02 when SGLang got its fitted MoE-layer overheads (data/perf_defaults.json,
// SimAccuracy.SglangMoeOverheadIsTheFittedValue; 6 of the 60 records are its fit data): from
// {52.41, 50.83, 67.85, 34.33, 70.32, 40.69} to the values below (one decimal from the document,
// rounded up).
// Re-measured 2026-12-02 when bench_serving's random-dataset runs were replayed with their own
// request lengths (bench_serving_lengths.hpp) and SGLang's prompt MoE term re-fitted on them
// (1150 -> 1200 us): from {24.2, 17.4, 31.5, 20.05, 54.4, 36.1} to the values below; p99 TPOT now
// meets its target. The one-user runs' throughput no longer carries a sample of 10 lengths unlike
// the run's own (DeepSeek-R1 -16 % -> +18 % is the step model's error alone).
// Re-measured 2026-12-02 when block-scaled FP8 GEMM launches got a fitted cost per GPU vendor
// (SGLang: 5 us on NVIDIA with the MoE term re-fitted jointly 35 -> 20 us, 40 us on AMD) and the
// prompt term re-fitted (1200 -> 1150 us): from {17.9, 17.9, 31.0, 20.6, 56.0, 32.5} to the values
// below; throughput and TPOT now meet their targets (MI300X FP8 runs were 2-3x too fast).
// Re-measured 2026-12-02 when the prompt steps got their own block-scaled FP8 term (NVIDIA 150 us,
// fitted with the prompt MoE term 1150 -> 800 us; AMD 130 us): from {7.6, 6.7, 30.3, 8.3, 56.7,
// 15.6} to the values below.
// Re-measured 2026-12-02 when the MI300X all-reduce moved from PCIe (the catalogue had no fabric
// for it) to its Infinity Fabric mesh and the AMD prompt block-FP8 term was re-fitted (130 -> 310
// us): from {5.5, 3.4, 21.1, 6.4, 54.8, 12.7} to the values below. p99 TTFT improves (the
// 64-100-user MI300X runs no longer queue behind 0.6 s prefill steps); the MI300X runs at 16-100
// users are now predicted faster than measured (Llama-4 TPOT -23..-51 %): the slow link had been
// standing in for a cost the step model does not have on that stack.
// Re-measured 2026-12-02 when a request that finishes under SGLang's overlap scheduler decodes once
// more in the next step (scheduler.py event_loop_overlap; a one-user closed loop's next request
// waits for that step) and the prompt terms were re-fitted with it (NVIDIA 800 -> 700 us per MoE
// layer, 150 -> 140 us per block-FP8 GEMM; AMD 310 -> 270 us): from {7.0, 5.8, 20.7, 8.5, 43.9, 11.5}
// to the values below. Median TTFT meets its target (the 16-user runs were 10-26 % long).
// Re-measured 2026-12-02 when the Llama-2-7B blis runs were replayed with the outputs they generated
// (the profile's output_len under ignore_eos, 247-251 tokens) instead of the client's undercount
// (194-210; serving_sim_setup.json says why): from {7.3, 6.0, 17.5, 9.1, 44.8, 11.8} to the values
// below. Median TPOT rises: with the true lengths the vLLM step model is 32-54 % slow on those runs,
// which the short outputs had hidden.
// Re-measured 2026-12-03 when the simulator's percentiles became numpy's (np.percentile, linear
// interpolation, as benchmark_serving / bench_serving print them) for up to 4,096 samples instead
// of the nearest rank: from {7.4, 6.0, 17.5, 10.4, 44.4, 11.8} to the values below. p99 TTFT
// moves away from its target: on an 80-request run the simulated p99 was the largest TTFT (the
// slowest of the simulated first wave) and is now between the 79th and 80th, like the measured
// one; the runs whose measured tail is a cold start were under-predicted already (docs/accuracy-sim.md,
// "p99 TTFT, record by record").
// Re-measured 2026-12-03 when the blis records were simulated as their experiments ran, stage 0 on a
// freshly started vLLM server (--cold-start: first-use compiles of the Triton fused-MoE kernel,
// one cost fitted on the Mixtral codegen stage 0) and stage 1 after it: p99 TTFT 46.1 -> 42.7 %
// (held out 50.9 -> 46.1 %; Mixtral codegen stage 0 -90 -> +27 %, general stage 0 -87 -> -1 %).
// Re-measured 2026-12-03 when vLLM's step overhead became release-aware (0.14 and later schedule
// asynchronously: no per-step host term, 26.1 us per layer fitted on vLLM 0.21 TPOTs, instead of
// the 0.65 ms + 55.7 us fitted on the V0 engine of 2024): median TPOT 10.4 -> 9.6 % (held out
// 18.6 -> 10.4 %; blis 32.6 -> 11.7 %), median TTFT 17.5 -> 20.3 %, p99 TTFT 42.7 -> 46.1 %. The
// blis TTFTs were under-predicted already (-7 to -29 %) and became -10 to -34 %.
// Re-measured 2026-12-03 when the simulator formed vLLM's batches as async scheduling does (from
// 0.14: a step's batch is formed when the previous step starts, EngineCore.step_with_batch_queue;
// sim/engine_rules.cpp): a request arriving during a step waits for the next one too. Median TTFT
// 20.3 -> 14.3 % (blis Llama-2-7B +8 to +21 %, Mixtral +2 to +6 %), median TPOT and throughput
// unchanged; the cold-start cost re-fitted 1.205 -> 1.225 s (vllm_cold_start_fit_test.cpp), p99
// TTFT 46.1 % (the fit record's p99 jumps from 235 to 857 ms at that cost: the bisection's value).
// Re-measured 2026-12-03 when 15 SGLang cookbook records joined the medians with their models
// added to the catalogue (ERNIE-4.5-21B-A3B, 9 runs on one MI300X; MiniMax-M2.5, 6 runs on 8 x B200):
// from {7.4, 6.0, 14.3, 9.6, 46.1, 12.3} to the values below. ERNIE is within 0-21 % on throughput
// and TPOT; MiniMax-M2.5 is predicted 21-28 % fast on TPOT, 27-60 % high on throughput, and the
// p99 TTFT misses of both (first runs, first waves) move that median further from its target.
// Re-measured 2026-12-04 when 19 more SGLang cookbook records joined the medians (they were tried
// and kept out before, listed as not simulated): Qwen3-Coder-Next (9 runs, 2 x B200), GLM-4.7-Flash
// (9 runs, one B200, --attention-backend triton; catalogued this day) and Nemotron-3-Nano BF16 (one
// B200). Every one is predicted too fast (throughput +9 to +161 %, median TTFT -29 to -77 %): the
// step model charges gated-DeltaNet, Mamba-2 and Triton-MLA layers by their bytes, and their
// kernels cost more (docs/accuracy-sim.md). From {8.1, 6.7, 17.0, 10.3, 49.0, 12.5} to the values
// below: request / output throughput and median TTFT now miss their targets. Keeping simulatable
// records out of the medians because they are badly predicted would overstate the accuracy on the
// unseen runs the project is measured on.
// The same day GLM-4.6's 9 runs joined: the record lists four platforms, the same page at an earlier
// commit names the hardware of the same printed results (8 x B200, TP 8), and the catalogue's
// glm-4.5 entry is its architecture and shape. Predicted 24-46 % fast on throughput, TPOT -4 to
// -31 %: from {13.1, 13.5, 24.7, 12.5, 56.4, 16.1} to the values below.
// Then MiniMax-M2's 3 runs (4 x MI300X, TP 4) on the minimax-m2.5 entry, the same series and size:
// held out, 16 and 100 users within 8 % on throughput and 5 % on TPOT; from {15.6, 16.1, 25.9, 14.7,
// 55.4, 18.5} to the values below.
// Re-measured 2026-12-04 when SGLang's decode steps on NVIDIA were charged per kernel counted in
// its source for six architectures (data/perf_defaults.json kernel_counts: 4.5 us a kernel fitted
// on the same six one-user runs as the per-layer terms; docs/performance.md "kernels counted"):
// GLM-4.6, MiniMax-M2.5, GLM-4.7-Flash and Qwen3-Coder-Next, held out, were 10-42 % fast on one-user
// TPOT and are now within 1-6 %. From {15.3, 16.0, 25.8, 14.6, 55.6, 19.0} to the values below:
// output-token throughput meets its target.
// Re-measured 2026-12-04 when the same counted architectures' prompt steps were charged per kernel
// launched (36 us, SGLang runs them outside its graphs) plus 80 us per block-FP8 GEMM, fitted on the
// same six runs' median TTFT instead of 700 us per MoE layer and 140 us per block-FP8 GEMM: GLM-4.6's
// median TTFT went from -13..-38 % to -22..+13 %, GLM-4.7-Flash's from -41..-76 % to -18..-70 %. From
// {10.8, 9.3, 24.8, 10.6, 55.6, 12.9} to the values below: request throughput and median TTFT meet
// their targets.
// Re-measured 2026-12-04 when the second census corrected Qwen3-MoE's launches at TP 8 (21 -> 20 a
// layer: one KV head per rank, so the k reshape is a view) and the prompt terms were re-fitted (36 ->
// 38 us a launch, 80 -> 70 us a block-FP8 GEMM): from {9.3, 9.0, 19.2, 9.7, 53.4, 12.8} to the values
// {9.4, 9.0, 17.5, 9.6, 52.7, 12.7}. Re-measured 2026-12-04 once each re-drawn run's first prompt
// is cached by bench_serving's warm-up request and the two block-FP8 prompt terms re-fitted (70 ->
// 75 us on NVIDIA, 270 -> 280 us on AMD): {9.2, 9.1, 17.5, 9.6, 53.4, 12.4}. Re-measured 2026-12-04
// when Kimi-K2.5's two runs on 4 x MI350X joined (the catalogue gained the MI350X): their step is 5-12
// times what the step model gives, as on H200, and request throughput leaves its target:
// {10.4, 9.1, 18.5, 9.9, 54.5, 12.6}. Re-measured 2026-12-05 when GLM-5's two EAGLE runs on 8 x H200
// joined (the simulator models speculative decoding): GLM-5's steps are predicted 22-30 % short at one
// and 100 users, so both runs add to the misses: {10.7, 9.2, 19.2, 10.2, 53.4, 13.2}. Re-measured
// 2026-12-05 when the measured request rate became completed / duration where the record's printed
// two decimals round it (measured_request_throughput: 0.02 printed for 0.0243 req/s; nothing
// simulated changed): request throughput meets its target again: {9.3, 9.2, 19.2, 10.2, 53.4, 13.2}.
// Re-measured 2026-12-06 when a burst of sends reaches the engine one request at a time (an idle
// engine prefills a closed loop's first request alone; docs/simulator.md): {9.2, 9.2, 19.4, 10.2,
// 49.8, 12.5}. Re-measured 2026-12-06 when Nemotron-3-Super's run on 4 x H200 joined (the catalogue
// gained the model and the planner its latent MoE): predicted fast as Nemotron-3-Nano is (throughput
// +35 %, TPOT -26 %, p99 TTFT -62 %): {9.6, 9.2, 19.3, 10.3, 50.4, 12.6}. Re-measured 2026-12-06 when
// Nemotron-H's SGLang kernels were counted (0.5.9 wheel; held out) and its blocks all-reduced once:
// Nano and Super throughput +43 / +35 -> +13 / +13 %, TPOT -29 / -26 -> -9 / -11 %: {9.6, 9.2, 19.3,
// 10.0, 50.4, 12.6}. Re-measured 2026-12-06 when Gemma 4's four runs on one H200 joined (the planner
// gained the family; their SGLang 0.5.11 kernels counted, held out): predicted fast, throughput +11 to
// +30 %, ITL -10 to -29 %, so both throughput medians leave their target: {11.4, 11.4, 20.8, 10.8,
// 55.1, 14.6} with the stop-48 records. Re-measured 2026-12-06 when expert parallelism got its
// busiest-GPU rule (MiniMax-M2.5 --ep 8 throughput +21..+33 -> +17..+31 %, Step-3.5-Flash --ep 4
// -21 / -11 / -5 -> -25 / -17 / -7 %): {12.2, 12.2, 20.8, 10.8, 55.1, 14.3}. Re-measured
// 2026-12-06 when the built-in ShareGPT first turns let seven runs join (SGLang 0.3.0 on an A100 at
// 4 / 8 req/s and offline; GPT-OSS-120B and Qwen3-Next on 8 x B200 at 1 / 100 users, held out,
// predicted slow and fast by 28-79 %): {12.7, 12.7, 21.0, 10.9, 57.6, 14.9}; with gpt-oss's
// Blackwell kernels counted (census row 5a; its throughput -41 / -28 -> -27 / -8 %): {12.4, 12.4,
// 21.0, 10.9, 57.6, 14.9}; with DeepSeek-Math-V2's two runs (8 x B200, held out, predicted fast as
// GLM-5's DSA runs are: TPOT -43 / -28 %): {12.7, 12.7, 21.0, 11.1, 57.6, 15.2}; with SGLang
// before 0.4 run without the overlap scheduler (PR #2067; the 0.3.0 runs' median TTFT +21 / +26 ->
// -19 / -16 %): {12.7, 12.7, 20.8, 11.1, 57.6, 15.2}. Re-measured 2026-12-06 when SGLang's DP
// attention was simulated and four runs joined (Kimi-K2 on 8 x B200 at DP 4, 1 / 100 users, within
// 8 %; DeepSeek-V3 on MI300X and DeepSeek-V3.2 on B200 at DP 8, 100 users, +79 / +50 %): {12.7, 12.7,
// 20.8, 11.1, 57.6, 15.4}. Re-measured 2026-12-06 when MLA's down-projections were read whole on every
// GPU (both engines replicate them; the perf shape had divided them by tp) and the prompt terms were
// re-fitted on their stated runs (39 us a launch, 65 us a block-FP8 GEMM, 270 us on AMD; were 38 / 75 /
// 280): Kimi-K2.5 throughput 7-37 points lower, the counted architectures' median TTFT 1-2 points
// longer (GLM-4.6, Gemma 4 and GPT-OSS runs cross 20 %), so the median TTFT meets its target by
// 0.4 points, held out 21.4 %: {12.3, 12.3, 19.6, 11.4, 57.6, 15.8}. Re-measured 2026-12-06 when
// vLLM V0's multi-step rounds were simulated and the three vLLM 0.6.0 runs of sglang's
// benchmark_vllm_060 page joined (held out; throughput +0 / +3 %, TPOT -2 / -3 %, TTFT -14 /
// -22 %): {12.1, 12.1, 19.6, 11.2, 57.6, 15.8}. Re-measured 2026-12-07 when the four Gemma 4 runs
// the ground truth labels H200 were simulated on the MI300X the page's headings put them on (one
// GPU, TP 1): predicted 23-52 % fast on ITL there, the median TTFT leaves its target (19.6 -> 20.9
// %, held out 21.4 -> 21.5 %): {12.4, 12.4, 20.9, 11.4, 57.6, 15.8}. Re-measured 2026-12-07 when
// Hopper got a per-kernel decode cost of its own (2.7 us, fitted on Step-3.5-Flash's one-user H200
// run; the B200 fit's 4.5 us had made every counted H200 step slow), and through that day's
// stops (the recurrent layers' prompt kernels counted): {10.8, 10.8, 19.3, 10.8, 49.6, 14.8}.
// Re-measured 2026-12-07 when a forward multiplied the output head only on the rows whose logits
// the engines take (one per prompt chunk, every decode row; it had paid it on every prompt token)
// and the fits on TTFTs were re-run (SGLang's prompt terms 750 / 130 us and 38 / 70 us, were
// 700 / 140 and 39 / 65): prompts of small models with large vocabularies got faster (Llama-3.2-3B
// 12 %), so the median TTFT, whose records were mostly short already, leaves its target by 0.3
// points: {10.8, 10.8, 20.3, 10.7, 49.2, 15.6}. Re-measured 2026-12-07 when the tensor rate became
// each card's measured matmul ceiling x 0.8125 where one is published (MI300X 0.51 of its datasheet,
// A100 0.87, B200 0.78; docs/performance.md section 4) and every fit on the rates was re-run (overlap
// 0.40 -> 0.30, SGLang's prompt terms 700 / 140 us, 250 us on AMD): throughput held out 15.1 / 14.7 ->
// 13.9 / 14.2 %, median TTFT 20.3 -> 20.1 %, p99 TPOT 15.6 -> 14.4 %, and p99 TTFT 49.2 -> 53.4 %: the
// MI300X first waves of 16-100 users (ERNIE, Llama-4, DeepSeek-V3.1, already predicted long where a
// radix cache or a burst stands behind them) take longer to prefill, and the Mixtral 20 req/s run,
// just at capacity before, is now just over it: the values below.
constexpr double kAchievedMedianPct[] = {10.8, 10.8, 20.1, 10.7, 53.4, 14.4};
constexpr double kGuardPct = 2.0;

TEST(SimAccuracy, MedianErrorsMeetTheTargetsOrTheirRegressionGuards) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();
  std::size_t i = 0;
  for (const auto& f : families()) {
    const auto e = errors(f);
    ASSERT_FALSE(e.empty()) << f.label;
    const double achieved = kAchievedMedianPct[i++];
    const double bound = achieved <= f.target_pct ? f.target_pct : achieved + kGuardPct;
    EXPECT_LE(median_abs(e), bound) << f.label << " over " << e.size() << " figures (target " << f.target_pct
                                    << " %, achieved when written " << achieved << " %)";
  }
}

// The sweep that misses, asserted at its measured distance so that any change shows: Kimi-K2.5
// on 8 x H200 (1 / 16 / 100 users): measured output throughput stops growing at 16 users (258
// then 254 tok/s) while the step model, which charges the INT4 experts by the bytes they read,
// still grows at 100 (132 / 973 / 2457 tok/s in docs/accuracy-sim.md, 2026-12-03). Every other
// sweep must be within one step.
const std::map<std::string, std::size_t> kKnownSaturationMisses = {{"sglcookbook-kimi-k2-5-00", 2}};

TEST(SimAccuracy, SaturationWithinOneStep) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();
  for (const auto& s : sweeps()) {
    if (!s.skipped.empty()) continue;
    const auto known = kKnownSaturationMisses.find(s.first_id);
    if (known != kKnownSaturationMisses.end()) {
      EXPECT_EQ(step_distance(s), known->second) << s.label;
    } else {
      EXPECT_LE(step_distance(s), 1u) << s.label;
    }
  }
}

// Issue 15's last check (no target set): every request-rate sweep of the records gives a max
// rate per target, and the achieved count within one rate step of the measured crossing does not
// regress. Achieved when written (2026-12-02): kMaxRateWithinOneStep of the checks.
constexpr std::size_t kMaxRateChecks = 10, kMaxRateWithinOneStep = 9;

TEST(SimAccuracy, MaxRateUnderATtftTargetAgainstTheMeasuredSweeps) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();  // find_max_rate runs under ASan in tests/unit/plan/capacity_test.cpp
  const auto& m = max_rate_sweeps();
  EXPECT_EQ(m.checks.size(), kMaxRateChecks);
  std::size_t within = 0;
  for (const auto& c : m.checks) {
    EXPECT_GE(c.rates.size(), 2u) << c.label;
    EXPECT_FALSE(c.predicted_binding.empty()) << c.label << " " << c.target;
    within += c.distance() <= 1;
  }
  EXPECT_GE(within, kMaxRateWithinOneStep);
}

// ---- the document -------------------------------------------------------------------------

std::string cell(const ServingComparison& c, const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (const auto* m = c.find(n)) {
      const char* f = m->measured >= 100 ? "%.0f" : m->measured >= 10 ? "%.1f" : "%.2f";
      return fmt(f, m->predicted) + " / " + fmt(f, m->measured) + " (" + fmt("%+.0f %%", m->err()) +
             (n == "TPOT (means)" || n.rfind("ITL", 0) == 0 ? ", " + n : "") + ")";
    }
  return "-";
}

// What the table shows, by source set (figures as of when this test was written).
constexpr const char* kSimFindings =
    "What the comparison shows (uncalibrated: datasheet bandwidth, the tensor rate of each card's measured matmul "
    "ceiling where one is published, else of its datasheet, x the perf defaults):\n\n"
    "- **blis_training** (vLLM, H100, Llama-2-7B and Mixtral-8x7B TP2, constant-rate open loop): below capacity the "
    "throughput is the arrival rate on both sides (a weak check). The Llama-2-7B runs' printed output lengths are the "
    "client's count, not what was generated: the runs set ignore_eos with max_tokens = output_len (247-251), every "
    "request took at least 1.5 s, yet a tenth of them are counted at under 60 tokens (the lifecycle file's output_len "
    "percentiles, quoted in serving_sim_setup.json). They are replayed at output_len, and the measured output "
    "throughput and TPOT from means use it too; replayed at the printed means (194-210) until 2026-12-02, their TPOT "
    "from means agreed within 10 % by accident. The fork is built on vLLM 0.15.1 (asynchronous scheduling: the "
    "`vllm` step overhead, no per-step host term; docs/performance.md §1) and forms each step's batch when the "
    "previous step starts (EngineCore.step_with_batch_queue), so a request arriving during a step waits for the "
    "next one too: median TTFT is predicted 8-21 % high for Llama-2-7B and 2-6 % high for Mixtral (10-22 % and "
    "30-34 % low when batches were formed at each step's start); the TPOT from means is "
    "3-20 % high for Llama-2-7B (7.5-10.7 against 7.3-8.9 ms; 32-54 % with the V0-fitted term) and 10-14 % high "
    "for Mixtral (19-23 %). At 20 req/s the predicted capacity (17.5 req/s for Llama-2-7B) is under the offered "
    "rate, so the simulated queue grows (TTFT of seconds against 51 ms measured); Mixtral's sits at the offered "
    "rate: 19.8 req/s with a 181 ms median TTFT against 64 ms once a prompt chunk stopped paying the output head "
    "on every token (486 ms before: vLLM takes logits at its last token), and 19.3 req/s, a queue growing to a "
    "median TTFT of 8.3 s, since the memory/math overlap was re-fitted to 0.30 with the measured matmul ceilings "
    "(2026-12-07: every step a little longer): a run at capacity turns on a few per cent of step time. Each experiment is one vLLM start: stage 0 is simulated on a fresh server with "
    "`--cold-start` (a mixed step beyond the 256 captured graph tokens that needs a fused-MoE kernel variant not "
    "compiled yet stalls 1.225 s, fitted on the Mixtral codegen stage 0), stage 1 on the same server after it; the "
    "Mixtral stage-0 p99 TTFTs went from -87 / -90 % to -1 % (general, held out) and +27 % (codegen, the fit), "
    "roleplay stayed at -39 % (with the async-scheduling step term: -3 %, -51 % and -43 %; the fit record's p99 "
    "jumps at the fitted stall, which is where the simulated p99 crosses the measured one: the bisection lands on "
    "the jump, so the fit record reads +79 % and the general stage 0 +174 % since the 2026-12-07 re-fits, with the "
    "same 1.225 s), and the dense Llama-2-7B runs pay nothing (no such kernel).\n"
    "- **sgl_cookbook** (SGLang, B200 / H200 / MI300X TP8, DeepSeek-R1 / V3.1, Kimi-K2.5, Qwen3-235B, "
    "Qwen3-Coder-480B, Llama-4, MiniMax-M2.5 (B200 TP8 EP8), ERNIE-4.5-21B-A3B (MI300X TP1), closed loops of 1-100 users): with the datasheet step model alone the simulator "
    "was far too fast (one-user TTFT 21-77 ms against 57-214 ms measured, request throughput median error 80 %). "
    "SGLang's step now carries fitted overheads (docs/performance.md): 20 us per MoE layer in a decode step and 700 us "
    "in a forward with prompt tokens (which SGLang runs outside its CUDA graphs), and a cost per GEMM launch on 2-D "
    "block-scaled FP8 weights (an activation quantisation kernel + a block-scale GEMM each): 5 us (decode) / 140 us "
    "(prompt) on NVIDIA, 40 / 250 us on AMD (750 / 130 / 270 us with the datasheet tensor rates, before 2026-12-07), where SGLang has no DeepGEMM / FlashInfer path for them. The NVIDIA "
    "terms are fitted on six one-user B200 runs (DeepSeek-R1 FP8-block and Qwen3-235B bf16 separate the MoE and the "
    "FP8 terms), the AMD terms on four one-user MI300X runs (DeepSeek-V3.1 with 7 such launches per MoE layer and "
    "Qwen3-Coder-480B-FP8 with 4: one parameter for both); everything else is held out: DeepSeek-R1 at 16-100 users "
    "within 9 % on TPOT and 21 % on TTFT, Qwen3-235B within 16 % on TPOT and 33 % on TTFT, DeepSeek-V3.1 and "
    "Qwen3-Coder on MI300X at 16-100 users within 27 % on TPOT (they were 22-67 % too fast without the AMD terms), "
    "Llama-4 bf16 on MI300X (no such launches) -51 to -7 % on TPOT. On MI300X every all-reduce runs over the "
    "Infinity Fabric mesh (7 links per OAM; before 2026-12-02 the catalogue had no fabric for it and the simulator "
    "all-reduced over PCIe, which cost a 16,384-token prefill step ~0.6 s at TP 8 and put the 64-100-user p99 TTFTs "
    "at +325 to +618 %, now +16 to +154 %); the MI300X runs at 16-100 users are now predicted faster than measured, "
    "most of all Llama-4 at 100 users (TPOT -51 %, throughput +52 %): a per-token cost of that stack the step model "
    "does not have. "
    "Every run of "
    "bench_serving's random dataset is replayed with its own request lengths, re-drawn as bench_serving draws them "
    "(numpy's seed-1 stream, tests/accuracy/bench_serving_lengths.hpp; the printed input totals match on all but two "
    "runs, the two Llama-4-Scout runs that print other totals, which keep a generated sample; the runs printing one "
    "token fewer a prompt than the draw, MiniMax-M2.5's and Step-3.5-Flash's 1,000-token runs, replay the draw, since "
    "bench_serving.py sample_random_requests takes the tokenizer's special tokens off each printed length and the "
    "server adds them back). SGLang's overlap scheduler "
    "(scheduler.py event_loop_overlap: a step's batch is formed while the previous step runs) makes a request that "
    "arrives during a step wait one step more; with it the 64-100-user median TTFTs of DeepSeek-R1, DeepSeek-V3.1, "
    "Qwen3-235B and Qwen3-Coder moved from -10..-41 % to -30..+8 % (most within 10 %). For the same reason a "
    "request that finishes in a step is still in the next step's decode batch (update_running_batch filters it out "
    "only after process_batch_result has seen its last token): it decodes once more, and a one-user closed loop's "
    "next request waits for that step. The one-user prompt terms had absorbed it; simulated, and the prompt terms "
    "re-fitted on the same six / four runs (NVIDIA 800 -> 700 us per MoE layer, 150 -> 140 us per FP8 GEMM; AMD "
    "310 -> 270 us), the 16-user median TTFTs went from +10..+26 % to +2..+15 % (DeepSeek-R1 +10 -> +3, "
    "DeepSeek-V3.1 +26 / +24 -> +14 / +13, Qwen3-235B +25 -> +15, Qwen3-Coder +12 -> +2 %) and the 64-100-user ones "
    "moved 5-9 points lower (Qwen3-235B at 64 users -21 -> -26 %, Llama-4 Scout at 16 -27 -> -33 %). Left: Llama-4 at 100 users "
    "(-46 / -51 %, TPOT short too: the step model is too fast there) and Kimi-K2.5 (-90 / -92 %); the measured "
    "p99 TTFT holds cold starts (48 s and 39 s for the Llama-4 one-user runs, whose throughput they also cut to "
    "0.14 req/s against 0.38 predicted). "
    "The p99 TTFT misses (predicted too low on most 16-100-user runs) follow the order of the runs, not the load: "
    "in the order the cookbook lists them (1,000 / 1,000 tokens at 1, 16, 100 users, then 1,000 / 8,000, then "
    "8,000 / 1,000), the first 16-user run of a deployment has p99 TTFT 840 ms (DeepSeek-R1, median 132), 2,135 ms "
    "(DeepSeek-V3.1, median 191) and 727 ms (Qwen3-235B, median 89), while the later 16-user run whose first 16 "
    "prompts have the same lengths (the same seed-1 draw) has 268, 300 and 456 ms; DeepSeek-V3.1's first one-user "
    "run 1,625 ms, its second 160 ms; the 8,000-token-prompt runs, the first with such prompts, have large tails "
    "again. Costs paid once, at the first forwards of a new size, would do that. The one per-shape compile read in "
    "SGLang's source for these deployments, the paged KV allocator's Triton kernels on B200 (a variant per power of "
    "two of the batch and per new largest prompt batch), was simulated and does not fit: the four B200 deployments "
    "run the same variants, yet at 100 users Qwen3-235B and GLM-4.6 measure what no stall gives and DeepSeek-R1 and "
    "MiniMax-M2.5 1.2-1.9 s more (docs/simulator.md#cold-start), so the simulator has no such cost for SGLang. "
    "Kimi-K2.5 on 8 x H200 (INT4 group-32 routed experts, not fitted on) is off by far: measured TPOT grows from 9.3 ms "
    "at one user to 58 ms at 16 and 403 ms at 100, and output throughput stays at about 255 tok/s from 16 to 100 "
    "users, where the step model, charging the INT4 experts by the bytes they read, gives 7-49 ms and keeps growing "
    "(the one sweep whose saturation is missed by more than a step). What that deployment spends per step at batch "
    "is not in the datasheet step model. Its records narrow it down without naming it (2026-12-06): the same "
    "runs print a peak output throughput of 1,103 and 1,199 tok/s in their busiest second at 16 and 100 users "
    "against 258 and 254 on average, so the GPU does run those batches at ~14 ms a step part of the time; and "
    "the one-user step grows with the context, 9.3 / 15.9 / 24.0 ms TPOT at a mean context of ~0.7k / 2.7k / 4.2k "
    "tokens, ~3.5 ms per 1,000 tokens, which MLA's latent cache (1,152 B a token a layer) cannot cost at HBM "
    "rates. SGLang's detokenizer is slow for Kimi's tiktoken tokenizer in these releases (sglang PR #16427, "
    "after 0.5.6.post2, made it 10x faster and ships off by default through 0.5.9: SGLANG_PATCH_TOKENIZER, "
    "utils/patch_tokenizer.py), but at ~9 us a decoded token through the unpatched path (sglang PR #25309: "
    "727 ms for 80,002 token ids) the detokenizer's two windows of a few tokens a request a step cost well under "
    "0.1 ms, not the ~3.6-4 ms a request-step the 16- and 100-user TPOTs imply. "
    "Two models added on 2026-12-03 and not fitted on: ERNIE-4.5-21B-A3B (bf16, one MI300X) is the closest "
    "deployment of the set, TPOT -15 to +2 % and throughput -2 to +18 % at 1-100 users (the first one-user run, +226 %, "
    "lost 41 s to a cold first request); its first-wave tails at 16-100 users are predicted long (p99 TTFT +67 to +836 %; "
    "+28 to +542 % until 2026-12-07, when the tensor rate became the MI300X's measured matmul ceiling, 0.51 of its datasheet), "
    "and the measured p99 of the 64-user, 8,000-token run (380 ms) is under what its first wave's prefill needs "
    "even at the datasheet rate (64 prompts of ~4,000 tokens: 2 x 3.09B active parameters x 255k tokens = 1.6 PFLOP, "
    "1.2 s at 1,307 TFLOPS; 2.9 s at the 543 TFLOPS the simulator takes, 0.8125 of the card's measured 668.4): its "
    "first 80 prompts are run -07's (the same texts cut to the same drawn lengths, "
    "below), so a server that kept its radix cache prefilled almost nothing, while each simulated run starts "
    "with an empty cache. MiniMax-M2.5 (block-FP8, 8 x B200 with --ep 8: the bytes per GPU of TP 8) is predicted "
    "too fast at 16-100 users, TPOT -13 to -22 % and throughput +17 to +31 % (one user: -4 / -5 % and +5 / +6 %, "
    "since its kernels are counted). With experts placed whole a MoE layer ends when the GPU holding the most of the "
    "experts its tokens chose does; since 2026-12-06 the step model charges that GPU's touched experts (uniform "
    "routing: 2.54 of 8 at one user against the even 1, 16.7 against 12.7 of 32 at 16 tokens; "
    "perf::expected_busiest_rank_experts), which took 2-5 points off the 16-100-user throughput errors (they were +21 to "
    "+33 %) and left the rest: real routers favour some experts, and the per-step kernels at batch are not in the "
    "datasheet model. Three deployments joined the medians on 2026-12-04 (they had been tried and kept out): "
    "Qwen3-Coder-Next (2 x B200, gated-DeltaNet hybrid, 9 runs), GLM-4.7-Flash (one B200, MLA, "
    "--attention-backend triton, 9 runs) and Nemotron-3-Nano BF16 (one B200, Mamba-2 hybrid, 1 run). All were "
    "predicted too fast from the first user. Since SGLang's decode kernels are counted for Qwen3-Coder-Next and "
    "GLM-4.7-Flash (4.5 us a counted kernel, docs/performance.md 'kernels counted'; it was 8.8 ms measured against "
    "5.1 predicted for GLM-4.7-Flash's one-user step) their one-user TPOT at 1,000 / 1,000 tokens is within 3 % "
    "(GLM-4.7-Flash) and 8 % (Qwen3-Coder-Next), and what stays is what the kernels do at batch, at long context and "
    "in prompts: Qwen3-Coder-Next's one-user TTFT is 94-168 ms measured, flat from "
    "1,000- to 8,000-token prompts, against 97-103 ms since the 23 kernels its gated-DeltaNet layers launch in a prompt "
    "forward (the decode graph runs 3) are counted (2026-12-07, the 0.5.8 wheel; 65-71 ms before), and its throughput "
    "is +5 to +26 % (+7 to +44 % before); GLM-4.7-Flash's one-user "
    "step grows with the context (8.8 / 11.3 / 13.1 ms at 1,000 / 1,000, 1,000 / 8,000 and 8,000 / 1,000 tokens, "
    "against 8.5 / 8.6 / 8.6 predicted) where the latent KV it reads adds ~0.03 ms, throughput +7 to +111 %; SGLang's "
    "Triton MLA decode runs a grid of batch x ceil(heads / 16) x 8 KV splits "
    "(layers/attention/triton_ops/decode_attention.py _decode_grouped_att_m_fwd), 16 CTAs on 148 SMs at one user, "
    "so it streams the context at a fraction of the HBM rate; Nemotron-3-Nano at 256 users was +43 % on throughput, "
    "TPOT -30 %, and Nemotron-3-Super (BF16, 4 x H200, TP 4; joined 2026-12-06 with its latent MoE planned: 512 "
    "experts on a 1,024-wide projection of the hidden state, the projections replicated on every rank) +35 % and "
    "-26 %, until their SGLang kernels were counted (2026-12-06, the 0.5.9 wheel: 916 a Nano step, 16 a Mamba-2 "
    "block of which 10 are its gated RMS norm in eager PyTorch; held out) and each Nemotron-H block all-reduced once "
    "(the step model had charged two a layer): +13 / +17 % and -9 / -14 % (Nemotron-3-Super on H200 at the Hopper per-kernel cost, 2026-12-07; +13 / -11 % at the B200 one), and now +7 / +11 % and -4 / -9 % since each Mamba-2 block's prompt forward is counted (8 kernels where a decode runs 2, the 0.5.9 wheel, 2026-12-07). Beyond their counted floor the step model charges recurrent and "
    "attention layers by the bytes they move; what these kernels cost beyond that at batch is not in the datasheet "
    "model. These 19 runs had moved the throughput medians from 8.1 / 6.7 % to 13.0 / 13.5 % and the median TTFT "
    "from 17.0 to 24.6 %. GLM-4.6 "
    "(9 runs) joined too: its record lists four platforms, but the same cookbook page at an earlier commit "
    "(2c360cae) gives these printed results under 8 x B200, TP 8, SGLang 0.5.6.post1, and the catalogue's glm-4.5 "
    "entry is its architecture and shape. With the per-layer SGLang terms (fitted on DeepSeek-R1 and Qwen3-235B) it was "
    "predicted too fast throughout, one-user TPOT 10.5 against 14.8 ms, throughput +24 to +46 %: its layers launch "
    "28 kernels to Qwen3-MoE's 17 (a torch.compile'd grouped top-k of about 12). Counted, it is held out within "
    "+1 % on one-user TPOT and -3 to +11 % on output throughput; its median TTFT is within -20 to +16 % since SGLang's "
    "prompt steps are also charged per launched kernel (38 us, fitted with the decode cost's six runs). MiniMax-M2 (3 runs, 4 x MI300X, TP 4) is "
    "simulated on the minimax-m2.5 entry, the same MiniMaxM2ForCausalLM series and size (no copy of M2's own "
    "config was found): held out, within 8 % on throughput and 5 % on TPOT at 16 and 100 users; its one-user run "
    "lost 38 s to a cold first request (throughput +96 %). GLM-5-FP8 (2 runs, 8 x H200, TP 8, joined 2026-12-05) decodes "
    "with EAGLE from its own MTP layer (3 steps, top-k 1, 4 draft tokens): each decode step verifies 4 tokens a request "
    "after two single-token draft forwards and before a draft extend, and keeps the accept length the page printed for "
    "the run (3.48 and 3.50 tokens, --spec-accept-length; docs/simulator.md#speculative-decoding). The speculative rules are "
    "SGLang's: max_running_requests falls to 48 and the overlap scheduler is off, so at 100 users about 52 requests "
    "wait for a slot (as simulated: 48 running, the others waiting, whenever every user has a request out) and the median TTFT of 21.4 s measured is "
    "queueing; it is predicted at 15.5 s (-27 %) because the steps are short: TPOT -22 % at 100 users and -30 % at "
    "one (4.9 against 7.0 ms, an iteration of 17 against 24 ms), and the one-user median TTFT -31 % too (196 against "
    "282 ms). No plain-decoding GLM-5 run is in the ground truth to tell the target's steps (DSA layers, whose kernels "
    "are not counted) from the iteration's draft and host costs. A count of the kernels SGLang 0.5.9 launches for this "
    "architecture on Hopper (2026-12-05: the nsa backend with fa3 decode, a bf16 KV cache, Triton fused MoE, no "
    "all-reduce fusion) finds 68 on the critical path of an attention + indexer layer, most of them a RoPE run as "
    "eager PyTorch operations (models/deepseek_v2.py falls back to the native rotary embedding for GLM-5's unscaled "
    "RoPE), and 22 in a MoE layer: 6,972 a forward, which at the 4.5 us fitted on B200 is 31 ms, more than a whole "
    "measured iteration (24 ms). Small kernels cost less than that fit there, or the count is high; not applied "
    "without a profile. Gemma 4 (4 runs, joined 2026-12-06 when the planner gained the family: 31B dense and "
    "26B-A4B, 1 and 100 users; the page's 'gemma4 branch' planned as 0.5.11, the first release with it) is held out. "
    "The records read the page's test environment ('Hardware: H200'), but these four result blocks sit under its "
    "headings '(1x MI300X, TP=1)' (the 31B section adds that the dense model fits one MI300X at TP 1 where an H200 "
    "needs TP 2): simulated on an H200 until 2026-12-07 (ITL -10 / -29 % and -18 / -16 %, which had put the median "
    "TTFT inside its target by 0.4 points), on the MI300X they ran on they are predicted fast like the other runs of "
    "dense and small-MoE models on ROCm: ITL -23 / -29 % (31B at 1 / 100 users) and -52 / -31 % (26B-A4B), "
    "throughput +31 to +120 %. SGLang's kernels for Gemma 4 were counted in the 0.5.11 wheel for NVIDIA "
    "(docs/sglang-decode-kernels.md, fourth census: 19 a 31B layer, 39 a 26B-A4B layer); on ROCm it runs other "
    "kernels, none counted, so these steps carry SGLang's per-layer default (0.5 ms + 55 us a layer), and the one-user "
    "26B-A4B step, 9.6 ms measured against 4.6 predicted, is what its ROCm kernels cost beyond the bytes they move "
    "(the triton fused MoE on 128 small experts at batch 1, the triton decode attention with head_dim 512; not pinned "
    "by a source). The same page's H200 runs, not in the ground truth, check the census where it was read and the "
    "Hopper per-kernel cost fitted on Step-3.5-Flash (section 'Runs beyond the ground truth'). "
    "Ministral-3-14B (per-tensor FP8, one MI300X, SGLang 0.5.7; joined 2026-12-06 with a "
    "config rebuilt from Megatron-Bridge's provider and transformers' converter, no verbatim copy being public) is the "
    "first dense model of the set on ROCm and is held out: one-user TPOT -11 %, then -30 % at 16 users and -60 % at 100 "
    "(14 against 35 ms), throughput +43 / +131 %, and its prompts slow too (one-user median TTFT 28 against 54 ms). The "
    "measured step grows by ~3.5 ms from 1 to 16 users and ~28 ms to 100, about what reading its bf16 KV cache (160 KiB a "
    "token) at ~0.5 TB/s would add; aiter's MHA decode (paged_attention_ragged on one-token pages, its grid sized to "
    "the 262,144-token context in 256-token partitions) is where that would be spent, but no measurement of it on "
    "MI300X was found, so nothing is fitted. Kimi-Linear-48B-A3B (KDA linear attention with MLA every fourth layer, "
    "4 x MI300X, SGLang 0.5.7, which runs it without the radix cache; joined 2026-12-06 with its family) is held out "
    "and predicted fast from the first user: TPOT -36 / -41 / -53 % and throughput +62 / +71 / +108 % at 1 / 16 / 100 "
    "users, and a one-user median TTFT of 126 ms measured for prompts under 1,000 tokens against 33 predicted, flat "
    "like Qwen3-Coder-Next's gated-DeltaNet prefill on B200. The step model charges the KDA layers by the bytes of "
    "their weights and state; SGLang's kernel counts are fitted on NVIDIA only, and what its ~20 KDA kernels a layer "
    "(docs/research/kimi-linear.md section 6, read from the wheel) cost on ROCm is not measured. With them the medians are "
    "the table's. Step-3.5-Flash (4 x H200, TP 4 with --ep 4, the page's SGLang dev image planned as 0.5.9, its first "
    "release with the model; joined 2026-12-06 with its family) is held out. Its SGLang kernels are counted (fifth "
    "census, docs/sglang-decode-kernels.md: one stream, 1,554 kernels a step): throughput -25 / -17 / -7 % and TPOT "
    "+34 / +21 / +8 % at 1 / 16 / 100 users at the 4.5 us a kernel fitted on B200 (with the per-layer terms it was "
    "+31 / +19 / +17 % and -23 / -13 / -14 %): on H200 that count overshoots (10.86 against 8.13 ms at one user), as "
    "GLM-5's did. Its one-user run fits a per-kernel cost of Hopper's own (2026-12-07, data/perf_defaults.json "
    "kernel_us_by_capability \"9\": 2.7 us), which holds out on its 16- and 100-user runs (throughput -4 / -1 %, TPOT "
    "+7 / +3 %; one user +1 % and -1 %), and on the four H200 runs of the Gemma 4 page transcribed beyond the ground "
    "truth (ITL +3 / +3 % and -1 / +12 %, from +19 / +11 % and +35 / +22 %); Nemotron-3-Super on 4 x H200 moves the "
    "other way (throughput +13 -> +17 %). The vLLM recipe's 10-user run (no kernels counted for vLLM) is +30 % on throughput and -21 % on TPOT. "
    "GPT-OSS-120B and Qwen3-Next-80B-A3B (8 x B200, TP 8, SGLang 0.5.6, 1 and 100 users; joined 2026-12-06) ran "
    "bench_serving's default dataset, ShareGPT, which became a built-in that day (sharegpt-sglang: first turns as "
    "SGLang 0.5 samples them, data/workloads/README.md); the replay is a seed-1 draw of that population scaled to "
    "each run's printed totals, so its mean lengths are the run's and its requests are not. Both are held out. "
    "GPT-OSS-120B is predicted slow: one-user TPOT 3.26 against 2.31 ms (+41 %), throughput -27 / -8 % at 1 / 100 "
    "users. Its Blackwell kernels were counted in the second census (row 5a, 12 a layer on the critical path) and "
    "applied when these runs joined, by the same rule as the others (before: SGLang's untuned 55 us a layer and the "
    "20 us per MoE layer, +74 % and -41 / -28 %). The count is keyed to compute capability 10, since Hopper runs "
    "other kernels (17 a layer, row 5c). At the 4.5 us a kernel fitted on B200 the 432 kernels overshoot this step "
    "as Step-3.5-Flash's did on H200; the record implies about 2-3 us a kernel. Qwen3-Next is predicted fast at 100 users (TPOT -22 %, throughput "
    "+31 %; -44 % and +77 % before its prompt forwards' gated-DeltaNet kernels were counted, 2026-12-07) and its "
    "one-user TTFT short (85 against 133 ms; 57 before), as its sibling Qwen3-Coder-Next's. DeepSeek-Math-V2 "
    "(8 x B200, --tp 8 --ep 8, SGLang 0.5.8, the same ShareGPT replay; joined 2026-12-06, held out) runs on the "
    "deepseek-v3.2 entry: it is built on DeepSeek-V3.2-Exp-Base (its repository's README) and no config of its own "
    "was found. Like GLM-5, the other DeepSeek-sparse-attention model, it is predicted fast: TPOT -43 / -28 % and "
    "throughput +75 / +47 % at 1 / 100 users (10.4 against 18.4 ms a token at one user); its DSA kernels are not "
    "counted. Four runs use SGLang's DP attention (--dp D --enable-dp-attention; joined 2026-12-06 when the simulator "
    "gained it, held out): D ranks of 8 / D GPUs, each with its own scheduler and pool, dealt requests round-robin and "
    "stepping in lockstep around the MoE over all ranks' tokens (docs/simulator.md#dp-attention). Kimi-K2-Instruct on "
    "8 x B200 at DP 4 is within 8 %: one-user ITL 14.7 against 15.6 ms, throughput +8 / +6 % at 1 / 100 users. Its "
    "one-user step was 9.3 ms with the lockstep and the gathered MoE alone; the DP path's own kernels and collectives "
    "(read in the 0.5.6.post1 wheel: the all-reduce + RMSNorm fusion off, four NCCL collectives a layer at DP 4, "
    "docs/research/sglang-dp-attention.md section 7) made it 12.0 ms and the padding rows of the decode graphs, which "
    "route to experts of their own, 14.6 ms (the 100-user throughput +25 -> +6 -> +5 %; MLA's down-projections read "
    "whole on every GPU add 0.1 ms). DeepSeek-V3 on 8 x MI300X "
    "and DeepSeek-V3.2 on 8 x B200 at DP 8 and 100 users are predicted fast, throughput +81 and +50 %: on ROCm no "
    "kernel is counted, so nothing of the DP path's own work is charged, and DeepSeek-V3.2's DSA kernels are not "
    "counted either (DeepSeek-Math-V2, the same architecture at TP 8, is +46 %). The run of DeepSeek-V3 with EAGLE "
    "under DP attention is not simulated: the simulator runs the pair since 2026-12-07, but the run prints no accept "
    "length. Nor are DeepSeek-V3.2's three runs on 16 x H800 (two nodes, DP attention with EAGLE): their printed accept "
    "length (3.27) is more than the page's flags allow (3 tokens a verify), so another speculative configuration "
    "printed them ('Records not simulated').\n"
    "- **kvcached** (SGLang 0.4, A100, Llama-3.2-3B, Poisson 8 / 16 / 32 req/s): throughput (0 / +8 %) and median ITL "
    "(-6 / +2 %) below the overload, median TTFT -20 / -14 % at 8 / 16 req/s (-10 / +2 % until 2026-12-07, when a prompt "
    "stopped paying the output head on every token: Llama-3.2-3B's tied 128,256 x 3,072 embedding is 12 % of its "
    "parameters; -17 / -23 % before the overlap rule), and the overload at 32 req/s is found (26.1 req/s predicted "
    "against 26.8 measured; 23.9 until 2026-12-07); the p99 ITL +18 / -27 % at 8 / 16 req/s (+66 / +66 % before the "
    "overlap rule).\n"
    "- **llmservingsim** (vLLM 0.19, RTX 4090, replayed trace in the KV-saturated, preempting regime): 22-39 % slow "
    "on every latency (36-43 % until 2026-12-07, when the simulator took up two rules of vLLM's KV manager: 0.19's "
    "whole-sequence admission gate, scheduler_reserve_full_isl, under which a waiting request is admitted only when the blocks "
    "of its whole prompt are free (simulated preemptions 283 -> 203, latencies 28-42 % slow), and a preempted request's "
    "cached blocks, which its readmission takes back instead of recomputing them: 21-37 %; 42-49 % with the serial V0-fitted "
    "vLLM step term). The run's own meta.json gives the card's CUDA total, 25,250,627,584 B (23.52 GiB: the catalogue's "
    "figure since 2026-12-07, 23.64 before; NVIDIA's open kernel modules reserve more than the proprietary one), and the "
    "pool vLLM allocated, 2,588 blocks: planned 2,750 (+6.3 %; 2,807 at 23.64 GiB), the rest being activation and "
    "non-torch memory on this card that the H100-fitted profile does not have (0.32 GiB). The engine's own log of the run "
    "is matched closely (KV usage reaches 100 %, peak and "
    "mean running / waiting within 3-15 %, table below the records). The run's own timestamps show where much of the rest lies: its "
    "prompts ran at about 0.87 of the card's dense BF16 datasheet rate (165.2 TFLOPS), where the step model assumes 0.65 of it "
    "(requests bench-2 to bench-11, 8,740 prompt tokens of ~14.1 GFLOP each between first tokens at 0.689 and 1.544 s: "
    "144 TFLOPS; a GeForce card boosts above its rated 2.52 GHz), while its decode steps are about the predicted ones (median ITL "
    "29.8 ms predicted, median TPOT 30.8 ms measured). The same harness on 2 x RTX PRO 6000 (Qwen3-32B, TP 2 over "
    "PCIe, 128 sequences at most, overloaded with no preemption; simulated since 2026-12-06, when the card gained its dense BF16 rate "
    "188 SMs x 1,024 FLOPs a clock x 2.617 GHz = 503.8 TFLOPS) goes the other way: every latency 20-27 % fast (TPOT 67 against "
    "84 ms at the median; its decode-only steps at 128 running, 22-46 s into the run at a mean context of 1,000-1,250 tokens, "
    "take 55.6-62.5 ms by the log's generation throughput against 48.5-51 ms predicted), while its engine log is matched: peak running 128 / 128, peak waiting 172 / 172, mean "
    "running 99.5 / 101.1 and waiting 60.9 / 67.9 (that log's KV usage reads 0.0 in every sample: not recorded).\n"
    "- **sglang_vllm060** (SGLang 0.3.0 and vLLM 0.6.0, one A100, Llama-3.1-8B-Instruct, ShareGPT at Poisson 4 / 8 req/s and "
    "offline, 5,000 prompts; joined 2026-12-06 with the built-in sharegpt, first turns as that month's bench_serving "
    "sampled them). SGLang 0.3.0 is planned with its oldest profile (0.4); its --enable-torch-compile is not modelled. Only medians "
    "were printed online, no seed, so a seed-1 draw of the population stands in for the run's requests. Offline, "
    "23.8 against 22.0 req/s (+8 %) and output +11 % (+5 / +8 % until 2026-12-07, when a prompt stopped paying the output head on every token) (the built-in's outputs average 198.9 tokens, the run's 194.3). "
    "Online, the median TPOT is within +3 / -6 % and the median TTFT -21 / -20 %: 0.3.0 ran without the overlap "
    "scheduler, an opt-in until sgl-project/sglang PR #2067 (2024-11-18) made it the default for 0.4, so a request "
    "joins the next step (planned with the 0.4 rules it waited one step more: +21 / +26 %). The page's vLLM 0.6.0 "
    "twins (--num-scheduler-steps 10 --max-model-len 4096; joined 2026-12-06 when the simulator gained V0's multi-step "
    "rounds, held out) ran ten decode steps a scheduler call and streamed each round's tokens as one chunk, which "
    "is why their median ITL (129 / 159 ms) is nine times their median TPOT (14.1 / 17.1 ms). With the round's host "
    "work charged once (the vllm-sync step term, 0.65 ms, fitted on vLLM's 2024 nightly points, not on these runs) "
    "they are predicted within 3-4 % on offline throughput (21.9 against 21.3 req/s) and median TPOT (-3 / -4 %), "
    "6-8 % low on the median ITL (122 / 146 ms), and 15-23 % low on the median TTFT (85 / 92 against 100 / 120 ms: "
    "a request waits for the round it arrived in to end, about half a round, then a prompt round; one step at a "
    "time the same runs are predicted at 26 / 30 ms, ITL 12.6 / 14.0 ms).\n"
    "- **issues** (gpt-oss-20b on Modal H100): the measured TTFT of 2.1-2.5 s for 512-token prompts at 4-32 "
    "users is deployment overhead no engine model covers.\n\n"
    "TTFT, TPOT, throughput and duration follow benchmark_serving's definitions on both sides; what is missed is "
    "step time (calibration) and per-request overhead outside the engine step. This comparison found two ITL definition differences, "
    "since fixed in planner/src/sim/simulator.cpp: the token a preempted request produces when its recompute "
    "finishes now counts the whole stall as one gap, as benchmark_serving does; and in engines that do not mix "
    "prompts and decodes a request's first decode gap now starts at its own first token, not at the previous "
    "decode step. The second took the kvcached runs' p99 ITL from +78 / +95 % to +37 / +73 % at 8 and 16 req/s.\n\n";

// What the max-rate table shows (figures as of when this test was written).
constexpr const char* kMaxRateFindings =
    "What it shows: on the SGLang A100 sweep (Poisson 8 / 16 / 32 req/s) the answers land between the same "
    "measured rates as the measured crossings at both targets (28.6 req/s under 2 s, crossed between 16 and 32; "
    "15.9 req/s under 200 ms, crossed between 8 and 16). On the four vLLM H100 sweeps the search is bound by "
    "overload, not by the TTFT target: the predicted max rate (16.3-16.5 req/s for Llama-2-7B, 18.7-18.8 req/s for "
    "Mixtral-8x7B TP2; 16-16.3 and 17.6-17.7 until 2026-12-08, when the search's ceiling stopped counting an "
    "offline batch's finishing tail and a probe above it had to fail) is under the 20 req/s the runs served with "
    "a p99 TTFT of 72 and 256 ms, so the answer is "
    "one step low there (the same few-per-cent capacity error as in the saturation table). The one miss by two "
    "steps is Mixtral-8x7B at 5 / 10 req/s under 200 ms: the measured p99 TTFT is 482 ms at 5 req/s and 68 ms at "
    "10, not monotone in the rate (a slow start in the lighter run), so the measured table crosses the target "
    "below its first rate while the simulator serves both rates within it.\n";

// What the p99 TTFT table shows (figures as of when this test was written, 2026-12-03).
constexpr const char* kP99Findings =
    "What it shows. Most misses are cold costs of the measured deployment, not load: in the order the cookbook "
    "lists a deployment's runs (1,000 / 1,000 tokens at 1, 16, 100 users, then 1,000 / 8,000, then 8,000 / 1,000), "
    "the first run at each new shape holds the tail, and a later run whose first prompts have the same lengths does "
    "not (DeepSeek-V3.1 at 16 users: first-wave excess 2.08 s per request and p99 2,135 ms in run -01, 0.10 s and "
    "300 ms in run -04; DeepSeek-R1 0.71 s / 840 ms against 0.11 s / 268 ms; the vLLM Mixtral runs' first stage of a "
    "run has TTFT maxima of 1.2-2.0 s, where codegen's second stage on the same server has 106 ms). The records' "
    "own fields do not explain it: bench_serving (sglang/bench_serving.py `benchmark`) sends one warm-up request "
    "before the run (the first prompt, at most 32 output tokens; simulated since 2026-12-04 as that prompt "
    "cached when the run starts) and sleeps 1 s, and with `--request-rate inf` "
    "and `--max-concurrency C` releases the first C requests at once (an asyncio.Semaphore over tasks created "
    "together), which the simulator does. Its `random` dataset (`sample_random_requests`, random_sample=True) "
    "builds prompt i from the i-th ShareGPT conversation of a seed-shuffled list, repeated or truncated to the "
    "drawn length: with the default seed, prompt i of every run on a page is the same text cut to that run's "
    "length, so on a server that keeps its radix cache between runs a later run finds its prompts cached "
    "(DeepSeek-V3.1 run -03, the same 10 lengths as run -00: p99 160 ms = its median; DeepSeek-R1 -03 138 ms). "
    "That makes later runs faster, never the first ones slower, so it does not explain the misses. Whether a "
    "page's runs shared one server in page order is not recorded, and most measurements say they did not: "
    "simulated so (each deployment's runs in page order, the cache carried over), the p99 TTFT median went from "
    "52.7 to 74.2 % and the median TTFT from 17.5 to 22.2 % (2026-12-04), since the first waves of the 100-user and "
    "8,000-token runs measured as long as uncached prompts take (DeepSeek-R1 -08: 6,258 ms measured, 4,119 "
    "uncached, 332 carried); only Qwen3-235B -08 and ERNIE-4.5 look warm. So every run starts on an empty cache "
    "but for its warm-up prompt (docs/simulator.md, 'What the load generator does'). What a fresh server compiles at first use was read in the engines' source (docs/simulator.md#cold-start). "
    "vLLM: the Triton fused-MoE kernel takes its tile sizes from the tuned entry nearest to the forward's token count "
    "and is specialised on the divisibility of two token-count arguments; start-up compiles only the variants of the "
    "captured graph sizes (up to 256 tokens here) and of the profile forward, so each new variant of a larger mixed "
    "step compiles when first launched. That is simulated for the blis runs (`--cold-start`: stage 0 on a fresh "
    "server, stage 1 after it; the dense Llama-2-7B has no such kernel), with one fitted cost per first use, 1.225 s, "
    "on the Mixtral codegen stage 0 (p99 TTFT 49 -> 614 ms against 482; the p99 jumps there, from under the measured "
    "value to over it, as one more stall's requests pass the 30th-slowest): held out, the general stage 0 goes "
    "50 -> 381 ms against 383, the stage-1 runs keep their warm p99, and the roleplay stage 0 stays at 52 ms against "
    "85 (its p99 is the 72nd-slowest of 7,200 requests, more than the simulated stalls delay; its p99.9 1.07 s and "
    "maximum 1.81 s are stall-sized). SGLang: DeepGEMM compiles every M at the first use of each GEMM shape during "
    "graph capture (on the node's first rank; the others load each M's kernel at its first use), MoE on B200 runs "
    "FlashInfer's precompiled TensorRT-LLM kernels and on MI300X aiter's (the ROCm images set SGLANG_USE_AITER=1), and "
    "the server's own warm-up is one prompt of a few tokens. One per-shape compile is established: on 64-token KV "
    "pages (the trtllm attention backends SGLang picks on B200) the paged allocator's Triton kernels compile a "
    "variant per power of two of the batch size and per new largest prompt batch (mem_cache/allocator.py). "
    "Simulated on the 34 B200 runs (2026-12-05; compiled variants carried through a deployment's runs), one cost per "
    "variant left the p99 TTFT median at 53.4 % (0.3 s) or worsened it (54.5 % at 0.6 s, 58.2 % at 1.0 s) and took "
    "the throughput medians past 10 %; a cost growing with the kernel's widest tl.arange fits the one-user runs at "
    "0.08 s per 1,024 elements (their tails exceed the no-stall runs by 55-100 ms) but overshoots the 16-user runs "
    "(+33 to +298 %; median 56.0 %), and at 100 users Qwen3-235B and GLM-4.6 measure what no stall gives (863 / 906 "
    "against 634 / 912 ms) while DeepSeek-R1 and MiniMax-M2.5, the two block-FP8 deployments, need 1.2-1.9 s more, "
    "with the same allocator variants. So the cookbook runs' first-run tails keep no term. Since 2026-12-03 a p99 over "
    "10 or 80 requests is numpy's linear interpolation on both sides (the simulator had reported the nearest "
    "rank, the largest of 80, which for a simulated first wave is its slowest request): the p99 TTFT median "
    "moved 44.4 -> 46.1 %, p99 TPOT 11.8 -> 12.3 %, the rest within 0.1 point.\n";

// What the Kimi-K2.5 sweep shows (figures from its records, 2026-12-03), and what SGLang's source
// says it runs (read 2026-12-03 in the sglang 0.5.9 wheel from PyPI, the first release with
// python/sglang/srt/models/kimi_k25.py; the cookbook's "0.5.6.post2" is a main build: the 0.5.6.post2,
// 0.5.7, 0.5.8 and 0.5.8.post1 wheels have no Kimi-K2.5 model, and Moonshot's deploy guidance for
// it installs SGLang from main). The per-sequence split is solved from the three 16-user runs
// (kimi-k2-5-01 / 04 / 06: median ITL / 16 = 3.4, 7.7, 6.0 ms; time-weighted mean prompt L/2 and
// output position L/3 of bench_serving's uniform [1, L] lengths: (500, 333), (500, 2667),
// (4000, 333) tokens): 6.0 - 3.4 = 3500 x 0.74 us; 7.7 - 3.4 = 2334 x 1.8 us; 3.4 - 0.37 - 0.61 =
// 2.4 ms. The 100-user run (316 / 100 = 3.16 ms against 3.38) is 7 % under it, the 64-user one
// (296 / 64 = 4.63 ms against 2.4 + 2.96 + 0.61 = 5.97) 22 % under.
// The slow-tokenizer check (2026-12-03) read the sglang 0.5.9 wheel (managers/detokenizer_manager.py
// _decode_batch_token_id_output / _grouped_batch_decode, managers/schedule_batch.py Req.tail_str,
// managers/tokenizer_manager.py _wait_one_response, utils/common.py get_zmq_socket, environ.py
// SGLANG_PATCH_TOKENIZER, utils/patch_tokenizer.py, bench_serving.py async_request_sglang_generate
// and its peak-throughput buckets), the transformers 4.57.1 wheel it pins (tokenization_utils.py
// convert_ids_to_tokens / _decode, tokenization_utils_base.py all_special_tokens / all_special_ids /
// batch_decode), Moonshot's tokenization_kimi.py (TikTokenTokenizer.decode: tiktoken only without
// kwargs) and sglang PRs #16427 / #25309 / #23409 (their measured decode times) and #13275 / #34852
// (the surr_offset stall on empty / U+FFFD text). Its arithmetic: 3 ids x 9-12 us = 0.03 ms per
// sequence per step against 3.4 ms; backlog at 16 users ~15 users x ~250 undelivered tokens x 3.4 ms
// = 12.75 s against a 0.38 s median TTFT; peak 1,103 tok/s / 16 users = 68.9 steps/s = 14.5 ms per
// step; Kimi-K2 1,113 tok/s -> 0.90 ms per token; MI350X (184 - 35.7) / 15 = 9.9 ms vs H200
// (54 - 8.8) / 15 = 3.0 ms per sequence.
constexpr const char* kKimiFindings =
    "\nThe one sweep missed, Kimi-K2.5 on 8 x H200 (SGLang 0.5.6.post2, INT4 group-32 routed experts): its "
    "records say what the engine spent per decode step. The measured median ITL (one decode step once the first "
    "token is out) is 8.8 ms at one user (1,000 / 1,000 tokens), 54 ms at 16 and 316 ms at 100 users: about 3 ms "
    "more per running sequence per step, and 5-7 ms per sequence with 8,000-token contexts (96 ms at 16 users, "
    "296 ms at 64; 15.9 and 21.7 ms at one user with longer contexts). Output throughput therefore stays at "
    "254-258 tok/s from 16 to 100 users, while the bench_serving \"peak output token throughput\" (the most "
    "tokens in one second) is 1,103 and 1,199 tok/s in the same runs, about what the step model gives at 16 "
    "users (973 tok/s, 14.7 ms steps). Three milliseconds per sequence per step is ten times what one more "
    "sequence can add in bytes: at most 8 routed experts per MoE layer it did not share (60 layers x 8 x 3 x "
    "7,168 x 2,048 INT4 weights with group-32 scales, ~1.5 GB per GPU at TP 8, 0.31 ms at 4.8 TB/s) plus its own "
    "KV cache (tens of microseconds); DeepSeek-R1, the same architecture on the same SGLang line, decodes 100 "
    "users in 42 ms steps on B200. Split by the runs' lengths (the three 16-user runs: 1,000 / 1,000, 1,000 / "
    "8,000 and 8,000 / 1,000 tokens), a running sequence costs about 2.4 ms + 0.74 us per prompt token + 1.8 us "
    "per output token decoded so far per step (the 100-user run is 7 % under that, the 64-user one 22 % under): "
    "an output token costs more than twice a prompt token, though both sit alike in the MLA latent cache, so the "
    "growth with context is not attention bytes either.\n\nWhat SGLang runs for this model, read from its source "
    "(the cookbook's \"0.5.6.post2\" is a main build: no release before 0.5.9 has "
    "python/sglang/srt/models/kimi_k25.py, and Moonshot's deploy guidance installs SGLang from main; 0.5.9 is "
    "read here): KimiK25ForConditionalGeneration.forward goes through managers/mm_utils.py "
    "general_mm_embed_routine, which in a decode batch only embeds the token ids (the MoonViT tower runs for "
    "prompt chunks that carry images); CUDA graphs stay on for it (server_args.py _handle_gpu_memory_settings: "
    "cuda_graph_max_bs 512 at TP 8 on a 141 GB GPU, so 100 users decode in a graph); its attention on Hopper is "
    "fa3, the MLA default there (server_args.py _handle_attention_backend_compatibility; "
    "_handle_model_specific_adjustments lists KimiK25ForConditionalGeneration with DeepSeek-V3 and sets no other "
    "backend on sm90), with FA3's own split-KV heuristic (layers/attention/flashattention_backend.py, num_splits "
    "0), which has no head-count condition (AITER's MLA on AMD needs 16 heads per GPU, the cookbook says); its "
    "routed experts go to CompressedTensorsWNA16MoE "
    "(layers/quantization/compressed_tensors/compressed_tensors.py get_moe_scheme) and fused_marlin_moe "
    "(layers/moe/fused_moe_triton/fused_marlin_moe.py: moe_align_block_size, then two moe_wna16_marlin_gemm "
    "launches over blocks of 8 token rows per expert up to 345 tokens per step), a fixed number of launches per "
    "layer that read the experts touched, which is what the step model charges. The cookbook's benchmark server "
    "sets no reasoning or tool parser, and bench_serving's sglang backend streams /generate, which runs none. "
    "Nothing there does work per running sequence of the size measured. Two more records bound the cause: the "
    "same checkpoint on 4 x MI350X (SGLang 0.5.9, TP 4; sglcookbook-kimi-k2-5-08 / 09, simulated since 2026-12-04 "
    "on the catalogue's derived MI350X rates: TPOT -79 and -92 %) has the same shape, median ITL 35.7 ms at one user and 184 ms at 16 (about 10 ms per "
    "sequence, output 27 -> 77 tok/s) with other attention and MoE kernels (aiter MLA; "
    "CompressedTensorsWNA16TritonMoE, get_moe_scheme's ROCm branch), so no Hopper kernel (FA3, Marlin) explains "
    "it alone; and Kimi-K2-Instruct (FP8 block weights, a tiktoken tokenizer of the same family, 8 x B200, "
    "SGLang 0.5.6.post1, DP attention; sglcookbook-kimi-k2-01, simulated since 2026-12-06 within 6 %) streams "
    "1,113 tok/s at 100 users through the same single detokenizer process (managers/detokenizer_manager.py), "
    "which bounds what that tokenizer costs per token, and its step at batch is predicted within 4 % by the same "
    "step model (TPOT 81.9 against 85.6 ms). What is left in common, the INT4 checkpoint's MoE path on both "
    "vendors or something of the multimodal wrapper outside the decode forward, is not pinned by a source, so "
    "nothing is fitted to it and the sweep stays missed.\n\nChecked on 2026-12-03 and not adopted: that the "
    "cost is Kimi's slow tokenizer run on the host per request per step. The tokenizer is a transformers "
    "PreTrainedTokenizer (Moonshot's tokenization_kimi.py TikTokenTokenizer), whose decode calls tiktoken only "
    "when given no keyword arguments; with any it falls to transformers 4.57.1 (the version sglang 0.5.9 pins) "
    "PreTrainedTokenizer._decode, which rebuilds legacy_added_tokens on every call and, through the "
    "all_special_ids / all_special_tokens properties (rebuilt on every access, tokenization_utils_base.py), "
    "re-lists the special tokens for every id (convert_ids_to_tokens) and every token. In SGLang 0.5.9 the only "
    "per-step decode of a running request is in the detokenizer process: "
    "DetokenizerManager._decode_batch_token_id_output calls tokenizer.batch_decode with skip_special_tokens and "
    "spaces_between_special_tokens twice, over decode_ids[surr_offset:read_offset] and decode_ids[surr_offset:], "
    "the ids since the last committed text: 1-3 per step, the prompt only as its last 5 ids "
    "(schedule_batch.py INIT_INCREMENTAL_DETOKENIZATION_OFFSET); a window grows only while the new text is "
    "empty or ends in U+FFFD. The scheduler decodes only for stop strings (Req.tail_str), which bench_serving's "
    "sglang backend does not send (temperature 0, max_new_tokens, ignore_eos). SGLang measured that path: its "
    "PR #16427 (utils/patch_tokenizer.py, caching both properties for Kimi's tokenizer behind "
    "SGLANG_PATCH_TOKENIZER, off by default in 0.5.9's environ.py; the cookbook's launch sets no environment) "
    "took a 20,000-id decode from 233 to 21.9 ms (11.7 -> 1.1 us per id), PR #25309 gives 727 ms for 80,002 ids "
    "unpatched (9.1 us per id), and a later environ.py, where PR #23409 has turned the patch on by default, says "
    "the ITL \"can differ by +10x under high batch size\". It does not fit these records: (1) size: 3 ids per sequence "
    "per step at 9-12 us is ~0.03 ms, a hundredth of the 3 ms measured, so the two calls' fixed costs would have "
    "to be ~1.5 ms each or the windows ~300 ids, and empty-text stalls would drop tokens from the streamed text, "
    "yet the runs' \"Total generated tokens (retokenized)\" matches the generated count (40,775 of 40,805; "
    "252,588 of 252,662); (2) place: the detokenizer is its own process behind unbounded ZMQ queues "
    "(utils/common.py get_zmq_socket: SNDHWM and RCVHWM 0) and does not slow the scheduler; a stage after the "
    "GPU that is slower than it would, in a closed loop, queue each new request's first token behind the other "
    "users' undelivered tokens (at 16 users ~15 x 250 tokens x 3.4 ms ~ 13 s), while the measured median TTFT "
    "is 0.38 s at 16 users and 1.3 s at 100, 4-7 ITLs: a cost on the scheduler's own step; (3) the peak output "
    "throughput (bench_serving.py counts tokens per one-second bucket from ttft + itl) of 1,103 tok/s at 16 "
    "users, 14.5 ms steps, is not reachable with a per-sequence cost of a fixed window; (4) Kimi-K2-Instruct, "
    "the same tokenizer class, on SGLang 0.5.6.post1 (before the patch existed) streams 1,113 tok/s at 100 "
    "users (at most 0.9 ms per sequence-step); (5) the per-sequence cost follows the GPU deployment, 9.9 ms on "
    "4 x MI350X against 3.0 ms on 8 x H200 (3.3x) where the one-user step is 35.7 against 8.8 ms (4.1x). And the "
    "one-user ITL grows with context, 8.8 / 15.9 / 21.7 ms at 1,000 / 1,000, 1,000 / 8,000 and 8,000 / 1,000 "
    "tokens (3-4 us more per context token per step), where DeepSeek-R1 on B200 keeps 9.15 / 9.22 / 9.28 ms: "
    "work in the step that grows with each sequence's context, which a few-id detokenizer window does not "
    "have. So no host stage is modelled: the cost the records need sits on the scheduler's step and grows with "
    "the running sequences and their contexts, and no source read pins it.\n";

// ---- p99 TTFT, record by record ---------------------------------------------------------

// What dominates each p99 TTFT miss (|error| > 35 %), read off the record's own fields and its
// neighbours on the same deployment (issue 12: "list, per record, the p99 TTFT error and what
// dominates it"). The figures in the table beside each cause are computed from the record.
// Causes:
//  * cold: a cost the measured run paid at its first forwards and the later runs of the same
//    deployment did not (the first-wave excess below is large while a later run whose first
//    prompts have the same lengths has a small tail). Modelled for vLLM (the blis records run with
//    --cold-start); for SGLang no per-shape first-use cost is established from its source
//    (docs/simulator.md#cold-start), so not modelled.
//  * kimi: the step model (Kimi-K2.5 on 8 x H200; the saturation section says why).
//  * step: the step model is too fast for the deployment's kernels (gated-DeltaNet, Mamba-2,
//    SGLang's Triton MLA decode at small batch), on the median TTFT as much as on the tail.
//  * deploy: per-request cost of the deployment (Modal), outside any engine.
//  * burst: the simulated first wave (prompts sent at once, handed over one by one so the first
//    is prefilled alone, the rest 16,384 tokens a step) takes longer than the measured one.
//  * overload: the predicted capacity is under the offered rate (the queue grows).
//  * spread: a tail the simulated constant-rate run does not have.
//  * engine-log: the preempting KV-saturated trace replay (llmservingsim), 22-39 % slow throughout.
const std::map<std::string, std::string>& p99_causes() {
  static const std::map<std::string, std::string> m = {
      {"sglcookbook-llama4-00", "cold: a request of tens of seconds (mean TTFT 4.2 s over 10, median 69 ms; first run of Scout)"},
      {"sglcookbook-llama4-03", "cold: a request of tens of seconds (mean TTFT 4.3 s over 10, median 57 ms; first run of Maverick)"},
      {"sglcookbook-deepseek-v3-1-00", "cold: 3.4 s excess over 10 requests (first run); run -03, the same 10 prompt lengths, p99 160 = its median"},
      {"sglcookbook-deepseek-v3-1-06", "cold: 4.0 s excess over 10 requests (first run with 8,000-token prompts)"},
      {"sglcookbook-qwen3-coder-00", "cold: one of 10 requests ~0.66 s (first run)"},
      {"sglcookbook-deepseek-r1-00", "cold: one of 10 requests 215 ms against a median of 141 (first run); run -03 p99 138"},
      {"sglcookbook-qwen3-00", "cold: one of 10 requests 166 ms against a median of 92 (first run)"},
      {"sglcookbook-qwen3-03", "cold or spread: one of 10 requests 167 ms against a median of 109"},
      {"sglcookbook-deepseek-r1-01", "cold: first 16-user run; run -04 (same first 16 prompt lengths) p99 268"},
      {"sglcookbook-deepseek-v3-1-01", "cold: first 16-user run; run -04 (same first 16 prompt lengths) p99 300"},
      {"sglcookbook-qwen3-01", "cold: first 16-user run; run -04 (same first 16 prompt lengths) p99 456"},
      {"sglcookbook-qwen3-coder-01", "cold: first 16-user run"},
      {"sglcookbook-llama4-04", "cold: first 16-user run of Maverick"},
      {"sglcookbook-llama4-01", "cold: first 16-user run"},
      {"sglcookbook-deepseek-r1-02", "cold: first 100-user run"},
      {"sglcookbook-kimi-k2-01", "cold: first 100-user run (mean TTFT 457 ms, median 222)"},
      {"sglcookbook-deepseek-v3-01", "cold: first run of its server (run -00 ran another launch command, with EAGLE); mean TTFT 1,522 ms, median 477"},
      {"sglcookbook-deepseek-v3-2-01", "cold: first run of its server (run -00 ran another launch command, with EAGLE); mean TTFT 530 ms, median 444"},
      {"sglcookbook-deepseek-v3-1-02", "cold: first 100-user run"},
      {"sglcookbook-deepseek-r1-07", "cold: first run with 16 x 8,000-token prompts"},
      {"sglcookbook-deepseek-v3-1-07", "cold: first run with 16 x 8,000-token prompts"},
      {"sglcookbook-glm-5-00", "step: GLM-5's one-user prompt steps are predicted 31 % short at the median too (196 against 282 ms; "
                               "DSA layers, kernels not counted; no plain-decoding GLM-5 record to separate the target's steps from "
                               "the speculative iteration's)"},
      {"sglcookbook-deepseek-v3-1-04",
       "burst, predicted long: the first wave's first prompt is prefilled alone (the front end hands the burst over "
       "one request at a time) and every MI300X prompt step carries the FP8 launch terms fitted on the one-user runs; "
       "two such steps (483 ms predicted) are more than the measured p99 (300 ms, median 194): on this deployment the "
       "wave went in one step, or those terms grow with the tokens more than with the forwards"},
      {"sglcookbook-deepseek-v3-1-05",
       "burst, predicted long: as -04 (the first prompt alone, then 63 prompts; 1,022 ms predicted against 649)"},
      {"sglcookbook-qwen3-coder-02",
       "burst, predicted long: as DeepSeek-V3.1 -04 on the same MI300X terms (816 ms predicted against 529)"},
      {"sglcookbook-qwen3-04", "first wave slower than simulated on a warm deployment (not explained)"},
      {"sglcookbook-qwen3-05", "first wave slower than simulated on a warm deployment (not explained)"},
      {"sglcookbook-kimi-k2-5-00", "kimi"},
      {"sglcookbook-kimi-k2-5-01", "kimi"},
      {"sglcookbook-kimi-k2-5-02", "kimi"},
      {"sglcookbook-kimi-k2-5-03", "kimi"},
      {"sglcookbook-kimi-k2-5-05", "kimi"},
      {"sglcookbook-kimi-k2-5-06", "kimi"},
      {"sglcookbook-ernie4-5-00", "cold: one request of 41 s (mean TTFT 4.2 s over 10, median 37 ms; first run)"},
      {"sglcookbook-ernie4-5-01", "cold: first 16-user run"},
      {"sglcookbook-ernie4-5-06", "cold: one of 10 requests 167 ms against a median of 72 (first run with 8,000-token prompts)"},
      {"sglcookbook-ernie4-5-02", "warm radix cache: its first 16 prompts are run -01's (same texts, same drawn lengths)"},
      {"sglcookbook-ernie4-5-05", "warm radix cache: its first 64 prompts are run -02's first 64 (same texts and lengths)"},
      {"sglcookbook-ernie4-5-04", "warm radix cache: its first 16 prompts are run -01's (same texts, same drawn lengths)"},
      {"sglcookbook-ernie4-5-07", "warm radix cache: its first 10 prompts are run -06's (same texts and lengths)"},
      {"sglcookbook-ernie4-5-08",
       "warm radix cache: its first 80 prompts are run -07's; uncached, 64 prompts of ~4,000 tokens are 1.6 PFLOP "
       "(2.9 s at 0.8125 of the card's 668.4 TFLOPS matmul ceiling) against a measured p99 of 380 ms"},
      {"sglcookbook-qwen3-coder-next-00", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-01", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-02", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-03", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-04", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-05", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-06", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-07", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-qwen3-coder-next-08", "step: the gated-DeltaNet layers cost more than their counted kernels and bytes (one-user TTFT 94-168 ms measured, flat from 1,000- to 8,000-token prompts; median TTFT -43 to +18 %)"},
      {"sglcookbook-gpt-oss-00", "lengths or cold: the p99 of 100 one-user TTFTs is one request of the run's (109 ms against a median of 32), "
                                 "its longest prompt or a first use; the replay's ShareGPT prompts are a draw of the population, not the run's"},
      {"sglcookbook-qwen3-next-00", "lengths or cold: one request of 100 (213 ms against a median of 133), as gpt-oss -00; the median "
                                    "TTFT is -36 % too (the gated-DeltaNet prefill, as Qwen3-Coder-Next's)"},
      {"sglcookbook-gpt-oss-01", "cold: first 100-user run of the page (after its one-user run)"},
      {"sglcookbook-deepseek-math-v2-01", "cold or step: first 100-user run of the page; the median TTFT is -64 % too "
                                          "(DSA layers' steps predicted short, as GLM-5's; kernels not counted)"},
      {"sglcookbook-qwen3-next-01", "cold: first 100-user run of the page (after its one-user run); the median TTFT is -35 % too"},
      {"sglcookbook-glm-4-7-flash-00", "step: SGLang's Triton MLA decode grows with the context (--attention-backend triton; one-user step 8.8 / 11.3 / 13.1 ms against 8.5 / 8.6 / 8.6 predicted) and its prompts of thousands of tokens cost more than their launches and FLOPs (median TTFT -14 to -69 %)"},
      {"sglcookbook-glm-4-7-flash-01", "step: SGLang's Triton MLA decode grows with the context (--attention-backend triton; one-user step 8.8 / 11.3 / 13.1 ms against 8.5 / 8.6 / 8.6 predicted) and its prompts of thousands of tokens cost more than their launches and FLOPs (median TTFT -14 to -69 %)"},
      {"sglcookbook-glm-4-7-flash-02", "step: SGLang's Triton MLA decode grows with the context (--attention-backend triton; one-user step 8.8 / 11.3 / 13.1 ms against 8.5 / 8.6 / 8.6 predicted) and its prompts of thousands of tokens cost more than their launches and FLOPs (median TTFT -14 to -69 %)"},
      {"sglcookbook-glm-4-7-flash-03", "step: SGLang's Triton MLA decode grows with the context (--attention-backend triton; one-user step 8.8 / 11.3 / 13.1 ms against 8.5 / 8.6 / 8.6 predicted) and its prompts of thousands of tokens cost more than their launches and FLOPs (median TTFT -14 to -69 %)"},
      {"sglcookbook-glm-4-7-flash-04", "step: SGLang's Triton MLA decode grows with the context (--attention-backend triton; one-user step 8.8 / 11.3 / 13.1 ms against 8.5 / 8.6 / 8.6 predicted) and its prompts of thousands of tokens cost more than their launches and FLOPs (median TTFT -14 to -69 %)"},
      {"sglcookbook-glm-4-7-flash-06", "step: SGLang's Triton MLA decode grows with the context (--attention-backend triton; one-user step 8.8 / 11.3 / 13.1 ms against 8.5 / 8.6 / 8.6 predicted) and its prompts of thousands of tokens cost more than their launches and FLOPs (median TTFT -14 to -69 %)"},
      {"sglcookbook-glm-4-7-flash-07", "step: SGLang's Triton MLA decode grows with the context (--attention-backend triton; one-user step 8.8 / 11.3 / 13.1 ms against 8.5 / 8.6 / 8.6 predicted) and its prompts of thousands of tokens cost more than their launches and FLOPs (median TTFT -14 to -69 %)"},
      {"sglcookbook-glm-4-7-flash-08", "burst: 64 first prompts of ~4,000 tokens, prefilled at the datasheet rate (measured median TTFT 442 ms, 4x the predicted)"},
      {"sglcookbook-nemotron3-nano-01", "first wave: 256 prompts of up to 1,024 tokens at once; with the kernels counted the decode steps are within 4 % (TPOT) and the median TTFT -17 %, the prompt steps clear the first wave faster than measured (p99 TPOT -23 %)"},
      {"sglcookbook-nemotron3-super-00", "first wave: 256 prompts at once (measured mean TTFT 436 ms, median 115, max ITL 7.2 s); with the kernels counted the median TTFT is +16 % and TPOT -9 %, the first wave clears sooner than measured"},
      {"sglcookbook-glm-4-6-01", "cold: first 16-user run (p99 378 ms against a median of 155; the median is predicted within 1 %)"},
      {"sglcookbook-glm-4-6-03", "cold or spread: one of 10 requests 296 ms against a median of 140"},
      {"sglcookbook-glm-4-6-04", "first wave slower than simulated on a warm deployment (p99 570 ms against a median of 143; not explained)"},
      {"sglcookbook-glm-4-6-07", "burst, predicted long: 16 first prompts of ~4,000 tokens; each prompt step is charged every kernel launch (38 us) on top of its compute, while a GPU busy with long prefill kernels hides launches (p99 907 ms measured, 1,364 predicted)"},
      {"sglcookbook-glm-4-6-08", "burst: 64 first prompts of ~4,000 tokens (measured mean TTFT 356 ms, median 269)"},
      {"sglcookbook-minimax-m2-00", "cold: a request of tens of seconds (p99 38.3 s against a median of 385 ms; first run of M2 on MI300X)"},
      {"sglcookbook-minimax-m2-01", "cold: first 16-user run (p99 1,978 ms against a median of 148)"},
      {"sglcookbook-minimax-m2-5-00", "cold: one of 10 requests 191 ms against a median of 116 (first run)"},
      {"sglcookbook-minimax-m2-5-01", "cold: first 16-user run (max ITL 484 ms)"},
      {"sglcookbook-minimax-m2-5-02", "cold: first 100-user run (max ITL 1.1 s)"},
      {"sglcookbook-minimax-m2-5-04", "cold: first run with 16 x 8,000-token prompts (max ITL 1.1 s)"},
      {"sglcookbook-minimax-m2-5-05", "cold: first 64-user run (max ITL 4.6 s)"},
      {"achatbot-183-gptoss20b-h100-sglang-c4", "deploy: TTFT median 2.5 s for 512-token prompts"},
      {"achatbot-183-gptoss20b-h100-sglang-c32", "deploy: TTFT median 2.1 s for 512-token prompts"},
      {"blis-train-20260218-120914-mixtral-8x7b-v0-1-tp2-codegen-stage0",
       "cold (simulated with --cold-start; the fit record): first stage on a fresh server (TTFT p99.9 1.36 s, max "
       "1.99 s); its stage 1, same server, p99 68 ms, max 106 ms"},
      {"blis-train-20260218-130541-mixtral-8x7b-v0-1-tp2-general-stage0",
       "cold (simulated with --cold-start): first stage on a fresh server (TTFT p99.9 1.00 s, max 1.21 s)"},
      {"blis-train-20260218-141024-mixtral-8x7b-v0-1-tp2-roleplay-stage0",
       "cold, simulated with --cold-start but short: its p99 is the 72nd-slowest of 7,200 requests, more than wait "
       "behind the simulated first-use stalls (TTFT p99.9 1.07 s, max 1.81 s: stall-sized)"},
      {"blis-train-20260217-155451-llama-2-7b-tp1-codegen-stage1",
       "spread: measured p99 1.8 x its median (50.8 / 28.9 ms), simulated 1.1 x (37.7 / 33.1)"},
      {"blis-train-20260217-155451-llama-2-7b-tp1-codegen-stage0",
       "spread: measured p99 1.9 x its median (p99.9 67 ms, max 130 ms), simulated 1.2 x"},
      {"sglcookbook-deepseek-v3-1-03",
       "cached: its 10 prompts are run -00's at the same lengths (bench_serving's random text), p99 160 = its median 156"},
      // The first 64 of the 8,000-token draw of 320 hold 248,315 tokens (bench_serving_lengths.hpp).
      {"sglcookbook-kimi-k2-5-08", "kimi"},
      {"sglcookbook-kimi-k2-5-09", "kimi"},
      {"sglcookbook-qwen3-08",
       "warm radix cache: its first 80 prompts are run -07's; uncached, its first wave (64 prompts, 248,315 tokens) "
       "is 2 x 22B active parameters x 248,315 = 10.9 PFLOP, 0.61 s at 8 x 2,250 dense BF16 TFLOPS, and the 60th "
       "prompt's first token needs 0.57 s of it: more than the measured p99 (510 ms, between the 4th and 5th "
       "slowest of 320)"},
      {"sglcookbook-deepseek-v3-1-08", "burst: 64 first prompts of ~4,000 tokens"},
      {"sglcookbook-llama4-02", "burst: 100 first prompts"},
      {"sglcookbook-llama4-05", "burst: 100 first prompts"},
      {"vllm-recipes-step3p5-flash-4xh200-c10",
       "step: Step-3.5-Flash on H200 is predicted fast on every figure (TPOT -21 %, median TTFT -65 % for 2,047-token "
       "prompts beside 9 decoding requests); the recipe names no vLLM version"},
      {"sglcookbook-step3-5-00",
       "cold: the measured p99 (270 ms) is one of 10 requests at over 3 x the median (81 ms), a first-run cost (the "
       "page's dev image, not a release); the counted steps are not fast (TPOT -1 % at the Hopper per-kernel cost fitted "
       "on this run, +34 % at the B200 one)"},
      {"sglcookbook-step3-5-01", "cold: first 16-user run (p99 985 ms against a median of 90; TPOT +14 %)"},
      {"sglcookbook-step3-5-02", "burst: 100 first prompts at once (measured p99 1.9 s against a median of 127 ms)"},
      {"sglcookbook-kimi-linear-00",
       "step: the KDA layers cost more than their state and weight bytes on SGLang / ROCm (one-user TPOT -36 %, median "
       "TTFT -74 %: 126 ms measured for prompts under 1,000 tokens, as Qwen3-Coder-Next's gated-DeltaNet prefill on B200)"},
      {"sglcookbook-kimi-linear-01",
       "step: the KDA layers cost more than their state and weight bytes on SGLang / ROCm (TPOT -42 %, median TTFT -75 %)"},
      {"sglcookbook-kimi-linear-02",
       "step: the KDA layers cost more than their state and weight bytes on SGLang / ROCm (TPOT -54 %, median TTFT -83 %; "
       "measured p99 2.7 s against a median of 226 ms: the first wave's 100 prompts)"},
      {"sglcookbook-ministral-3-00", "cold: one request of 33 s (mean TTFT 3.7 s over 10, median 54 ms; first run of Ministral-3)"},
      {"sglcookbook-ministral-3-01",
       "step: SGLang on ROCm runs this FP8 dense model slower than the datasheet step model, more so at batch (TPOT -11 / "
       "-32 / -65 % at 1 / 16 / 100 users, one-user median TTFT -59 %)"},
      {"sglcookbook-ministral-3-02",
       "burst: 100 first prompts at once (measured p99 456 ms against a median of 99); predicted at the datasheet rate, "
       "the later prompts are short (median TTFT -74 %) and the first wave's queue sets the p99"},
      {"llmservingsim-bench-rtx4090-llama-3.1-8b", "engine-log: every latency 22-39 % slow"},
      {"blis-train-20260217-231439-llama-2-7b-tp1-general-stage1", "overload: predicted capacity 16.5 req/s under the 20 offered"},
      {"blis-train-20260218-130541-mixtral-8x7b-v0-1-tp2-general-stage1", "overload: predicted capacity 18.7 req/s under the 20 offered"},
      {"kvcached-overhead-sglang-a100-rate32-baseline", "overload: both overloaded; queue grows faster in the simulation"},
      {"kvcached-overhead-sglang-a100-rate16-baseline",
       "near saturation: the run completed 14.9 of the 16 req/s it sent (a queue building), the simulated server all of "
       "them (16.0), so its tail is a stable queue's"},
  };
  return m;
}

//! (mean - median) x requests: how much TTFT the slowest requests hold above the typical one; per
//! first-wave request (/ concurrency) for a closed loop, whose first wave is sent at once.
std::string first_wave_excess(const nlohmann::json& rec) {
  const auto& r = rec.at("results");
  if (!r.contains("mean_ttft_ms") || !r.contains("median_ttft_ms") || r.at("mean_ttft_ms").is_null()) return "-";
  const double total_s = (r.at("mean_ttft_ms").get<double>() - r.at("median_ttft_ms").get<double>()) *
                         rec.at("num_prompts").get<double>() / 1000.0;
  std::string out = fmt("%.1f s", total_s);
  if (!rec.at("max_concurrency").is_null())
    out += fmt(" (%.2f s per first-wave request)", total_s / rec.at("max_concurrency").get<double>());
  return out;
}

std::string p99_section() {
  std::ostringstream md;
  md << "\n## p99 TTFT, record by record\n\n"
     << "Every record in the medians whose p99 TTFT is off by more than 35 %, with what dominates the error (read "
        "off the record's own fields and its neighbours on the same deployment; `sim_accuracy_test.cpp` "
        "`p99_causes`). \"Excess\" is (mean - median TTFT) x requests, as measured: the TTFT the slow requests hold "
        "above the typical one, and for a closed loop that figure over the concurrency (the first wave, sent at "
        "once). A p99 over 10 requests is numpy's 9.91-th order statistic, nearly the largest TTFT; over 80, "
        "between the 79th and the 80th.\n\n"
     << "| record | p99 TTFT predicted / measured (error) | measured median | measured excess | what dominates |\n"
        "|---|---|---|---|---|\n";
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& c : serving_comparisons()) {
    if (!c.median_exclusion.empty()) continue;
    const auto* m = c.find("TTFT p99");
    if (!m || std::abs(m->err()) <= 35) continue;
    const auto* med = c.find("TTFT p50");
    const auto cause = p99_causes().find(c.id);
    std::ostringstream row;
    row << "| " << c.id << " | " << cell(c, {"TTFT p99"}) << " | " << (med ? fmt("%.0f", med->measured) : "-")
        << " | " << first_wave_excess(c.record) << " | "
        << (cause == p99_causes().end() ? "not attributed" : cause->second) << " |\n";
    rows.emplace_back(-std::abs(m->err()), row.str());
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& [e, row] : rows) md << row;
  md << "\n" << kP99Findings;
  return md.str();
}

// Issue 15's last check, rendered: predicted max rate under a p99 TTFT target per rate sweep.
std::string max_rate_section() {
  const auto& m = max_rate_sweeps();
  std::ostringstream md;
  std::size_t within = 0;
  for (const auto& c : m.checks) within += c.distance() <= 1;
  md << "\n## Max rate under a latency target per rate sweep\n\n"
     << "Issue 15's check of `vramplan simulate --find-max-rate`: for each published request-rate sweep above, "
        "`plan::find_max_rate` (bisection on the arrival rate to 2 %, 3000 requests per probe, default options) searches "
        "the record's own setup and workload for the highest rate meeting a p99 TTFT target, and the answer is set "
        "against the sweep: measured = how many of the sweep's rates, from the lowest, meet the target as printed; "
        "predicted = how many of the sweep's rates are at or below the max rate found. Within one step: the two "
        "counts differ by at most one. Targets: the issue's example p99 TTFT <= 2 s and a tight one ten times "
        "smaller; no accuracy target is set for this check. With two or three rates per sweep, within one step is "
        "a weak check.\n\n"
     << "**" << within << " of " << m.checks.size() << " checks within one step.**\n\n"
     << "| sweep | target | rates (req/s) | measured p99 TTFT (ms) | measured: rates meeting | predicted max rate "
        "(bound by above it) | predicted: rates at or below | within one step |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : m.checks) {
    std::string rates, ttft;
    for (std::size_t i = 0; i < c.rates.size(); ++i) {
      rates += (i ? ", " : "") + fmt("%g", c.rates[i]);
      ttft += (i ? ", " : "") + fmt("%.0f", c.measured_ttft[i] * 1e3);
    }
    md << "| " << c.label << " | " << c.target << " | " << rates << " | " << ttft << " | " << c.measured_step << " | "
       << (c.predicted_rate > 0 ? fmt("%.3g", c.predicted_rate) + " (" + c.predicted_binding + ")"
                                : "none (" + c.predicted_binding + ")")
       << " | " << c.predicted_step << " | " << (c.distance() <= 1 ? "yes" : "**no**") << " |\n";
  }
  std::set<std::string> notes;
  for (const auto& c : m.checks)
    if (!c.workload_note.empty()) notes.insert(c.workload_note);
  if (!notes.empty()) {
    md << "\nWorkloads searched differ from the runs where find_max_rate cannot replay them:\n\n";
    for (const auto& n : notes) md << "- " << n << "\n";
  }
  md << "\nRate sweeps whose records are not simulated are left out (listed, with why, under \"Sweeps not "
        "evaluated\" above).\n\n" << kMaxRateFindings;
  return md.str();
}

constexpr const char* kExtraFindings =
    "- **Llama-3.1-70B on 8 x A100, TP 8, SGLang 0.5.6** (the cookbook's Llama 3.1 page, six runs of bench_serving's "
    "random dataset, replayed with their own re-drawn lengths: the printed totals match the seed-1 draw): the first dense "
    "model of 70B on A100 in this document, held out. One user: TPOT -7 / -8 %, throughput +7 / +8 %. The page names "
    "no memory size: the 80 GB board is assumed; the 40 GB one, 24 % less bandwidth, would put the one-user step "
    "about 10 % above the measured one. At 16 - 100 users the decode step is predicted 14 - 22 % short (TPOT), and "
    "throughput +13 to +26 %: the shortfall at batch the SGLang records above show for other dense models "
    "(Ministral-3-14B and Gemma-4-31B on MI300X), not in the datasheet step model. The p99 TTFTs at 16 - 100 "
    "users are predicted far too long (+30 to +1,310 %), and the 8,000-token one-user median TTFT +29 %: the runs "
    "were made one after another on one server, and bench_serving's seed-1 prompts repeat across them (prompt i is "
    "the same ShareGPT turn cut to each run's drawn length, tests/accuracy/bench_serving_lengths.hpp), so the radix "
    "cache kept from the earlier runs serves much of a later run's first wave, which every simulated run prefills "
    "from an empty cache (as for the ground truth's \"warm\" first waves, section p99 TTFT).\n"
    "- **Gemma 4 on H200** (the cookbook's Gemma 4 page: the 31B at TP 2 and the 26B-A4B on one GPU, 1 and 100 users, "
    "the 'gemma4 branch' planned as SGLang 0.5.11; the ground truth holds the page's MI300X blocks): where SGLang's "
    "kernels for Gemma 4 were counted (NVIDIA), held out. At the 4.5 us a counted kernel fitted on B200 they came out "
    "slow, ITL +19 / +11 % (31B at 1 / 100 users) and +35 / +22 % (26B-A4B); at Hopper's own 2.7 us, fitted on "
    "Step-3.5-Flash's one-user run on H200, +3 / +3 % and -1 / +12 %, throughput -4 / -13 % and +1 / -20 %. Their "
    "one-user median TTFT comes out long (+37 / +52 %), as Step-3.5-Flash's does (+33 %): the prompt-step terms "
    "(38 us a launched kernel) were fitted on B200, and nothing of Hopper's was fitted on a TTFT.\n";

constexpr const char* kRecordTableHead =
    "| record | engine | model / GPU | workload | req/s | out tok/s | TTFT p50 | TPOT p50 | TTFT p99 | TPOT p99 | "
    "preempted | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";

std::string record_row(const ServingComparison& c) {
  std::ostringstream md;
  md << "| " << c.id << " | " << c.engine << " | " << c.model << " / " << c.gpu << " | " << c.workload << " | "
     << cell(c, {"req/s"}) << " | " << cell(c, {"out tok/s"}) << " | " << cell(c, {"TTFT p50"}) << " | "
     << cell(c, {"TPOT p50", "TPOT (means)", "ITL p50"}) << " | " << cell(c, {"TTFT p99"}) << " | "
     << cell(c, {"TPOT p99", "ITL p99"}) << " | " << c.preemptions << " | " << c.verdict
     << (c.median_exclusion.empty() ? "" : " (out of the medians)") << (is_fit_record(c.id) ? " *fit*" : "")
     << (c.cold_server.empty() ? std::string() : ", cold start: " + std::to_string(c.cold_first_uses) + " first uses")
     << " |\n";
  return md.str();
}

// Runs transcribed by vramplan from public pages beyond the ground truth: held out by
// construction (found after every default was set), shown with their own medians, not in the
// targets of issue 12, which are the ground truth's.
std::string extra_section() {
  const auto& extra = serving_extra_comparisons();
  std::ostringstream md;
  md << "\n## Runs beyond the ground truth\n\n"
     << "Serving runs vramplan transcribed from public pages (`tests/accuracy/data/serving_extra_records.jsonl`, each "
        "with its `source` and the printed lines; set up by `serving_extra_setup.json`). No default is fitted on them: "
        "they hold out every fit, Hopper's per-kernel cost included (fitted on a ground-truth run after they were "
        "transcribed). They are not in the targets' medians, which are the ground truth's; their own medians:\n\n| figure | records | median \\|error\\| |\n|---|---|---|\n";
  for (const auto& f : families()) {
    const auto e = errors(f, "", false, extra);
    md << "| " << f.label << " | " << e.size() << " | " << (e.empty() ? "-" : fmt("%.1f %%", median_abs(e))) << " |\n";
  }
  md << "\n" << kExtraFindings << "\n" << kRecordTableHead;
  for (const auto& c : extra) md << record_row(c);
  return md.str();
}

std::string load_text(double load) { return std::isinf(load) ? "inf" : fmt("%g", load); }

std::string sim_doc() {
  std::ostringstream md;
  const auto setup = serving_setup();
  const auto& all = serving_comparisons();
  md << "# Serving simulator accuracy against real runs\n\n"
     << "Generated by `tests/accuracy/sim_accuracy_test.cpp` (run it with "
        "`VRAMPLAN_WRITE_ACCURACY_DOC=1 build/bin/vramplan_tests --gtest_filter='SimAccuracy.*'`). Each record of "
        "`tests/accuracy/data/serving_records.jsonl` (copied verbatim from the project's ground truth, each naming its "
        "public `source`) is re-simulated from its configuration through `sim::run_simulation`, the code path of "
        "`vramplan simulate`: the catalogue model and GPU, the engine and the flags the run set, and the workload "
        "the record states (`serving_sim_setup.json` says, per record, how). Nothing is calibrated on a GPU: step "
        "times come from the performance model's datasheet bandwidth, the cards' published matmul ceilings (MAMF: "
        "the tensor rate since 2026-12-07, the datasheet's where none is published) and defaults (docs/performance.md). Some defaults "
        "are fitted on records of this table, whose verdict is marked *fit* below: SGLang's per-layer and per-kernel "
        "step terms on six one-user runs (DeepSeek-R1 and Qwen3-235B on 8 x B200), its per-kernel decode cost on "
        "Hopper on one (Step-3.5-Flash on 4 x H200), its block-FP8 GEMM cost on AMD on four one-user MI300X runs "
        "(DeepSeek-V3.1, Qwen3-Coder-480B-FP8), and vLLM's first-use compile stall of a freshly started server "
        "(`--cold-start`, data/cold_start.json, docs/simulator.md#cold-start), on the p99 TTFT of the first stage of "
        "the Mixtral-8x7B codegen experiment; the blis records are simulated as their experiments ran, stage 0 on a "
        "fresh server and stage 1 after it (\"cold start: N first uses\" in the verdict column). The column \"held "
        "out\" gives the medians without the fit records. Seed 1 for every generated workload.\n\n"
     << "Cells are predicted / measured (error). TTFT, TPOT and ITL in ms, throughput in requests/s and output "
        "tokens/s as the load generator computes them (completed over first arrival to last completion). The "
        "measured request rate is the record's completed count over its duration where the printed rate (two "
        "decimals: 0.02 for 10 requests in 411.34 s) is their quotient rounded, and the printed rate where it is not "
        "(a page mixing two runs' lines). \"TPOT (means)\" is (mean E2E - mean TTFT) / (mean output - 1) on both sides: the blis records' TPOT field "
        "is not that figure (ground-truth README). \"ITL\" stands in where no TPOT was printed.\n\n"
     << "## Targets (issue 12, uncalibrated)\n\n"
     << "| figure | records | median \\|error\\| | held out: records, median | target | met |\n"
        "|---|---|---|---|---|---|\n";
  for (const auto& f : families()) {
    const auto e = errors(f);
    const auto h = errors(f, "", true);
    const double m = median_abs(e);
    md << "| " << f.label << " | " << e.size() << " | " << fmt("%.1f %%", m) << " | " << h.size() << ", "
       << fmt("%.1f %%", median_abs(h)) << " | <= " << fmt("%.0f %%", f.target_pct) << " | "
       << (m <= f.target_pct ? "yes" : "**no**") << " |\n";
  }
  const auto sw = sweeps();
  std::size_t evaluated = 0, within = 0;
  for (const auto& s : sw)
    if (s.skipped.empty()) {
      ++evaluated;
      within += step_distance(s) <= 1;
    }
  md << "| saturation within one step | " << evaluated << " sweeps | " << within << " of " << evaluated
     << " within one step | - | every sweep | " << (within == evaluated ? "yes" : "**no**") << " |\n\n";

  std::set<std::string> sets;
  for (const auto& c : all) sets.insert(c.record.at("source_set").get<std::string>());
  md << "Median |error| per source set (the record's `source_set`):\n\n| source set |";
  for (const auto& f : families()) md << " " << f.label << " |";
  md << "\n|---|";
  for (std::size_t k = 0; k < families().size(); ++k) md << "---|";
  md << "\n";
  for (const auto& set : sets) {
    md << "| " << set << " |";
    for (const auto& f : families()) {
      const auto e = errors(f, set);
      md << " " << (e.empty() ? "-" : fmt("%.1f %%", median_abs(e)) + " (" + std::to_string(e.size()) + ")") << " |";
    }
    md << "\n";
  }
  md << "\n";

  md << kSimFindings;

  md << "## Record by record\n\n" << kRecordTableHead;
  for (const auto& c : all) md << record_row(c);
  md << "\nTimelines (the engine's periodic log of the same run; no target): predicted / logged.\n\n"
     << "| record | max running | max waiting | max KV usage % | mean running | mean waiting |\n|---|---|---|---|---|---|\n";
  for (const auto& c : all) {
    if (c.record.at("record_type") != "timeline") continue;
    md << "| " << c.id << " |";
    for (const auto& m : c.metrics) md << " " << fmt("%.1f", m.predicted) << " / " << fmt("%.1f", m.measured) << " |";
    md << "\n";
  }
  md << "\nKept out of the medians:\n\n";
  for (const auto& c : all)
    if (!c.median_exclusion.empty()) md << "- " << c.id << ": " << c.median_exclusion << ".\n";

  md << extra_section();
  md << "\n## Saturation per sweep\n\n"
     << "Where throughput stops growing, the same rule on both sides: for a sweep of request rates, the first rate "
        "whose completed requests per second fall below " << fmt("%.0f %%", kFollows * 100) << " of the offered rate "
        "(throughput no longer follows the load; request throughput shown); for a sweep of concurrencies, the first "
        "point whose next one raises output-token throughput by less than " << fmt("%.0f %%", kGrowth * 100) << ". "
        "\"beyond\" = still growing at the last point. Most sweeps here have two or three points, so within one step "
        "is a weak check on them.\n\n"
     << "| sweep | loads (req/s or users) | measured throughput | predicted | stops growing at: measured / predicted | "
        "within one step |\n|---|---|---|---|---|---|\n";
  for (const auto& s : sw) {
    if (!s.skipped.empty()) continue;
    std::string loads, meas, pred;
    for (const auto& p : s.points) {
      loads += (loads.empty() ? "" : ", ") + load_text(p.load);
      meas += (meas.empty() ? "" : ", ") + fmt("%.1f", p.measured);
      pred += (pred.empty() ? "" : ", ") + fmt("%.1f", p.predicted);
    }
    const auto at = [&](std::size_t i) {
      return i == s.points.size() ? "beyond " + load_text(s.points.back().load) : load_text(s.points[i].load);
    };
    md << "| " << s.label << " | " << loads << " | " << meas << " | " << pred << " | " << at(s.measured_step) << " / "
       << at(s.predicted_step) << " | " << (step_distance(s) <= 1 ? "yes" : "**no**") << " |\n";
  }
  md << kKimiFindings;
  md << "\nSweeps not evaluated:\n\n";
  for (const auto& s : sw)
    if (!s.skipped.empty()) md << "- " << s.label << ": " << s.skipped << "\n";

  md << p99_section();
  md << max_rate_section();
  md << "\n## How each record is set up\n\n";
  std::map<std::string, std::vector<std::string>> by_note;
  for (const auto& c : all) {
    const auto& st = setup.at("simulated").at(c.id);
    by_note[st.at("model_basis").get<std::string>() + "; GPU " + c.gpu + " for \"" +
            st.at("gpu_basis").get<std::string>() + "\". " + c.notes]
        .push_back(c.id);
  }
  for (const auto& [note, ids] : by_note) {
    md << "- ";
    for (std::size_t i = 0; i < ids.size(); ++i) md << (i ? ", " : "") << ids[i];
    md << ": " << note << "\n";
  }
  md << "\n## Records not simulated, and why\n\n";
  for (const auto& x : setup.at("not_simulated"))
    md << "- " << x.at("id").get<std::string>() << ": " << x.at("reason").get<std::string>() << "\n";
  return md.str();
}

// Every p99 TTFT miss in the medians (|error| > 35 %) names what dominates it in p99_causes(), so
// that a new miss, or one a change moves past 35 %, is looked at rather than averaged away.
TEST(SimAccuracy, EveryP99TtftMissHasAStatedCause) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();
  for (const auto& c : serving_comparisons()) {
    if (!c.median_exclusion.empty()) continue;
    const auto* m = c.find("TTFT p99");
    if (m && std::abs(m->err()) > 35) {
      EXPECT_TRUE(p99_causes().count(c.id)) << c.id << " " << m->err() << " %";
    }
  }
}

TEST(SimAccuracy, RendersTheAccuracyDocument) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();
  const std::string md = sim_doc();
  for (const auto& c : serving_comparisons()) EXPECT_NE(md.find("| " + c.id + " |"), std::string::npos) << c.id;
  for (const auto& c : serving_extra_comparisons()) EXPECT_NE(md.find("| " + c.id + " |"), std::string::npos) << c.id;
  write_accuracy_doc_if_asked("accuracy-sim.md", md);
}

}  // namespace
}  // namespace vramplan::test
