// plan/reconcile.hpp: each copied vLLM log (tests/fixtures/logs/vllm, README there names the
// source) re-planned through run_plan, with the KV capacity within the accuracy target of
// docs/accuracy.md (every record <= 3 %, tokens <= 3 %); the HF-id -> catalogue-id mapping.
#include <cmath>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/plan/reconcile.hpp"

namespace vramplan::test {
namespace {

const plan::ReconcileRow* row_of(const plan::Reconciliation& r, const std::string& name) {
  for (const auto& x : r.rows)
    if (x.component == name) return &x;
  return nullptr;
}

plan::ReconcileOptions options_with(std::optional<std::string> model, std::optional<std::string> gpu,
                                    std::optional<std::string> engine = std::nullopt) {
  plan::ReconcileOptions o;
  o.model = std::move(model);
  o.gpu = std::move(gpu);
  o.engine = std::move(engine);
  return o;
}

plan::Reconciliation reconcile_fixture(const std::string& name, plan::ReconcileOptions o = {}) {
  const DataRoot root{source_dir()};
  return plan::reconcile(read_engine_log(fixture("logs/vllm/" + name)), o, root);
}

TEST(Reconcile, EveryCopiedVllmLogIsWithinTheKvTarget) {
  for (const char* name : {"llama-3.1-8b-tp1.log", "llama-3.1-8b-tp2.log", "llama-3.1-8b-pp2.log", "llama-3.1-8b-kvfp8.log",
                           "qwen3-8b.log", "phi-4.log"}) {
    SCOPED_TRACE(name);
    const auto r = reconcile_fixture(name, options_with(std::nullopt, "h100-sxm-80"));
    const auto* kv = row_of(r, "KV cache");
    const auto* tokens = row_of(r, "KV tokens");
    ASSERT_TRUE(kv && tokens);
    // docs/accuracy.md targets: KV capacity within 3 % (GiB and tokens) for every record.
    EXPECT_LE(std::fabs(kv->difference_pct()), 3.0) << kv->logged << " vs " << kv->planned;
    EXPECT_LE(std::fabs(tokens->difference_pct()), 3.0) << tokens->logged << " vs " << tokens->planned;
    EXPECT_EQ(r.outcome.plan.engine_version, "0.19");
    EXPECT_NEAR(r.outcome.gpu.total.gib(), 79.19, 0.005);  // "Free memory on device (78.68/79.19 GiB)"
  }
}

TEST(Reconcile, Llama8bTp1RecoversTheConfigurationAndAllComponents) {
  const auto r = reconcile_fixture("llama-3.1-8b-tp1.log");
  EXPECT_EQ(r.request.model, "llama-3.1-8b-instruct");  // meta-llama/Llama-3.1-8B-Instruct
  EXPECT_EQ(r.request.engine, "vllm@0.19.0");
  EXPECT_EQ(r.request.args.at("max-model-len"), "8192");
  EXPECT_EQ(r.request.args.at("gpu-memory-utilization"), "0.95");
  EXPECT_EQ(r.request.args.at("tensor-parallel-size"), "1");
  EXPECT_EQ(r.request.args.at("dtype"), "bfloat16");
  EXPECT_EQ(r.request.gpu, "custom:" + std::to_string(Bytes::from_gib(79.19).count()) + "B");
  ASSERT_EQ(r.rows.size(), 7u);  // weights, activation, non-torch, CUDA graphs, KV, tokens, concurrency
  const auto* w = row_of(r, "weights");
  EXPECT_DOUBLE_EQ(w->logged, Bytes::from_gib(14.99).gib());  // "Model loading took 14.99 GiB"
  EXPECT_EQ(w->line, 4u);
  // docs/accuracy.md llmd-v019-llama31-8b-tp1: weights 14.99 / 14.99, KV 58.09 / 58.11 GiB.
  EXPECT_NEAR(w->planned, 14.99, 0.01);
  EXPECT_FALSE(w->outside);
  EXPECT_NEAR(row_of(r, "KV cache")->planned, 58.09, 0.02);
  // 0.13 GiB (data/accuracy_bounds.json vllm weights) + 0.005 GiB print rounding.
  EXPECT_NEAR(w->bound, 0.135, 1e-9);
}

TEST(Reconcile, TpAndKvDtypeComeFromTheLog) {
  EXPECT_EQ(reconcile_fixture("llama-3.1-8b-tp2.log").outcome.tp, 2u);
  EXPECT_EQ(reconcile_fixture("llama-3.1-8b-pp2.log").outcome.pp, 2u);
  const auto fp8 = reconcile_fixture("llama-3.1-8b-kvfp8.log");
  EXPECT_EQ(fp8.request.args.at("kv-cache-dtype"), "fp8");
  EXPECT_EQ(fp8.outcome.plan.kv.bytes_per_token, 65536u);  // 2 x 32 layers x 8 heads x 128 x 1 B
}

TEST(Reconcile, ADifferenceBeyondTheBoundNamesALikelyCause) {
  // The log of Llama-3.1-8B planned as Qwen3-8B: the weights differ by 0.28 GiB (15.27 vs 14.99).
  const auto r = reconcile_fixture("llama-3.1-8b-tp1.log", options_with("qwen3-8b", std::nullopt));
  const auto* w = row_of(r, "weights");
  EXPECT_TRUE(w->outside);
  EXPECT_NE(w->likely_cause.find("checkpoint is not the planned one"), std::string::npos);
  EXPECT_GE(r.outside(), 1u);
}

TEST(Reconcile, AnOldVersionIsPlannedWithItsReleaseProfile) {
  // vLLM 0.10 logs are planned with the 0.9.1 - 0.10 profile (data/engines/vllm.json); before
  // issue 17 this was an unknown version.
  auto log = read_engine_log(fixture("logs/vllm/qwen3-8b.log"));
  log.engine_version = "0.10.1";
  const DataRoot root{source_dir()};
  const auto r = plan::reconcile(log, {}, root);
  EXPECT_EQ(r.outcome.plan.engine_version, "0.9.1");
}

// docs/accuracy-llamacpp.md: llama.cpp's buffers are reproduced to the printed MiB; for the
// ggml-org CI logs (build 2697) the KV buffer and the model split are exact and the compute buffer
// of that 2024 build is only reported (tests/accuracy/llamacpp_measured_test.cpp).
TEST(Reconcile, LlamacppCiLogsHaveTheKvBufferExact) {
  const DataRoot root{source_dir()};
  const auto model = fixture("logs/llamacpp/open_llama_7b_v2").string();
  for (const auto& [name, kv_mib] : std::vector<std::pair<std::string, double>>{
           {"open_llama_7b_v2-q4_k-ctx512.log", 256.0}, {"open_llama_7b_v2-q4_k-ctx2048.log", 1024.0}}) {
    SCOPED_TRACE(name);
    const auto r = plan::reconcile(read_engine_log(fixture("logs/llamacpp/" + name)), options_with(model, "v100-16"), root);
    EXPECT_EQ(r.request.engine, "llamacpp");  // build 2697 names no profile: the one profile
    EXPECT_EQ(r.request.weights, std::optional<std::string>("gguf:Q4_K_M"));  // "model ftype = Q4_K - Medium"
    EXPECT_EQ(r.request.args.at("flash-attn"), "off");  // the build predates -fa
    EXPECT_EQ(r.request.args.at("n-gpu-layers"), "33");
    const auto* kv = row_of(r, "KV buffer");
    ASSERT_TRUE(kv);
    EXPECT_EQ(kv->unit, "MiB");
    // 2 (K, V) x 32 layers x 4096 x n_ctx x 2 B (f16) = 256 MiB at n_ctx 512, 1024 MiB at 2048.
    EXPECT_DOUBLE_EQ(kv->logged, kv_mib);
    EXPECT_DOUBLE_EQ(kv->planned, kv_mib);
    EXPECT_FALSE(kv->outside);
    // The model buffer: 3820.94 MiB logged, within 0.02 MiB planned.
    EXPECT_NEAR(row_of(r, "model buffer")->difference(), 0.0, 0.02);
    // The compute buffer of the 2024 build differs, and the cause names the build.
    const auto* compute = row_of(r, "compute buffer");
    EXPECT_TRUE(compute->outside);
    EXPECT_NE(compute->likely_cause.find("another llama.cpp build"), std::string::npos);
  }
}

TEST(Reconcile, HfIdsMapToCatalogueIds) {
  const auto ids = catalogue_ids(DataRoot{source_dir()});
  EXPECT_EQ(plan::catalogue_id_for("meta-llama/Llama-3.1-8B-Instruct", ids), "llama-3.1-8b-instruct");
  EXPECT_EQ(plan::catalogue_id_for("Qwen/Qwen3-8B", ids), "qwen3-8b");
  EXPECT_EQ(plan::catalogue_id_for("codellama/CodeLlama-7b-hf", ids), "codellama-7b");
  EXPECT_EQ(plan::catalogue_id_for("google/gemma-2-9b-it", ids), "gemma-2-9b");
  EXPECT_EQ(plan::catalogue_id_for("meta-llama/Meta-Llama-3.1-8B", ids), "llama-3.1-8b");
  EXPECT_EQ(plan::catalogue_id_for("acme/frobnicator-13b", ids), std::nullopt);
}

TEST(Reconcile, AModelOutsideTheCatalogueAsksForModel) {
  const auto log = parse_engine_log(
      "INFO 04-22 00:03:35 [entrypoints/utils.py:233] non-default args: {'model': 'acme/frobnicator-13b'}\n"
      "INFO 04-22 00:04:20 [v1/worker/gpu_worker.py:436] Available KV cache memory: 58.11 GiB\n",
      "f.log");
  const auto message = error_message([&] { plan::reconcile(log, {}, DataRoot{source_dir()}); }, ErrorKind::UnknownName);
  EXPECT_NE(message.find("f.log: model 'acme/frobnicator-13b' is not in the catalogue"), std::string::npos) << message;
  EXPECT_NE(message.find("pass --model"), std::string::npos);
  // Without a GPU total (an INFO-level log) the card must be named.
  const auto no_gpu = error_message([&] { plan::reconcile(log, options_with("llama-3.1-8b", std::nullopt),
                                                           DataRoot{source_dir()}); },
                                    ErrorKind::Usage);
  EXPECT_NE(no_gpu.find("pass --gpu"), std::string::npos) << no_gpu;
}

}  // namespace
}  // namespace vramplan::test
