// vLLM data parallelism's lockstep forward (perf::vllm_dp_step_seconds): each engine's own layers
// on its padded batch, the slowest engine setting the pace, the routed experts over every
// engine's tokens, the gather and combine of every MoE layer.
#include <gtest/gtest.h>

#include <vector>

#include "vramplan/core/error.hpp"
#include "support/perf_shapes.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {
namespace {

TEST(VllmGraphPadding, RoundsUpToACaptureSize) {
  // vllm/config/vllm.py: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16).
  EXPECT_EQ(vllm_graph_padded_tokens(1, 512), 1u);
  EXPECT_EQ(vllm_graph_padded_tokens(3, 512), 4u);
  EXPECT_EQ(vllm_graph_padded_tokens(5, 512), 8u);
  EXPECT_EQ(vllm_graph_padded_tokens(250, 512), 256u);
  EXPECT_EQ(vllm_graph_padded_tokens(257, 512), 272u);
  EXPECT_EQ(vllm_graph_padded_tokens(512, 512), 512u);
  EXPECT_EQ(vllm_graph_padded_tokens(513, 512), 513u);  // above the largest: eager, unpadded
  // Graphs up to 100 tokens: the largest capture size is 96, so 97 runs eager.
  EXPECT_EQ(vllm_largest_capture_size(100), 96u);
  EXPECT_EQ(vllm_graph_padded_tokens(90, 100), 96u);
  EXPECT_EQ(vllm_graph_padded_tokens(97, 100), 97u);
  EXPECT_EQ(vllm_largest_capture_size(300), 288u);
  EXPECT_EQ(vllm_largest_capture_size(0), 0u);
  EXPECT_EQ(vllm_graph_padded_tokens(3, 0), 3u);  // --enforce-eager
}

// Two engines of one GPU each. Per GPU: 1e9 B of non-expert weights (0.5e9 params a token), two
// MoE layers of 8 experts of 1e8 B each, top-2 (0.25e9 routed params a token, a GPU's share),
// every expert sliced over both GPUs; two layers, hidden 1000, one attention group of 8 heads of
// 64 + 64 with 1,000 KV bytes a token a layer.
PerfModelShape dp_shape(bool pad, bool only_if_graphed, bool naive) {
  PerfModelShape s = test::round_two_layer_shape();
  s.tp = 1;
  s.dense_weight_bytes = 1e9;
  s.active_params = 0.75e9;
  s.routed_active_params = 0.25e9;
  s.num_experts = 8;
  s.experts_per_token = 2;
  s.local_experts = 8;
  s.expert_bytes = 1e8;
  s.moe_layers = 2;
  s.vllm_dp.ranks = 2;
  s.vllm_dp.pad = pad;
  s.vllm_dp.pad_only_if_graphed = only_if_graphed;
  s.vllm_dp.max_graph_tokens = 512;
  s.vllm_dp.naive_combine = naive;
  return s;
}


TEST(VllmDpStep, AnIdleEngineRunsAPaddedDummyBesideTheBusyOne) {
  // Engine 0 decodes 3 sequences attending 3,000 tokens, engine 1 has nothing: its dummy forward
  // is 1 token. Graph-padded 3 -> 4 and 1 -> 1, both padded to 4: N = 8 tokens gathered.
  // Engine 0: weights 1e9 / 1e12 = 1 ms + 2 x 0.5e9 x 4 / 1e15 = 4 us; KV 2 x 1000 x 3000 = 6 us +
  // 2 layers x 2 x 8 x 128 x 3000 FLOPs = 12.288 ns: 1.010012288 ms (engine 1: 1.004 ms).
  // Experts: 8 x (1 - 0.75^8) = 7.1990966796875 touched a layer, x 2 layers x 1e8 B = 1.4398193359375
  // ms + 2 x 0.25e9 x 8 / 1e15 = 4 us. Per MoE layer an all-gather of 8 rows of (1000 + 8) x 2 B and
  // a reduce-scatter of 8 x 2000 B: 2 x 10 us + 1/2 x 8 x 4016 / 1e11 = 20.16064 us, x 2 = 40.32128
  // us. Step 0.5 ms. Sum 2.9941529039375 ms.
  const std::vector<MixedStep> ranks = {{3, 3000, {}}, {}};
  EXPECT_NEAR(vllm_dp_step_seconds(dp_shape(true, true, false), test::round_lockstep_rates(), ranks), 2.9941529039375e-3, 1e-15);
  // vLLM up to 0.10: D broadcasts of the rows in, an all-reduce of all N rows out:
  // 2 x 10 us + 1/2 x 8 x 2016 / 1e11 + 10 us + 2 x 1/2 x 8 x 2000 / 1e11 = 30.24064 us a layer:
  // 60.48128 us for both. Sum 3.0143129039375 ms.
  EXPECT_NEAR(vllm_dp_step_seconds(dp_shape(true, true, true), test::round_lockstep_rates(), ranks), 3.0143129039375e-3, 1e-15);
}

TEST(VllmDpStep, AnEngineAboveTheGraphsStopsThePaddingFrom017) {
  // Engine 0 decodes 600 sequences attending 60,000 tokens (above the 512-token graphs: eager),
  // engine 1 one sequence at 500.
  // 0.17+: nobody pads. Engine 0: max(1 ms, 2 x 0.5e9 x 600 / 1e15 = 0.6 ms) + 0.6 ms (no overlap)
  // = 1.6 ms; KV 1.2e8 B = 120 us + 245.76e6 FLOPs = 0.24576 us: 1.72024576 ms. N = 601: all 8
  // experts touched, 1.6 ms + 2 x 0.25e9 x 601 / 1e15 = 0.3005 ms. Combine: 2 x (20 us + 1/2 x
  // 601 x 4016 / 1e11) = 64.13616 us. Step 0.5 ms. Sum 4.18488192 ms.
  const std::vector<MixedStep> ranks = {{600, 60000, {}}, {1, 500, {}}};
  EXPECT_NEAR(vllm_dp_step_seconds(dp_shape(true, true, false), test::round_lockstep_rates(), ranks), 4.18488192e-3, 1e-15);
  // Up to 0.16 engine 1 pads to 600 too: N = 1200; experts 1.6 ms + 0.6 ms; combine 2 x (20 us +
  // 1/2 x 1200 x 4016 / 1e11) = 88.192 us; engine 1 (1.601002048 ms) is still the faster one.
  // Sum 1.72024576 + 2.2 + 0.088192 + 0.5 = 4.50843776 ms.
  EXPECT_NEAR(vllm_dp_step_seconds(dp_shape(true, false, false), test::round_lockstep_rates(), ranks), 4.50843776e-3, 1e-15);
}

TEST(VllmDpStep, WithADrafterTheIdleDummyRunsTheVerifysTokensAndEveryForwardGathers) {
  // Unpadded (0.17+ with an engine above the graphs, here pad off), engine 0 verifies 2 tokens for
  // each of 3 sequences (6 tokens) and idle engine 1's dummy runs uniform_decode_query_len = 2
  // tokens, not 1: N = 8 gathered instead of 7. Engine 0 stays the slowest. The difference:
  // experts touched 8 x (1 - 0.75^8) - 8 x (1 - 0.75^7) = 7.1990966796875 - 6.93212890625 a layer,
  // x 2 layers x 1e8 B / 1e12 = 53.3935546875 us; their FLOPs 2 x 0.25e9 / 1e15 = 0.5 us; the
  // exchange 1/2 x 1 x 4016 / 1e11 x 2 layers = 40.16 ns. 53.9337146875 us.
  const PerfModelShape shape = dp_shape(false, false, false);
  const std::vector<MixedStep> dummy_of_two = {{3, 3000, {}, 2}, {0, 0, {}, 2}};
  const std::vector<MixedStep> dummy_of_one = {{3, 3000, {}, 2}, {}};
  const HardwareRates r = test::round_lockstep_rates();
  EXPECT_NEAR(vllm_dp_step_seconds(shape, r, dummy_of_two) - vllm_dp_step_seconds(shape, r, dummy_of_one),
              53.9337146875e-6, 1e-15);
  // MTP with k = 2 (the draft here the target's shape): the target's lockstep forward, the
  // drafter's first forward over the same tokens and its second over one token a sequence, both
  // inside the step (no step term), no host round of their own (vLLM).
  HardwareRates in_step = r;
  in_step.step_overhead_s = 0;
  const std::vector<MixedStep> single = {{3, 3000, {}, 1}, {}};
  EXPECT_NEAR(speculative_lockstep_step_seconds(shape, {&shape, 1, 0}, r, dummy_of_two),
              vllm_dp_step_seconds(shape, r, dummy_of_two) + vllm_dp_step_seconds(shape, in_step, dummy_of_two) +
                  vllm_dp_step_seconds(shape, in_step, single),
              1e-15);
  EXPECT_DOUBLE_EQ(lockstep_step_seconds(shape, r, dummy_of_two), vllm_dp_step_seconds(shape, r, dummy_of_two));
}

TEST(VllmDpStep, RefusesAMismatchOfEnginesAndBatches) {
  const std::vector<MixedStep> one = {{1, 10, {}}};
  EXPECT_THROW(vllm_dp_step_seconds(dp_shape(true, true, false), test::round_lockstep_rates(), one), Error);
}

}  // namespace
}  // namespace vramplan::perf
