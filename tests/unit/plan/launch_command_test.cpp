// The launch command carries every flag the plan resolved (issue 15 item 7), per engine.
#include "vramplan/plan/launch_command.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace vramplan::plan {
namespace {

memory::PlanOutcome plan_of(const std::string& engine, memory::EngineArgs args, const std::string& gpu = "h100-sxm-80",
                            std::optional<std::string> weights = std::nullopt) {
  memory::PlanRequest r;
  r.model = "llama-3.1-8b";
  r.gpu = gpu;
  r.engine = engine;
  r.args = std::move(args);
  r.weights = std::move(weights);
  return memory::run_plan(r, test::source_root());
}

TEST(LaunchCommand, VllmCarriesTheResolvedLimits) {
  const memory::EngineArgs args = {{"max-model-len", "8192"}, {"tensor-parallel-size", "2"}, {"kv-cache-dtype", "fp8"}};
  const auto c = launch_command(plan_of("vllm", args), args, "meta-llama/Llama-3.1-8B");
  // vLLM's defaults on an H100 (data/engines/vllm.json, large GPU class): 1024 sequences, 8192 tokens per step.
  EXPECT_EQ(c.line(),
            "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 --max-model-len 8192 --gpu-memory-utilization 0.9 "
            "--max-num-seqs 1024 --max-num-batched-tokens 8192 --block-size 16 --kv-cache-dtype fp8 "
            "--enable-prefix-caching --enable-chunked-prefill");
  EXPECT_TRUE(c.note.empty());  // a repo id was given
}

TEST(LaunchCommand, VllmCarriesAnAsyncSchedulingFlagOnlyAsGiven) {
  // Without one, vLLM resolves the release's default itself (memory/vllm_async_scheduling.hpp).
  EXPECT_EQ(launch_command(plan_of("vllm", {}), {}, "m").line().find("async-scheduling"), std::string::npos);
  const memory::EngineArgs off = {{"no-async-scheduling", "true"}};
  EXPECT_NE(launch_command(plan_of("vllm", off), off, "m").line().find(" --no-async-scheduling --enable-prefix-caching"),
            std::string::npos);
}

TEST(LaunchCommand, VllmCarriesTheFullSequenceAdmissionFlagOnlyAsGiven) {
  // Without one, vLLM resolves the release's default itself (memory/vllm_admission.hpp).
  EXPECT_EQ(launch_command(plan_of("vllm", {}), {}, "m").line().find("reserve-full-isl"), std::string::npos);
  const memory::EngineArgs off = {{"no-scheduler-reserve-full-isl", "true"}};
  EXPECT_NE(launch_command(plan_of("vllm", off), off, "m").line().find(" --no-scheduler-reserve-full-isl --enable-prefix-caching"),
            std::string::npos);
  const memory::EngineArgs wm = {{"watermark", "0.05"}};
  EXPECT_NE(launch_command(plan_of("vllm@0.28", wm), wm, "m").line().find(" --watermark 0.05 --enable-prefix-caching"),
            std::string::npos);
}

// Engines beyond one node (data/compat vllm-dp-multi-node): the argv is node 0's, with its local
// engine count and the address the others reach; the note gives each other node's start rank.
TEST(LaunchCommand, VllmDataParallelOverNodesGivesEachNodeItsEngines) {
  memory::PlanRequest r;
  r.model = "deepseek-r1";
  r.gpu = "h200";  // 8 GPUs a node
  r.engine = "vllm";
  r.args = {{"data-parallel-size", "4"}, {"tensor-parallel-size", "4"}, {"enable-expert-parallel", "true"},
            {"max-model-len", "8192"}};
  const auto c = launch_command(memory::run_plan(r, test::source_root()), r.args, "deepseek-ai/DeepSeek-R1");
  // 4 engines of 4 GPUs: 2 a node, over 2 nodes.
  EXPECT_NE(c.line().find("--data-parallel-size 4 --data-parallel-size-local 2 --data-parallel-address NODE0_IP "
                          "--data-parallel-rpc-port 13345"),
            std::string::npos)
      << c.line();
  EXPECT_EQ(c.note,
            "this is node 0's command for 4 engines over 2 nodes of 8 GPUs (NODE0_IP: its address); on the others the "
            "same command with --headless and (node 1: --data-parallel-size-local 2 --data-parallel-start-rank 2)");
  r.args["data-parallel-size"] = "2";  // 8 GPUs: one node, one plain command
  const auto one = launch_command(memory::run_plan(r, test::source_root()), r.args, "deepseek-ai/DeepSeek-R1");
  EXPECT_EQ(one.line().find("--data-parallel-size-local"), std::string::npos);
  EXPECT_TRUE(one.note.empty());
}

TEST(LaunchCommand, VllmCarriesMultiStepScheduling) {
  const memory::EngineArgs args = {{"max-model-len", "4096"}, {"num-scheduler-steps", "10"}};
  const std::string line = launch_command(plan_of("vllm@0.6.0", args, "a100-sxm-80"), args, "m").line();
  EXPECT_NE(line.find(" --num-scheduler-steps 10"), std::string::npos) << line;
  EXPECT_EQ(launch_command(plan_of("vllm@0.6.0", {{"max-model-len", "4096"}}, "a100-sxm-80"), {}, "m").line().find("scheduler-steps"),
            std::string::npos);
}

TEST(LaunchCommand, CatalogueIdsSayWhatToFillIn) {
  const auto c = launch_command(plan_of("sglang", {{"context-length", "8192"}}), {{"context-length", "8192"}}, "llama-3.1-8b");
  ASSERT_GE(c.argv.size(), 5u);
  EXPECT_EQ(c.argv[0], "python");
  EXPECT_EQ(c.argv[4], "llama-3.1-8b");
  EXPECT_NE(c.line().find("--context-length 8192"), std::string::npos) << c.line();
  EXPECT_NE(c.line().find("--mem-fraction-static"), std::string::npos) << c.line();
  EXPECT_NE(c.note.find("catalogue id"), std::string::npos);
}

TEST(LaunchCommand, SglangCarriesTheResolvedSpeculativeSettings) {
  // NEXTN as SGLang runs it: EAGLE with its (3, 1, 4) and 48 running requests; it turns the
  // overlap scheduler off itself, so the command does not say so (memory/sglang_speculative.hpp).
  memory::PlanRequest r;
  r.model = "deepseek-r1";
  r.gpu = "h200";
  r.engine = "sglang@0.5.9";
  r.args = {{"tp-size", "8"}, {"speculative-algorithm", "NEXTN"}};
  const auto c = launch_command(memory::run_plan(r, test::source_root()), r.args, "deepseek-ai/DeepSeek-R1");
  EXPECT_NE(c.line().find("--max-running-requests 48 "), std::string::npos) << c.line();
  EXPECT_NE(c.line().find("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
                          "--speculative-num-draft-tokens 4"),
            std::string::npos)
      << c.line();
  EXPECT_EQ(c.line().find("--disable-overlap-schedule"), std::string::npos) << c.line();
}

TEST(LaunchCommand, SglangDpAttentionCarriesTheServerWideLimits) {
  // --max-running-requests 512 over 4 DP ranks is 128 a rank and --chunked-prefill-size 8192 a
  // chunk of 2048 (server_args.py _handle_data_parallelism, model_runner.py): the plan holds a
  // rank's figures, the command D times them, so that SGLang derives the same ranks again.
  memory::PlanRequest r;
  r.model = "deepseek-r1";
  r.gpu = "h200";
  r.engine = "sglang@0.5.9";
  r.args = {{"tp-size", "8"}, {"ep-size", "8"}, {"dp-size", "4"}, {"enable-dp-attention", "true"},
            {"max-running-requests", "512"}, {"chunked-prefill-size", "8192"}};
  const memory::PlanOutcome o = memory::run_plan(r, test::source_root());
  EXPECT_EQ(o.plan.engine_view.at("max_running_requests").get<std::uint64_t>(), 128u);
  EXPECT_EQ(o.plan.engine_view.at("chunked_prefill_size").get<std::uint64_t>(), 2048u);
  const auto c = launch_command(o, r.args, "deepseek-ai/DeepSeek-R1");
  EXPECT_NE(c.line().find(" --tp 8 --ep-size 8 --dp-size 4 --enable-dp-attention "), std::string::npos) << c.line();
  EXPECT_NE(c.line().find(" --max-running-requests 512 --chunked-prefill-size 8192 "), std::string::npos) << c.line();
}

TEST(LaunchCommand, SglangPipelineCarriesItsStagesAndLetsSglangDropTheOverlap) {
  // --pp-size 2 on the command; SGLang turns the overlap scheduler off itself under PP
  // (server_args.py _handle_pipeline_parallelism), so no --disable-overlap-schedule is added.
  const memory::EngineArgs args = {{"tp-size", "2"}, {"pp-size", "2"}, {"context-length", "8192"}};
  const memory::PlanOutcome o = plan_of("sglang@0.5.9", args);
  EXPECT_EQ(o.pp, 2u);
  const std::string line = launch_command(o, args, "m").line();
  EXPECT_NE(line.find(" --tp 2 --pp-size 2 "), std::string::npos) << line;
  EXPECT_EQ(line.find("--disable-overlap-schedule"), std::string::npos) << line;
  const memory::EngineArgs plain = {{"tp-size", "2"}, {"context-length", "8192"}};
  EXPECT_EQ(launch_command(plan_of("sglang@0.5.9", plain), plain, "m").line().find("--pp-size"), std::string::npos);
}

TEST(LaunchCommand, VllmCarriesTheSpeculativeConfigQuoted) {
  memory::PlanRequest r;
  r.model = "deepseek-r1";
  r.gpu = "h200";
  r.engine = "vllm@0.19";
  r.args = {{"tensor-parallel-size", "8"}, {"speculative-config", R"({"method":"mtp","num_speculative_tokens":1})"}};
  const auto c = launch_command(memory::run_plan(r, test::source_root()), r.args, "deepseek-ai/DeepSeek-R1");
  EXPECT_NE(c.line().find(R"( --speculative-config '{"method":"mtp","num_speculative_tokens":1}')"), std::string::npos)
      << c.line();
}

TEST(LaunchCommand, LlamaCppAndHf) {
  const memory::EngineArgs args = {{"ctx-size", "16384"}, {"parallel", "4"}, {"flash-attn", "on"}};
  const auto l = launch_command(plan_of("llamacpp", args, "rtx-4090", "gguf:Q4_K_M"), args, "models/llama-8b-q4_k_m.gguf");
  EXPECT_EQ(l.line().rfind("llama-server -m models/llama-8b-q4_k_m.gguf -c 16384 -np 4 -ngl 999 ", 0), 0u) << l.line();
  EXPECT_NE(l.line().find("-fa on"), std::string::npos);
  const auto h = launch_command(plan_of("hf", {}), {}, "llama-3.1-8b");
  EXPECT_TRUE(h.argv.empty());
  EXPECT_NE(h.note.find("no server"), std::string::npos);
}

}  // namespace
}  // namespace vramplan::plan
