// The step model against hand-computed values, and its monotonicity.
#include "vramplan/perf/perf_model.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/perf_shapes.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::perf {
namespace {

PerfModelShape dense_shape() { return test::round_dense_shape(); }
PerfHardware exact_hw(double bandwidth = 4e12) { return test::exact_hardware(bandwidth); }

TEST(PerfModel, DenseDecodeStepHandComputed) {
  const DecodeResult r = estimate_decode(dense_shape(), exact_hw(), DecodeBatch{16, 8192});
  // KV read: 32 layers x 4096 B x 16 seqs x 8192 tokens = 17,179,869,184 B
  // bytes: 15e9 + 17,179,869,184 = 32,179,869,184 B / 4e12 B/s = 8.044967296 ms
  // FLOPs: 2 x 7.5e9 x 16 = 2.4e11, + attention 32 x 2 x 32 x (128+128) x 16 x 8192
  //        = 6.8719476736e10 -> 3.08719e11 / 1e15 = 0.309 ms  (memory-bound)
  // step = 8.044967296 + 0.1 = 8.144967296 ms; 16 / step = 1964.40 tok/s
  EXPECT_DOUBLE_EQ(r.step.kv_bytes, 17179869184.0);
  EXPECT_DOUBLE_EQ(r.step.flops, 308719476736.0);
  EXPECT_TRUE(r.step.memory_bound);
  EXPECT_NEAR(r.step_s.expected, 8.144967296e-3, 1e-12);
  EXPECT_NEAR(r.tokens_per_s.expected, 1964.4032, 1e-3);
  // Calibrated-style hardware (no slow / fast rates): the range collapses to the value.
  EXPECT_DOUBLE_EQ(r.step_s.low, r.step_s.expected);
  EXPECT_DOUBLE_EQ(r.step_s.high, r.step_s.expected);
  EXPECT_EQ(r.basis, "test rates");
}

// Hybrid models: each decode token reads and writes its sequence's recurrent state; a prompt
// chunk of one sequence moves it once.
TEST(PerfModel, RecurrentStateIsReadAndWrittenPerUpdate) {
  PerfModelShape s = dense_shape();
  s.recurrent_state_bytes = 1e6;  // one sequence's state on this GPU, all its recurrent layers
  const DecodeResult d = estimate_decode(s, exact_hw(), DecodeBatch{16, 8192});
  // KV as DenseDecodeStepHandComputed (17,179,869,184 B) + 16 tokens x 2 x 1e6 B = 32e6 B
  EXPECT_DOUBLE_EQ(d.step.kv_bytes, 17179869184.0 + 32e6);
  // A step with 10 decode tokens and prompt chunks of two sequences: 12 updates x 2 x 1e6 B,
  // i.e. 24e6 B over 4e12 B/s = 6 us more than the same step without state.
  const std::vector<PrefillChunk> chunks{{0, 100}, {0, 50}};
  const MixedStep step{10, 10 * 1000, chunks};
  PerfModelShape plain = s;
  plain.recurrent_state_bytes = 0;
  HardwareRates r = exact_hw().expected;
  r.memory_compute_overlap = 0;  // memory time adds up, so the 6 us shows whole
  EXPECT_NEAR(mixed_step_seconds(s, r, step) - mixed_step_seconds(plain, r, step), 6e-6, 1e-12);
}

TEST(PerfModel, OverheadIsPerStepPlusPerLayerOnTheGpu) {
  HardwareRates r = exact_hw().expected;
  r.layer_overhead_s = 50e-6;
  // 0.1 ms per step + 32 layers x 50 us = 1.7 ms, whatever the batch.
  EXPECT_NEAR(decode_step(dense_shape(), r, 1, 0).overhead_s, 1.7e-3, 1e-15);
  EXPECT_NEAR(decode_step(dense_shape(), r, 64, 4096).overhead_s, 1.7e-3, 1e-15);
  // A pipeline stage holding 16 of the layers launches half of them: 0.1 + 16 x 0.05 = 0.9 ms.
  PerfModelShape stage = dense_shape();
  stage.layers = 16;
  EXPECT_NEAR(decode_step(stage, r, 1, 0).overhead_s, 0.9e-3, 1e-15);
  // Batch 1 at context 0: weights 15e9 / 4e12 = 3.75 ms (memory-bound) + 1.7 ms = 5.45 ms.
  PerfHardware hw = exact_hw();
  hw.expected = r;
  EXPECT_NEAR(estimate_decode(dense_shape(), hw, DecodeBatch{1, 0}).step_s.expected, 5.45e-3, 1e-12);
}

TEST(PerfModel, GemmAndAttentionAreSequentialKernelsWithOverlap) {
  // Batch 512 at context 1024: the GEMMs are compute-bound, attention memory-bound.
  // GEMM: weights 15e9 / 4e12 = 3.75 ms; 2 x 7.5e9 x 512 = 7.68e12 FLOP / 1e15 = 7.68 ms
  // attention: KV 32 x 4096 x 512 x 1024 = 68,719,476,736 B / 4e12 = 17.179869184 ms;
  //            32 x 2 x 32 x 256 x 512 x 1024 = 2.74877906944e11 FLOP = 0.274877906944 ms
  // overlap 1: 7.68 + 17.179869184 + 0.1 = 24.959869184 ms (one max() over both would give
  //            max(20.929869184, 7.955) + 0.1 = 21.03 ms: KV reads hidden behind GEMM math)
  // overlap 0: (3.75 + 7.68) + (17.179869184 + 0.274877906944) + 0.1 = 28.984747090944 ms
  PerfHardware hw = exact_hw();
  const DecodeResult full = estimate_decode(dense_shape(), hw, DecodeBatch{512, 1024});
  EXPECT_NEAR(full.step_s.expected, 24.959869184e-3, 1e-12);
  hw.expected.memory_compute_overlap = 0;
  const DecodeResult none = estimate_decode(dense_shape(), hw, DecodeBatch{512, 1024});
  EXPECT_NEAR(none.step_s.expected, 28.984747090944e-3, 1e-12);
  hw.expected.memory_compute_overlap = 1.5;
  EXPECT_THROW(estimate_decode(dense_shape(), hw, DecodeBatch{1, 1}), Error);
}

TEST(PerfModel, MixedContextsEqualUniformWhenEqual) {
  const std::vector<std::uint64_t> contexts(16, 8192);
  const DecodeResult mixed = estimate_decode(dense_shape(), exact_hw(), contexts);
  const DecodeResult uniform = estimate_decode(dense_shape(), exact_hw(), DecodeBatch{16, 8192});
  EXPECT_DOUBLE_EQ(mixed.step_s.expected, uniform.step_s.expected);
  // Sum over L_i: one sequence at 1000 and one at 3000 read as much KV as two at 2000.
  const std::vector<std::uint64_t> uneven{1000, 3000};
  EXPECT_DOUBLE_EQ(estimate_decode(dense_shape(), exact_hw(), uneven).step.kv_bytes,
                   estimate_decode(dense_shape(), exact_hw(), DecodeBatch{2, 2000}).step.kv_bytes);
}

TEST(PerfModel, ExpertsTouchedMatchesMemoryModelTable) {
  // docs/memory-model.md §1.2: DeepSeek-V3 (E 256, k 8): B=1 -> 8, 8 -> 57, 32 -> 163, 128 -> 252;
  // Mixtral (8, 2): B=8 touches 7.2 of 8.
  EXPECT_NEAR(expected_experts_touched(256, 8, 256, 1), 8.0, 1e-9);
  EXPECT_NEAR(expected_experts_touched(256, 8, 256, 8), 57.42, 0.01);
  EXPECT_NEAR(expected_experts_touched(256, 8, 256, 32), 163.31, 0.01);
  EXPECT_NEAR(expected_experts_touched(256, 8, 256, 128), 251.60, 0.01);
  EXPECT_NEAR(expected_experts_touched(8, 2, 8, 8), 7.199, 0.001);
  // Expert parallelism: a GPU holding 32 of the 256 experts sees 1/8 of the touched ones.
  EXPECT_NEAR(expected_experts_touched(256, 8, 32, 8), 57.42 / 8, 0.01);
}

TEST(PerfModel, BusiestExpertRankHandComputed) {
  // 4 experts, top-1, one token, 2 ranks of 2: an expert is touched with p = 1/4, a rank's count is
  // Binomial(2, 1/4): P(0) = 9/16, P(<= 1) = 15/16; E[max] = P(max >= 1) + P(max >= 2)
  // = (1 - (9/16)^2) + (1 - (15/16)^2) = 0.68359375 + 0.12109375.
  EXPECT_NEAR(expected_busiest_rank_experts(4, 1, 2, 2, 1), 0.8046875, 1e-12);
  // One rank: the plain expectation.
  EXPECT_DOUBLE_EQ(expected_busiest_rank_experts(256, 8, 256, 1, 8), expected_experts_touched(256, 8, 256, 8));
  // MiniMax-M2.5 at --ep 8 (256 experts, top-8, 32 a GPU): one token's 8 experts land 2.54 on the
  // busiest GPU against 1 on average (a Monte Carlo of exact top-8 draws, 20,000 tokens: 2.56);
  // 16 tokens: 16.71 against 12.75 (Monte Carlo 16.71).
  EXPECT_NEAR(expected_busiest_rank_experts(256, 8, 32, 8, 1), 2.5445, 1e-3);
  EXPECT_NEAR(expected_busiest_rank_experts(256, 8, 32, 8, 16), 16.712, 1e-3);
  EXPECT_NEAR(expected_experts_touched(256, 8, 32, 16), 12.745, 1e-3);
  // A batch large enough to touch everything: every GPU streams all 32 (no underflow at p ~ 1).
  EXPECT_NEAR(expected_busiest_rank_experts(256, 8, 32, 8, 4096), 32.0, 1e-9);
}

TEST(PerfModel, MoeDecodeStepHandComputed) {
  // Mixtral-8x7B-like: 32 MoE layers of 8 experts, top-2; one expert = 3 x 4096 x 14336 x 2 B
  // = 352,321,536 B; 1.6 GB of other weights; context 0 so no KV.
  PerfModelShape s;
  s.dense_weight_bytes = 1.6e9;
  s.num_experts = 8;
  s.experts_per_token = 2;
  s.local_experts = 8;
  s.moe_layers = 32;
  s.expert_bytes = 352321536;
  s.active_params = 12.9e9;
  s.layers = 32;
  s.hidden = 4096;
  s.attention = {AttentionGroup{32, 32, 128, 128, 4096, 0}};
  const DecodeResult b4 = estimate_decode(s, exact_hw(), DecodeBatch{4, 0});
  // touched = 8 (1 - (1 - 2/8)^4) = 8 x 0.68359375 = 5.46875 experts per layer
  // weights = 1.6e9 + 32 x 5.46875 x 352,321,536 = 63,256,268,800 B -> 15.8140672 ms at 4 TB/s
  EXPECT_DOUBLE_EQ(b4.step.experts_touched, 5.46875);
  EXPECT_DOUBLE_EQ(b4.step.weight_bytes, 63256268800.0);
  EXPECT_NEAR(b4.step_s.expected, 15.8140672e-3 + 1e-4, 1e-12);
  // Batch 1 reads exactly the k active experts: 1.6e9 + 32 x 2 x 352,321,536 = 24,148,578,304 B.
  EXPECT_DOUBLE_EQ(estimate_decode(s, exact_hw(), DecodeBatch{1, 0}).step.weight_bytes,
                   24148578304.0);
}

TEST(PerfModel, MoeLayerOverheadDependsOnWhetherTheStepCarriesPromptTokens) {
  // 32 layers of which 24 are MoE; 0.1 ms per step, 50 us per layer, MoE layers 30 us more in a
  // decode step and 1000 us more in a step with prompt tokens (SGLang runs those without graphs).
  PerfModelShape s = dense_shape();
  s.moe_layers = 24;
  HardwareRates r = exact_hw().expected;
  r.layer_overhead_s = 50e-6;
  r.moe_layer_overhead_s = 30e-6;
  r.prompt_moe_layer_overhead_s = 1000e-6;
  // decode: 0.1 + 32 x 0.05 + 24 x 0.03 = 0.1 + 1.6 + 0.72 = 2.42 ms
  EXPECT_NEAR(decode_step(s, r, 8, 1024).overhead_s, 2.42e-3, 1e-15);
  // The same shape without MoE layers has no MoE term: 1.7 ms.
  PerfModelShape dense = dense_shape();
  EXPECT_NEAR(decode_step(dense, r, 8, 1024).overhead_s, 1.7e-3, 1e-15);
  // A prompt-only step of 100 tokens: 0.1 + 1.6 + 24 x 1.0 = 25.7 ms of overhead on top of the
  // kernel time the same step has with no overheads at all.
  const std::vector<PrefillChunk> chunk{{0, 100}};
  HardwareRates bare = exact_hw().expected;
  bare.step_overhead_s = 0;
  const double kernels = mixed_step_seconds(s, bare, MixedStep{0, 0, chunk});
  EXPECT_NEAR(mixed_step_seconds(s, r, MixedStep{0, 0, chunk}) - kernels, 25.7e-3, 1e-12);
}

TEST(PerfModel, TensorParallelAllReduceHandComputed) {
  PerfModelShape s = dense_shape();
  s.tp = 2;
  PerfHardware hw = exact_hw();
  hw.expected.link_bytes_per_s = 200e9;
  hw.expected.link_latency_s = 10e-6;
  const DecodeResult r = estimate_decode(s, hw, DecodeBatch{64, 0});
  // per all-reduce: 10 us + 2 (2-1)/2 x (64 x 4096 x 2 B) / 200e9 = 10 us + 2.62144 us
  // per step: 2 x 32 layers x 12.62144 us = 807.77216 us
  EXPECT_NEAR(r.step.comm_s, 807.77216e-6, 1e-12);
  // Without a link, TP is refused rather than guessed.
  EXPECT_THROW(estimate_decode(s, exact_hw(), DecodeBatch{1, 0}), Error);
}

// AMD Infinity Fabric: a full mesh of point-to-point links, one link's bandwidth given; a group of
// k GPUs drives k - 1 links, never more than the mesh has.
TEST(PerfModel, MeshAllReduceUsesTheLinksToThePeers) {
  HardwareRates r;
  r.link_bytes_per_s = 64e9 * 0.7;  // MI300X: 128 GB/s per link both ways / 2, x 0.7
  r.link_mesh_links = 7;
  EXPECT_DOUBLE_EQ(group_link_bytes_per_s(r, 2), 44.8e9);       // 1 link
  EXPECT_DOUBLE_EQ(group_link_bytes_per_s(r, 4), 3 * 44.8e9);   // 3 links
  EXPECT_DOUBLE_EQ(group_link_bytes_per_s(r, 8), 7 * 44.8e9);   // all 7: 313.6e9
  EXPECT_DOUBLE_EQ(group_link_bytes_per_s(r, 16), 7 * 44.8e9);  // capped at the mesh
  r.link_mesh_links = 0;  // a switch (NVLink): the figure serves any group
  EXPECT_DOUBLE_EQ(group_link_bytes_per_s(r, 2), 44.8e9);
  EXPECT_DOUBLE_EQ(group_link_bytes_per_s(r, 8), 44.8e9);

  PerfModelShape s = dense_shape();
  s.tp = 8;
  PerfHardware hw = exact_hw();
  hw.expected.link_bytes_per_s = 64e9;
  hw.expected.link_mesh_links = 7;
  hw.expected.link_latency_s = 0;
  const DecodeResult d = estimate_decode(s, hw, DecodeBatch{64, 0});
  // per all-reduce: 2 (8-1)/8 x (64 x 4096 x 2 B) / (7 x 64e9) = 1.75 x 524288 / 448e9 = 2.048 us
  // per step: 2 x 32 layers x 2.048 us = 131.072 us
  EXPECT_NEAR(d.step.comm_s, 131.072e-6, 1e-12);
}

// A group larger than the host's fabric rings across the network: each of a host's GPUs drives
// its own NIC, the fixed time is the network's.
TEST(PerfModel, AllReduceAcrossHostsRunsOnTheNetwork) {
  HardwareRates r;
  r.link_bytes_per_s = 315e9;  // H100: NVLink 900 / 2 x 0.7
  r.link_latency_s = 10e-6;
  r.scale_up_gpus = 8;
  r.network_bytes_per_s = 46e9;  // 400 Gb/s = 50 GB/s x 0.92
  r.network_latency_s = 45e-6;
  EXPECT_EQ(hosts_spanned(r, 8), 1u);
  EXPECT_EQ(hosts_spanned(r, 9), 2u);
  EXPECT_EQ(hosts_spanned(r, 16), 2u);
  EXPECT_EQ(hosts_spanned(r, 24), 3u);
  const CollectiveLink in_host = collective_link(r, 8);
  EXPECT_FALSE(in_host.crosses_hosts);
  EXPECT_DOUBLE_EQ(in_host.latency_s, 10e-6);
  EXPECT_DOUBLE_EQ(in_host.bytes_per_s, 315e9);
  // 16 GPUs: 8 NICs a host x 46e9 = 368e9 > NVLink's 315e9, so the host link still bounds it.
  const CollectiveLink two = collective_link(r, 16);
  EXPECT_TRUE(two.crosses_hosts);
  EXPECT_DOUBLE_EQ(two.latency_s, 45e-6);
  EXPECT_DOUBLE_EQ(two.bytes_per_s, 315e9);
  // HDR 200 Gb/s: 8 x 25e9 x 0.92 = 184e9 < 315e9.
  r.network_bytes_per_s = 23e9;
  EXPECT_DOUBLE_EQ(collective_link(r, 16).bytes_per_s, 184e9);
  // Node size unknown: every group is priced on the host's link, as before.
  r.scale_up_gpus = 0;
  EXPECT_FALSE(collective_link(r, 16).crosses_hosts);

  PerfModelShape s = dense_shape();  // 32 layers, hidden 4096, bf16
  s.tp = 16;
  PerfHardware hw = exact_hw();
  hw.expected.link_bytes_per_s = 315e9;
  hw.expected.link_latency_s = 10e-6;
  hw.expected.scale_up_gpus = 8;
  hw.expected.network_bytes_per_s = 23e9;
  hw.expected.network_latency_s = 45e-6;
  const DecodeResult d = estimate_decode(s, hw, DecodeBatch{64, 0});
  // per all-reduce: 45 us + 2 (16-1)/16 x (64 x 4096 x 2 B) / 184e9 = 45 us + 1.875 x 524288 / 184e9
  //   = 45 us + 5.342608696 us; per step: 2 x 32 layers x 50.342608696 us = 3221.92695652 us
  EXPECT_NEAR(d.step.comm_s, 3221.92695652e-6, 1e-11);
}

// Pipeline stages on different hosts: each crossing of a round pays the network's fixed time and
// the hidden states + residual of the micro-batch, each TP rank's slice through its NIC.
TEST(PerfModel, PipelineHandOffsBetweenHostsCostTheNetwork) {
  PerfModelShape s = dense_shape();
  s.tp = 8;
  s.pp = 2;
  HardwareRates r = exact_hw().expected;
  r.link_bytes_per_s = 315e9;
  r.scale_up_gpus = 8;
  r.network_bytes_per_s = 46e9;
  r.network_latency_s = 45e-6;
  // 16 GPUs on 2 hosts: 2 crossings (stage 0 -> 1, and the sampled tokens back to stage 0).
  // 4 tokens: 4 x 2 x 4096 x 2 B / 8 = 8192 B a NIC, 8192 / 46e9 = 0.178087 us.
  EXPECT_NEAR(pipeline_handoff_seconds(s, r, 4), 2 * (45e-6 + 8192 / 46e9), 1e-15);
  // On one host (or without PP) a hand-off is folded into the step overhead.
  s.tp = 4;
  EXPECT_DOUBLE_EQ(pipeline_handoff_seconds(s, r, 4), 0);
  s.tp = 8;
  s.pp = 1;
  EXPECT_DOUBLE_EQ(pipeline_handoff_seconds(s, r, 4), 0);
  // A decode round: 2 micro-batches of 2 through 2 stages, then the hand-offs of one micro-batch.
  s.pp = 2;
  PerfHardware hw{r, std::nullopt, std::nullopt, "", false};
  const DecodeResult round = estimate_decode(s, hw, DecodeBatch{4, 0});
  const StepBreakdown step = decode_step(s, r, 2, 0);
  EXPECT_NEAR(round.step_s.expected,
              2 * (step.kernels_s + step.comm_s + step.overhead_s) + pipeline_handoff_seconds(s, r, 2), 1e-15);
}

TEST(PerfModel, PipelineBubbleWhenFewerMicroBatchesThanStages) {
  PerfModelShape s = dense_shape();
  s.pp = 4;
  // 2 sequences over 4 stages: 2 micro-batches of 1, 4 slots per round -> half the stages idle.
  const DecodeResult two = estimate_decode(s, exact_hw(), DecodeBatch{2, 0});
  EXPECT_DOUBLE_EQ(two.pipeline_bubble, 0.5);
  const StepBreakdown one = decode_step(s, exact_hw().expected, 1, 0);
  EXPECT_DOUBLE_EQ(two.step_s.expected, 4 * (one.memory_s + one.overhead_s));
  // 8 sequences: 4 micro-batches of 2 keep every stage busy.
  EXPECT_DOUBLE_EQ(estimate_decode(s, exact_hw(), DecodeBatch{8, 0}).pipeline_bubble, 0.0);
}

TEST(PerfModel, PrefillHandComputed) {
  // One 1000-token prompt, no chunking: FLOPs = 2 x 7.5e9 x 1000 = 1.5e13
  // + causal attention 32 x 2 x 32 x 256 x (1000 x 1001 / 2) = 2.62406144e11 -> 1.5262406144e13
  // -> 15.262406144 ms at 1 PFLOP/s; bytes = 15e9 + 32 x 4096 x (1000 + 1000) = 15.262144e9
  // -> 3.815536 ms: compute-bound. TTFT = 15.262406144 + 0.1 ms.
  const PrefillResult p = estimate_prefill(dense_shape(), exact_hw(), PrefillBatch{1, 1000, 0});
  EXPECT_TRUE(p.compute_bound);
  EXPECT_EQ(p.forwards, 1u);
  EXPECT_NEAR(p.time_s.expected, 15.262406144e-3 + 1e-4, 1e-12);
  EXPECT_NEAR(estimate_ttft(dense_shape(), exact_hw(), 1000, 0).expected, p.time_s.expected, 1e-15);
}

TEST(PerfModel, PrefillMultipliesTheOutputHeadOncePerPrompt) {
  // The engines take logits at a prompt's last position only (vLLM logits_indices, SGLang
  // last_index): with 0.5e9 of the 7.5e9 params in the head, the 1000-token prompt above costs
  // 2 x 7.0e9 x 1000 + 2 x 0.5e9 x 1 = 1.4001e13 GEMM FLOPs + 2.62406144e11 attention
  // = 14.263406144 ms at 1 PFLOP/s (still compute-bound), + 0.1 ms.
  PerfModelShape s = dense_shape();
  s.head_params = 0.5e9;
  const PrefillResult p = estimate_prefill(s, exact_hw(), PrefillBatch{1, 1000, 0});
  EXPECT_NEAR(p.time_s.expected, 14.263406144e-3 + 1e-4, 1e-12);
  // Two prompts in one forward: two rows reach the head, 2e9 more FLOPs, 0.001 ms more than the
  // two 1000-token prompts' GEMMs without the head rows (2 x 1.4e13 + 2 x 1e9 over 2,000 rows).
  const PrefillResult two = estimate_prefill(s, exact_hw(), PrefillBatch{2, 1000, 0});
  EXPECT_NEAR(two.time_s.expected, (2 * 1.4e13 + 2e9 + 2 * 2.62406144e11) / 1e15 + 1e-4, 1e-12);
  // A decode step multiplies it on every row: unchanged by the split (2 x 7.5e9 x 16).
  EXPECT_DOUBLE_EQ(estimate_decode(s, exact_hw(), DecodeBatch{16, 8192}).step.flops, 308719476736.0);
}

TEST(PerfModel, ChunkedPrefillKeepsFlopsAndAddsSteps) {
  // Chunks of 256 tokens: 4 forwards (256, 256, 256, 232); the causal attention sums of the
  // chunks add up to the unchunked one, so the extra time is only the per-chunk overhead and
  // the weights re-read by memory-bound chunks.
  const PrefillResult whole = estimate_prefill(dense_shape(), exact_hw(), PrefillBatch{1, 1000, 0});
  const PrefillResult chunked = estimate_prefill(dense_shape(), exact_hw(), PrefillBatch{1, 1000, 256});
  EXPECT_EQ(chunked.forwards, 4u);
  EXPECT_GT(chunked.time_s.expected, whole.time_s.expected);
}

TEST(PerfModel, StepTimeNeverFallsWithBatchContextOrLessBandwidth) {
  const PerfModelShape s = dense_shape();
  double last = 0;
  for (std::uint64_t b = 1; b <= 512; ++b) {
    const double t = estimate_decode(s, exact_hw(), DecodeBatch{b, 4096}).step_s.expected;
    EXPECT_GE(t, last) << "batch " << b;
    last = t;
  }
  last = 0;
  for (std::uint64_t c = 0; c <= 131072; c += 4096) {
    const double t = estimate_decode(s, exact_hw(), DecodeBatch{8, c}).step_s.expected;
    EXPECT_GE(t, last) << "context " << c;
    last = t;
  }
  last = 1e30;
  for (double bw = 1e12; bw <= 8e12; bw += 0.5e12) {
    const double t = estimate_decode(s, exact_hw(bw), DecodeBatch{32, 4096}).step_s.expected;
    EXPECT_LE(t, last) << "bandwidth " << bw;
    last = t;
  }
}

TEST(PerfModel, RangeBracketsExpected) {
  PerfHardware hw = exact_hw();
  hw.slow = HardwareRates{2.4e12, 0.5e15, 2e-3, 0, 0};
  hw.fast = HardwareRates{4.5e12, 1.2e15, 0.5e-4, 0, 0};
  for (std::uint64_t b : {1u, 8u, 64u, 512u}) {
    const DecodeResult r = estimate_decode(dense_shape(), hw, DecodeBatch{b, 2048});
    EXPECT_LT(r.step_s.low, r.step_s.expected);
    EXPECT_LT(r.step_s.expected, r.step_s.high);
    EXPECT_LT(r.tokens_per_s.low, r.tokens_per_s.expected);
    EXPECT_LT(r.tokens_per_s.expected, r.tokens_per_s.high);
  }
  const PrefillResult p = estimate_prefill(dense_shape(), hw, PrefillBatch{4, 2048, 8192});
  EXPECT_LT(p.time_s.low, p.time_s.expected);
  EXPECT_LT(p.time_s.expected, p.time_s.high);
}

TEST(PerfModel, KneeMatchesClosedForm) {
  // Memory-bound, no overhead, FLOPs negligible: tokens/s(B) = B BW / (W + B c k) with
  // W = 15e9 B and c k = 1e9 B per sequence (one layer of 1e9 / 8192 B per token, context 8192).
  PerfModelShape s;
  s.dense_weight_bytes = 15e9;
  s.active_params = 1;
  s.layers = 1;
  s.hidden = 4096;
  s.attention = {AttentionGroup{1, 1, 1, 1, 1e9 / 8192, 0}};
  PerfHardware hw;
  hw.expected = HardwareRates{4e12, 1e18, 0, 0, 0};
  const ThroughputCurve c = throughput_vs_batch(s, hw, 8192, 128);
  // plateau = 128 x 4e12 / (15e9 + 128e9) = 3580.42 tok/s; 80 %: B = 0.8 p W / (BW - 0.8 p ck)
  // = 37.8 -> 38; 50 %: 12.2 -> 13 (of the B = 128 plateau, not of the asymptote BW / ck).
  EXPECT_NEAR(c.plateau_tokens_per_s, 3580.4196, 1e-3);
  EXPECT_EQ(c.knee_batch, 38u);
  EXPECT_EQ(c.half_batch, 13u);
  ASSERT_EQ(c.points.size(), 8u);  // 1 2 4 8 16 32 64 128
  EXPECT_EQ(c.points.front().batch, 1u);
  EXPECT_EQ(c.points.back().batch, 128u);
  // A limit that is not a power of two ends the curve.
  EXPECT_EQ(throughput_vs_batch(s, hw, 8192, 100).points.back().batch, 100u);
}

TEST(PerfModel, SlidingWindowCapsKvReads) {
  PerfModelShape s = dense_shape();
  s.attention[0].window = 4096;
  EXPECT_DOUBLE_EQ(estimate_decode(s, exact_hw(), DecodeBatch{1, 100000}).step.kv_bytes,
                   32.0 * 4096 * 4096);
}

TEST(PerfModel, RejectsBadInput) {
  EXPECT_THROW(estimate_decode(dense_shape(), exact_hw(), DecodeBatch{0, 10}), Error);
  EXPECT_THROW(estimate_decode(dense_shape(), exact_hw(0), DecodeBatch{1, 10}), Error);
  EXPECT_THROW(estimate_prefill(dense_shape(), exact_hw(), PrefillBatch{1, 0, 0}), Error);
  EXPECT_THROW(throughput_vs_batch(dense_shape(), exact_hw(), 10, 0), Error);
}

}  // namespace
}  // namespace vramplan::perf
