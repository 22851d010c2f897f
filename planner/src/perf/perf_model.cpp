// First-order performance model; formulas and their sources in docs/performance.md.
#include "vramplan/perf/perf_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::perf {

double group_link_bytes_per_s(const HardwareRates& r, std::uint64_t group) {
  if (r.link_mesh_links <= 0 || group < 2) return r.link_bytes_per_s;
  // RCCL spreads a collective of k fully connected GPUs over the k - 1 links to the others.
  const std::uint64_t links = std::min<std::uint64_t>(group - 1, static_cast<std::uint64_t>(r.link_mesh_links));
  return r.link_bytes_per_s * static_cast<double>(links);
}

std::uint64_t hosts_spanned(const HardwareRates& r, std::uint64_t gpus) {
  if (r.scale_up_gpus == 0 || gpus <= r.scale_up_gpus) return 1;
  return ceil_div(gpus, r.scale_up_gpus);
}

CollectiveLink collective_link(const HardwareRates& r, std::uint64_t group) {
  if (hosts_spanned(r, group) <= 1 || !(r.network_bytes_per_s > 0))
    return {r.link_latency_s, group_link_bytes_per_s(r, group), false};
  // NCCL's ring over several hosts: within a host the ring runs over the host's link, and each of
  // a host's g GPUs sends its ring's share to the next host through its own NIC, so the g rings
  // cross between hosts side by side.
  const std::uint64_t g = r.scale_up_gpus;
  return {r.network_latency_s,
          std::min(group_link_bytes_per_s(r, g), static_cast<double>(g) * r.network_bytes_per_s), true};
}

double pipeline_handoff_seconds(const PerfModelShape& shape, const HardwareRates& r, double tokens) {
  if (shape.pp <= 1) return 0;
  const std::uint64_t hosts = hosts_spanned(r, static_cast<std::uint64_t>(shape.tp) * shape.pp);
  if (hosts <= 1 || !(r.network_bytes_per_s > 0)) return 0;
  // vLLM's IntermediateTensors between stages: hidden states and residual, each TP rank sending
  // its 1 / tp slice (parallel_state.py send_tensor_dict with all_gather_group).
  const double bytes = tokens * 2 * shape.hidden * shape.activation_bytes / shape.tp;
  return static_cast<double>(hosts) * (r.network_latency_s + bytes / r.network_bytes_per_s);
}

namespace {

// Upper bound on attention groups a shape may carry (full, sliding, chunked, MLA, ...): keeps
// the per-step sums on the stack.
constexpr std::size_t kMaxAttentionGroups = 8;

// Tokens attended in one layer by a query at position t (1-based) with window w: min(t, w).
// Sum over positions a+1 .. b, closed form (the inner loop of prefill).
double attended_sum(double a, double b, double w) {
  auto full = [](double x, double y) { return (y * (y + 1) - x * (x + 1)) / 2; };  // sum_{t=x+1..y} t
  if (w <= 0 || b <= w) return full(a, b);
  if (a >= w) return (b - a) * w;
  return full(a, w) + (b - w) * w;
}

double attended(double context, std::uint64_t window) {
  return window == 0 ? context : std::min(context, static_cast<double>(window));
}

void check_rates(const HardwareRates& r, const PerfModelShape& shape) {
  if (!(r.bandwidth_bytes_per_s > 0) || !(r.tensor_flops_per_s > 0))
    throw_usage("performance model: bandwidth and tensor throughput must be positive");
  if (!(r.step_overhead_s >= 0) || !(r.layer_overhead_s >= 0) || !(r.link_latency_s >= 0))
    throw_usage("performance model: overheads must not be negative");
  if (!(r.memory_compute_overlap >= 0 && r.memory_compute_overlap <= 1))
    throw_usage("performance model: memory_compute_overlap must be in 0..1");
  if (shape.tp > 1 && !(r.link_bytes_per_s > 0))
    throw_usage("performance model: tensor parallelism " + std::to_string(shape.tp) +
                " needs a GPU-to-GPU link bandwidth, and none is known for this GPU");
}

void check_shape(const PerfModelShape& shape) {
  if (shape.tp == 0 || shape.pp == 0) throw_usage("performance model: tp and pp must be >= 1");
  if (shape.attention.size() > kMaxAttentionGroups)
    throw_usage("performance model: more than 8 attention groups");
  if (shape.num_experts > 0 && !(shape.experts_per_token > 0 && shape.experts_per_token <= shape.num_experts))
    throw_usage("performance model: experts_per_token must be in 1..num_experts");
}

// One kernel class's time from its memory and math times: the roofline max() plus the part of the
// shorter one the kernel does not hide (docs/performance.md §1, "overlap").
double kernel_time(double memory_s, double compute_s, double overlap) {
  return std::max(memory_s, compute_s) + (1 - overlap) * std::min(memory_s, compute_s);
}

// The rate weights stream at: a calibration's weight-read figure where it has one, else the
// memory bandwidth.
double weight_bandwidth(const HardwareRates& r) {
  return r.weight_bandwidth_bytes_per_s > 0 ? r.weight_bandwidth_bytes_per_s : r.bandwidth_bytes_per_s;
}

// Launches scale with the layers this GPU runs; scheduling and sampling happen once per step.
// MoE layers cost more launches than dense ones, and a forward with prompt tokens may run
// outside the engine's CUDA graphs; block-scaled FP8 GEMMs may cost an extra fixed time per
// launch on some kernel stacks (docs/performance.md §4).
double overhead_seconds(const PerfModelShape& shape, const HardwareRates& r, bool has_prompt) {
  // A decode step (one CUDA graph) of an architecture whose kernels were counted in the engine's
  // source costs a fixed time per kernel on its critical path instead (docs/performance.md §1,
  // "kernels counted").
  if (!has_prompt && shape.decode_kernels > 0 && r.decode_kernel_overhead_s > 0)
    return r.step_overhead_s + shape.decode_kernels * r.decode_kernel_overhead_s;
  // A forward with prompt tokens runs outside the graphs (SGLang captures decode batches only):
  // every kernel it launches, on any stream, costs host launch time.
  if (has_prompt && shape.prompt_launches > 0 && r.prompt_launch_overhead_s > 0)
    return r.step_overhead_s + shape.prompt_launches * r.prompt_launch_overhead_s +
           shape.block_fp8_gemms * r.counted_prompt_block_fp8_s;
  const double per_moe = has_prompt ? r.prompt_moe_layer_overhead_s : r.moe_layer_overhead_s;
  const double per_fp8_gemm = has_prompt ? r.prompt_block_fp8_gemm_overhead_s : r.block_fp8_gemm_overhead_s;
  return r.step_overhead_s + shape.layers * r.layer_overhead_s + shape.moe_layers * per_moe +
         shape.block_fp8_gemms * per_fp8_gemm;
}

// The time of one forward on one stage from its totals. The GEMMs (weights, GEMM FLOPs) and the
// attention kernels (KV, attention FLOPs) are separate kernels that run one after the other, so
// each gets its own roofline: the KV reads of attention never hide behind GEMM math.
// The TP all-reduces of a forward of `tokens` tokens on one GPU (0 without TP): per layer two in
// a decoder layer (after attention, after the MLP) of tokens x hidden elements, a ring moving
// 2 (tp-1)/tp of the payload through each GPU's link, plus the latency-bound extra ones.
double tp_allreduce_seconds(const PerfModelShape& shape, const HardwareRates& r, double tokens) {
  if (shape.tp <= 1) return 0;
  const double tp = shape.tp;
  const double payload = tokens * shape.hidden * shape.activation_bytes;
  const CollectiveLink link = collective_link(r, shape.tp);
  const double one = link.latency_s + 2 * (tp - 1) / tp * payload / link.bytes_per_s;
  return shape.allreduces_per_layer * shape.layers * one + shape.extra_allreduces * link.latency_s;
}

StepBreakdown finish_step(const PerfModelShape& shape, const HardwareRates& r, double tokens,
                          double weight_bytes, double kv_bytes, double gemm_flops,
                          double attention_flops, double experts, bool has_prompt = false) {
  StepBreakdown s;
  s.weight_bytes = weight_bytes;
  s.kv_bytes = kv_bytes;
  s.flops = gemm_flops + attention_flops;
  s.attention_flops = attention_flops;
  s.experts_touched = experts;
  const double weight_bw = weight_bandwidth(r);
  s.memory_s = weight_bytes / weight_bw + kv_bytes / r.bandwidth_bytes_per_s;
  s.compute_s = s.flops / r.tensor_flops_per_s;
  s.memory_bound = s.memory_s >= s.compute_s;
  const double o = r.memory_compute_overlap;
  s.kernels_s = kernel_time(weight_bytes / weight_bw, gemm_flops / r.tensor_flops_per_s, o) +
                kernel_time(kv_bytes / r.bandwidth_bytes_per_s, attention_flops / r.tensor_flops_per_s, o);
  s.comm_s = tp_allreduce_seconds(shape, r, tokens);
  s.overhead_s = overhead_seconds(shape, r, has_prompt);
  return s;
}

double step_time(const StepBreakdown& s) { return s.kernels_s + s.comm_s + s.overhead_s; }

// Weights streamed by a forward of `tokens` tokens and the experts it touches.
std::pair<double, double> weights_read(const PerfModelShape& shape, double tokens) {
  if (shape.num_experts <= 0) return {shape.dense_weight_bytes, 0.0};
  // Expert parallelism: every rank waits at the MoE output's all-reduce for the one whose touched
  // experts take longest to stream (SGLang layers/moe/fused_moe_triton/layer.py FusedMoE: a rank
  // holds num_experts / ep whole experts and runs its share of every token's choices).
  const double touched = expected_busiest_rank_experts(shape.num_experts, shape.experts_per_token,
                                                       shape.local_experts, shape.expert_ranks, tokens);
  return {shape.dense_weight_bytes + shape.moe_layers * touched * shape.expert_bytes, touched};
}

// One decode step of `b` sequences; attended[g] = sum over the sequences of the tokens group g
// reads.
// KV bytes and attention FLOPs of decode sequences whose attended tokens per group are
// `attended`, each with `query_tokens` query tokens (1; 1 + k in a speculative verify): every query
// token scores the context, whose K/V are read once for all of them, except where each token picks
// its own rows (per_query_reads).
void add_decode_attention(const PerfModelShape& shape, const double* attended, double query_tokens, double& kv,
                          double& attention) {
  for (std::size_t g = 0; g < shape.attention.size(); ++g) {
    const AttentionGroup& a = shape.attention[g];
    kv += a.layers * a.kv_bytes_per_token * a.decode_kv_reads * attended[g] * (a.per_query_reads ? query_tokens : 1.0);
    // QK^T and PV: 2 FLOPs per multiply-add, per head, per attended token.
    attention += query_tokens * a.layers * 2 * a.q_heads * (a.qk_dim + a.v_dim) * attended[g];
  }
}

// GEMM FLOPs of `params` (the output head's `head_params` among them) over `tokens` rows of which
// `head_rows` reach the head. The
// engines take logits only where they sample: vLLM V1 at each scheduled request's last token
// (v1/worker/gpu_model_runner.py _prepare_inputs: logits_indices = query_start_loc[1:] - 1, a
// partial prompt chunk included; with drafts, each draft position and the bonus), SGLang at each
// extend request's last token (layers/logits_processor.py _get_pruned_states: last_index, every
// row of a decode or target verify), TensorRT-LLM at the last context token unless context
// logits are gathered. So a prompt chunk multiplies the head once, not once per token.
double gemm_flops_with_head(double params, double head_params, double tokens, double head_rows) {
  return 2 * (params - head_params) * tokens + 2 * head_params * std::min(tokens, head_rows);
}

// A whole forward's GEMMs on this GPU.
double forward_gemm_flops(const PerfModelShape& shape, double tokens, double head_rows) {
  return gemm_flops_with_head(shape.active_params, shape.head_params, tokens, head_rows);
}

// Rows of a step that reach the output head: every decode / verify row, one per prompt chunk.
double head_rows_of(const MixedStep& step) {
  return static_cast<double>(step.decode_sequences) * static_cast<double>(step.decode_query_tokens) +
         static_cast<double>(step.chunks.size());
}

// Bytes of recurrent state moved by `updates` state updates (a decode token each, or a prompt
// chunk of one sequence): read once and written back once.
double recurrent_state_traffic(const PerfModelShape& shape, double updates) {
  return 2 * shape.recurrent_state_bytes * updates;
}

StepBreakdown decode_step_sums(const PerfModelShape& shape, const HardwareRates& r, double b,
                               const double* attended_tokens) {
  auto [weights, touched] = weights_read(shape, b);
  double kv = recurrent_state_traffic(shape, b), attention = 0;
  add_decode_attention(shape, attended_tokens, 1, kv, attention);
  return finish_step(shape, r, b, weights, kv, 2 * shape.active_params * b, attention, touched);
}

struct Round {
  StepBreakdown step;
  double seconds = 0;
  double bubble = 0;
};

// A decode round under pipeline parallelism: the batch is split into m = min(pp, B)
// micro-batches that chase each other through the stages; each token needs all pp stages, and
// with fewer micro-batches than stages the stages idle (bubble).
template <class AttendedFn>
Round decode_round(const PerfModelShape& shape, const HardwareRates& r, std::uint64_t sequences,
                   AttendedFn&& attended_per_seq_fraction) {
  const double pp = shape.pp;
  const double m = std::min<double>(pp, static_cast<double>(sequences));
  const double per_micro = std::ceil(static_cast<double>(sequences) / m);
  double sums[kMaxAttentionGroups] = {};
  attended_per_seq_fraction(per_micro / static_cast<double>(sequences), sums);
  Round round;
  round.step = decode_step_sums(shape, r, per_micro, sums);
  const double slots = std::max(m, pp);
  round.seconds = slots * step_time(round.step) + pipeline_handoff_seconds(shape, r, per_micro);
  round.bubble = 1 - m / slots;
  return round;
}

// The attended tokens of `b` sequences all at context `ctx`, a `fraction` of them per micro-batch.
auto uniform_attended(const PerfModelShape& shape, double b, double ctx) {
  return [&shape, b, ctx](double fraction, double* sums) {
    for (std::size_t g = 0; g < shape.attention.size(); ++g)
      sums[g] = fraction * b * attended(ctx, shape.attention[g].window);
  };
}

const HardwareRates& slow_rates(const PerfHardware& hw) { return hw.slow ? *hw.slow : hw.expected; }
const HardwareRates& fast_rates(const PerfHardware& hw) { return hw.fast ? *hw.fast : hw.expected; }

void check(const PerfModelShape& shape, const PerfHardware& hw) {
  check_shape(shape);
  check_rates(hw.expected, shape);
  check_rates(slow_rates(hw), shape);
  check_rates(fast_rates(hw), shape);
}

template <class AttendedFn>
DecodeResult decode_result(const PerfModelShape& shape, const PerfHardware& hw,
                           std::uint64_t sequences, AttendedFn&& fn) {
  if (sequences == 0) throw_usage("performance model: a decode batch needs at least one sequence");
  check(shape, hw);
  const Round exp = decode_round(shape, hw.expected, sequences, fn);
  const Round fast = decode_round(shape, fast_rates(hw), sequences, fn);
  const Round slow = decode_round(shape, slow_rates(hw), sequences, fn);
  const double b = static_cast<double>(sequences);
  DecodeResult out;
  out.step_s = {fast.seconds, exp.seconds, slow.seconds};
  out.tokens_per_s = {b / slow.seconds, b / exp.seconds, b / fast.seconds};
  out.pipeline_bubble = exp.bubble;
  out.step = exp.step;
  out.basis = hw.basis;
  return out;
}

// KV bytes and attention FLOPs of computing positions [a, b) of one prompt in one forward.
void add_prompt_positions(const PerfModelShape& shape, double a, double b, double& kv, double& attention) {
  for (const AttentionGroup& grp : shape.attention) {
    const double w = static_cast<double>(grp.window);
    // The prefix and the chunk's own keys/values are read once (flash attention), the new ones
    // written once.
    kv += grp.layers * grp.kv_bytes_per_token * (attended(b, grp.window) + (b - a));
    attention += grp.layers * 2 * grp.q_heads * (grp.qk_dim + grp.v_dim) * attended_sum(a, b, w);
  }
}

// Tokens each attention group reads for a step's decode sequences, times `fraction` (a pipeline
// micro-batch's share): the sum of their contexts, at most sequences x window for a windowed group
// (exact when every context is on one side of the window, an upper bound otherwise).
void decode_attended_sums(const PerfModelShape& shape, const MixedStep& step, double fraction, double* sums) {
  const double b = static_cast<double>(step.decode_sequences);
  for (std::size_t g = 0; g < shape.attention.size(); ++g) {
    const double w = static_cast<double>(shape.attention[g].window);
    sums[g] = fraction * (w > 0 ? std::min(step.decode_attended, b * w) : step.decode_attended);
  }
}

// KV bytes and attention FLOPs of one forward over a whole step: every decode sequence over its
// context (decode_query_tokens queries each), every prompt chunk over its prefix and itself, and
// the recurrent state of each sequence and chunk.
void step_attention(const PerfModelShape& shape, const MixedStep& step, double& kv, double& attention) {
  double sums[kMaxAttentionGroups] = {};
  decode_attended_sums(shape, step, 1.0, sums);
  kv += recurrent_state_traffic(shape, static_cast<double>(step.decode_sequences) + static_cast<double>(step.chunks.size()));
  add_decode_attention(shape, sums, static_cast<double>(step.decode_query_tokens), kv, attention);
  for (const PrefillChunk& c : step.chunks)
    add_prompt_positions(shape, static_cast<double>(c.start), static_cast<double>(c.end), kv, attention);
}

// Prefill of `sequences` x `prompt` tokens packed into forwards of at most `budget` tokens.
struct PrefillTimes {
  double seconds = 0;
  std::uint64_t forwards = 0;
  bool compute_bound = true;
};

PrefillTimes prefill_times(const PerfModelShape& shape, const HardwareRates& r,
                           std::uint64_t sequences, std::uint64_t prompt, std::uint64_t budget) {
  const std::uint64_t total = sequences * prompt;
  const std::uint64_t chunk = budget == 0 ? total : budget;
  PrefillTimes out;
  double largest_step = 0, largest_tokens = -1;
  for (std::uint64_t start = 0; start < total; start += chunk) {
    const std::uint64_t end = std::min(total, start + chunk);
    const double tokens = static_cast<double>(end - start);
    auto [weights, touched] = weights_read(shape, tokens);
    double kv = 0, attention = 0, pieces = 0;
    // Walk the sequences this chunk covers: positions [a, b) of sequence s.
    for (std::uint64_t g = start; g < end;) {
      const std::uint64_t pos = g % prompt;
      const std::uint64_t take = std::min(end - g, prompt - pos);
      add_prompt_positions(shape, static_cast<double>(pos), static_cast<double>(pos + take), kv, attention);
      kv += recurrent_state_traffic(shape, 1);
      g += take;
      ++pieces;
    }
    const StepBreakdown s = finish_step(shape, r, tokens, weights, kv, forward_gemm_flops(shape, tokens, pieces), attention,
                                        touched, true);
    const double t = step_time(s);
    out.seconds += t;
    ++out.forwards;
    if (tokens > largest_tokens) {
      largest_tokens = tokens;
      largest_step = t;
      out.compute_bound = !s.memory_bound;
    }
  }
  // Pipeline: the first chunk fills pp - 1 more stages before the last one leaves.
  out.seconds += (shape.pp - 1.0) * largest_step + pipeline_handoff_seconds(shape, r, std::max(0.0, largest_tokens));
  return out;
}

}  // namespace

double expected_experts_touched(double num_experts, double experts_per_token, double local,
                                double tokens) {
  if (num_experts <= 0 || tokens <= 0) return 0;
  return local * (1 - std::pow(1 - experts_per_token / num_experts, tokens));
}

double expected_busiest_rank_experts(double num_experts, double experts_per_token, double local, double ranks,
                                     double tokens) {
  if (ranks <= 1) return expected_experts_touched(num_experts, experts_per_token, local, tokens);
  if (num_experts <= 0 || tokens <= 0 || local <= 0) return 0;
  const double p = 1 - std::pow(1 - experts_per_token / num_experts, tokens);
  const auto n = static_cast<std::uint64_t>(std::llround(local));
  if (p >= 1) return static_cast<double>(n);
  if (p <= 0) return 0;
  // Binomial(n, p) probabilities in log space ((1 - p)^n underflows for a large batch), each from
  // the one before: pmf(j + 1) = pmf(j) x (n - j) / (j + 1) x p / (1 - p).
  const double nd = static_cast<double>(n), odds = std::log(p) - std::log1p(-p);
  double log_pmf = nd * std::log1p(-p);
  double below = 0, busiest = 0;  // below = P(count < m)
  for (std::uint64_t m = 1; m <= n; ++m) {
    const double j = static_cast<double>(m - 1);
    below += std::exp(log_pmf);
    busiest += 1 - std::pow(std::min(below, 1.0), ranks);
    log_pmf += std::log((nd - j) / (j + 1)) + odds;
  }
  return busiest;
}

StepBreakdown decode_step(const PerfModelShape& shape, const HardwareRates& rates,
                          std::uint64_t sequences, std::uint64_t uniform_context) {
  check_shape(shape);
  double sums[kMaxAttentionGroups] = {};
  const double b = static_cast<double>(sequences);
  for (std::size_t g = 0; g < shape.attention.size(); ++g)
    sums[g] = b * attended(static_cast<double>(uniform_context), shape.attention[g].window);
  return decode_step_sums(shape, rates, b, sums);
}

DecodeRound uniform_decode_round(const PerfModelShape& shape, const HardwareRates& rates, std::uint64_t sequences,
                                 std::uint64_t uniform_context) {
  check_shape(shape);
  const Round round = decode_round(
      shape, rates, sequences,
      uniform_attended(shape, static_cast<double>(sequences), static_cast<double>(uniform_context)));
  return {round.seconds, round.bubble};
}

DecodeResult estimate_decode(const PerfModelShape& shape, const PerfHardware& hw,
                             const DecodeBatch& batch) {
  return decode_result(shape, hw, batch.sequences,
                       uniform_attended(shape, static_cast<double>(batch.sequences), static_cast<double>(batch.context)));
}

DecodeResult estimate_decode(const PerfModelShape& shape, const PerfHardware& hw,
                             std::span<const std::uint64_t> contexts) {
  return decode_result(shape, hw, contexts.size(), [&](double fraction, double* sums) {
    // Micro-batches get an equal share of the batch's attended tokens.
    for (std::size_t g = 0; g < shape.attention.size(); ++g) {
      double total = 0;
      for (std::uint64_t c : contexts)
        total += attended(static_cast<double>(c), shape.attention[g].window);
      sums[g] = fraction * total;
    }
  });
}

PrefillResult estimate_prefill(const PerfModelShape& shape, const PerfHardware& hw,
                               const PrefillBatch& batch) {
  if (batch.sequences == 0 || batch.prompt_tokens == 0)
    throw_usage("performance model: a prefill needs at least one sequence of one token");
  check(shape, hw);
  const PrefillTimes exp = prefill_times(shape, hw.expected, batch.sequences, batch.prompt_tokens,
                                         batch.token_budget);
  const PrefillTimes fast = prefill_times(shape, fast_rates(hw), batch.sequences,
                                          batch.prompt_tokens, batch.token_budget);
  const PrefillTimes slow = prefill_times(shape, slow_rates(hw), batch.sequences,
                                          batch.prompt_tokens, batch.token_budget);
  const double tokens = static_cast<double>(batch.sequences * batch.prompt_tokens);
  PrefillResult out;
  out.time_s = {fast.seconds, exp.seconds, slow.seconds};
  out.tokens_per_s = {tokens / slow.seconds, tokens / exp.seconds, tokens / fast.seconds};
  out.forwards = exp.forwards;
  out.compute_bound = exp.compute_bound;
  out.basis = hw.basis;
  return out;
}

Range estimate_ttft(const PerfModelShape& shape, const PerfHardware& hw,
                    std::uint64_t prompt_tokens, std::uint64_t token_budget) {
  return estimate_prefill(shape, hw, {1, prompt_tokens, token_budget}).time_s;
}

GenerationResult estimate_generation(const PerfModelShape& shape, const PerfHardware& hw,
                                     std::uint64_t sequences, std::uint64_t input_tokens,
                                     std::uint64_t output_tokens, std::uint64_t token_budget) {
  if (output_tokens == 0) throw_usage("performance model: a generation needs at least one output token");
  const PrefillResult prefill = estimate_prefill(shape, hw, {sequences, input_tokens, token_budget});
  // The prefill forward yields the first output token; every further token is one decode round
  // at a context one longer than the last.
  Range decode{};
  for (std::uint64_t j = 1; j < output_tokens; ++j) {
    const DecodeResult d = estimate_decode(shape, hw, DecodeBatch{sequences, input_tokens + j});
    decode.low += d.step_s.low;
    decode.expected += d.step_s.expected;
    decode.high += d.step_s.high;
  }
  GenerationResult out;
  out.ttft_s = prefill.time_s;
  out.total_s = {prefill.time_s.low + decode.low, prefill.time_s.expected + decode.expected,
                 prefill.time_s.high + decode.high};
  const double produced = static_cast<double>(sequences * output_tokens);
  out.output_tokens_per_s = {produced / out.total_s.high, produced / out.total_s.expected,
                             produced / out.total_s.low};
  const double steps = static_cast<double>(std::max<std::uint64_t>(1, output_tokens - 1));
  out.tpot_s = output_tokens > 1 ? Range{decode.low / steps, decode.expected / steps, decode.high / steps}
                                 : Range{};
  out.basis = hw.basis;
  return out;
}

ThroughputCurve throughput_vs_batch(const PerfModelShape& shape, const PerfHardware& hw,
                                    std::uint64_t context, std::uint64_t max_batch) {
  if (max_batch == 0) throw_usage("performance model: the batch limit must be at least 1");
  ThroughputCurve curve;
  curve.context = context;
  curve.basis = hw.basis;
  auto point = [&](std::uint64_t b) {
    const DecodeResult d = estimate_decode(shape, hw, DecodeBatch{b, context});
    return CurvePoint{b, d.step_s, d.tokens_per_s, d.step.memory_bound};
  };
  for (std::uint64_t b = 1; b < max_batch; b *= 2) curve.points.push_back(point(b));
  curve.points.push_back(point(max_batch));
  curve.plateau_tokens_per_s = curve.points.back().tokens_per_s.expected;
  // Every integer batch, in order: the step model costs tens of nanoseconds, and a scan needs no
  // assumption that throughput is monotone in the batch.
  check(shape, hw);
  const double ctx = static_cast<double>(context);
  for (std::uint64_t b = 1; b <= max_batch && curve.knee_batch == 0; ++b) {
    const Round round = decode_round(shape, hw.expected, b, [&](double fraction, double* sums) {
      for (std::size_t g = 0; g < shape.attention.size(); ++g)
        sums[g] = fraction * static_cast<double>(b) * attended(ctx, shape.attention[g].window);
    });
    const double tps = static_cast<double>(b) / round.seconds;
    if (curve.half_batch == 0 && tps >= 0.5 * curve.plateau_tokens_per_s) curve.half_batch = b;
    if (tps >= kKneeFraction * curve.plateau_tokens_per_s) curve.knee_batch = b;
  }
  return curve;
}

std::uint64_t MixedStep::tokens() const {
  if (decode_query_tokens == 0) throw_usage("performance model: a decode sequence runs at least one token a step");
  std::uint64_t n = decode_query_tokens == 1 ? decode_sequences
                                             : checked_mul(decode_sequences, decode_query_tokens, "step decode tokens");
  for (const PrefillChunk& c : chunks)
    n = checked_add(n, checked_sub(c.end, c.start, "prefill chunk length"), "step tokens");
  return n;
}

double mixed_step_seconds(const PerfModelShape& shape, const HardwareRates& r, const MixedStep& step) {
  if (!step.host_step) {  // a step inside a multi-step round: the round's host work is paid once
    HardwareRates ahead = r;
    ahead.step_overhead_s = 0;
    MixedStep s = step;
    s.host_step = true;
    return mixed_step_seconds(shape, ahead, s);
  }
  const std::uint64_t step_tokens = step.tokens();
  const double b = static_cast<double>(step.decode_sequences);
  const double q = static_cast<double>(step.decode_query_tokens);
  const double decode_tokens = b * q;
  const double prompt_tokens = static_cast<double>(step_tokens) - decode_tokens;
  auto decode_sums = [&](double fraction, double* sums) { decode_attended_sums(shape, step, fraction, sums); };
  if (prompt_tokens == 0 && step.decode_query_tokens == 1) {
    if (step.decode_sequences == 0) return 0;
    // Exactly estimate_decode's round: micro-batches through the pipeline stages.
    return decode_round(shape, r, step.decode_sequences, decode_sums).seconds;
  }
  // A step with prompt tokens (or a verify of several tokens per sequence) runs as one forward
  // over all its tokens; under pipeline parallelism it crosses every stage once (the first chunk
  // of estimate_prefill's fill).
  const double tokens = static_cast<double>(step_tokens);
  auto [weights, touched] = weights_read(shape, tokens);
  double kv = 0, attention = 0;
  step_attention(shape, step, kv, attention);
  // A verify without prompt tokens runs in the decode CUDA graphs (SGLang's TARGET_VERIFY
  // capture, vLLM's uniform-decode graphs): the decode overhead terms apply.
  const bool has_prompt = prompt_tokens > 0;
  const StepBreakdown s =
      finish_step(shape, r, tokens, weights, kv, forward_gemm_flops(shape, tokens, head_rows_of(step)), attention, touched, has_prompt);
  return shape.pp * step_time(s) + pipeline_handoff_seconds(shape, r, tokens);
}

// Kernels SGLang's DP-attention forward launches beyond plain TP, read in the 0.5.6.post1 wheel
// (the same in 0.5.7 and 0.5.9; docs/research/sglang-dp-attention.md section 7):
//   decode, a layer (layers/communicator.py _gather_hidden_states_and_residual, dp_attention.py
//   dp_scatter): attention group of 1: fused_add_rmsnorm, the residual add and an RMSNorm (the
//   FlashInfer all-reduce + RMSNorm fusion is off under DP attention); larger groups: the same
//   plus the residual's memset and row copy (dp_scatter), 5 on the group's first GPU;
//   prompt, a layer: the all-reduce gather's memset and row copy and the scatter's, besides those;
//   a step: the logits' gather (fill, copy, all-reduce copy-back), lm_head input and scatter
//   (logits_processor.py _get_logits, dp_gather_replicate / dp_scatter).
namespace {
struct DpExtraKernels {
  double decode_per_layer, prompt_per_layer, per_step;
};
constexpr DpExtraKernels kDpExtraKernels[] = {
    {3, 7, 7},  // attention group of one GPU
    {5, 9, 7},  // attention group of several
};
}  // namespace

double dp_attention_step_seconds(const PerfModelShape& shape, const HardwareRates& r, std::span<const MixedStep> ranks) {
  const double d = shape.dp_attention_ranks;
  if (shape.pp != 1) throw_usage("performance model: DP attention under pipeline parallelism is not modelled");
  if (ranks.size() != shape.dp_attention_ranks)
    throw_internal("performance model: " + std::to_string(ranks.size()) + " batches for " +
                   std::to_string(shape.dp_attention_ranks) + " DP-attention ranks");
  const double a = shape.attention_tp;
  const double weight_bw = weight_bandwidth(r);
  const double o = r.memory_compute_overlap;
  double slowest_attention = 0, tokens_sum = 0, padded_sum = 0, padded_max = 0, head_rows = 0;
  bool any_prompt = false;
  for (const MixedStep& step : ranks) {
    const double tokens = static_cast<double>(step.tokens());
    if (tokens == 0) continue;  // an idle batch: it waits at every gather
    head_rows += head_rows_of(step);
    const double b = static_cast<double>(step.decode_sequences), q = static_cast<double>(step.decode_query_tokens);
    any_prompt = any_prompt || tokens > b * q;
    // prepare_mlp_sync_batch rounds each rank's count up to a multiple of its attention group.
    const double padded = std::ceil(tokens / a) * a;
    tokens_sum += tokens;
    padded_sum += padded;
    padded_max = std::max(padded_max, padded);
    double kv = 0, attention = 0;
    step_attention(shape, step, kv, attention);
    const double t = kernel_time(shape.attention_weight_bytes / weight_bw,
                                 2 * shape.attention_params * tokens / r.tensor_flops_per_s, o) +
                     kernel_time(kv / r.bandwidth_bytes_per_s, attention / r.tensor_flops_per_s, o);
    slowest_attention = std::max(slowest_attention, t);
  }
  if (tokens_sum == 0) return 0;
  // SUM_LEN when a rank extends, MAX_LEN under the decode CUDA graphs (DpPaddingMode).
  const double gathered = any_prompt ? padded_sum : d * padded_max;
  // Every gathered row goes through the router: a padding row holds the token id its buffer row
  // last held (the decode graphs copy only the real rows in, cuda_graph_runner.py
  // populate_from_forward_batch), and the MoE takes no count of real rows on this path
  // (DeepseekV2MoE.forward_normal, no num_token_non_padded), so it picks experts of its own.
  const double mlp_bytes = std::max(0.0, weights_read(shape, gathered).first - shape.attention_weight_bytes);
  const double mlp_params = std::max(0.0, shape.active_params - shape.attention_params);
  // The head multiplies every gathered row of a decode (the graphs' padding rows too), and the
  // last row of each prompt chunk when a rank extends (gemm_flops_with_head).
  const double mlp_flops = gemm_flops_with_head(mlp_params, shape.head_params, gathered, any_prompt ? head_rows : gathered);
  const double mlp = kernel_time(mlp_bytes / weight_bw, mlp_flops / r.tensor_flops_per_s, o);
  double comm = 0;
  if (shape.tp > 1) {
    // Per layer (layers/communicator.py, dp_attention.py). SUM_LEN: the gather is an all-reduce
    // over tp of the summed tokens (each rank writes its rows into a zeroed buffer) and the MoE
    // output another. MAX_LEN: an all-gather over tp after attention and a reduce-scatter over tp
    // after the MoE, each moving (tp - 1) / tp of the D x M rows through a GPU's link; with
    // attention_tp > 1 a reduce-scatter within the attention group before the gather and an
    // all-gather within it after the scatter, of a rank's M rows.
    const double tp = shape.tp;
    const double row = shape.hidden * shape.activation_bytes;
    const CollectiveLink all = collective_link(r, shape.tp);
    double per_layer = 0;
    if (any_prompt) {
      per_layer = 2 * (all.latency_s + 2 * (tp - 1) / tp * gathered * row / all.bytes_per_s);
    } else {
      per_layer = 2 * all.latency_s + 2 * (tp - 1) / tp * gathered * row / all.bytes_per_s;
      if (a > 1) {
        const CollectiveLink group = collective_link(r, shape.attention_tp);
        per_layer += 2 * (group.latency_s + (a - 1) / a * padded_max * row / group.bytes_per_s);
      }
    }
    comm = shape.layers * per_layer + shape.extra_allreduces * all.latency_s;
  }
  // The kernels the DP path launches beyond plain TP, for an architecture whose kernels were
  // counted (the per-kernel costs were fitted there): RMSNorm no longer fused into the all-reduce,
  // the residual add, the buffers' memsets and row copies, per layer; the logits' gather, fill,
  // copy and scatter per step (kDpExtraKernels).
  double extra = 0;
  const DpExtraKernels& k = a > 1 ? kDpExtraKernels[1] : kDpExtraKernels[0];
  if (!any_prompt && shape.decode_kernels > 0)
    extra = (shape.layers * k.decode_per_layer + k.per_step) * r.decode_kernel_overhead_s;
  if (any_prompt && shape.prompt_launches > 0)
    extra = (shape.layers * k.prompt_per_layer + k.per_step) * r.prompt_launch_overhead_s;
  return slowest_attention + mlp + comm + extra + overhead_seconds(shape, r, any_prompt);
}

std::uint64_t vllm_largest_capture_size(std::uint64_t max_graph_tokens) {
  const std::uint64_t m = max_graph_tokens;
  if (m == 0) return 0;
  if (m < 4) return m < 2 ? 1 : 2;
  if (m < 8) return 4;
  if (m < 256) return m / 8 * 8;
  return 256 + (m - 256) / 16 * 16;
}

std::uint64_t vllm_graph_padded_tokens(std::uint64_t tokens, std::uint64_t max_graph_tokens) {
  if (tokens == 0 || tokens > vllm_largest_capture_size(max_graph_tokens)) return tokens;
  if (tokens <= 2) return tokens;
  if (tokens <= 4) return 4;
  if (tokens <= 256) return (tokens + 7) / 8 * 8;
  return 256 + (tokens - 256 + 15) / 16 * 16;
}

// vLLM data parallelism (memory/vllm_data_parallel.hpp; docs/research/vllm-data-parallel.md):
//   each engine's forward runs n_i tokens, n_i its batch (1 for an idle engine's dummy,
//   v1/worker/gpu_worker.py execute_dummy_batch), padded to max_j graph(n_j) when the release pads
//   (and from 0.17 only when no n_j exceeds the largest capture size);
//   per engine: the non-expert weights over its tp GPUs on its n_i tokens, its own attention, the
//   TP all-reduces of n_i rows; every MoE layer waits for the slowest engine;
//   the routed experts run once over N = sum n_i tokens gathered from all engines, each GPU its
//   D x tp share; per MoE layer the gather moves the other engines' N x (h + E) rows in (an
//   all-gather, or D broadcasts before 0.11) and the combine reduces N x h rows back (a
//   reduce-scatter, or an all-reduce of all N before 0.11), over the D engines' GPUs.
double vllm_dp_step_seconds(const PerfModelShape& shape, const HardwareRates& r, std::span<const MixedStep> ranks) {
  const VllmDpLockstep& dp = shape.vllm_dp;
  if (dp.ranks < 2) throw_internal("performance model: a vLLM data-parallel step without engines");
  if (ranks.size() != dp.ranks)
    throw_internal("performance model: " + std::to_string(ranks.size()) + " batches for " + std::to_string(dp.ranks) +
                   " data-parallel engines");
  if (shape.pp != 1) throw_usage("performance model: vLLM data parallelism under pipeline parallelism is not modelled");
  const std::uint64_t largest_graph = vllm_largest_capture_size(dp.max_graph_tokens);
  std::uint64_t padded_largest = 0;
  bool eager = false, any_prompt = false;
  // An idle engine's dummy forward runs uniform_decode_query_len tokens: 1, or 1 + k with a
  // drafter (v1/worker/gpu_worker.py execute_dummy_batch); an idle MixedStep carries it.
  const auto engine_tokens = [](const MixedStep& step) { return std::max<std::uint64_t>(step.decode_query_tokens, step.tokens()); };
  for (const MixedStep& step : ranks) {
    const std::uint64_t n = engine_tokens(step);
    padded_largest = std::max(padded_largest, vllm_graph_padded_tokens(n, dp.max_graph_tokens));
    eager = eager || n > largest_graph;
    any_prompt = any_prompt || step.tokens() > step.decode_sequences * step.decode_query_tokens;
  }
  const bool pad = dp.pad && !(dp.pad_only_if_graphed && eager);
  const double weight_bw = weight_bandwidth(r);
  const double o = r.memory_compute_overlap;
  const double own_params = std::max(0.0, shape.active_params - shape.routed_active_params);
  double slowest = 0, gathered = 0;
  for (const MixedStep& step : ranks) {
    const double n = static_cast<double>(pad ? padded_largest : engine_tokens(step));
    gathered += n;
    double kv = 0, attention = 0;
    step_attention(shape, step, kv, attention);
    // The head multiplies the rows vLLM samples (logits_indices), not the graph's padding.
    const double own_flops = gemm_flops_with_head(own_params, shape.head_params, n, head_rows_of(step));
    const double t = kernel_time(shape.dense_weight_bytes / weight_bw, own_flops / r.tensor_flops_per_s, o) +
                     kernel_time(kv / r.bandwidth_bytes_per_s, attention / r.tensor_flops_per_s, o) +
                     tp_allreduce_seconds(shape, r, n);
    slowest = std::max(slowest, t);
  }
  double moe = 0, comm = 0;
  if (shape.num_experts > 0) {
    // weights_read's expert part: the busiest GPU's experts touched by all N rows.
    const double expert_bytes = weights_read(shape, gathered).first - shape.dense_weight_bytes;
    moe = kernel_time(expert_bytes / weight_bw, 2 * shape.routed_active_params * gathered / r.tensor_flops_per_s, o);
    // The gather and the combine of every MoE layer, over the D engines' GPUs (one GPU of each).
    const double d = dp.ranks;
    const CollectiveLink group = collective_link(r, static_cast<std::uint64_t>(d) * shape.tp);
    const double lat = group.latency_s, link = group.bytes_per_s;
    const double in_row = (shape.hidden + shape.num_experts) * shape.activation_bytes;
    const double out_row = shape.hidden * shape.activation_bytes;
    const double per_layer =
        dp.naive_combine
            ? d * lat + (d - 1) / d * gathered * in_row / link +                  // D broadcasts
                  lat + 2 * (d - 1) / d * gathered * out_row / link               // all-reduce of N rows
            : 2 * lat + (d - 1) / d * gathered * (in_row + out_row) / link;      // all-gather + reduce-scatter
    comm = shape.moe_layers * per_layer;
  }
  return slowest + moe + comm + overhead_seconds(shape, r, any_prompt);
}

void amortize_step_overhead(HardwareRates& r, std::uint64_t steps) {
  if (steps > 1) r.step_overhead_s /= static_cast<double>(steps);
}

void amortize_step_overhead(PerfHardware& hw, std::uint64_t steps) {
  if (steps <= 1) return;
  amortize_step_overhead(hw.expected, steps);
  if (hw.slow) amortize_step_overhead(*hw.slow, steps);
  if (hw.fast) amortize_step_overhead(*hw.fast, steps);
  hw.basis += "; host work per step once a round of " + std::to_string(steps) + " decode steps (--num-scheduler-steps)";
}

namespace {
// One speculative iteration from its forwards, each timed by `forward(shape, rates, single)`: the
// target's step with the host's per-step work, the draft extend over every token of the step,
// and with decoding sequences the draft's single-token forwards (single = true: one token per
// decoding sequence), both in the iteration (no step term of their own), and the fixed per-step
// term once per host round of the draft.
template <class Forward>
double speculative_iteration(const PerfModelShape& target, const DraftForwards& draft, const HardwareRates& rates,
                             bool decoding, Forward&& forward) {
  if (!draft.shape) throw_internal("performance model: a speculative step without a draft shape");
  double t = forward(target, rates, false);
  HardwareRates in_iteration = rates;
  in_iteration.step_overhead_s = 0;
  // A step without decoding sequences (SGLang's prefill batch) runs only the draft extend of the
  // draft's rounds (eagle_worker.py forward_batch_generation: forward_draft_extend after the target).
  const std::uint64_t rounds = decoding ? draft.host_rounds : std::min<std::uint64_t>(draft.host_rounds, 1);
  t += static_cast<double>(rounds) * rates.step_overhead_s;
  // The draft extend runs over every token of the step (SGLang forward_draft_extend /
  // _draft_extend_for_decode, vLLM EagleProposer.propose's first forward).
  t += forward(*draft.shape, in_iteration, false);
  if (decoding && draft.single_token_forwards > 0)
    t += static_cast<double>(draft.single_token_forwards) * forward(*draft.shape, in_iteration, true);
  return t;
}
}  // namespace

double speculative_step_seconds(const PerfModelShape& target, const DraftForwards& draft, const HardwareRates& rates,
                                const MixedStep& step) {
  const MixedStep one{step.decode_sequences, step.decode_attended, {}, 1};
  return speculative_iteration(target, draft, rates, step.decode_sequences > 0,
                               [&](const PerfModelShape& shape, const HardwareRates& r, bool single) {
                                 return mixed_step_seconds(shape, r, single ? one : step);
                               });
}

double lockstep_step_seconds(const PerfModelShape& shape, const HardwareRates& rates, std::span<const MixedStep> ranks) {
  return shape.vllm_dp.ranks > 1 ? vllm_dp_step_seconds(shape, rates, ranks) : dp_attention_step_seconds(shape, rates, ranks);
}

double speculative_lockstep_step_seconds(const PerfModelShape& target, const DraftForwards& draft,
                                         const HardwareRates& rates, std::span<const MixedStep> ranks) {
  if (draft.shape &&
      (draft.shape->dp_attention_ranks != target.dp_attention_ranks || draft.shape->vllm_dp.ranks != target.vllm_dp.ranks))
    throw_internal("performance model: a lockstep draft over other ranks than its target");
  std::vector<MixedStep> single(ranks.begin(), ranks.end());
  bool decoding = false;
  for (MixedStep& s : single) {
    decoding = decoding || s.decode_sequences > 0;
    s = MixedStep{s.decode_sequences, s.decode_attended, {}, 1};
  }
  return speculative_iteration(target, draft, rates, decoding,
                               [&](const PerfModelShape& shape, const HardwareRates& r, bool one) {
                                 return lockstep_step_seconds(shape, r, one ? std::span<const MixedStep>(single) : ranks);
                               });
}

}  // namespace vramplan::perf
