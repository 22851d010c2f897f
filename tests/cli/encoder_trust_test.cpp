// Pooling models (embedders, rerankers) across commands: one verdict for one configuration in plan,
// check and sweep; one default workload per engine; the longest input of XLM-R models; TEI's
// --auto-truncate per profile; the flags a pooling plan has no use for; the kept-embeddings bound.
// Probe findings B#2-B#11 and D#1-D#5, D#13, D#15 (2026-12).
#include <filesystem>

#include <gtest/gtest.h>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// B#2 / D#1: an hf encoder batch over the card is a CUDA OOM on its first batch: there is no KV
// pool or reserve to absorb it. plan says it does not fit; check must say so too (exit 1), not
// MARGINAL (exit 6). bge-m3 at 64 x 8192 tokens in fp32 (its checkpoint dtype): one layer's MLP
// live set alone is 64 x 8192 x 4 B x (1024 + 2 x 4096) = 19,327,352,832 B = 18.0 GiB, and with the
// weights and the allocator replay the plan needs more than the L4's 22.03 GiB.
TEST(EncoderTrust, HfEncoderOverTheCardDoesNotFitInCheck) {
  const std::vector<std::string> flags = {"--model", "bge-m3", "--gpu", "l4", "--engine", "hf", "--batch", "64", "--context", "8192"};
  std::vector<std::string> plan = {"plan"}, check = {"check"};
  plan.insert(plan.end(), flags.begin(), flags.end());
  check.insert(check.end(), flags.begin(), flags.end());
  const auto p = run_cli_json(plan);
  EXPECT_FALSE(p["fits"].get<bool>()) << p.dump();
  const auto c = run_cli(check);
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_EQ(c.out.rfind("DOES NOT FIT l4 x1: the activation peak of the largest batch needs ", 0), 0u) << c.out;
  EXPECT_TRUE(has(c.out, "a pooling model runs on one GPU: lower --batch or --context")) << c.out;
  EXPECT_FALSE(has(c.out, "weights alone")) << c.out;
  // The batch that fits stays FITS (exit 0): the rule refuses only what is over the card.
  const auto small = run_cli({"check", "--model", "bge-m3", "--gpu", "l4", "--engine", "hf", "--batch", "1", "--context", "512"});
  EXPECT_EQ(small.exit_code, 0) << small.out << small.err;
}

// D#5 / B#20: a TEI warm-up over the card is led by its activations, not by the weights (1.06 GiB
// of bge-m3 in fp16 fit any card), and names no multi-GPU layout: a pooling model runs on one.
TEST(EncoderTrust, TeiDoesNotFitLeadsWithTheBatch) {
  const auto c = run_cli({"check", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--max-batch-tokens", "10000000"});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_EQ(c.out.rfind("DOES NOT FIT l4 x1: the activation peak of the largest batch needs ", 0), 0u) << c.out;
  EXPECT_TRUE(has(c.out, "(tei: TEI warmup runs out of memory); a pooling model runs on one GPU: lower --max-batch-tokens")) << c.out;
  EXPECT_FALSE(has(c.out, "no layout of up to")) << c.out;
}

// B#3: one default workload for plan, check and sweep under hf: sentence-transformers'
// encode(batch_size=32) at min(max_seq_length, 512) = 512 tokens for bge-base-en-v1.5 (512
// positions). The three commands plan the same bytes.
TEST(EncoderTrust, HfEncoderDefaultsAgreeAcrossCommands) {
  const std::vector<std::string> flags = {"--model", "bge-base-en-v1.5", "--gpu", "l4", "--engine", "hf"};
  std::vector<std::string> plan = {"plan"}, check = {"check"}, sweep = {"sweep"};
  for (auto* v : {&plan, &check, &sweep}) v->insert(v->end(), flags.begin(), flags.end());
  const auto p = run_cli_json(plan);
  EXPECT_EQ(p["engine_view"]["batch"].get<std::uint64_t>(), 32u);
  EXPECT_EQ(p["engine_view"]["sequence_length"].get<std::uint64_t>(), 512u);
  const auto c = run_cli_json(check);
  EXPECT_EQ(c["verdict"], "FITS") << c.dump();
  EXPECT_EQ(c["per_gpu"]["expected"]["needed_bytes"].get<std::uint64_t>(), p["per_gpu"]["total_bytes"].get<std::uint64_t>())
      << c.dump();
  const auto s = run_cli_json(sweep);
  ASSERT_FALSE(s["rows"].empty()) << s.dump();
  EXPECT_EQ(s["rows"][0]["batch"].get<std::uint64_t>(), 32u);
  EXPECT_EQ(s["rows"][0]["context"].get<std::uint64_t>(), 512u);
  EXPECT_EQ(s["rows"][0]["needed_bytes_per_gpu"].get<std::uint64_t>(), p["per_gpu"]["total_bytes"].get<std::uint64_t>());
}

// B#4: XLM-R numbers positions from padding_idx + 1 = 2, so BGE-M3's 8194-row table serves inputs
// of 8194 - 2 = 8192 tokens (TEI router/src/lib.rs position_offset, vLLM's max_seq_length 8192,
// transformers create_position_ids_from_input_ids).
TEST(EncoderTrust, XlmRobertaLongestInputIs8192) {
  const auto tei = run_cli_json({"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei"});
  EXPECT_EQ(tei["engine_view"]["max_input_length"].get<std::uint64_t>(), 8192u);
  const auto vllm = run_cli_json({"plan", "--model", "bge-m3", "--gpu", "h100-sxm-80", "--engine", "vllm"});
  EXPECT_EQ(vllm["engine_view"]["max_model_len"].get<std::uint64_t>(), 8192u);
  const auto launch = run_cli({"check", "--model", "bge-m3", "--gpu", "l4", "--engine", "vllm"});
  EXPECT_TRUE(has(launch.out, "--max-model-len 8192")) << launch.out;
  EXPECT_FALSE(has(launch.out, "8194")) << launch.out;
  const auto over = run_cli({"check", "--model", "bge-m3", "--gpu", "h100-sxm-80", "--engine", "vllm", "--max-model-len", "8194"});
  EXPECT_EQ(over.exit_code, 1) << over.out;
  EXPECT_EQ(over.out.rfind("UNSUPPORTED: User-specified max_model_len (8194) is greater than the derived max_model_len "
                           "(max_seq_length=8192",
                           0),
            0u)
      << over.out;
  const auto hf = run_cli({"plan", "--model", "bge-m3", "--gpu", "h100-sxm-80", "--engine", "hf", "--context", "8193"});
  EXPECT_EQ(hf.exit_code, 2);
  EXPECT_TRUE(has(hf.err, "--context 8193 exceeds XLMRobertaModel's longest input 8192")) << hf.err;
}

// B#5: TEI up to 1.8 bails when the model's max input length exceeds --max-batch-tokens without
// --auto-truncate (router/src/lib.rs v1.8.3); from 1.9.0 (PR #829) --auto-truncate defaults to
// true and inputs are truncated to --max-batch-tokens.
TEST(EncoderTrust, TeiAutoTruncatePerProfile) {
  const auto old_check = run_cli({"check", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei@1.8", "--max-batch-tokens", "1000"});
  EXPECT_EQ(old_check.exit_code, 1) << old_check.out;
  EXPECT_TRUE(has(old_check.out, "UNSUPPORTED: `--max-batch-tokens` cannot be lower than the model `max_input_length` (8192 < 1000)"))
      << old_check.out;
  const auto old_flagged = run_cli_json({"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei@1.8", "--max-batch-tokens",
                                         "1000", "--auto-truncate", "true"});
  EXPECT_TRUE(old_flagged["fits"].get<bool>());
  EXPECT_EQ(old_flagged["engine_view"]["max_input_length"].get<std::uint64_t>(), 1000u);
  const auto current = run_cli_json({"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--max-batch-tokens", "1000"});
  EXPECT_TRUE(current["fits"].get<bool>());
  EXPECT_EQ(current["engine_view"]["max_input_length"].get<std::uint64_t>(), 1000u);
  EXPECT_TRUE(has(current.dump(), "inputs are truncated to --max-batch-tokens 1000 tokens")) << current.dump();
  const auto refused = run_cli({"check", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--max-batch-tokens", "1000",
                                "--auto-truncate", "false"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
}

// B#9: keeping embeddings on the GPU holds strictly more, so it plans more: bge-base-en-v1.5 in
// fp32 keeps 1000 x 768 x 4 B = 3,072,000 B, below one batch's forward (32 x 512 tokens), so the
// plan is the plain plan (allocator replay included) plus exactly those bytes.
TEST(EncoderTrust, KeptEmbeddingsNeverPlanLess) {
  const std::vector<std::string> base = {"plan", "--model", "bge-base-en-v1.5", "--gpu", "l4", "--engine", "hf"};
  const auto plain = run_cli_json(base);
  auto with = base;
  with.insert(with.end(), {"--kept-embeddings", "1000"});
  const auto kept = run_cli_json(with);
  EXPECT_EQ(kept["per_gpu"]["total_bytes"].get<std::uint64_t>(), plain["per_gpu"]["total_bytes"].get<std::uint64_t>() + 3'072'000u);
}

// B#2 / D#2 / D#4 / B#10: the batch table is of generated sequences; a pooling model has none.
// check refuses it (exit 2) under every engine; report writes its page without it, and a report
// that fails leaves no file.
TEST(EncoderTrust, BatchRangeIsRefusedAndReportStillWrites) {
  for (const char* engine : {"hf", "vllm", "tei"}) {
    const auto r = run_cli({"check", "--model", "bge-m3", "--gpu", "l4", "--engine", engine, "--batch-range"});
    EXPECT_EQ(r.exit_code, 2) << engine << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--batch-range: bge-m3 is a pooling model (XLMRobertaModel)")) << r.err;
  }
  ScratchDir dir;
  const auto page = dir.path() / "tei.html";
  const auto ok = run_cli({"report", "--model", "bge-m3", "--gpu", "l4,l40s", "--engine", "tei", "--out", page.string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(has(read_text(page), "bge-m3 is a pooling model: it generates no tokens")) << ok.out;
  const auto bad = dir.path() / "bad.html";
  const auto failed = run_cli({"report", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--batch", "8", "--out", bad.string()});
  EXPECT_EQ(failed.exit_code, 2) << failed.err;
  EXPECT_FALSE(std::filesystem::exists(bad));
}

// B#6-B#8, D#13: flags with no meaning for a pooling plan are refused with a one-line reason.
TEST(EncoderTrust, FlagsWithoutEffectAreRefused) {
  const auto refused = [](std::vector<std::string> args, const std::string& message) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.err, message)) << r.err;
  };
  refused({"plan", "--model", "bge-base-en-v1.5", "--gpu", "l4", "--engine", "tei", "--context", "100000"},
          "--context: TEI has no input-length flag");
  refused({"plan", "--model", "bge-base-en-v1.5", "--gpu", "l4", "--engine", "vllm", "--batch", "1000"},
          "--batch does not apply to bge-base-en-v1.5");
  refused({"plan", "--model", "bge-base-en-v1.5", "--gpu", "l4", "--engine", "hf", "--spec-accept-length", "2"},
          "--spec-accept-length does not apply to bge-base-en-v1.5");
  refused({"sweep", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--batch", "1,8"},
          "--batch: TEI forms its batches by --max-batch-tokens and --max-batch-requests");
  refused({"plan", "--model", "bge-base-en-v1.5", "--gpu", "l4", "--engine", "vllm", "--dtype", "fp8"},
          "--dtype fp8: not a compute dtype");
  refused({"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "hf", "--dtype", "fp8"},
          "--dtype fp8: not a compute dtype");
  const auto trial = run_cli({"trial", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei"});
  EXPECT_EQ(trial.exit_code, 2);
  EXPECT_EQ(trial.err.rfind("vramplan: error: trial: bge-m3 is a pooling model", 0), 0u) << trial.err;
}

// D#3: HF generate() under check and sweep plans the same default length (data/engines/hf.json
// default_context 4096), and the verdict's sequence count is --limits' max batch.
TEST(EncoderTrust, HfDecoderDefaultsAndSequenceCountAgree) {
  const auto c = run_cli_json({"check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--engine", "hf", "--limits"});
  EXPECT_EQ(c["workload"]["context"].get<std::uint64_t>(), 4096u) << c["workload"].dump();
  EXPECT_EQ(c["workload"]["sequences_in_pool"].get<std::uint64_t>(), c["limits"]["max_batch"]["value"].get<std::uint64_t>());
  EXPECT_EQ(c["limits"]["max_concurrency_context"].get<std::uint64_t>(), 4096u);
  const auto s = run_cli_json({"sweep", "--model", "llama-3.1-8b", "--gpu", "l40s", "--engine", "hf", "--tp", "1"});
  ASSERT_FALSE(s["rows"].empty()) << s.dump();
  EXPECT_EQ(s["rows"][0]["context"].get<std::uint64_t>(), 4096u);
}

// B#11 / D#15: what plan --engine tei and models emit validates against their schemas.
TEST(EncoderTrust, TeiPlanAndModelsValidate) {
  const auto schema = [](const char* name) {
    return nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / name));
  };
  const auto plan = run_cli_json({"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei"});
  EXPECT_TRUE(schema_violations(plan, schema("plan.schema.json")).empty()) << schema_violations(plan, schema("plan.schema.json"))[0];
  const auto models = run_cli_json({"models"});
  const auto v = schema_violations(models, schema("models.schema.json"));
  EXPECT_TRUE(v.empty()) << (v.empty() ? "" : v[0]);
}

}  // namespace
}  // namespace vramplan::test
