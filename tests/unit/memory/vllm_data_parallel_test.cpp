// vLLM data parallelism by release (memory/vllm_data_parallel.hpp), as the 0.8.3 - 0.34.0 source
// releases resolve --data-parallel-size, and what it does to one GPU's plan: the routed experts
// over D x TP GPUs, the profile run's MoE over every engine's tokens, the engine_view the
// simulator reads.
#include <gtest/gtest.h>

#include <string>

#include "support/catalogue_counts.hpp"
#include "support/catalogs.hpp"
#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/vllm_activation.hpp"
#include "vramplan/memory/vllm_data_parallel.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/quant/precision_plan.hpp"

namespace vramplan::memory {
namespace {

const EngineArgs kDp8{{"data-parallel-size", "8"}};

ModelArch moe_arch(std::uint64_t experts = 256) {
  ModelArch a;
  a.architecture = "DeepseekV3ForCausalLM";
  a.num_experts = experts;
  a.kv_lora_rank = 512;
  return a;
}

ModelArch dense_arch() {
  ModelArch a;
  a.architecture = "LlamaForCausalLM";
  return a;
}

VllmDataParallel resolve(const char* release, const ModelArch& arch, const EngineArgs& args = kDp8,
                         std::uint64_t tp = 1, bool eager = false) {
  return vllm_data_parallel(args, arch, release, false, tp, 1, eager);
}

std::string refusal(const char* release, const EngineArgs& args = kDp8, bool v0 = false, std::uint64_t pp = 1,
                    const ModelArch& arch = moe_arch()) {
  return test::error_message([&] { vllm_data_parallel(args, arch, release, v0, 1, pp, false); }, ErrorKind::Usage);
}

TEST(VllmDataParallel, OneEngineIsTheDefault) {
  const VllmDataParallel d = resolve("0.19", moe_arch(), {});
  EXPECT_EQ(d.dp, 1u);
  EXPECT_FALSE(d.lockstep);
  EXPECT_TRUE(d.explain.empty());
  EXPECT_EQ(resolve("0.19", moe_arch(), {{"data-parallel-size", "1"}}).dp, 1u);
}

TEST(VllmDataParallel, RulesChangeWithTheRelease) {
  // 0.9.2: padding to the largest count, the "naive" broadcasts, fewest waiting then running,
  // the all-reduce every 32 steps.
  const VllmDataParallel v092 = resolve("0.9.2", moe_arch());
  EXPECT_TRUE(v092.lockstep);
  EXPECT_EQ(v092.padding, VllmDpPadding::ToLargest);
  EXPECT_TRUE(v092.naive_combine);
  EXPECT_EQ(v092.router, VllmDpRouter::WaitingThenRunning);
  EXPECT_EQ(v092.wave_sync_steps, 32u);
  EXPECT_EQ(v092.expert_group, 8u);
  // 0.11: all-gather + reduce-scatter, 4 x waiting + running.
  const VllmDataParallel v011 = resolve("0.11.0", moe_arch());
  EXPECT_FALSE(v011.naive_combine);
  EXPECT_EQ(v011.router, VllmDpRouter::WeightedQueue);
  // VLLM_FUSED_MOE_CHUNK_SIZE: 32,768 up to 0.11, 16,384 in 0.12 - 0.17, none from 0.18.
  EXPECT_EQ(vllm_fused_moe_chunk_tokens("0.11.0"), 32768u);
  EXPECT_EQ(vllm_fused_moe_chunk_tokens("0.12.0"), 16384u);
  EXPECT_EQ(vllm_fused_moe_chunk_tokens("0.17.1"), 16384u);
  EXPECT_EQ(vllm_fused_moe_chunk_tokens("0.18.0"), 0u);
  EXPECT_EQ(vllm_fused_moe_chunk_tokens(""), 0u);
  // 0.17: padded only when every engine replays a graph; 0.28: the in-flight / KV-pressure score.
  EXPECT_EQ(resolve("0.16.0", moe_arch()).padding, VllmDpPadding::ToLargest);
  EXPECT_EQ(resolve("0.17.0", moe_arch()).padding, VllmDpPadding::ToLargestIfGraphed);
  EXPECT_EQ(resolve("0.26.0", moe_arch()).router, VllmDpRouter::WeightedQueue);
  EXPECT_EQ(resolve("0.28.0", moe_arch()).router, VllmDpRouter::InflightKvPressure);
  EXPECT_EQ(resolve("0.28.0", moe_arch()).wave_sync_steps, 32u);
  EXPECT_EQ(resolve("0.30.0", moe_arch()).wave_sync_steps, 16u);
  EXPECT_EQ(resolve("", moe_arch()).wave_sync_steps, 16u);  // the current release
  // --enforce-eager: no graphs, so nothing is padded (get_dp_padding returns 0).
  EXPECT_EQ(resolve("0.19", moe_arch(), kDp8, 1, true).padding, VllmDpPadding::None);
}

TEST(VllmDataParallel, DenseEnginesRunInLockstepUpTo013) {
  // run_engine_core: DPEngineCoreProc for every model up to 0.13, for MoE models only from 0.14.
  const VllmDataParallel v013 = resolve("0.13.0", dense_arch());
  EXPECT_TRUE(v013.lockstep);
  EXPECT_EQ(v013.expert_group, 1u);
  EXPECT_EQ(v013.router, VllmDpRouter::WeightedQueue);
  const VllmDataParallel v014 = resolve("0.14.0", dense_arch());
  EXPECT_FALSE(v014.lockstep);
  EXPECT_EQ(v014.wave_sync_steps, 0u);
  // Dense engines publish no counts from 0.14 until PR #49204 (in 0.28): round-robin.
  EXPECT_EQ(v014.router, VllmDpRouter::RoundRobin);
  EXPECT_EQ(resolve("0.26.0", dense_arch()).router, VllmDpRouter::RoundRobin);
  EXPECT_EQ(resolve("0.28.0", dense_arch()).router, VllmDpRouter::InflightKvPressure);
}

TEST(VllmDataParallel, SharedExpertsWholeUnderSequenceParallelMoe) {
  // use_sequence_parallel_moe (0.11+): EP, TP > 1 and DP > 1; DeepSeek's shared experts then whole.
  EngineArgs ep = kDp8;
  ep["enable-expert-parallel"] = "true";
  EXPECT_TRUE(resolve("0.11.0", moe_arch(), ep, 2).shared_experts_whole);
  EXPECT_FALSE(resolve("0.10.2", moe_arch(), ep, 2).shared_experts_whole);
  EXPECT_FALSE(resolve("0.11.0", moe_arch(), ep, 1).shared_experts_whole);
  EXPECT_FALSE(resolve("0.11.0", moe_arch(), kDp8, 2).shared_experts_whole);
}

TEST(VllmDataParallel, RefusesWhatVllmRefusesOrVramplanDoesNotModel) {
  EXPECT_NE(refusal("0.19", {{"data-parallel-size", "0"}}).find(">= 1"), std::string::npos);
  EXPECT_NE(refusal("0.8.2").find("came in 0.8.3"), std::string::npos);
  EXPECT_NE(refusal("0.7.3", kDp8, true).find("V0 never starts several engines"), std::string::npos);
  EXPECT_NE(refusal("0.9.0").find("forces enforce_eager"), std::string::npos);
  EXPECT_NE(refusal("0.19", kDp8, false, 2).find("pipeline"), std::string::npos);
  EngineArgs ep = kDp8;
  ep["enable-expert-parallel"] = "true";
  EXPECT_NE(refusal("0.19", ep, false, 1, moe_arch(60)).find("60 routed experts over 8 GPUs"), std::string::npos);
  EXPECT_EQ(resolve("0.9.1", moe_arch()).dp, 8u);
}

// DeepSeek-V3 on 8 x H200 as the vLLM recipe serves it (--data-parallel-size 8
// --enable-expert-parallel): each GPU holds every non-expert weight of a TP 1 engine and an
// eighth of the routed experts.
TEST(VllmDataParallel, PlanSpreadsTheRoutedExpertsOverEveryEngine) {
  const ModelSpec& model = test::cached_catalogue_model("deepseek-v3");
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(139.8), "NVIDIA H200");
  EngineArgs dp = {{"data-parallel-size", "8"}, {"enable-expert-parallel", "true"}, {"max-model-len", "8192"}};
  const MemoryPlan p = test::plan_engine("vllm@0.19", model, gpu, dp);
  const MemoryPlan one = test::plan_engine("vllm@0.19", model, gpu, {{"max-model-len", "8192"}});
  EXPECT_EQ(p.gpu_count, 8u);
  // The routed experts' stored bytes, all 58 MoE layers: on one GPU of the DP plan one eighth.
  const ResolvedWeights rw = resolve_weights(model, test::quant_catalog(), {std::nullopt, std::nullopt, std::nullopt, true});
  std::uint64_t routed = 0;
  for (std::size_t i = 0; i < model.tensors.size(); ++i)
    if (is_routed_expert_role(model.tensors[i].role) && model.tensors[i].layer &&
        static_cast<std::uint64_t>(*model.tensors[i].layer) < model.arch.num_layers)
      routed += rw.tensor_bytes[i];
  ASSERT_GT(routed, 0u);
  ASSERT_EQ(routed % 8, 0u);
  const std::uint64_t layers = test::component(p.weights, "weights.layers").bytes.count();
  const std::uint64_t layers_one = test::component(one.weights, "weights.layers").bytes.count();
  EXPECT_EQ(layers, layers_one - routed + routed / 8);
  // The profile run's fused-MoE workspace over all 8 x 8192 gathered tokens (0.18+: no chunking),
  // whole experts (I_e = 2048): 65536 x top_k 8 x (max(2 x 2048, 7168) + 2048) x 2 B =
  // 9,663,676,416 B; the other seven engines' rows: 7 x 8192 x (2 x 7168 + 256 experts) x 2 B =
  // 1,673,527,296 B.
  EXPECT_EQ(test::component(p.activation, "activation.moe_workspace").bytes.count(), 9663676416u);
  EXPECT_EQ(test::component(p.activation, "activation.dp_gather").bytes.count(), 1673527296u);
  // 0.12 - 0.17 run the fused MoE in chunks of 16,384 tokens: 16384 x 8 x 9216 x 2 B = 2,415,919,104 B.
  const MemoryPlan v016 = test::plan_engine("vllm@0.16", model, gpu, dp);
  EXPECT_EQ(test::component(v016.activation, "activation.moe_workspace").bytes.count(), 2415919104u);
  // Per engine: its own KV pool, its own limits; the view says how the engines run.
  EXPECT_EQ(p.engine_view.at("data_parallel_size"), 8);
  EXPECT_EQ(p.engine_view.at("dp_lockstep"), true);
  EXPECT_EQ(p.engine_view.at("dp_padding"), "largest-if-graphed");
  EXPECT_EQ(p.engine_view.at("dp_combine"), "allgather_reducescatter");
  EXPECT_EQ(p.engine_view.at("dp_router"), "4-waiting-plus-running");
  EXPECT_EQ(p.engine_view.at("ep_size"), 8);
  EXPECT_EQ(p.engine_view.at("max_num_seqs"), one.engine_view.at("max_num_seqs"));
  // Without the flag the view has no such key (existing plans unchanged).
  EXPECT_FALSE(one.engine_view.contains("data_parallel_size"));
}

TEST(VllmDataParallel, SlicedExpertsHoldTheSameBytesAsWholeOnes) {
  // Without --enable-expert-parallel each expert is sliced D x TP ways (TP flattened across DP):
  // the same bytes a GPU, and the workspace sized by the slices (I_e / 8 = 256):
  // 65536 x 8 x (max(512, 7168) + 256) x 2 B = 7,784,628,224 B.
  const ModelSpec& model = test::cached_catalogue_model("deepseek-v3");
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(139.8), "NVIDIA H200");
  const MemoryPlan sliced = test::plan_engine("vllm@0.19", model, gpu, {{"data-parallel-size", "8"}, {"max-model-len", "8192"}});
  const MemoryPlan whole = test::plan_engine(
      "vllm@0.19", model, gpu, {{"data-parallel-size", "8"}, {"enable-expert-parallel", "true"}, {"max-model-len", "8192"}});
  EXPECT_EQ(test::component(sliced.weights, "weights.layers").bytes, test::component(whole.weights, "weights.layers").bytes);
  EXPECT_EQ(test::component(sliced.activation, "activation.moe_workspace").bytes.count(), 7784628224u);
  EXPECT_EQ(sliced.engine_view.at("ep_size"), 1);
}

TEST(VllmExpertParallel, WorkspaceIsSizedByWholeExperts) {
  // One engine, TP 8: fused_experts_impl sizes its workspace by w1's rows, the whole expert's
  // 2 x I_e under --enable-expert-parallel, a slice's 2 x I_e / 8 otherwise (fused_moe.py
  // `E, N, _ = w1.size()`). DeepSeek-V3, 8,192 tokens, top-8:
  // whole 8192 x 8 x (max(4096, 7168) + 2048) x 2 B = 1,207,959,552 B;
  // sliced 8192 x 8 x (max(512, 7168) + 256) x 2 B = 973,078,528 B.
  const ModelSpec& model = test::cached_catalogue_model("deepseek-v3");
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(139.8), "NVIDIA H200");
  const MemoryPlan whole = test::plan_engine(
      "vllm@0.19", model, gpu, {{"tensor-parallel-size", "8"}, {"enable-expert-parallel", "true"}, {"max-model-len", "8192"}});
  const MemoryPlan sliced = test::plan_engine("vllm@0.19", model, gpu, {{"tensor-parallel-size", "8"}, {"max-model-len", "8192"}});
  EXPECT_EQ(test::component(whole.activation, "activation.moe_workspace").bytes.count(), 1207959552u);
  EXPECT_EQ(test::component(sliced.activation, "activation.moe_workspace").bytes.count(), 973078528u);
}

TEST(VllmDataParallel, DenseEnginesAreCopiesOfOne) {
  // A dense model: every GPU holds the TP 1 engine's weights and pool; 0.19 runs them independently.
  const ModelSpec model = test::dense_model({});
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(79.1));
  const MemoryPlan dp = test::plan_engine("vllm@0.19", model, gpu, {{"data-parallel-size", "4"}});
  const MemoryPlan one = test::plan_engine("vllm@0.19", model, gpu, {});
  EXPECT_EQ(dp.gpu_count, 4u);
  EXPECT_EQ(dp.weights_bytes(), one.weights_bytes());
  EXPECT_EQ(dp.engine_view.at("gpu_blocks"), one.engine_view.at("gpu_blocks"));
  EXPECT_EQ(dp.engine_view.at("dp_lockstep"), false);
}

}  // namespace
}  // namespace vramplan::memory
