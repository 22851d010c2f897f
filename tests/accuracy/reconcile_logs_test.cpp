// `vramplan reconcile` on every SGLang and vLLM 0.6 - 0.10 start-up record: each record's raw lines
// (tests/fixtures/logs/sglang, tests/fixtures/logs/vllm, READMEs there name the sources) are read
// by the log reader, re-planned with the options a user passes for what the log does not print
// (--gpu, --engine <engine>@<version>, --model when the log's model is no catalogue id), and must
// meet the accuracy targets of their record set:
//   SGLang (sglang_accuracy_test.cpp): weights within 0.5 %; KV tokens each within 3 % unless the
//   record carries its reason, median |error| <= 1 %.
//   vLLM 0.6 - 0.10 (vllm_legacy_accuracy_test.cpp): KV capacity (blocks, else tokens, else GiB)
//   each within 5 %, median |error| <= 2 %; weights within 0.5 %.
//   TensorRT-LLM (trtllm_accuracy_test.cpp): the predicted KV (what reconcile plans) equals the
//   accuracy test's plan of the record's fields; the rows outside their bound are the records the
//   accuracy test lists with a reason (trtllm_prediction_limits).
// And the configuration recovered from the log is the record's: the planned figures equal the
// accuracy test's, which plans from the record's fields.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "accuracy/sglang_records.hpp"
#include "accuracy/trtllm_records.hpp"
#include "accuracy/vllm_legacy_records.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/engine_log.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/plan/reconcile.hpp"

namespace vramplan::test {
namespace {

const plan::ReconcileRow* reconciled_row(const plan::Reconciliation& r, const std::string& name) {
  for (const auto& x : r.rows)
    if (x.component == name) return &x;
  return nullptr;
}

plan::Reconciliation reconcile_record_log(const std::string& file, std::optional<std::string> model, std::string gpu,
                                          std::string engine) {
  plan::ReconcileOptions o;
  o.model = std::move(model);
  o.gpu = std::move(gpu);
  o.engine = std::move(engine);
  return plan::reconcile(read_engine_log(fixture(file)), o, DataRoot{source_dir()});
}

// An SGLang record's log reconciled as a user would: the logs print neither the version nor the
// card (both from the record). The model: the log's own where its server_args name an HF id of
// the catalogue (meta-llama/Meta-Llama-3.1-8B-Instruct); the others name a local path or no model
// at all: --model, the record's config.
plan::Reconciliation reconcile_sglang_record(const SglangRecord& rec) {
  const auto& j = rec.j;
  const bool catalogue_model = rec.id == "docs-llama31-8b-h100-tp1";
  return reconcile_record_log("logs/sglang/" + rec.id + ".log",
                              catalogue_model ? std::nullopt : std::optional(j.at("config").get<std::string>()),
                              j.at("gpu"), "sglang@" + j.at("sglang_version").get<std::string>());
}

TEST(ReconcileLogs, EverySglangRecordReconcilesWithinItsTargets) {
  const auto records = load_sglang_records();
  ASSERT_EQ(records.size(), 5u);
  std::vector<double> token_errors;
  for (const auto& rec : records) {
    SCOPED_TRACE(rec.id);
    const auto& j = rec.j;
    const auto r = reconcile_sglang_record(rec);
    EXPECT_EQ(r.log.engine, "sglang");
    EXPECT_EQ(r.request.model, j.at("config").get<std::string>());
    // TP as stated (a log without server_args states none: TP 1, the record's).
    const auto tp = r.request.args.find("tp-size");
    EXPECT_EQ(tp == r.request.args.end() ? "1" : tp->second, std::to_string(j.at("tp").get<int>()));
    const auto x = compare_sglang(rec);  // the accuracy test's plan of the record's fields
    const auto* tokens = reconciled_row(r, "KV tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_EQ(tokens->logged, static_cast<double>(j.at("kv_tokens").get<std::uint64_t>()));
    EXPECT_EQ(tokens->planned, static_cast<double>(x.tokens_pred));
    if (rec.kv_exception.empty()) {
      EXPECT_LE(std::fabs(tokens->difference_pct()), 3.0);
      token_errors.push_back(tokens->difference_pct());
    }
    // K + V as printed: twice the K size (K and V halves are equal).
    const auto* kv = reconciled_row(r, "KV cache");
    ASSERT_NE(kv, nullptr);
    EXPECT_NEAR(kv->logged, 2 * j.at("k_size_gib").get<double>(), 1e-9);
    if (const auto* w = reconciled_row(r, "weights")) {
      ASSERT_TRUE(x.weights_rep.has_value());
      EXPECT_NEAR(w->logged, *x.weights_rep, 1e-9);
      // The accuracy test's limit: 0.5 %, plus twice the print rounding when derived (begin - end).
      const double limit = 0.5 + (x.weights_derived ? 100.0 * 2 * 0.005 / *x.weights_rep : 0.0);
      EXPECT_LE(std::fabs(w->difference_pct()), limit) << w->logged << " vs " << w->planned;
      EXPECT_FALSE(w->outside) << w->bound;
    } else {
      EXPECT_FALSE(x.weights_rep.has_value());
    }
  }
  ASSERT_EQ(token_errors.size(), 3u);
  EXPECT_LE(median_abs(token_errors), 1.0);
}

// What the pool leaves is printed and planned, and its difference carries a cause: SGLang's
// request-to-token table, 2049 requests x 131072 tokens x 4 B = 1.0 GiB for the docs record
// (78.81 - 63.72 - 54.26 = 9.46 GiB left by weights and pool vs 8.34 printed).
TEST(ReconcileLogs, SglangAfterPoolNamesTheTablesItDoesNotPlan) {
  const auto r = reconcile_record_log("logs/sglang/docs-llama31-8b-h100-tp1.log", std::nullopt, "h100-sxm-80", "sglang@0.4.1");
  const auto* after = reconciled_row(r, "after the KV pool");
  ASSERT_NE(after, nullptr);
  EXPECT_DOUBLE_EQ(after->logged, Bytes::from_gib(8.34).gib());
  EXPECT_EQ(after->line, 5u);  // server_args line, then the 4th quoted line
  EXPECT_EQ(r.request.args.at("mem-fraction-static"), "0.88");
  EXPECT_EQ(r.request.args.at("chunked-prefill-size"), "8192");
  EXPECT_EQ(r.request.args.at("cuda-graph-max-bs"), "160");
  if (after->outside) {
    EXPECT_NE(after->likely_cause.find("request-to-token"), std::string::npos);
  }
}

TEST(ReconcileLogs, EveryVllmLegacyRecordReconcilesWithinItsTargets) {
  const auto set = load_vllm_legacy_records();
  std::vector<double> errors;
  int weights_checked = 0;
  for (const auto& c : set.cases) {
    SCOPED_TRACE(c.id);
    const auto& rec = c.record;
    const auto r = reconcile_record_log("logs/vllm/" + c.id + ".log", c.config, c.gpu,
                                        "vllm@" + rec.at("vllm_version").get<std::string>());
    EXPECT_EQ(r.log.engine, "vllm");
    const auto x = compare_vllm_legacy(c);  // the accuracy test's plan of the record's fields
    const char* row = x.basis == "blocks" ? "KV blocks" : x.basis == "tokens" ? "KV tokens" : "KV cache";
    const auto* capacity = reconciled_row(r, row);
    ASSERT_NE(capacity, nullptr) << row;
    EXPECT_NEAR(capacity->logged, x.capacity_rep, 0.005);
    EXPECT_LE(std::fabs(capacity->difference_pct()), 5.0) << capacity->logged << " vs " << capacity->planned;
    errors.push_back(capacity->difference_pct());
    if (const auto* w = reconciled_row(r, "weights")) {
      EXPECT_LE(std::fabs(w->difference_pct()), 0.5) << w->logged << " vs " << w->planned;
      ++weights_checked;
    }
    EXPECT_EQ(r.outcome.plan.engine_version, x.profile);
    EXPECT_EQ(!r.outcome.plan.fits, x.refused);
  }
  EXPECT_EQ(errors.size(), 6u);
  EXPECT_LE(median_abs(errors), 2.0);
  EXPECT_GE(weights_checked, 4);
}

// The record without a command line (excluded from the KV target for that reason) still
// reconciles, on the figure its exclusion keeps: the weights.
TEST(ReconcileLogs, ExcludedVllmRecordReconcilesItsWeights) {
  // The PR quotes no command line: the model is the PR's own statement (Llama-3.1-8B-Instruct).
  const auto r = reconcile_record_log("logs/vllm/gh-vllm-pr17122-llama31-8b-l40s.log", "llama-3.1-8b-instruct", "l40s",
                                      "vllm@0.8.5");
  EXPECT_EQ(r.request.args.at("max-model-len"), "32768");  // "Maximum concurrency for 32,768 tokens per request"
  const auto* w = reconciled_row(r, "weights");
  ASSERT_NE(w, nullptr);
  EXPECT_LE(std::fabs(w->difference_pct()), 0.5) << w->logged << " vs " << w->planned;
}

// The V0 shapes of one figure: 0.6.4's one-line report, 0.6.5's multi-line message, the PR
// table; the logger prefix without brackets; the command line.
TEST(ReconcileLogs, VllmV0LinesAreRead) {
  const auto log = parse_engine_log(
      "(VllmWorkerProcess pid=1786) INFO 02-11 07:40:45 model_runner.py:1115] Loading model weights took 13.9476 GB\n"
      "INFO 12-13 10:00:00 worker.py:232] Memory profiling takes 3.21 seconds\n"
      "the current vLLM instance can use total_gpu_memory (23.55GiB) x gpu_memory_utilization (0.98) = 23.08GiB\n"
      "model weights take 13.95GiB; non_torch_memory takes 0.25GiB; PyTorch activation peak memory takes 0.19GiB; "
      "the rest of the memory reserved for KV Cache is 8.69GiB.\n"
      "INFO 12-13 10:00:01 executor_base.py:110] # GPU blocks: 5096, # CPU blocks: 2730\n",
      "v0.log");
  EXPECT_EQ(log.engine, "vllm");
  EXPECT_EQ(log.weights->bytes, Bytes::from_gib(13.9476));
  EXPECT_EQ(log.weights->line, 1u);
  EXPECT_EQ(log.gpu_total->bytes, Bytes::from_gib(23.55));
  EXPECT_EQ(log.args.at("gpu-memory-utilization"), "0.98");
  EXPECT_EQ(log.non_torch->bytes, Bytes::from_gib(0.25));
  EXPECT_EQ(log.activation->bytes, Bytes::from_gib(0.19));
  EXPECT_EQ(log.kv_cache->bytes, Bytes::from_gib(8.69));
  EXPECT_EQ(*log.gpu_blocks, 5096u);
  // 0.6.4: the activation is torch's peak minus the weights, 17.06 - 14.9888 GiB.
  const auto v064 = read_engine_log(fixture("logs/vllm/gh-vllm-10517-llama31-8b-3090-20k.log"));
  EXPECT_EQ(v064.activation->bytes, Bytes::from_gib(17.06) - Bytes::from_gib(14.9888));
  EXPECT_EQ(*v064.concurrency_tokens, 20000u);  // "Maximum concurrency for 20000 tokens": reconcile's max-model-len
}

TEST(ReconcileLogs, CommandLinesGiveTheFlags) {
  const auto v0 = read_engine_log(fixture("logs/vllm/gh-vllm-13061-r1-distill-qwen14b-4090-tp2.log"));
  EXPECT_EQ(v0.args.at("tensor-parallel-size"), "2");
  EXPECT_EQ(v0.args.at("gpu-memory-utilization"), "0.98");
  EXPECT_EQ(v0.args.at("max-model-len"), "131072");  // "The model's max seq len (131072)"
  EXPECT_EQ(*v0.kv_tokens, 81536u);                    // "... stored in KV cache (81536)"
  const auto awq = read_engine_log(fixture("logs/vllm/gh-vllm-10360-qwen25-32b-awq-a6000.log"));
  EXPECT_EQ(awq.model, "Qwen2.5-32B-Instruct-AWQ");
  EXPECT_EQ(awq.args.at("max-model-len"), "4096");
  EXPECT_EQ(awq.args.at("enable-prefix-caching"), "true");
  const auto sgl = read_engine_log(fixture("logs/sglang/vllm21348-qwen3-235b-fp8-4xh100-tp4.log"));
  EXPECT_EQ(sgl.engine, "sglang");
  EXPECT_EQ(sgl.args.at("tp-size"), "4");
  EXPECT_EQ(sgl.args.at("mem-fraction-static"), "0.93");
  EXPECT_EQ(*sgl.kv_tokens, 367404u);
}

// Every TensorRT-LLM record: the log states part of the configuration (the total, tokens per
// block, the PyTorch backend's fraction and limits); the rest is passed the way a user would
// (--model, --gpu, --engine, --weights, --engine-arg), taken from the accuracy test's own request
// of the record. What the log states must agree with that request, and the plan must be the
// accuracy test's predicted plan.
TEST(ReconcileLogs, EveryTrtllmRecordReconcilesAsTheAccuracyTestPlansIt) {
  const auto records = load_trtllm_records();
  ASSERT_EQ(records.size(), 6u);
  for (const auto& c : records) {
    SCOPED_TRACE(c.id);
    const auto q = trtllm_request(c, Budget::Predicted);
    const auto log = read_engine_log(fixture("logs/trtllm/" + c.id + ".log"));
    EXPECT_EQ(log.engine, "trtllm");
    plan::ReconcileOptions o;
    o.model = q.model;
    o.gpu = q.gpu;
    o.engine = q.engine;
    o.weights = q.weights;
    for (const auto& [k, v] : q.args) {
      if (const auto it = log.args.find(k); it != log.args.end()) {
        EXPECT_DOUBLE_EQ(std::stod(it->second), std::stod(v)) << k;  // stated by the log, as the record says
      } else {
        o.args[k] = v;
      }
    }
    const auto r = plan::reconcile(log, o, DataRoot{source_dir()});
    // The same configuration: the GPU total the log prints is the record's.
    ASSERT_EQ(r.request.gpu_memory.has_value(), q.gpu_memory.has_value());
    if (q.gpu_memory) {
      EXPECT_EQ(*r.request.gpu_memory, *q.gpu_memory);
    }
    const auto x = compare_trtllm(c);  // the accuracy test's plans of the record's fields
    EXPECT_EQ(*r.outcome.plan.kv.capacity_tokens, x.tokens_pred);
    EXPECT_NEAR(r.outcome.plan.kv_cache_bytes().gib(), x.gib_pred, 1e-12);
    if (const auto* kv = reconciled_row(r, "KV cache")) {
      ASSERT_TRUE(x.gib_rep.has_value());
      EXPECT_NEAR(kv->logged, *x.gib_rep, 1e-9);
      EXPECT_NEAR(kv->planned, x.gib_pred, 1e-12);
    }
    if (const auto* tokens = reconciled_row(r, "KV tokens")) {
      EXPECT_EQ(tokens->logged, static_cast<double>(*x.tokens_rep));
      EXPECT_EQ(tokens->planned, static_cast<double>(x.tokens_pred));
    }
    if (const auto* blocks = reconciled_row(r, "KV blocks")) {
      EXPECT_EQ(blocks->logged, static_cast<double>(*x.blocks_rep));
      EXPECT_EQ(blocks->planned * static_cast<double>(x.tokens_per_block), static_cast<double>(x.tokens_pred));
    }
    if (const auto* engine = reconciled_row(r, "engine size")) {
      EXPECT_NEAR(engine->logged, *x.weights_rep_gib, 1e-9);
      EXPECT_NEAR(engine->planned, x.weights_pred_gib, 1e-12);
    }
    // A record the accuracy test holds to its target (no listed reason) reconciles inside the bounds.
    if (!trtllm_prediction_limits().contains(c.id)) {
      EXPECT_EQ(r.outside(), 0u);
    }
  }
}

// What each TensorRT-LLM line gives, on the two richest records.
TEST(ReconcileLogs, TrtllmLinesAreRead) {
  // The PyTorch backend (#6294): fraction 0.800000011920929 (a float32) read as typed, 0.8; the
  // backend's own estimate 860,308 tokens, rounded up to 26,885 blocks of 32 = 860,320 tokens.
  const auto pt = read_engine_log(fixture("logs/trtllm/gh-trtllm-6294-llama3.1-8b-fp8-h100-pcie.log"));
  EXPECT_EQ(pt.args.at("free-gpu-memory-fraction"), "0.8");
  EXPECT_EQ(pt.args.at("tokens-per-block"), "32");
  EXPECT_EQ(pt.args.at("max-seq-len"), "157");
  EXPECT_EQ(pt.args.at("max-batch-size"), "4096");  // max_num_requests
  EXPECT_EQ(pt.args.at("max-num-tokens"), "23552");
  EXPECT_EQ(*pt.kv_token_budget, 860308u);
  EXPECT_EQ(*pt.kv_tokens, 860320u);
  EXPECT_EQ(pt.kv_cache->bytes, Bytes::from_gib(52.51));
  EXPECT_EQ(pt.kv_cache->line, 4u);
  // The C++ runtime of the documentation's example: every memory line.
  const auto cpp = read_engine_log(fixture("logs/trtllm/trtllm-docs-memory-md-7b-int8-engine.log"));
  EXPECT_EQ(cpp.weights->bytes, Bytes::from_mib(6695));
  EXPECT_EQ(cpp.compute_buffer->bytes, Bytes::from_mib(1134.01));
  EXPECT_EQ(cpp.runtime_buffers->bytes, Bytes::from_mib(43.29));  // "43.29 MB": MemoryCounters' MB is MiB
  EXPECT_EQ(cpp.decoder_buffers->bytes, Bytes::from_mib(180.30));
  EXPECT_EQ(cpp.gpu_total->bytes, Bytes::from_gib(79.10));
  EXPECT_EQ(cpp.free_for_kv->bytes, Bytes::from_gib(70.48));
  EXPECT_EQ(*cpp.gpu_blocks, 4060u);
  EXPECT_EQ(*cpp.kv_tokens, 259840u);
  // 0.5 prints only the budget: "Using 10718 tokens in paged KV cache."
  const auto old = read_engine_log(fixture("logs/trtllm/gh-trtllm-224-llama2-7b-a10-v0.5.log"));
  EXPECT_EQ(*old.kv_token_budget, 10718u);
}

// #1188's runtime and decoder buffers (2.66 + 5.76 GiB for a 0.5B model) are not planned: the
// decoder row lies outside the runtime margin (2.68 GiB) and names them as the cause.
TEST(ReconcileLogs, TrtllmUnplannedBuffersNameTheirCause) {
  plan::ReconcileOptions o;
  o.model = "qwen2.5-0.5b";
  o.gpu = "custom:16GB";
  o.engine = "trtllm";
  o.weights = "int8";
  o.args["free-gpu-memory-fraction"] = "0.9";
  const auto r = plan::reconcile(read_engine_log(fixture("logs/trtllm/gh-trtllm-1188-qwen2.5-coder-0.5b-int8-a4000-engine.log")),
                                 o, DataRoot{source_dir()});
  const auto* decoder = reconciled_row(r, "decoder buffers");
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(decoder->planned, 0.0);
  EXPECT_NEAR(decoder->logged, 5.76, 1e-9);  // "5.76 GB": GiB (MemoryCounters)
  EXPECT_TRUE(decoder->outside);
  EXPECT_NE(decoder->likely_cause.find("decoder buffers"), std::string::npos);
  const auto* runtime = reconciled_row(r, "runtime buffers");
  ASSERT_NE(runtime, nullptr);
  EXPECT_FALSE(runtime->outside);  // 2.66 GiB, inside the 2.68 GiB runtime margin + print rounding
}

// SGLang's CUDA-graph line (model_runner.py init_cuda_graphs) in the shapes its releases print:
// 0.4.3's "avail mem=E GB. mem usage=G GB." (the llms-in-clouds record), later releases' "mem
// usage=G GB. avail mem=E GB.", an end line with avail mem alone (G = begin - end, how SGLang
// computes mem usage) and the pre-0.4.3 line without figures.
TEST(ReconcileLogs, SglangCudaGraphLinesAreRead) {
  const auto qwq = read_engine_log(fixture("logs/sglang/llms-in-clouds-qwq32b-4xl4-tp4.log"));
  ASSERT_TRUE(qwq.cuda_graphs.has_value());
  EXPECT_EQ(qwq.cuda_graphs->bytes, Bytes::from_gib(0.93));
  EXPECT_EQ(qwq.cuda_graphs->line, 7u);
  const auto later = parse_engine_log(
      "[2025-06-01 08:40:32 TP0] Capture cuda graph end. Time elapsed: 54.61 s. mem usage=1.93 GB. avail mem=8.16 GB.\n",
      "later.log");
  ASSERT_TRUE(later.cuda_graphs.has_value());
  EXPECT_EQ(later.cuda_graphs->bytes, Bytes::from_gib(1.93));
  const auto derived = parse_engine_log(
      "[2025-03-25 16:37:06 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=8.17 GB\n"
      "[2025-03-25 16:37:20 TP0] Capture cuda graph end. Time elapsed: 14.00 s. avail mem=7.02 GB\n",
      "derived.log");
  ASSERT_TRUE(derived.cuda_graphs.has_value());
  EXPECT_EQ(derived.cuda_graphs->bytes, Bytes::from_gib(8.17) - Bytes::from_gib(7.02));
  EXPECT_EQ(derived.cuda_graphs->line, 2u);
  const auto none = parse_engine_log(
      "[2025-01-23 19:35:20 TP0] KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.\n"
      "[2025-01-23 19:35:27 TP0] Capture cuda graph end. Time elapsed: 6.80 s\n",
      "old.log");
  EXPECT_FALSE(none.cuda_graphs.has_value());
  // Beside the plan: SGLang's reserve rule, cuda_graph_max_bs 80 x 2 MB = 160,000,000 B = 0.149 GiB,
  // against 0.93 GiB captured: outside (no bound is recorded for the graphs), with the cause.
  const auto r = reconcile_record_log("logs/sglang/llms-in-clouds-qwq32b-4xl4-tp4.log", "qwen2.5-32b", "l4", "sglang@0.4.3");
  const auto* graphs = reconciled_row(r, "CUDA graphs");
  ASSERT_NE(graphs, nullptr);
  EXPECT_NEAR(graphs->logged, 0.93, 1e-9);
  EXPECT_NEAR(graphs->planned, 80 * 2 * 1048576 / 1073741824.0, 1e-9);  // 80 x 2 MiB = 0.15625 GiB
  EXPECT_EQ(graphs->line, 7u);
  EXPECT_TRUE(graphs->outside);
  EXPECT_NE(graphs->likely_cause.find("reserve rule"), std::string::npos) << graphs->likely_cause;
}

// --update-calibration for SGLang and TensorRT-LLM: every record whose log states a deployment
// figure is written into a calibration file, re-planned with it (the request reconcile planned,
// plus --calibration), and the re-plan's KV capacity must equal the logged one within the bound of
// reconcile's row for it; a record without such a figure is a usage error (exit 2).
struct RoundTrip {
  std::string id;
  const char* row;  //!< the KV capacity row: "KV tokens", "KV blocks" or "KV cache"
  double logged = 0, before = 0, after = 0, bound = 0;
};

double replanned_capacity(const plan::Reconciliation& r, const char* row, const std::filesystem::path& cal) {
  auto q = r.request;
  q.calibration = cal;
  const auto out = memory::run_plan(q, DataRoot{source_dir()});
  const std::string name(row);
  if (name == "KV tokens") return static_cast<double>(*out.plan.kv.capacity_tokens);
  if (name == "KV blocks") return out.plan.engine_view.at("kv_blocks").get<double>();
  return out.plan.kv_cache_bytes().gib();
}

std::optional<RoundTrip> round_trip(const plan::Reconciliation& r, const std::string& id, const ScratchDir& dir) {
  const auto cal = dir.path() / (id + ".json");
  try {
    plan::update_calibration(r, cal);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    EXPECT_NE(std::string(e.what()).find("the log states none of"), std::string::npos) << e.what();
    return std::nullopt;
  }
  for (const char* row : {"KV tokens", "KV blocks", "KV cache"})
    if (const auto* x = reconciled_row(r, row)) {
      RoundTrip t{id, row, x->logged, x->planned, replanned_capacity(r, row, cal), x->bound};
      std::printf("round trip %-55s %-9s logged %12.2f before %12.2f (%+6.2f %%) after %12.2f (%+6.2f %%) bound %.2f\n",
                  id.c_str(), row, t.logged, t.before, 100 * (t.logged - t.before) / t.before, t.after,
                  100 * (t.logged - t.after) / t.after, t.bound);
      return t;
    }
  ADD_FAILURE() << id << ": no KV row";
  return std::nullopt;
}

TEST(ReconcileLogs, UpdateCalibrationReproducesEverySglangPool) {
  ScratchDir dir;
  std::vector<RoundTrip> done;
  for (const auto& rec : load_sglang_records()) {
    SCOPED_TRACE(rec.id);
    const auto r = reconcile_sglang_record(rec);
    if (const auto t = round_trip(r, rec.id, dir)) {
      EXPECT_LE(std::fabs(t->logged - t->after), t->bound) << t->after;
      done.push_back(*t);
    }
  }
  // Four logs state the free memory before loading; the Qwen3-235B one prints only its pool.
  ASSERT_EQ(done.size(), 4u);
}

TEST(ReconcileLogs, UpdateCalibrationReproducesEveryTrtllmPool) {
  ScratchDir dir;
  std::vector<RoundTrip> done;
  for (const auto& c : load_trtllm_records()) {
    SCOPED_TRACE(c.id);
    const auto q = trtllm_request(c, Budget::Predicted);
    const auto log = read_engine_log(fixture("logs/trtllm/" + c.id + ".log"));
    plan::ReconcileOptions o;
    o.model = q.model;
    o.gpu = q.gpu;
    o.engine = q.engine;
    o.weights = q.weights;
    for (const auto& [k, v] : q.args)
      if (!log.args.contains(k)) o.args[k] = v;
    const auto r = plan::reconcile(log, o, DataRoot{source_dir()});
    if (const auto t = round_trip(r, c.id, dir)) {
      EXPECT_LE(std::fabs(t->logged - t->after), t->bound) << t->after;
      done.push_back(*t);
    }
  }
  ASSERT_EQ(done.size(), 4u);
}

// An ollama server log (tests/fixtures/logs/ollama/README.md, ollama#9221): ollama's own estimate
// (llm/memory.go EstimateGPULayers) is read beside the llama.cpp runner's load lines, which are
// compared as llama.cpp's, with llama.cpp's profile. The KV buffer is llama.cpp's formula:
// 64 layers x 2 (K, V) x 8 KV heads x 128 x 2 B x 8192 cells = 2048 MiB, exact.
TEST(ReconcileLogs, OllamaLogReadsItsEstimateAndTheRunnersLines) {
  const auto log = read_engine_log(fixture("logs/ollama/gh-ollama-9221-qwen2-32b-q4km-48gb-np4.log"));
  EXPECT_EQ(log.engine, "ollama");
  EXPECT_EQ(log.args.at("parallel"), "4");  // n_seq_max
  EXPECT_EQ(log.args.at("ctx-size"), "8192");
  EXPECT_EQ(log.args.at("n-gpu-layers"), "65");
  EXPECT_EQ(log.args.at("flash-attn"), "off");
  EXPECT_EQ(*log.estimate_layers, 65u);
  ASSERT_EQ(log.engine_estimate.size(), 7u);
  EXPECT_EQ(log.engine_estimate[0].first, "memory.available");
  EXPECT_EQ(log.engine_estimate[0].second.bytes, Bytes::from_gib(46.2));
  EXPECT_EQ(log.engine_estimate[3].first, "memory.required.kv");
  EXPECT_EQ(log.engine_estimate[3].second.bytes, Bytes::from_gib(2.0));
  EXPECT_EQ(log.engine_estimate[5].first, "memory.graph.full");
  EXPECT_EQ(log.engine_estimate[5].second.bytes, Bytes::from_mib(676.0));
  EXPECT_EQ(log.weights->bytes, Bytes::from_mib(18508.35));  // CUDA0, not CPU
  EXPECT_EQ(log.kv_cache->bytes, Bytes::from_mib(2048));
  EXPECT_EQ(log.compute_buffer->bytes, Bytes::from_mib(696));

  plan::ReconcileOptions o;
  o.model = "qwen2.5-32b";  // the post names a blob only: the README says why this architecture
  o.gpu = "custom:48GB";
  o.weights = "gguf:Q4_K_M";
  const auto r = plan::reconcile(log, o, DataRoot{source_dir()});
  EXPECT_EQ(r.request.engine, "llamacpp");
  const auto* kv = reconciled_row(r, "KV buffer");
  ASSERT_NE(kv, nullptr);
  EXPECT_DOUBLE_EQ(kv->planned, 2048.0);
  EXPECT_FALSE(kv->outside);
  // The model buffer confirms the README's reading (Qwen2.5-32B tensors in Q4_K_M): 18508.35 MiB.
  const auto* model = reconciled_row(r, "model buffer");
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->outside) << model->planned;
  // A llama_kv_cache_init build: one KV stream for the 4 sequences (kv-unified), so attention spans
  // all 8192 cells: 710.01 MiB planned vs 696.00 logged (-2.0 %); split streams would plan 317.00.
  EXPECT_EQ(r.request.args.at("kv-unified"), "true");
  const auto* compute = reconciled_row(r, "compute buffer");
  ASSERT_NE(compute, nullptr);
  EXPECT_LE(std::fabs(compute->difference_pct()), 2.5) << compute->planned;
  // ollama's own KV estimate is the same figure (2.0 GiB printed), set beside the plan's.
  ASSERT_EQ(r.estimate.size(), 7u);
  EXPECT_EQ(r.estimate[3].key, "memory.required.kv");
  ASSERT_TRUE(r.estimate[3].planned_gib.has_value());
  EXPECT_DOUBLE_EQ(*r.estimate[3].planned_gib, 2.0);
  EXPECT_FALSE(r.estimate[0].planned_gib.has_value());  // free memory: nothing planned is it
}

}  // namespace
}  // namespace vramplan::test
