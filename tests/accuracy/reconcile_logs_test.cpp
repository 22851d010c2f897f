// `vramplan reconcile` on every SGLang and vLLM 0.6 - 0.10 start-up record: each record's raw lines
// (tests/fixtures/logs/sglang, tests/fixtures/logs/vllm, READMEs there name the sources) are read
// by the log reader, re-planned with the options a user passes for what the log does not print
// (--gpu, --engine <engine>@<version>, --model when the log's model is no catalogue id), and must
// meet the accuracy targets of their record set:
//   SGLang (sglang_accuracy_test.cpp): weights within 0.5 %; KV tokens each within 3 % unless the
//   record carries its reason, median |error| <= 1 %.
//   vLLM 0.6 - 0.10 (vllm_legacy_accuracy_test.cpp): KV capacity (blocks, else tokens, else GiB)
//   each within 5 %, median |error| <= 2 %; weights within 0.5 %.
// And the configuration recovered from the log is the record's: the planned figures equal the
// accuracy test's, which plans from the record's fields.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "accuracy/sglang_records.hpp"
#include "accuracy/vllm_legacy_records.hpp"
#include "support/test_support.hpp"
#include "vramplan/io/engine_log.hpp"
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

TEST(ReconcileLogs, EverySglangRecordReconcilesWithinItsTargets) {
  const auto records = load_sglang_records();
  ASSERT_EQ(records.size(), 5u);
  std::vector<double> token_errors;
  for (const auto& rec : records) {
    SCOPED_TRACE(rec.id);
    const auto& j = rec.j;
    // The logs print neither the version nor the card. The model: the log's own where its
    // server_args name an HF id of the catalogue (meta-llama/Meta-Llama-3.1-8B-Instruct); the
    // others name a local path or no model at all: --model, the record's config.
    const bool catalogue_model = rec.id == "docs-llama31-8b-h100-tp1";
    const auto r = reconcile_record_log("logs/sglang/" + rec.id + ".log",
                                        catalogue_model ? std::nullopt : std::optional(j.at("config").get<std::string>()),
                                        j.at("gpu"), "sglang@" + j.at("sglang_version").get<std::string>());
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

}  // namespace
}  // namespace vramplan::test
