#include "vramplan/core/text.hpp"
#include "vramplan/sim/simulate.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/flag_equivalents.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::sim {
namespace {

constexpr double kGiBd = 1073741824.0;


double round6(double v) { return rounded(v, 6); }

nlohmann::json summary_ms(const Summary& s) {
  return {{"mean", round6(s.mean * 1e3)}, {"p50", round6(s.p50 * 1e3)}, {"p90", round6(s.p90 * 1e3)},
          {"p99", round6(s.p99 * 1e3)}, {"max", round6(s.max * 1e3)}, {"count", s.count}};
}

const char* process_name(ArrivalProcess p) {
  switch (p) {
    case ArrivalProcess::Poisson: return "poisson";
    case ArrivalProcess::Gamma: return "gamma";
    case ArrivalProcess::Constant: return "constant";
  }
  return "poisson";
}

const char* admission_name(Admission a) {
  switch (a) {
    case Admission::OnDemand: return "on-demand";
    case Admission::FullLength: return "full-length";
    case Admission::ExpectedOutput: return "expected-output";
  }
  return "on-demand";
}

const char* out_of_blocks_name(OutOfBlocks o) {
  switch (o) {
    case OutOfBlocks::PreemptNewest: return "preempt-newest";
    case OutOfBlocks::Retract: return "retract";
    case OutOfBlocks::Fail: return "fail";
  }
  return "preempt-newest";
}

// What raises limit `most` of engine `engine`, in its own flags (docs/simulator.md#held-back;
// memory::flag_roles).
std::string held_back_remedy(HeldLimit most, std::string_view engine) {
  const auto flag = [&](std::string_view setting, const std::string& before, const std::string& after) {
    const std::string_view f = memory::flag_for_setting(setting, engine);
    return f.empty() ? std::string() : before + "--" + std::string(f) + after;
  };
  switch (most) {
    case HeldLimit::KvPool:
      return "more memory for the KV pool" + flag(memory::kSettingMemoryShare, " (", ")") + ", an FP8 KV cache, or more GPUs";
    case HeldLimit::RunningLimit:
      // HF generate's static batch is simulate's own --batch, not an engine flag.
      if (engine == "hf") return "a larger running cap (--batch), where memory has room";
      return "a larger running cap" + flag(memory::kSettingRunningCap, " (", ")") + ", where the KV pool has room";
    case HeldLimit::TokenBudget:
      break;
  }
  return "a larger step budget" + flag(memory::kSettingStepTokens, " (", ")") +
         " trades TPOT for TTFT; more GPUs or replicas add compute";
}

nlohmann::json held_back_json(const HeldBack& held, const HeldShares& h) {
  nlohmann::json j = nlohmann::json::object();
  for (int i = 0; i < kHeldLimits; ++i) {
    j[std::string(kHeldLimitKeys[i]) + "_s"] = round6(held.seconds[i]);
    j[std::string(kHeldLimitKeys[i]) + "_share"] = round6(h.share[i]);
  }
  j["most"] = held_limit_json(h.most);
  return j;
}

nlohmann::json rate_json(double r) { return std::isinf(r) ? nlohmann::json("inf") : nlohmann::json(r); }

nlohmann::json length_json(const LengthSpec& l) { return {{"source", l.source}, {"mean_tokens", round6(l.expected())}}; }

double per_s(double n, double seconds) { return seconds > 0 ? n / seconds : 0.0; }

nlohmann::json step_time_json(const SimulateOutcome& o) {
  nlohmann::json j = {{"basis", o.engine.step_basis}, {"calibrated", o.engine.calibrated}};
  if (o.cold)
    j["cold_start"] = {{"first_uses", o.cold->first_uses},
                       {"stalled_s", round6(o.cold->stalled_s)},
                       {"compile_s", round6(o.cold->compile_s)},
                       {"graph_tokens", o.cold->graph_tokens}};
  return j;
}

// The engines' own refusals ("Try increasing gpu_memory_utilization", "increase
// --mem-fraction-static") mislead when the weights alone outgrow the card: no setting of one GPU
// starts it. Say so, and how to shard.
std::string weights_beyond_card_hint(const ServingPlan& p, const memory::PlanRequest& request, const DataRoot& root) {
  const Bytes weights = p.plan.weights_bytes();
  if (weights <= p.plan.gpu_total) return "";
  const auto engine = memory::make_engine(request.engine, root.data());
  const bool shards = !memory::flag_with_alias(engine->options(), "tp").empty();
  return "; weights alone need " + format_gib(weights) + " per GPU at TP " + std::to_string(p.tp) + " (the GPU has " +
         format_gib(p.plan.gpu_total) + ")" + (shards ? ": shard them with --tp; " : "; ") +
         "'vramplan check' with the same flags names the smallest layout that fits";
}

}  // namespace

StepClock PreparedEngine::clock() const {
  if (draft)
    return [this](const perf::MixedStep& step) {
      return perf::speculative_step_seconds(shape, {&*draft, rules.draft_forwards, rules.draft_host_rounds}, rates, step);
    };
  return [this](const perf::MixedStep& step) { return perf::mixed_step_seconds(shape, rates, step); };
}

LockstepClock PreparedEngine::lockstep_clock() const {
  if (draft)
    return [this](std::span<const perf::MixedStep> ranks) {
      return perf::speculative_lockstep_step_seconds(shape, {&*draft, rules.draft_forwards, rules.draft_host_rounds}, rates,
                                                     ranks);
    };
  return [this](std::span<const perf::MixedStep> ranks) { return perf::lockstep_step_seconds(shape, rates, ranks); };
}

SimResult simulate_on(const PreparedEngine& engine, const StepClock& clock, RequestSource& source, const SimOptions& options) {
  if (engine.dp_ranks() > 1 && !engine.rules.dp_lockstep)
    return simulate_independent_engines(engine.rules, clock, source, engine.dp_ranks(), options);
  if (engine.dp_ranks() > 1) return simulate_dp_attention(engine.rules, engine.lockstep_clock(), source, engine.dp_ranks(), options);
  return simulate(engine.rules, clock, source, options);
}

PreparedEngine prepare_engine(const memory::PlanRequest& request, const DataRoot& root) {
  PreparedEngine e;
  e.plan = run_serving_plan(request, root);
  if (!e.plan.plan.fits)
    throw Error(ErrorKind::DoesNotFit, "simulate: the engine would not start on " + e.plan.gpu.name + ": " +
                                           e.plan.plan.reason + weights_beyond_card_hint(e.plan, request, root));
  // Before the scheduler rules: a pooling model's plan has no KV pool for them to read.
  const PlanPerformance& perf = e.plan.performance;
  if (!perf.shape || !perf.hardware)
    throw_usage("simulate: no step-time model for this configuration: " + perf.unavailable);
  e.rules = scheduler_rules(e.plan, request.args, request.spec_accept_length);
  e.shape = *perf.shape;
  if (e.dp_ranks() > 1 && e.rules.decode_round_steps > 1)
    throw_internal("simulate: multi-step rounds across data-parallel ranks");
  if (e.rules.decode_query_tokens > 1) {
    if (!perf.draft_shape) throw_internal("simulate: a speculative plan without a draft shape");
    e.draft = *perf.draft_shape;
  }
  e.rates = perf.hardware->expected;
  e.step_basis = perf.hardware->basis;
  e.calibrated = perf.hardware->calibrated;
  return e;
}

std::pair<StepClock, std::shared_ptr<ColdStartState>> step_clock_for(const PreparedEngine& engine,
                                                                     const SimulateRequest& request,
                                                                     const DataRoot& root) {
  if (!request.cold_start.enabled) return {engine.clock(), nullptr};
  if (engine.dp_ranks() > 1)
    throw_usage("simulate: --cold-start with data parallelism is not modelled (each engine compiles on its own)");
  if (engine.rules.engine != "vllm")
    throw_usage("simulate: --cold-start is modelled for --engine vllm only (docs/simulator.md#cold-start: what " +
                engine.rules.engine + " compiles at first use is not)");
  const perf::PerfModelShape& sh = engine.shape;
  auto state = std::make_shared<ColdStartState>(vllm_fresh_server(
      static_cast<std::uint64_t>(sh.num_experts), static_cast<std::uint64_t>(sh.experts_per_token),
      engine.rules.max_seqs, engine.rules.step_tokens, memory::arg_switch(request.plan.args, "enforce-eager"),
      request.cold_start.compile_s ? *request.cold_start.compile_s : cold_start_compile_seconds(root)));
  state->compiled.insert(request.cold_start.compiled.begin(), request.cold_start.compiled.end());
  return {with_cold_start(engine.clock(), state), state};
}

SimOptions client_options(const WorkloadSpec& workload, SimOptions options) {
  if (workload.concurrency) {
    options.concurrency = workload.concurrency;
    if (workload.duration_s) options.send_until_s = *workload.duration_s;
  }
  return options;
}

SimulateOutcome run_simulation(const SimulateRequest& request, const DataRoot& root) {
  SimulateOutcome out;
  out.engine = prepare_engine(request.plan, root);
  out.workload = request.workload;
  out.workload.trace_max_total_tokens = out.engine.rules.max_model_len;
  out.timeout_s = request.options.timeout_s;
  const SimOptions options = client_options(request.workload, request.options);
  const std::unique_ptr<RequestSource> source = make_request_source(out.workload);
  auto [clock, cold] = step_clock_for(out.engine, request, root);
  out.result = simulate_on(out.engine, clock, *source, options);
  if (cold) out.cold = *cold;
  return out;
}

nlohmann::json simulate_json(const SimulateOutcome& o) {
  const SimResult& r = o.result;
  const SchedulerRules& ru = o.engine.rules;
  const bool vllm_dp = ru.dp_ranks > 1 && ru.engine == "vllm";
  const memory::PlanOutcome& plan = o.engine.plan;
  const WorkloadSpec& w = o.workload;
  const double d = r.duration_s;
  nlohmann::json workload = {
      {"arrivals", {{"process", process_name(w.arrivals.process)}, {"rate_per_s", rate_json(w.arrivals.rate_per_s)},
                    {"cv", w.arrivals.cv}}},
      {"requests", w.requests ? nlohmann::json(*w.requests) : nlohmann::json(nullptr)},
      {"duration_s", w.duration_s ? nlohmann::json(*w.duration_s) : nlohmann::json(nullptr)},
      {"concurrency", w.concurrency ? nlohmann::json(*w.concurrency) : nlohmann::json(nullptr)},
      {"trace", w.trace ? nlohmann::json(w.trace->string()) : nlohmann::json(nullptr)},
      {"seed", w.seed}};
  if (!w.trace) {
    workload["input_len"] = length_json(w.input);
    workload["output_len"] = length_json(w.output);
  }
  nlohmann::json rejections = nlohmann::json::array();
  for (const auto& x : r.rejections) rejections.push_back({{"reason", x.reason}, {"count", x.count}});
  const double non_kv = static_cast<double>(ru.non_kv_bytes);
  const double pool = static_cast<double>(ru.kv_blocks) * static_cast<double>(ru.kv_block_bytes);
  const double held = static_cast<double>(plan.plan.total_bytes().count());
  nlohmann::json basis = nlohmann::json::array();
  for (const auto& b : ru.basis) basis.push_back(b);
  return {
      {"schema", "vramplan.simulate/1"},
      {"model", plan.model.id},
      {"gpu", plan.gpu.id},
      {"engine", plan.plan.engine},
      {"engine_version", plan.plan.engine_version},
      {"engine_profile", plan.plan.engine_profile_note},
      {"tp", plan.tp},
      {"pp", plan.pp},
      {"workload", workload},
      {"engine_rules",
       {{"kv_blocks", ru.kv_blocks}, {"block_tokens", ru.block_tokens}, {"kv_tokens", ru.kv_blocks * ru.block_tokens},
        {"max_seqs", ru.max_seqs}, {"step_tokens", ru.step_tokens}, {"chunked_prefill", ru.chunked_prefill},
        {"mix_prefill_decode", ru.mix_prefill_decode}, {"admission", admission_name(ru.admission)},
        {"out_of_blocks", out_of_blocks_name(ru.out_of_blocks)}, {"prefix_caching", ru.prefix_caching},
        {"max_model_len", ru.max_model_len}, {"slot_tokens", ru.slot_tokens}, {"static_batch", ru.static_batch},
        {"speculative", ru.decode_query_tokens > 1
                            ? nlohmann::json{{"verify_tokens", ru.decode_query_tokens}, {"draft_forwards", ru.draft_forwards},
                                             {"accept_length", ru.accept_length}}
                            : nlohmann::json(nullptr)},
        {"dp_attention_ranks", vllm_dp ? std::uint64_t{1} : o.engine.dp_ranks()},
        {"data_parallel", vllm_dp ? nlohmann::json{{"engines", ru.dp_ranks},
                                                   {"dispatch", std::string(rank_dispatch_name(ru.dp_dispatch))},
                                                   {"lockstep", ru.dp_lockstep},
                                                   {"wave_sync_steps", ru.dp_wave_sync_steps}}
                                  : nlohmann::json(nullptr)},
        {"multi_step", ru.decode_round_steps > 1
                           ? nlohmann::json{{"round_steps", ru.decode_round_steps},
                                            {"streams", ru.stream_per_round ? "per-round" : "per-step"}}
                           : nlohmann::json(nullptr)},
        {"basis", basis}}},
      {"requests",
       {{"arrived", r.arrived}, {"completed", r.completed}, {"rejected", r.rejected}, {"in_system", r.in_system},
        {"truncated", r.truncated}}},
      {"throughput",
       {{"requests_per_s", round6(per_s(static_cast<double>(r.completed), d))},
        {"output_tokens_per_s", round6(per_s(r.output_tokens, d))},
        {"total_tokens_per_s", round6(per_s(r.output_tokens + r.input_tokens, d))}}},
      {"latency_ms",
       {{"ttft", summary_ms(r.ttft)}, {"tpot", summary_ms(r.tpot)}, {"itl", summary_ms(r.itl)},
        {"e2e", summary_ms(r.e2e)}, {"queue", summary_ms(r.queue)}}},
      {"kv_usage",
       {{"mean", round6(r.kv_usage.mean)}, {"p50", round6(r.kv_usage.p50)}, {"p99", round6(r.kv_usage.p99)},
        {"max", round6(r.kv_usage.max)}}},
      {"running", {{"mean", round6(r.running.mean)}, {"p99", round6(r.running.p99)}, {"max", r.running.max}}},
      {"waiting", {{"mean", round6(r.waiting.mean)}, {"p99", round6(r.waiting.p99)}, {"max", r.waiting.max}}},
      {"memory",
       {{"unit", "GiB per GPU"}, {"gpu_total_gib", round6(static_cast<double>(ru.gpu_total_bytes) / kGiBd)},
        {"held_gib", round6(held / kGiBd)}, {"non_kv_gib", round6(non_kv / kGiBd)},
        {"kv_pool_gib", round6(pool / kGiBd)},
        {"kv_peak_gib", round6(static_cast<double>(r.kv_blocks_peak) * static_cast<double>(ru.kv_block_bytes) / kGiBd)},
        {"peak_gib", round6(r.memory_peak_bytes / kGiBd)}}},
      {"held_back", held_back_json(r.held_back, held_shares(r, ru.dp_ranks))},
      {"preemptions", r.preemptions},
      {"prefix_hits", r.prefix_hits},
      {"rejections", rejections},
      {"duration_s", round6(d)},
      {"simulated_steps", r.steps},
      {"verdict",
       {{"state", r.verdict.state}, {"queue_growth_per_s", round6(r.verdict.queue_growth_per_s)},
        {"served_per_s", round6(r.verdict.served_per_s)},
        {"timeout_s", o.timeout_s > 0 ? nlohmann::json(o.timeout_s) : nlohmann::json(nullptr)},
        {"first_timeout_s", r.verdict.first_timeout_s ? nlohmann::json(round6(*r.verdict.first_timeout_s))
                                                      : nlohmann::json(nullptr)},
        {"explanation", r.verdict.explanation}}},
      {"step_time", step_time_json(o)},
  };
}

std::string simulate_text(const SimulateOutcome& o) {
  const SimResult& r = o.result;
  const SchedulerRules& ru = o.engine.rules;
  const memory::PlanOutcome& plan = o.engine.plan;
  const double d = r.duration_s;
  std::string s;
  s += "simulate: " + plan.model.id + " on " + plan.gpu.name + (plan.plan.gpu_count > 1 ? " x" + std::to_string(plan.plan.gpu_count) : "") +
       ", " + (plan.plan.engine_profile_note.empty() ? plan.plan.engine + " " + plan.plan.engine_version
                                                     : plan.plan.engine_profile_note) + "\n";
  s += "engine: KV pool " + std::to_string(ru.kv_blocks) + " blocks x " + std::to_string(ru.block_tokens) + " tokens = " +
       std::to_string(ru.kv_blocks * ru.block_tokens) + " tokens, max " + std::to_string(ru.max_seqs) + " running, " +
       (ru.step_tokens ? std::to_string(ru.step_tokens) + " tokens/step" : std::string("no token limit per step")) +
       (ru.prefix_caching ? ", prefix caching" : "") + "\n";
  if (ru.dp_ranks > 1 && ru.engine == "vllm")
    s += "vLLM data parallelism: " + std::to_string(ru.dp_ranks) + " engines of " + std::to_string(plan.tp) +
         " GPU(s), each with the pool and limits above, requests routed by " + std::string(rank_dispatch_name(ru.dp_dispatch)) +
         (!ru.dp_lockstep ? std::string(", each stepping on its own (a dense model's engines from 0.14)\n")
                          : std::string(", stepping in lockstep (an idle engine runs a dummy forward of ") +
                                (ru.decode_query_tokens > 1 ? std::to_string(ru.decode_query_tokens) + " tokens, its drafter's too"
                                                            : std::string("one token")) +
                                (o.engine.shape.num_experts > 0 ? "; the MoE over every engine's tokens)\n" : ")\n"));
  else if (o.engine.dp_ranks() > 1)
    s += "DP attention: " + std::to_string(o.engine.dp_ranks()) + " ranks of " + std::to_string(o.engine.shape.attention_tp) +
         " GPUs, each with the pool and limits above, dealt requests round-robin and stepping in lockstep (the MoE over "
         "every rank's tokens)\n";
  if (ru.decode_round_steps > 1)
    s += "multi-step scheduling: decode rounds of " + std::to_string(ru.decode_round_steps) +
         " steps over a frozen batch, requests admitted only between rounds; the client gets " +
         (ru.stream_per_round ? "a round's tokens as one chunk (ITL is a round)" : "each step's tokens") + "\n";
  if (ru.decode_query_tokens > 1)
    s += "speculative decoding: a decode step verifies " + std::to_string(ru.decode_query_tokens) + " tokens a request, runs the draft " +
         std::to_string(ru.draft_forwards + 1) + " time(s) and keeps " + format_number("%g", ru.accept_length) +
         " tokens on average (--spec-accept-length)\n";
  s += "requests: " + std::to_string(r.arrived) + " arrived, " + std::to_string(r.completed) + " completed" +
       (r.truncated ? " (" + std::to_string(r.truncated) + " of them truncated: prompt + output outgrew the slot's " +
                          std::to_string(ru.slot_tokens) + " tokens, so they stopped there)"
                    : std::string()) +
       ", " + std::to_string(r.rejected) + " rejected, " + std::to_string(r.in_system) + " left in the system; " +
       std::to_string(r.preemptions) + " preemptions\n";
  for (const auto& x : r.rejections) s += "  rejected " + std::to_string(x.count) + ": " + x.reason + "\n";
  s += "throughput: " + format_number("%.3f", per_s(static_cast<double>(r.completed), d)) + " req/s, " +
       format_number("%.1f", per_s(r.output_tokens, d)) + " output tok/s, " + format_number("%.1f", per_s(r.output_tokens + r.input_tokens, d)) +
       " total tok/s over " + format_number("%.2f", d) + " s\n";
  auto row = [&](const char* name, const Summary& x) {
    char b[160];
    std::snprintf(b, sizeof b, "  %-12s %9.2f %9.2f %9.2f %9.2f\n", name, x.mean * 1e3, x.p50 * 1e3, x.p90 * 1e3, x.p99 * 1e3);
    s += b;
  };
  if (r.completed == 0) {  // a table of zeros would read as instant answers
    s += "latency: no request completed, so there is none to measure\n";
  } else {
    s += "latency (ms)        mean       p50       p90       p99\n";
    row("TTFT", r.ttft);
    row("TPOT", r.tpot);
    row("ITL", r.itl);
    row("end-to-end", r.e2e);
    row("queue wait", r.queue);
  }
  s += "KV cache usage (share of the pool, over time): mean " + format_number("%.1f", r.kv_usage.mean * 100) + " %, p50 " +
       format_number("%.1f", r.kv_usage.p50 * 100) + " %, p99 " + format_number("%.1f", r.kv_usage.p99 * 100) + " %, max " +
       format_number("%.1f", r.kv_usage.max * 100) + " %\n";
  s += "running: mean " + format_number("%.1f", r.running.mean) + ", max " + format_number("%.0f", r.running.max) + "; waiting: mean " +
       format_number("%.1f", r.waiting.mean) + ", max " + format_number("%.0f", r.waiting.max) + "\n";
  if (const HeldShares h = held_shares(r, ru.dp_ranks); h.most) {
    s += "held back (a sent request left waiting; share of the run" + std::string(ru.dp_ranks > 1 ? " per engine" : "") +
         "): " + held_shares_text(h) + "\n";
    if (r.verdict.state == "overloaded") s += "  to serve more: " + held_back_remedy(*h.most, ru.engine) + "\n";
  }
  s += "memory per GPU: engine holds " + format_gib(plan.plan.total_bytes()) + " of " + format_gib(Bytes(ru.gpu_total_bytes)) +
       "; in use at the peak " + format_number("%.2f", r.memory_peak_bytes / kGiBd) + " GiB (non-KV " +
       format_number("%.2f", static_cast<double>(ru.non_kv_bytes) / kGiBd) + " GiB + KV " +
       format_number("%.2f", static_cast<double>(r.kv_blocks_peak) * static_cast<double>(ru.kv_block_bytes) / kGiBd) + " GiB)\n";
  s += "verdict: " + r.verdict.explanation + "\n";
  if (o.timeout_s > 0)
    s += r.verdict.first_timeout_s ? "  first request past the " + format_number("%.4g", o.timeout_s) + " s timeout at t = " +
                                         format_number("%.2f", *r.verdict.first_timeout_s) + " s\n"
                                   : "  no request exceeded the " + format_number("%.4g", o.timeout_s) + " s timeout\n";
  s += "step times: " + std::string(o.engine.calibrated ? "calibrated" : "uncalibrated (published card figures x default efficiency)") + "\n";
  if (o.cold)
    s += "cold start: " + std::to_string(o.cold->first_uses) + " first uses of a fused-MoE kernel variant, " +
         format_number("%.4g", o.cold->compile_s) + " s each (" + format_number("%.2f", o.cold->stalled_s) +
         " s of stalls; forwards of at most " + std::to_string(o.cold->graph_tokens) + " tokens replay captured graphs)\n";
  return s;
}

nlohmann::json held_limit_json(const std::optional<HeldLimit>& limit) {
  return limit ? nlohmann::json(held_limit_key(*limit)) : nlohmann::json(nullptr);
}

}  // namespace vramplan::sim
