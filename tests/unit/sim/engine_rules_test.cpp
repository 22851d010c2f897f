// sim::scheduler_rules: each engine's rules, hand-derived from its plan's engine_view and the
// engine defaults in data/engines/<engine>.json (docs/simulator.md "Engine rules").
#include <gtest/gtest.h>

#include <regex>

#include "../memory/mtp_fixtures.hpp"
#include "support/catalogs.hpp"
#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/sim/scheduler_rules.hpp"

namespace vramplan::sim {
namespace {

// Llama-3.1-8B shape (test::dense_model): 32 layers x 8 KV heads x 128 x (K + V) x 2 B (bf16)
// = 131,072 B of KV per token.
constexpr std::uint64_t kKvPerToken = 131072;
const Bytes kH100(80000000000u);  // 74.5 GiB: vLLM's large-GPU class (>= 70 GiB, not A100)

memory::PlanOutcome outcome_of(memory::MemoryPlan plan, const ModelSpec& model, const memory::GpuTarget& gpu) {
  memory::PlanOutcome o;
  o.model = model;
  o.gpu = gpu;
  o.plan = std::move(plan);
  return o;
}

memory::PlanOutcome plan(const std::string& engine, memory::EngineArgs args, memory::Workload w = {},
                         Bytes total = kH100, const std::string& gpu_name = test::kH100Name) {
  const ModelSpec m = test::dense_model({});
  const auto gpu = test::gpu_target(total, gpu_name);
  return outcome_of(test::plan_engine(engine, m, gpu, std::move(args), w), m, gpu);
}

SchedulerRules rules(const memory::PlanOutcome& o) { return scheduler_rules(o, {}); }

std::uint64_t non_kv(const memory::MemoryPlan& p) { return (p.total_bytes() - p.kv_cache_bytes()).count(); }

// Every rule names the engine source it comes from.
void expect_sourced_basis(const SchedulerRules& r) {
  ASSERT_FALSE(r.basis.empty());
  const std::regex source(R"([A-Za-z0-9_/]+\.(py|cpp|h)\b)");
  for (const auto& line : r.basis) EXPECT_TRUE(std::regex_search(line, source)) << line;
}

// ---- vLLM ---------------------------------------------------------------------------------------

TEST(EngineRulesVllm, AsyncSchedulingFormsTheNextBatchFrom014) {
  // VllmConfig.__post_init__ turns async scheduling on by default from 0.14 (PR #27614):
  // EngineCore.step_with_batch_queue forms a step's batch while the previous one runs. Unlike
  // SGLang, a request at max_tokens is not scheduled again, so none rides in the next step.
  // The plan resolved it (memory/vllm_async_scheduling.cpp: release, flags, PP).
  SchedulerRules r = rules(plan("vllm@0.15.1", {{"max-model-len", "8192"}}));
  EXPECT_TRUE(r.overlap_schedule);
  EXPECT_FALSE(r.finished_rides_next_step);
  // Serial EngineCore.step: the batch is formed when the step starts. Before 0.14 by default,
  // and with --no-async-scheduling on any release.
  r = rules(plan("vllm@0.13.0", {{"max-model-len", "8192"}}));
  EXPECT_FALSE(r.overlap_schedule);
  EXPECT_FALSE(r.finished_rides_next_step);
  EXPECT_FALSE(rules(plan("vllm", {{"max-model-len", "8192"}, {"no-async-scheduling", ""}})).overlap_schedule);
  r = rules(plan("vllm@0.13.0", {{"max-model-len", "8192"}}));
  EXPECT_FALSE(r.overlap_schedule);
  EXPECT_FALSE(r.finished_rides_next_step);
  expect_sourced_basis(r);
}

TEST(EngineRulesVllm, WholeSequenceAdmissionFrom019) {
  // SchedulerConfig.scheduler_reserve_full_isl (PR #37307, on by default from 0.19.0): a waiting
  // request is admitted only when its whole sequence's blocks are free. Resolved by the plan
  // (memory/vllm_admission.cpp); V0's block manager checks the whole prompt too.
  EXPECT_TRUE(rules(plan("vllm", {{"max-model-len", "8192"}})).full_sequence_admission);
  EXPECT_TRUE(rules(plan("vllm@0.19", {{"max-model-len", "8192"}})).full_sequence_admission);
  EXPECT_FALSE(rules(plan("vllm@0.18.1", {{"max-model-len", "8192"}})).full_sequence_admission);
  EXPECT_FALSE(rules(plan("vllm", {{"max-model-len", "8192"}, {"no-scheduler-reserve-full-isl", ""}})).full_sequence_admission);
  EXPECT_TRUE(rules(plan("vllm@0.6", {{"max-model-len", "8192"}})).full_sequence_admission);
  const SchedulerRules r = rules(plan("vllm", {{"max-model-len", "8192"}}));
  bool said = false;
  for (const auto& b : r.basis) said = said || b.find("can_fit_full_sequence") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(EngineRulesVllm, PreemptedBlocksStayCachedWithPrefixCaching) {
  // V1 hashes every full block, outputs included (kv_cache_manager.py cache_blocks): a preempted
  // request's blocks stay in the free queue as cached blocks its readmission can hit.
  EXPECT_EQ(rules(plan("vllm", {{"max-model-len", "8192"}})).preempted_cache, PreemptedCache::AllBlocks);
  EXPECT_EQ(rules(plan("vllm", {{"max-model-len", "8192"}, {"no-enable-prefix-caching", ""}})).preempted_cache,
            PreemptedCache::None);
}

TEST(EngineRulesVllm, WatermarkOf024KeepsItsShareFreeBesideRunningRequests) {
  // --watermark 0.1: int(0.1 x num_blocks) blocks (kv_cache_manager.py), here of one KV group.
  const auto o = plan("vllm@0.28", {{"max-model-len", "8192"}, {"watermark", "0.1"}});
  const SchedulerRules r = rules(o);
  EXPECT_EQ(r.admission_watermark_blocks,
            static_cast<std::uint64_t>(0.1 * static_cast<double>(o.plan.engine_view.at("gpu_blocks").get<std::uint64_t>())));
  EXPECT_GT(r.admission_watermark_blocks, 0u);
  EXPECT_TRUE(r.watermark_beside_running_only);
  EXPECT_EQ(rules(plan("vllm@0.28", {{"max-model-len", "8192"}})).admission_watermark_blocks, 0u);
  EXPECT_FALSE(rules(plan("vllm@0.6", {{"max-model-len", "8192"}})).watermark_beside_running_only);  // V0: always
}

TEST(EngineRulesHybrid, RecurrentHybridsRecomputeAPreemptedRequestWhole) {
  // A readmission would need the recurrent state at the hit, which the attention groups' block
  // hashes (vLLM) or the token radix tree (SGLang) do not give back: not modelled, recomputed.
  const ModelSpec m = load_catalogue_model(test::source_root(), "nemotron-3-nano-30b-a3b");
  const auto gpu = test::gpu_target(kH100, test::kH100Name);
  const SchedulerRules v = rules(outcome_of(test::plan_engine("vllm@0.19", m, gpu, {{"max-model-len", "8192"}}), m, gpu));
  EXPECT_GT(v.state_blocks, 0u);
  EXPECT_EQ(v.preempted_cache, PreemptedCache::None);
  const SchedulerRules g = rules(outcome_of(test::plan_engine("sglang@0.5.9", m, gpu, {{"context-length", "8192"}}), m, gpu));
  EXPECT_EQ(g.preempted_cache, PreemptedCache::None);
}

TEST(EngineRulesVllm, LargeGpuDefaults) {
  const auto o = plan("vllm", {{"max-model-len", "8192"}});
  const auto r = rules(o);
  EXPECT_EQ(r.engine, "vllm");
  // One KV group: the simulator's blocks are vLLM's gpu_blocks of block_size 16 tokens,
  // 16 x 131,072 B = 2,097,152 B each.
  EXPECT_EQ(r.kv_blocks, o.plan.engine_view["gpu_blocks"].get<std::uint64_t>());
  EXPECT_GT(r.kv_blocks, 0u);
  EXPECT_EQ(r.block_tokens, 16u);
  EXPECT_EQ(r.kv_block_bytes, 2097152u);
  // arg_utils.py get_batch_defaults, >= 70 GiB GPU: max_num_seqs 1024, max_num_batched_tokens 8192.
  EXPECT_EQ(r.max_seqs, 1024u);
  EXPECT_EQ(r.step_tokens, 8192u);
  EXPECT_TRUE(r.chunked_prefill);
  EXPECT_TRUE(r.mix_prefill_decode);
  EXPECT_EQ(r.admission, Admission::OnDemand);
  EXPECT_EQ(r.out_of_blocks, OutOfBlocks::PreemptNewest);
  EXPECT_TRUE(r.prefix_caching);
  EXPECT_EQ(r.max_model_len, 8192u);
  EXPECT_EQ(r.slot_tokens, 0u);
  EXPECT_EQ(r.static_batch, 0u);
  EXPECT_EQ(r.non_kv_bytes, non_kv(o.plan));
  EXPECT_EQ(r.gpu_total_bytes, 80000000000u);
  // The pool the rules describe is the plan's KV cache, byte for byte.
  EXPECT_EQ(r.kv_blocks * r.kv_block_bytes, o.plan.kv_cache_bytes().count());
  expect_sourced_basis(r);
}

TEST(EngineRulesVllm, HybridModelBlockHoldsOneBlockOfEveryGroup) {
  // Gemma-2-9B: 42 layers alternating sliding-window and full attention, so vLLM forms two KV
  // groups of 21 layers sharing one pool. A group block holds 16 tokens of 21 layers x 8 KV
  // heads x 256 x (K + V) x 2 B = 2,752,512 B; the simulator's block is one block of each group:
  // gpu_blocks / 2 blocks of 5,505,024 B (= 42 layers x 16 tokens x 8,192 B).
  const ModelSpec m = load_catalogue_model(test::source_root(), "gemma-2-9b");
  const auto gpu = test::gpu_target(kH100);
  const auto o = outcome_of(test::plan_engine("vllm", m, gpu, {{"max-model-len", "8192"}}), m, gpu);
  ASSERT_EQ(o.plan.engine_view["kv_cache_groups"].get<std::uint64_t>(), 2u);
  const auto r = rules(o);
  EXPECT_EQ(r.kv_blocks, o.plan.engine_view["gpu_blocks"].get<std::uint64_t>() / 2u);
  EXPECT_EQ(r.kv_block_bytes, 5505024u);
}

TEST(EngineRulesVllm, SmallGpuDefaults) {
  // 48e9 B = 44.7 GiB < 70 GiB: max_num_seqs 256, max_num_batched_tokens 2048.
  const auto r = rules(plan("vllm", {{"max-model-len", "8192"}}, {}, Bytes(48000000000u), "NVIDIA L40S"));
  EXPECT_EQ(r.max_seqs, 256u);
  EXPECT_EQ(r.step_tokens, 2048u);
}

TEST(EngineRulesVllm, PrefixCachingAndChunkedPrefillSwitches) {
  const auto off = rules(plan("vllm", {{"max-model-len", "8192"}, {"no-enable-prefix-caching", "true"}}));
  EXPECT_FALSE(off.prefix_caching);
  const auto on = rules(plan("vllm", {{"max-model-len", "8192"}, {"enable-prefix-caching", "true"}}));
  EXPECT_TRUE(on.prefix_caching);
  test::error_message([] { plan("vllm", {{"enable-prefix-caching", "true"}, {"no-enable-prefix-caching", "true"}}); },
                      ErrorKind::Usage);
  // Without chunked prefill the default budget rises to max_model_len (arg_utils.py
  // _set_default_max_num_seqs_and_batched_tokens_args): max(16384, 8192) = 16384.
  const auto whole = rules(plan("vllm", {{"max-model-len", "16384"}, {"no-enable-chunked-prefill", "true"}}));
  EXPECT_FALSE(whole.chunked_prefill);
  EXPECT_EQ(whole.step_tokens, 16384u);
}

TEST(EngineRulesVllm, V0WithoutChunkedPrefillRunsPromptStepsAlone) {
  // vLLM 0.6 (the V0 engine) at max_model_len 8192 leaves chunked prefill off (arg_utils.py: on
  // only above 32K) and schedules with _schedule_default: waiting prompts first, and a step that
  // admits any runs no decode; a prompt over the prompt limit is ignored. With chunked prefill on
  // (_schedule_chunked_prefill), and on every V1 release, decodes and prompt chunks share a step.
  const auto v0 = plan("vllm@0.6", {{"max-model-len", "8192"}});
  EXPECT_EQ(v0.plan.engine_view.at("engine_generation"), "v0");
  const SchedulerRules r = rules(v0);
  EXPECT_FALSE(r.chunked_prefill);
  EXPECT_FALSE(r.mix_prefill_decode);
  EXPECT_TRUE(r.refuses_prompt_over_step);
  // V0's block manager keeps 1 % of the pool free at admission (watermark 0.01); V1 none.
  EXPECT_EQ(r.admission_watermark_blocks, r.kv_blocks / 100);
  EXPECT_GT(r.admission_watermark_blocks, 0u);
  expect_sourced_basis(r);
  const SchedulerRules chunked = rules(plan("vllm@0.6", {{"max-model-len", "8192"}, {"enable-chunked-prefill", "true"}}));
  EXPECT_TRUE(chunked.mix_prefill_decode);
  EXPECT_FALSE(chunked.refuses_prompt_over_step);
  const SchedulerRules v1 = rules(plan("vllm@0.15.1", {{"max-model-len", "8192"}, {"no-enable-chunked-prefill", "true"}}));
  EXPECT_TRUE(v1.mix_prefill_decode);
  EXPECT_EQ(v1.admission_watermark_blocks, 0u);
}

TEST(EngineRulesVllm, MultiStepRoundsFromTheV0Plan) {
  // --num-scheduler-steps 10 on vLLM 0.6.0 (chunked prefill off at max_model_len 4096): rounds of
  // ten decode steps, one streamed chunk a round; 0.6.4 streams each step (on from 0.6.3).
  const SchedulerRules r = rules(plan("vllm@0.6.0", {{"max-model-len", "4096"}, {"num-scheduler-steps", "10"}}));
  EXPECT_EQ(r.decode_round_steps, 10u);
  EXPECT_TRUE(r.stream_per_round);
  EXPECT_FALSE(r.mix_prefill_decode);
  expect_sourced_basis(r);
  const SchedulerRules later = rules(plan("vllm@0.6.4", {{"max-model-len", "4096"}, {"num-scheduler-steps", "8"}}));
  EXPECT_EQ(later.decode_round_steps, 8u);
  EXPECT_FALSE(later.stream_per_round);
  EXPECT_EQ(rules(plan("vllm@0.6.0", {{"max-model-len", "4096"}})).decode_round_steps, 1u);
  // 0.6.3+ with chunked prefill: mixed rounds of whole prompts and decodes, no prompt chunks.
  const SchedulerRules mixed = rules(plan("vllm@0.6.4", {{"max-model-len", "4096"}, {"num-scheduler-steps", "8"},
                                                         {"enable-chunked-prefill", "true"}}));
  EXPECT_EQ(mixed.decode_round_steps, 8u);
  EXPECT_TRUE(mixed.mix_prefill_decode);
  EXPECT_FALSE(mixed.chunked_prefill);
  EXPECT_TRUE(mixed.refuses_prompt_over_step);
  EXPECT_EQ(mixed.step_tokens, 4096u);
  expect_sourced_basis(mixed);
}

TEST(EngineRulesVllm, UnchunkedBudgetBelowMaxModelLenIsRefused) {
  // config/scheduler.py verify_max_model_len: vLLM refuses to start, so there is nothing to simulate.
  const auto o = plan("vllm", {{"max-model-len", "8192"},
                               {"max-num-batched-tokens", "4096"},
                               {"no-enable-chunked-prefill", "true"}});
  EXPECT_FALSE(o.plan.fits);
  const std::string msg = test::error_message([&] { rules(o); }, ErrorKind::Usage);
  EXPECT_NE(msg.find("max_num_batched_tokens (4096) is smaller than max_model_len (8192)"), std::string::npos) << msg;
}

// ---- SGLang -------------------------------------------------------------------------------------

TEST(EngineRulesSglang, TokenPoolAndAdmissionRatio) {
  const auto o = plan("sglang", {{"context-length", "8192"}, {"chunked-prefill-size", "4096"}});
  const auto r = rules(o);
  const auto tokens = o.plan.engine_view["max_total_num_tokens"].get<std::uint64_t>();
  // Page size 1 (server_args.py): one token per block, 131,072 B each.
  EXPECT_EQ(r.block_tokens, 1u);
  EXPECT_EQ(r.kv_blocks, tokens);
  EXPECT_EQ(r.kv_block_bytes, kKvPerToken);
  // max_running_requests unset: min(clamp(tokens / 8192 x 512, 2048, 4096), tokens / 2) = 4096 once
  // tokens >= 8192 x 4096 / 512 = 65,536 (the pool here holds some 400 k tokens).
  ASSERT_GE(tokens, 65536u);
  EXPECT_EQ(r.max_seqs, 4096u);
  // min(chunked_prefill_size 4096, max_prefill_tokens 16384).
  EXPECT_TRUE(r.chunked_prefill);
  EXPECT_EQ(r.step_tokens, 4096u);
  EXPECT_FALSE(r.mix_prefill_decode);
  EXPECT_TRUE(r.overlap_schedule);  // server_args.py disable_overlap_schedule = False
  EXPECT_TRUE(r.finished_rides_next_step);  // update_running_batch filters finished ones a step late
  EXPECT_EQ(r.admission, Admission::ExpectedOutput);
  // init 0.7; min 0.7 x 0.14 = 0.098; decay (0.7 - 0.098) / 600 = 0.0010033 per decode step.
  EXPECT_DOUBLE_EQ(r.reserve_ratio, 0.7);
  EXPECT_DOUBLE_EQ(r.reserve_ratio_min, 0.7 * 0.14);
  EXPECT_DOUBLE_EQ(r.reserve_ratio_decay, (0.7 - 0.7 * 0.14) / 600.0);
  EXPECT_EQ(r.reserve_clip_tokens, 4096u);
  EXPECT_EQ(r.retract_decode_steps, 20u);
  EXPECT_EQ(r.out_of_blocks, OutOfBlocks::Retract);
  EXPECT_TRUE(r.prefix_caching);
  // A retracted request's prompt stays in the radix tree (release_kv_cache, is_insert=False).
  EXPECT_EQ(r.preempted_cache, PreemptedCache::Prompt);
  // prompt + max_new_tokens >= context_len is refused: the longest served is 8191.
  EXPECT_EQ(r.max_model_len, 8191u);
  EXPECT_EQ(r.non_kv_bytes, non_kv(o.plan));
  EXPECT_EQ(r.kv_blocks * r.kv_block_bytes, o.plan.kv_cache_bytes().count());
  expect_sourced_basis(r);
}

TEST(EngineRulesSglang, Flags) {
  const auto r = rules(plan("sglang", {{"context-length", "8192"},
                                       {"max-running-requests", "100"},
                                       {"max-prefill-tokens", "2048"},
                                       {"schedule-conservativeness", "2"},
                                       {"disable-radix-cache", "true"},
                                       {"enable-mixed-chunk", "true"},
                                       {"disable-overlap-schedule", "true"}}));
  EXPECT_EQ(r.max_seqs, 100u);     // min(100, tokens / 2)
  EXPECT_EQ(r.step_tokens, 2048u);  // min(chunked_prefill_size (8192 on an H100), 2048)
  // 0.7 x 2 = 1.4, capped at 1; min 1 x 0.14; decay (1 - 0.14) / 600.
  EXPECT_DOUBLE_EQ(r.reserve_ratio, 1.0);
  EXPECT_DOUBLE_EQ(r.reserve_ratio_min, 0.14);
  EXPECT_DOUBLE_EQ(r.reserve_ratio_decay, (1.0 - 0.14) / 600.0);
  EXPECT_FALSE(r.prefix_caching);
  EXPECT_EQ(r.preempted_cache, PreemptedCache::None);
  EXPECT_TRUE(r.mix_prefill_decode);
  EXPECT_FALSE(r.overlap_schedule);
  EXPECT_FALSE(r.finished_rides_next_step);
}

TEST(EngineRulesSglang, ChunkingOffLeavesTheMaxPrefillTokensBudget) {
  // --chunked-prefill-size -1: a prompt is prefilled whole, in batches of max_prefill_tokens 16384.
  const auto r = rules(plan("sglang", {{"context-length", "8192"}, {"chunked-prefill-size", "-1"}}));
  EXPECT_FALSE(r.chunked_prefill);
  EXPECT_EQ(r.step_tokens, 16384u);
}

// ---- TensorRT-LLM -------------------------------------------------------------------------------

TEST(EngineRulesTrtllm, GuaranteedNoEvictByDefault) {
  const auto o = plan("trtllm", {{"max-seq-len", "8192"}});
  const auto r = rules(o);
  // Blocks of 32 tokens (KvCacheConfig default): 32 x 131,072 B = 4,194,304 B each.
  EXPECT_EQ(r.block_tokens, 32u);
  EXPECT_EQ(r.kv_blocks, *o.plan.kv.capacity_tokens / 32u);
  EXPECT_EQ(r.kv_block_bytes, 4194304u);
  EXPECT_EQ(r.kv_blocks * r.kv_block_bytes, o.plan.kv_cache_bytes().count());
  EXPECT_EQ(r.max_seqs, 2048u);     // LLM API max_batch_size
  EXPECT_EQ(r.step_tokens, 8192u);  // max_num_tokens
  EXPECT_FALSE(r.chunked_prefill);
  EXPECT_TRUE(r.mix_prefill_decode);
  EXPECT_EQ(r.admission, Admission::FullLength);
  EXPECT_EQ(r.out_of_blocks, OutOfBlocks::Fail);
  EXPECT_TRUE(r.prefix_caching);  // 1.0: enable_block_reuse default True
  EXPECT_EQ(r.max_model_len, 8192u);
  EXPECT_EQ(r.non_kv_bytes, non_kv(o.plan));
  expect_sourced_basis(r);
}

TEST(EngineRulesTrtllm, MaxUtilizationPausesTheNewest) {
  const auto r = rules(plan("trtllm", {{"max-seq-len", "8192"},
                                       {"capacity-scheduler-policy", "MAX_UTILIZATION"},
                                       {"enable-chunked-prefill", "true"},
                                       {"enable-block-reuse", "false"}}));
  EXPECT_EQ(r.admission, Admission::OnDemand);
  EXPECT_EQ(r.out_of_blocks, OutOfBlocks::PreemptNewest);
  EXPECT_TRUE(r.chunked_prefill);
  EXPECT_FALSE(r.prefix_caching);
}

TEST(EngineRulesTrtllm, PolicyNotModelledIsRefused) {
  const auto o = plan("trtllm", {{"max-seq-len", "8192"}, {"capacity-scheduler-policy", "STATIC_BATCH"}});
  const std::string msg = test::error_message([&] { rules(o); }, ErrorKind::Usage);
  EXPECT_NE(msg.find("STATIC_BATCH"), std::string::npos) << msg;
  test::error_message([] { plan("trtllm", {{"capacity-scheduler-policy", "FIFO"}}); }, ErrorKind::Usage);
}

TEST(EngineRulesTrtllm, OlderExecutorProfileHasNoBlockReuse) {
  // trtllm@0.13: executor.h KvCacheConfig(enableBlockReuse = false).
  EXPECT_FALSE(rules(plan("trtllm@0.13", {{"max-seq-len", "8192"}})).prefix_caching);
}

// ---- llama.cpp ----------------------------------------------------------------------------------

memory::PlanOutcome llamacpp_plan(memory::EngineArgs args) {
  const ModelSpec m = test::dense_model({});
  const auto gpu = test::gpu_target(kH100);
  const auto engine = memory::make_engine("llamacpp", test::source_dir() / "data");
  auto p = engine->plan(memory::PlanInput{m, test::quant_catalog(), gpu, {}, std::move(args), "gguf:Q8_0",
                                          std::nullopt, ""});
  return outcome_of(std::move(p), m, gpu);
}

TEST(EngineRulesLlamacpp, SlotsOfNctxOverNp) {
  const auto o = llamacpp_plan({{"ctx-size", "8192"}, {"parallel", "4"}});
  const auto r = rules(o);
  // -c 8192 -np 4: 4 streams of n_ctx_seq 8192 / 4 = 2048 cells; an f16 cell holds
  // 32 layers x 1024 x (K + V) x 2 B = 131,072 B.
  EXPECT_EQ(r.max_seqs, 4u);
  EXPECT_EQ(r.slot_tokens, 2048u);
  EXPECT_EQ(r.kv_blocks, 8192u);
  EXPECT_EQ(r.block_tokens, 1u);
  EXPECT_EQ(r.kv_block_bytes, kKvPerToken);
  EXPECT_EQ(r.step_tokens, 2048u);  // -b default 2048
  EXPECT_TRUE(r.truncate_at_slot);
  EXPECT_TRUE(r.chunked_prefill);
  EXPECT_TRUE(r.mix_prefill_decode);
  EXPECT_EQ(r.admission, Admission::OnDemand);
  EXPECT_EQ(r.out_of_blocks, OutOfBlocks::Fail);
  EXPECT_FALSE(r.prefix_caching);
  EXPECT_EQ(r.max_model_len, 0u);
  EXPECT_EQ(r.non_kv_bytes, non_kv(o.plan));
  expect_sourced_basis(r);
}

TEST(EngineRulesLlamacpp, UnifiedCacheGivesEverySlotTheWholeContext) {
  // -kvu: one stream of 8192 cells shared by the 4 slots, each of which may fill it.
  const auto r = rules(llamacpp_plan({{"ctx-size", "8192"}, {"parallel", "4"}, {"kv-unified", "true"}}));
  EXPECT_EQ(r.slot_tokens, 8192u);
  EXPECT_EQ(r.kv_blocks, 8192u);
}

// ---- HF transformers ----------------------------------------------------------------------------

TEST(EngineRulesHf, StaticBatches) {
  const auto o = plan("hf", {}, {4, 4096});
  const auto r = rules(o);
  EXPECT_EQ(r.static_batch, 4u);
  EXPECT_EQ(r.max_seqs, 4u);
  // The DynamicCache grows into whatever weights and activations leave: capacity_tokens of
  // 131,072 B each.
  EXPECT_EQ(r.kv_blocks, *o.plan.kv.capacity_tokens);
  EXPECT_EQ(r.block_tokens, 1u);
  EXPECT_EQ(r.kv_block_bytes, kKvPerToken);
  EXPECT_EQ(r.step_tokens, 0u);
  EXPECT_FALSE(r.chunked_prefill);
  EXPECT_FALSE(r.mix_prefill_decode);
  EXPECT_EQ(r.admission, Admission::FullLength);
  EXPECT_EQ(r.out_of_blocks, OutOfBlocks::Fail);
  EXPECT_FALSE(r.prefix_caching);
  EXPECT_EQ(r.max_model_len, 131072u);  // max_position_embeddings
  EXPECT_EQ(r.non_kv_bytes, non_kv(o.plan));
  expect_sourced_basis(r);
}

// ---- refusals -----------------------------------------------------------------------------------

TEST(EngineRules, PlanThatDoesNotFitIsRefused) {
  // 10e9 B cannot hold 16 GB of weights.
  const auto o = plan("vllm", {{"max-model-len", "8192"}}, {}, Bytes(10000000000u), "NVIDIA L4");
  ASSERT_FALSE(o.plan.fits);
  const std::string msg = test::error_message([&] { rules(o); }, ErrorKind::Usage);
  EXPECT_EQ(msg.rfind("nothing to simulate: the vllm plan does not fit: ", 0), 0u) << msg;
}

TEST(EngineRules, EngineNotModelledIsRefused) {
  auto o = plan("vllm", {{"max-model-len", "8192"}});
  o.plan.engine = "exllama";
  EXPECT_EQ(test::error_message([&] { rules(o); }, ErrorKind::Usage),
            "the simulator does not model engine 'exllama' (it models vllm, sglang, trtllm, llamacpp, hf)");
}


// ---- speculative decoding (the checkpoint's MTP layer) -------------------------------------------

memory::PlanOutcome mtp_plan(const std::string& engine, memory::EngineArgs args) {
  const ModelSpec& m = test::deepseek_r1_with_mtp();
  const auto gpu = test::mtp_test_card();
  return outcome_of(test::plan_engine(engine, m, gpu, std::move(args)), m, gpu);
}

std::string rules_error(const memory::PlanOutcome& o, std::optional<double> accept) {
  try {
    scheduler_rules(o, {}, accept);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    return e.what();
  }
  return "accepted";
}

TEST(EngineRulesSpeculative, SglangEagleVerifiesStepsPlusOneTokensWithTwoDraftForwards) {
  // --speculative-algorithm EAGLE with SGLang's choice (3 steps, top-k 1, 4 draft tokens): a
  // decode step verifies 4 tokens, runs 3 - 1 = 2 single-token draft forwards and 2 host rounds
  // besides the verify's, and every running request holds max(3 x 1, 4) = 4 more slots (page 1:
  // 4 blocks). The accept length is the user's.
  const auto o = mtp_plan("sglang@0.5.9", {{"tp-size", "8"}, {"speculative-algorithm", "EAGLE"}});
  const SchedulerRules r = scheduler_rules(o, {}, 3.2);
  EXPECT_EQ(r.decode_query_tokens, 4u);
  EXPECT_EQ(r.draft_forwards, 2u);
  EXPECT_EQ(r.draft_host_rounds, 2u);
  EXPECT_DOUBLE_EQ(r.accept_length, 3.2);
  EXPECT_EQ(r.block_tokens, 1u);
  EXPECT_EQ(r.state_blocks, 4u);
  EXPECT_FALSE(r.mix_prefill_decode);
  EXPECT_FALSE(r.overlap_schedule);
  EXPECT_EQ(r.max_seqs, 48u);
  expect_sourced_basis(r);
}

TEST(EngineRulesSpeculative, VllmMtpVerifiesOnePlusKTokens) {
  // k = 2: 1 + 2 = 3 tokens of the step budget per decoding request, one draft forward over one
  // token besides the extend, no host round of its own, and ceil(2 / 16) = 1 lookahead block.
  const auto o = mtp_plan("vllm@0.19", {{"tensor-parallel-size", "8"},
                                         {"speculative-config", R"({"method": "mtp", "num_speculative_tokens": 2})"}});
  const SchedulerRules r = scheduler_rules(o, {}, 2.4);
  EXPECT_EQ(r.decode_query_tokens, 3u);
  EXPECT_EQ(r.draft_forwards, 1u);
  EXPECT_EQ(r.draft_host_rounds, 0u);
  EXPECT_EQ(r.block_tokens, 16u);
  EXPECT_EQ(r.state_blocks, 1u);
  expect_sourced_basis(r);
}

TEST(EngineRulesSpeculative, TheAcceptLengthIsAskedForAndChecked) {
  const auto o = mtp_plan("sglang@0.5.9", {{"tp-size", "8"}, {"speculative-algorithm", "EAGLE"}});
  EXPECT_NE(rules_error(o, std::nullopt).find("--spec-accept-length"), std::string::npos);
  EXPECT_NE(rules_error(o, 0.5).find("between 1 and 4"), std::string::npos);
  EXPECT_NE(rules_error(o, 4.5).find("between 1 and 4"), std::string::npos);
  EXPECT_EQ(rules_error(o, 4.0), "accepted");
  // Tree drafts (top-k > 1) are not modelled.
  const auto tree = mtp_plan("sglang@0.5.9", {{"tp-size", "8"}, {"speculative-algorithm", "EAGLE"}, {"speculative-num-steps", "3"},
                                              {"speculative-eagle-topk", "4"}, {"speculative-num-draft-tokens", "8"}});
  EXPECT_NE(rules_error(tree, 3.0).find("top-k 1"), std::string::npos);
  // An accept length for a plan that does not speculate is a mistake, not ignored.
  EXPECT_NE(rules_error(mtp_plan("sglang@0.5.9", {{"tp-size", "8"}}), 3.0).find("no speculative decoding"), std::string::npos);
}

TEST(EngineRulesSpeculative, AVerifyOverTheStepBudgetIsRefused) {
  // k = 2,048 with a 2,048-token budget: one request's verify (2,049 tokens) fits no step.
  const auto o = mtp_plan("vllm@0.19", {{"tensor-parallel-size", "8"}, {"max-num-batched-tokens", "2048"},
                                         {"speculative-config", R"({"method": "mtp", "num_speculative_tokens": 2048})"}});
  EXPECT_EQ(rules_error(o, 2.0), "simulate: speculative decoding verifies 2049 tokens a request, more than the 2048 tokens a "
                                 "step schedules: no decode step could run");
}

}  // namespace
}  // namespace vramplan::sim
