// vramplan/perf/perf_model.hpp — the first-order performance model (docs/performance.md):
// decode step time, prefill / TTFT, and the throughput-vs-batch curve with its knee.
//
// A roofline per kernel class and forward step, per GPU (docs/memory-model.md §7):
//   t_step = R(weights / BW, GEMM FLOPs / F) + R(KV / BW, attention FLOPs / F)
//            + TP all-reduces + engine overhead (per step + per layer),   R(m, c) = max(m, c) + (1 - o) min(m, c)
// Bytes = weights streamed once per step (MoE: only the experts the batch touches) + the KV cache
// of every sequence; FLOPs = 2 x active params x tokens + attention. Pipeline parallelism turns
// stage times into rounds with bubbles.
//
// Inputs are plain numbers (PerfModelShape, HardwareRates) so the step model stays a few dozen
// floating-point operations: it sits in the inner loop of batch / context sweeps. Builders from
// the model inventory and the GPU catalogue live in model_shape.hpp and hardware_rates.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vramplan::perf {

//! Achieved rates of one GPU (what a kernel really gets, not the datasheet peak).
struct HardwareRates {
  double bandwidth_bytes_per_s = 0;  //!< memory read bandwidth
  double tensor_flops_per_s = 0;     //!< dense tensor throughput in the compute dtype
  //! Fixed time per forward step (scheduling, input preparation, sampling, host sync); with
  //! layer_overhead_s below: overhead = step + layers x layer, both per engine
  //! (data/perf_defaults.json step_overhead).
  double step_overhead_s = 0;
  double link_bytes_per_s = 0;       //!< all-reduce bus bandwidth per GPU (one direction); 0 = none
  double link_latency_s = 0;         //!< fixed time per all-reduce call
  //! Share of the shorter of (memory time, math time) a kernel hides behind the longer one:
  //! 1 = the classic roofline max(), 0 = no overlap (their sum). docs/performance.md §1.
  double memory_compute_overlap = 1;
  //! Fixed time per decoder layer on this GPU per forward step (kernel launches, small per-layer
  //! kernels). Last, so positional initialisers of the fields above keep their meaning.
  double layer_overhead_s = 0;
  //! Extra time per MoE layer on this GPU on top of layer_overhead_s (router, top-k, token
  //! permutation and the grouped expert GEMMs are more kernels than a dense MLP), in a decode-only
  //! forward and in a forward that carries prompt tokens (which an engine may run outside its
  //! CUDA graphs: SGLang captures decode batches only). Per engine, data/perf_defaults.json.
  double moe_layer_overhead_s = 0;
  double prompt_moe_layer_overhead_s = 0;
  //! Extra time per GEMM launch whose weights are 2-D block-scaled FP8 (a per-token-group
  //! activation quantisation kernel plus the block-scaled GEMM), per engine and GPU vendor
  //! (data/perf_defaults.json block_fp8_gemm_us; 0 where the engine's kernels need none).
  double block_fp8_gemm_overhead_s = 0;
  //! The same in a forward with prompt tokens (which an engine may run outside its CUDA graphs).
  double prompt_block_fp8_gemm_overhead_s = 0;
  //! Time per counted kernel of a decode-only step (PerfModelShape::decode_kernels), per kernel
  //! launched by a forward with prompt tokens (prompt_launches) and extra per block-scaled FP8 GEMM
  //! in such a forward: for a shape whose kernels are counted they replace the per-layer,
  //! per-MoE-layer and per-FP8-GEMM terms (data/perf_defaults.json kernel_counts; 0 = none for this
  //! engine and vendor).
  double decode_kernel_overhead_s = 0;
  double prompt_launch_overhead_s = 0;
  double counted_prompt_block_fp8_s = 0;
  //! 0: link_bytes_per_s is the all-reduce bandwidth of any group (an NVLink switch, PCIe). n: the
  //! GPUs form a fully connected mesh of n point-to-point links each (AMD Infinity Fabric), and
  //! link_bytes_per_s is one link's: a group of k GPUs drives min(k - 1, n) of them.
  int link_mesh_links = 0;
  //! Rate the weight stream of a decode step reads at, when the engine's mat-vec kernels cannot
  //! reach bandwidth_bytes_per_s (llama.cpp MMVQ on fast memory: perf/llamacpp_mmvq.hpp); 0 = the
  //! bandwidth. The KV reads (attention kernels) keep bandwidth_bytes_per_s.
  double weight_bandwidth_bytes_per_s = 0;
  //! GPUs the link above joins (an HGX board's NVLink switch: 8; a GB200 NVL72 rack: 72; a PCIe
  //! host); a collective over more GPUs crosses hosts and runs over the network below. 0 = any
  //! group (the node size is unknown).
  std::uint64_t scale_up_gpus = 0;
  //! Bus bandwidth per GPU, one direction, its network NIC achieves between hosts; 0 = none known.
  double network_bytes_per_s = 0;
  //! Fixed time of one collective (or point-to-point hand-off) between hosts.
  double network_latency_s = 0;
};

//! The all-reduce bandwidth per GPU, one direction, of a group of `group` GPUs on one host's link.
double group_link_bytes_per_s(const HardwareRates& r, std::uint64_t group);

//! What a collective over a group of GPUs runs at: its fixed time per call and its bus bandwidth
//! per GPU, one direction.
struct CollectiveLink {
  double latency_s = 0;
  double bytes_per_s = 0;
  bool crosses_hosts = false;
};

//! The link of a collective over `group` GPUs (docs/performance.md "Across hosts"): the host's
//! link (NVLink, a mesh, PCIe) while the group fits in scale_up_gpus; beyond it the ring crosses
//! the network once per host pair, each of a host's g = scale_up_gpus GPUs driving its own NIC:
//! bus bandwidth min(host link of g GPUs, g x NIC), fixed time network_latency_s.
CollectiveLink collective_link(const HardwareRates& r, std::uint64_t group);

//! Hosts a group of `gpus` GPUs spans (1 when the node size is unknown).
std::uint64_t hosts_spanned(const HardwareRates& r, std::uint64_t gpus);

//! The hardware a model runs on: expected rates, and where they are not measured, the rates at
//! the pessimistic and optimistic ends of the documented efficiency ranges.
struct PerfHardware {
  HardwareRates expected;
  std::optional<HardwareRates> slow;  //!< low end of every efficiency (absent when calibrated)
  std::optional<HardwareRates> fast;  //!< high end
  //! Which figures came from where, e.g. "bandwidth: calibration data/calibration/h200-....json;
  //! bf16 tensor: datasheet 989.4 TFLOPS x 0.65 (data/perf_defaults.json); ...".
  std::string basis;
  bool calibrated = false;  //!< bandwidth and tensor throughput both measured on the card
};

//! The host's per-step work (step_overhead_s) shared by `steps` decode steps: what one step of a
//! steady decode carries on average when the engine does that work once a round of `steps` (vLLM
//! V0 multi-step, --num-scheduler-steps; the simulator charges it on each round's first step,
//! MixedStep::host_step). `steps` 0 or 1 changes nothing.
void amortize_step_overhead(HardwareRates& r, std::uint64_t steps);
//! The same for every end of the range; the basis says so.
void amortize_step_overhead(PerfHardware& hw, std::uint64_t steps);

//! Layers that attend the same way (same heads, same KV bytes per token, same window).
struct AttentionGroup {
  double layers = 0;                  //!< decoder layers of this kind on one GPU (pipeline stage)
  double q_heads = 0;                 //!< query heads per GPU (n_q / tp)
  double qk_dim = 0;                  //!< Q.K dot-product length (MLA absorbed: kv_lora + rope)
  double v_dim = 0;                   //!< length of the values summed (MLA absorbed: kv_lora)
  double kv_bytes_per_token = 0;      //!< KV bytes one token costs in ONE layer on one GPU
  //! 0 = full context; else at most `window` tokens: the last ones (sliding, chunked) or the ones
  //! DeepSeek sparse attention's indexer picks (index_topk)
  std::uint64_t window = 0;
  //! Times a decode step reads each cached token's K/V: 1 for GQA-aware kernels; the query heads
  //! per KV head for a kernel that runs one thread block per query head (ShapeOptions).
  double decode_kv_reads = 1;
  //! The row size is fixed by its format (DeepSeek sparse attention's indexer key: fp8 + scales
  //! whatever the KV dtype), so the memory plan's KV figure does not rescale it.
  bool fixed_row = false;
  //! Each query token picks its own cached rows (DeepSeek sparse attention: the indexer scores
  //! and the MLA reads per token), so several query tokens of one sequence in a step (a
  //! speculative verify) read them once each: SGLang's NSA backend gives every draft token a row
  //! of its own (layers/attention/nsa_backend.py init_forward_metadata, target verify:
  //! max_seqlen_q 1, seqlens_expanded). false: the tokens share one read of the context.
  bool per_query_reads = false;
};

//! Everything the step model needs about a model, per GPU (one pipeline stage, one TP rank).
//! vLLM's data-parallel engines stepping in lockstep (memory/vllm_data_parallel.hpp; the rules'
//! sources are there): every engine runs each forward, a busy one on its own batch and an idle
//! one a one-token dummy, each padded as `pad` says; every MoE layer gathers all engines' tokens.
struct VllmDpLockstep {
  std::uint32_t ranks = 1;  //!< engines (D); 1 = off
  //! Each engine's token count padded to the largest graph-padded count over the engines
  //! (gpu_model_runner.py get_dp_padding, v1/worker/dp_utils.py coordinate_batch_across_dp).
  bool pad = false;
  //! With `pad`: from 0.17 the padding holds only when every engine replays a CUDA graph (no
  //! count above max_graph_tokens); otherwise every engine runs its own count (_synchronize_dp_ranks).
  bool pad_only_if_graphed = false;
  //! The largest captured batch (min(2 x max_num_seqs, 512), capped by max_num_batched_tokens);
  //! counts up to it are rounded up to a capture size ([1, 2, 4] + multiples of 8 to 256, of 16
  //! beyond: vllm/config/vllm.py). 0 = no graphs.
  std::uint64_t max_graph_tokens = 0;
  //! The MoE's gather: D broadcasts + an all-reduce ("naive", up to 0.10) instead of an all-gather
  //! + a reduce-scatter ("allgather_reducescatter", from 0.11; distributed/device_communicators/
  //! all2all.py).
  bool naive_combine = false;
};

struct PerfModelShape {
  double dense_weight_bytes = 0;   //!< non-routed weights streamed every step (embedding gather excluded)
  double expert_bytes = 0;         //!< one routed expert of one MoE layer, as stored on this GPU
  double local_experts = 0;        //!< routed experts per MoE layer held by this GPU
  double num_experts = 0;          //!< routed experts per MoE layer in the model (E); 0 = dense
  double experts_per_token = 0;    //!< k
  //! GPUs the routed experts are spread over whole (expert parallelism; 1 = each expert sliced
  //! over TP). With > 1 a MoE layer ends when its busiest GPU does: the step reads that GPU's
  //! touched experts (expected_busiest_rank_experts), not the average.
  double expert_ranks = 1;
  double moe_layers = 0;           //!< MoE layers on this GPU (pipeline stage)
  //! GEMM launches per forward on this GPU whose weights are 2-D block-scaled FP8 (fused
  //! projections counted once: model_shape.cpp gemm_launch).
  double block_fp8_gemms = 0;
  double active_params = 0;        //!< params one token multiplies on this GPU (embedding excluded)
  //! The output projection's share of active_params on this GPU (lm_head, or a tied embedding in
  //! its place). The engines multiply it only on the rows whose logits they take: every row of a
  //! decode or verify, the last row of each prompt chunk in a step (perf_model.cpp
  //! gemm_flops_with_head).
  double head_params = 0;
  std::vector<AttentionGroup> attention;
  double layers = 0;               //!< decoder layers on this GPU (pipeline stage)
  double hidden = 0;               //!< model width (all-reduce payload per token)
  double activation_bytes = 2;     //!< bytes per activation element exchanged (bf16 = 2)
  std::uint32_t tp = 1;            //!< tensor-parallel ranks
  std::uint32_t pp = 1;            //!< pipeline stages
  std::vector<std::string> notes;  //!< simplifications made when building the shape
  //! Recurrent (Mamba / gated-DeltaNet) state of one sequence on this GPU, over its recurrent
  //! layers. A decode token reads and writes all of it; a prompt chunk once per sequence (the
  //! chunked scan carries it from chunk to chunk). 0 when the model has no recurrent layers.
  double recurrent_state_bytes = 0;
  //! Kernels on the critical path of one decode forward on this GPU, apart from the all-reduces
  //! of every layer, as the engine's source was counted (LayerKernelCounts summed over
  //! this GPU's layers); 0 = not counted (the per-layer overhead terms apply).
  double decode_kernels = 0;
  //! Kernels one forward launches on this GPU on every stream, all-reduces included (counted
  //! architectures; what a forward outside the CUDA graphs launches from the host); 0 = not counted.
  double prompt_launches = 0;
  //! Latency-bound all-reduces per forward on this GPU besides the ones of every layer (counted
  //! architectures only).
  double extra_allreduces = 0;
  //! Tensor-parallel all-reduces per layer: two (after attention, after the MLP) in a decoder
  //! layer; one where a layer is a single block (Nemotron-H: a Mamba-2 mixer, attention, an MLP or
  //! experts; vLLM / SGLang nemotron_h.py reduce once at the block's output).
  double allreduces_per_layer = 2;
  //! The attention projections' share of dense_weight_bytes and active_params (q / k / v / o and
  //! MLA's down- and up-projections), on this GPU: the part of a layer each SGLang DP-attention
  //! rank runs over its own tokens.
  double attention_weight_bytes = 0;
  double attention_params = 0;
  //! SGLang DP attention: ranks of attention_tp GPUs each (1 = off), stepping in lockstep.
  std::uint32_t dp_attention_ranks = 1;
  std::uint32_t attention_tp = 1;
  //! The routed experts' share of active_params: what one token's routed experts multiply on
  //! this GPU, averaged over the GPUs the experts span (tp, or vLLM's D x tp). A lockstep step
  //! runs them over every engine's tokens gathered, the rest of active_params over its own.
  double routed_active_params = 0;
  //! vLLM data parallelism: engines in lockstep (vllm_dp_step_seconds); ranks 1 = off.
  VllmDpLockstep vllm_dp{};
};

//! B sequences decoding one token each, all at the same context length (tokens already cached).
struct DecodeBatch {
  std::uint64_t sequences = 1;
  std::uint64_t context = 0;
};

//! The parts of one step on one GPU, with the expected rates.
struct StepBreakdown {
  double weight_bytes = 0;   //!< weights read
  double kv_bytes = 0;       //!< KV cache read
  double flops = 0;          //!< GEMM + attention FLOPs
  double attention_flops = 0;  //!< the attention part of `flops` (QK^T and PV)
  double memory_s = 0;       //!< (weight + kv bytes) / bandwidth
  double compute_s = 0;      //!< flops / tensor throughput
  //! GEMM kernels (weights, GEMM FLOPs) then attention kernels (KV, attention FLOPs), each
  //! combined with the rates' memory_compute_overlap; they run one after the other.
  double kernels_s = 0;
  double comm_s = 0;         //!< TP all-reduces
  double overhead_s = 0;     //!< step_overhead_s + layers x layer_overhead_s
  double experts_touched = 0;  //!< expected distinct local experts per MoE layer (0 when dense)
  bool memory_bound = true;
};

//! low <= expected <= high. Without a calibration low/high come from the efficiency ranges;
//! with one they equal expected.
struct Range {
  double low = 0, expected = 0, high = 0;
};

struct DecodeResult {
  Range step_s;           //!< time of one decode round = time per output token (TPOT)
  Range tokens_per_s;     //!< output tokens per second of the whole replica (tp x pp GPUs)
  double pipeline_bubble = 0;  //!< idle fraction of each stage (pp > 1 and fewer micro-batches than stages)
  StepBreakdown step;     //!< one stage step with the expected rates
  std::string basis;
};

//! `sequences` prompts of `prompt_tokens` each, fed in chunks of at most `token_budget` tokens
//! per forward (vLLM max_num_batched_tokens, SGLang chunked_prefill_size; 0 = all at once).
struct PrefillBatch {
  std::uint64_t sequences = 1;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t token_budget = 0;
};

struct PrefillResult {
  Range time_s;          //!< until every prompt is processed (= TTFT for a lone prompt)
  Range tokens_per_s;    //!< prompt tokens per second
  std::uint64_t forwards = 0;  //!< forward steps (chunks)
  bool compute_bound = true;   //!< of the largest chunk, with the expected rates
  std::string basis;
};

//! A static batch: prefill of B prompts, then output-1 decode steps at growing context.
struct GenerationResult {
  Range total_s;
  Range output_tokens_per_s;  //!< B x output / total time, whole replica
  Range ttft_s;               //!< the prefill part
  Range tpot_s;               //!< mean decode step
  std::string basis;
};

struct CurvePoint {
  std::uint64_t batch = 0;
  Range step_s;
  Range tokens_per_s;
  bool memory_bound = true;
};

struct ThroughputCurve {
  std::uint64_t context = 0;
  std::vector<CurvePoint> points;  //!< batch 1, 2, 4, ... and max_batch itself
  double plateau_tokens_per_s = 0; //!< expected throughput at max_batch
  std::uint64_t half_batch = 0;    //!< smallest batch reaching >= 50 % of the plateau
  std::uint64_t knee_batch = 0;    //!< smallest batch reaching >= 80 % of the plateau
  std::string basis;
};

//! Share of the plateau that defines the knee (docs/memory-model.md §7.3: 80 %).
inline constexpr double kKneeFraction = 0.8;

//! E (1 - (1 - k/E)^tokens): distinct experts `tokens` tokens choose in one MoE layer under
//! uniform routing, scaled to the `local` experts a GPU holds. docs/memory-model.md §1.2.
double expected_experts_touched(double num_experts, double experts_per_token, double local,
                                double tokens);

//! Expected distinct experts touched on the busiest of `ranks` GPUs that each hold `local` of the
//! `num_experts` whole (expert parallelism), under uniform routing of `tokens` tokens with k
//! experts each: every expert is touched with p = 1 - (1 - k/E)^tokens, independently, so a GPU's
//! count is Binomial(local, p) and E[max over ranks] = sum over m = 1..local of
//! (1 - P(count < m)^ranks). With ranks = 1 it is expected_experts_touched. Real routers favour
//! some experts, so this is a lower bound on the imbalance. docs/performance.md §1.
double expected_busiest_rank_experts(double num_experts, double experts_per_token, double local, double ranks,
                                     double tokens);

//! One decode round for a uniform batch. Throws Error(Usage) on a zero batch or a shape /
//! hardware with non-positive rates.
DecodeResult estimate_decode(const PerfModelShape& shape, const PerfHardware& hw,
                             const DecodeBatch& batch);
//! The same for sequences at different context lengths (one entry per sequence).
DecodeResult estimate_decode(const PerfModelShape& shape, const PerfHardware& hw,
                             std::span<const std::uint64_t> contexts);

//! The stage hand-offs of one pass of `tokens` tokens through the pipeline stages: 0 while every
//! stage sits on one host (a hand-off there is folded into the step overhead); across hosts each
//! of the `hosts` crossings of a round (the hops between hosts and the sampled tokens' way back to
//! the first stage) costs network_latency_s plus the hidden states and residual, each TP rank's
//! 1 / tp slice, through its NIC.
double pipeline_handoff_seconds(const PerfModelShape& shape, const HardwareRates& rates, double tokens);

//! One decode round of `sequences` sequences all at `uniform_context`, with explicit rates:
//! estimate_decode's round (micro-batches through the pipeline stages, their bubble, the hand-offs
//! between hosts) at one end of the range, for inner loops (the sweep's points).
struct DecodeRound {
  double seconds = 0;  //!< time per output token
  double bubble = 0;   //!< idle fraction of each stage
};
DecodeRound uniform_decode_round(const PerfModelShape& shape, const HardwareRates& rates, std::uint64_t sequences,
                                 std::uint64_t uniform_context);

//! One stage step with explicit rates; the building block of everything above (exposed for the
//! benchmark and tests). `context_sum` = sum of the sequences' context lengths; sliding-window
//! groups use min(context, window) per sequence, so pass uniform batches via `uniform_context`.
StepBreakdown decode_step(const PerfModelShape& shape, const HardwareRates& rates,
                          std::uint64_t sequences, std::uint64_t uniform_context);

//! Positions [start, end) of one prompt computed in a step (start = tokens already cached).
struct PrefillChunk {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};

//! One continuous-batching step: `decode_sequences` sequences generating one token each, whose
//! attended tokens (cached + the new one) sum to `decode_attended`, together with prompt chunks.
struct MixedStep {
  std::uint64_t decode_sequences = 0;
  double decode_attended = 0;
  std::span<const PrefillChunk> chunks;
  //! Tokens each decode sequence runs through the model in this step: 1, or with speculative
  //! decoding the last accepted token plus the drafted ones it verifies (1 + k). The GEMMs run
  //! over all of them; the attention reads each sequence's cached K/V once for its query tokens
  //! (the verify kernels take a query of q tokens per sequence) and does q times the math.
  std::uint64_t decode_query_tokens = 1;
  //! Whether the host's per-step work (scheduling, input preparation, output processing:
  //! HardwareRates::step_overhead_s) stands before this step. false for steps 2..N of a vLLM V0
  //! multi-step round (--num-scheduler-steps N), which replay the frozen batch with only a GPU-side
  //! advance_step while the CPU runs ahead (vllm 0.6.0 worker/multi_step_model_runner.py
  //! MultiStepModelRunner.execute_model, _advance_step): the round pays that work once.
  bool host_step = true;

  //! Tokens the step computes: decode_query_tokens per decode sequence plus every chunk's
  //! end - start (the count GEMMs run over and the cold-start charge keys on). Throws
  //! Error(Usage) on overflow, a chunk with end < start, or decode_query_tokens 0.
  std::uint64_t tokens() const;
};

//! Seconds of one mixed step with `rates` (the serving simulator's step clock,
//! docs/simulator.md#step-time). GEMMs run over every token of the step once, attention per
//! sequence over its own context, TP all-reduces over every token. A decode-only step equals
//! estimate_decode's round for the same batch (pipeline micro-batches included); a prompt-only
//! step equals that chunk's share of estimate_prefill. Sliding-window groups attend
//! min(decode_attended, sequences x window): exact when every context is on the same side of the
//! window, an upper bound otherwise.
double mixed_step_seconds(const PerfModelShape& shape, const HardwareRates& rates, const MixedStep& step);

//! Seconds of one lockstep forward of vLLM's data-parallel engines (shape.vllm_dp, ranks > 1):
//! one batch per engine (an empty MixedStep for an idle one, which runs a dummy of its
//! decode_query_tokens tokens: one, or 1 + k with a drafter). Each
//! engine's count is padded as shape.vllm_dp says; the attention, the dense layers and the TP
//! all-reduces run per engine (the slowest sets the pace: every MoE layer waits for it), the routed
//! experts over all engines' padded tokens, and per MoE layer the gather and its reverse over the
//! D engines (docs/simulator.md#vllm-data-parallelism).
double vllm_dp_step_seconds(const PerfModelShape& shape, const HardwareRates& rates, std::span<const MixedStep> ranks);

//! vLLM's largest captured CUDA-graph batch when graphs go up to `max_graph_tokens`: the last of
//! the capture sizes [1, 2, 4], multiples of 8 up to 248, of 16 from 256 (vllm/config/vllm.py) not
//! above it; 0 for 0 (no graphs).
std::uint64_t vllm_largest_capture_size(std::uint64_t max_graph_tokens);

//! The token count vLLM runs for a batch of `tokens`: the smallest capture size at or above it,
//! or `tokens` itself above the largest (eager).
std::uint64_t vllm_graph_padded_tokens(std::uint64_t tokens, std::uint64_t max_graph_tokens);

//! The draft of speculative decoding as the iteration runs it (SGLang EAGLE with top-k 1,
//! vLLM's MTP proposer): after the target's forward (which verifies decode_query_tokens tokens
//! per decoding sequence), one draft forward over every token of the step (the draft extend)
//! and `single_token_forwards` more over one token per decoding sequence, all without a host
//! round of their own.
struct DraftForwards {
  const PerfModelShape* shape = nullptr;  //!< the draft model per GPU (one_layer_draft_shape)
  std::uint64_t single_token_forwards = 0;
  //! Host rounds the draft adds to a decode step, each paying the fixed per-step term: SGLang
  //! prepares and replays the draft and the draft extend as forwards of their own, with host
  //! syncs between (speculative/eagle_worker.py draft, forward_draft_extend_after_decode); a step
  //! with no decoding sequence (a prefill batch) has the extend's round alone. 0 where the
  //! drafter's forwards are launched within the target's step (vLLM).
  std::uint64_t host_rounds = 0;
};

//! Seconds of one lockstep step of SGLang DP attention (shape.dp_attention_ranks = D ranks of
//! shape.attention_tp GPUs): `ranks` holds each rank's batch, an empty MixedStep for a rank with
//! nothing to run (it runs an idle batch). Every layer waits for the slowest rank's attention
//! (its projections over its own tokens, its sequences' KV), then runs the MLP / MoE over every
//! rank's tokens gathered: each rank's count rounded up to a multiple of attention_tp, padded to
//! D x the largest when no rank has prompt tokens (decode runs CUDA graphs, which pad to
//! MAX_LEN), summed when one has (SUM_LEN, and every rank runs eager:
//! can_cuda_graph is the minimum over ranks). The gather and the scatter move the gathered tokens
//! as an all-gather plus a reduce-scatter over all tp GPUs, one all-reduce's bytes with two
//! latencies per layer. sglang 0.5.9 managers/scheduler_dp_attn_mixin.py
//! prepare_mlp_sync_batch_raw, layers/dp_attention.py DpPaddingMode, layers/communicator.py
//! (docs/research/sglang-dp-attention.md section 4). Throws Error(Usage) under pipeline
//! parallelism or with a rank count other than D.
double dp_attention_step_seconds(const PerfModelShape& shape, const HardwareRates& rates,
                                 std::span<const MixedStep> ranks);

//! Seconds of one speculative-decoding iteration: the target's step (mixed_step_seconds) plus
//! the draft's forwards, which pay the per-layer and per-kernel terms of `rates`, and the fixed
//! per-step term once per host round (DraftForwards::host_rounds). docs/simulator.md#speculative-decoding.
double speculative_step_seconds(const PerfModelShape& target, const DraftForwards& draft,
                                const HardwareRates& rates, const MixedStep& step);

//! One lockstep step of several ranks: vllm_dp_step_seconds when shape.vllm_dp.ranks > 1, else
//! dp_attention_step_seconds.
double lockstep_step_seconds(const PerfModelShape& shape, const HardwareRates& rates, std::span<const MixedStep> ranks);

//! One speculative iteration of lockstep ranks (SGLang DP attention with EAGLE top-k 1, vLLM's
//! data-parallel engines with an MTP drafter): each of its forwards is a lockstep step of all ranks
//! (lockstep_step_seconds), since the draft's MoE gathers every rank's tokens as the target's does
//! and an idle rank runs an idle batch through each (SGLang speculative/eagle_worker.py
//! _draft_preprocess_idle, EagleVerifyInput.create_idle_input, forward_draft_extend_after_decode on
//! every rank under DP attention; vLLM gpu_model_runner.py _dummy_run calls drafter.dummy_run): the
//! target's forward over `ranks`, the draft extend over the same tokens, and with any rank decoding
//! the draft's single-token forwards over each rank's decoding sequences; host rounds as
//! speculative_step_seconds. The verify's token counts are each rank's sequences x
//! decode_query_tokens (SGLang spec_info.py get_spec_adjusted_global_num_tokens), as
//! MixedStep::tokens gives them. `draft.shape` must span the same ranks (one_layer_draft_shape).
double speculative_lockstep_step_seconds(const PerfModelShape& target, const DraftForwards& draft,
                                         const HardwareRates& rates, std::span<const MixedStep> ranks);

PrefillResult estimate_prefill(const PerfModelShape& shape, const PerfHardware& hw,
                               const PrefillBatch& batch);
//! Time to first token of one prompt alone on an idle replica.
Range estimate_ttft(const PerfModelShape& shape, const PerfHardware& hw,
                    std::uint64_t prompt_tokens, std::uint64_t token_budget);

GenerationResult estimate_generation(const PerfModelShape& shape, const PerfHardware& hw,
                                     std::uint64_t sequences, std::uint64_t input_tokens,
                                     std::uint64_t output_tokens, std::uint64_t token_budget);

//! Throughput at batch 1, 2, 4, ... up to `max_batch` (the caller's limit, e.g. the memory-limited
//! maximum), all at `context`; the plateau is the expected throughput at max_batch and the knee
//! the smallest batch reaching kKneeFraction of it (searched over every integer batch).
ThroughputCurve throughput_vs_batch(const PerfModelShape& shape, const PerfHardware& hw,
                                    std::uint64_t context, std::uint64_t max_batch);

}  // namespace vramplan::perf
