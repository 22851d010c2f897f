#include "vramplan/plan/check.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/memory/launch_nodes.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/plan/capacity.hpp"
#include "vramplan/plan/compatibility.hpp"
#include "vramplan/plan/limits.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/quant/precision_plan.hpp"

namespace vramplan::plan {
namespace {

std::uint64_t engine_token_budget(const memory::MemoryPlan& plan) {
  const auto it = plan.engine_view.find("max_num_batched_tokens");
  return it != plan.engine_view.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

// When the engine has no room for KV at all, the useful answer is the layout that fits, not the
// engine's own advice (vLLM: "Try increasing gpu_memory_utilization"): "weights alone need 131.4
// GiB per GPU at TP 1; the smallest layout that fits is tp8 (8 x h100-sxm-80)".
std::string planning_reason(const PlanSession& session, const Scenario& s, const CheckRequest& req,
                            const CheckOutcome& out) {
  const Parallel p = out.eval.parallel;
  // A share of the card given below the default is the budget the weights must fit in (vLLM's
  // and SGLang's memory fraction cover the weights; TensorRT-LLM's is of what they leave).
  std::string budget;
  for (const char* flag : {"gpu-memory-utilization", "mem-fraction-static"})
    if (const auto share = memory::arg_double(req.args, flag))
      budget = ", of which --" + std::string(flag) + " " + format_number("%g", *share) + " gives " + out.eval.fit.engine + " " +
               format_binary(Bytes(static_cast<std::uint64_t>(*share * static_cast<double>(out.gpu.reported_total.count()))));
  std::string r = "weights alone need " + format_binary(out.eval.fit.expected.weights) + " per GPU at TP " +
                  std::to_string(p.tp) + (p.pp > 1 ? " PP " + std::to_string(p.pp) : "") + " (the GPU has " +
                  format_binary(out.gpu.reported_total) + budget + ")";
  const MinGpusResult m = min_gpus(session, s, req.policy, out.bounds, req.max_gpus);
  if (m.best)
    return r + "; the smallest layout that fits is tp" + std::to_string(m.best->tp) +
           (m.best->pp > 1 ? " pp" + std::to_string(m.best->pp) : "") + " (" + std::to_string(m.best->gpus()) + " x " +
           out.gpu.id + ")";
  return r + "; no layout of up to " + std::to_string(req.max_gpus) + " x " + out.gpu.id + " fits (--max-gpus)";
}

// A pooling model that does not fit: its batch's activations, not its weights, are what the
// card cannot hold, and it runs on one GPU, so the layouts of planning_reason do not apply:
// "the activation peak of the largest batch needs 170.21 GiB beside 1.06 GiB of weights and 0.50
// GiB of overhead, 171.77 GiB of the GPU's 22.03 GiB (tei: TEI warmup runs out of memory); ...".
std::string pooling_reason(const CheckOutcome& out, const std::string& engine) {
  const memory::MemoryPlan& p = out.eval.plan;
  const FitResult& fit = out.eval.fit;
  std::string why = fit.reason;
  if (const auto at = why.find(": weights + activation peak"); at != std::string::npos) why.erase(at);
  const std::string knob = engine == "tei"    ? "--max-batch-tokens"
                           : engine == "vllm" ? "--max-num-batched-tokens (or --max-model-len)"
                                              : "--batch or --context";
  return "the activation peak of the largest batch needs " + format_binary(p.activation_bytes()) + " beside " +
         format_binary(p.weights_bytes()) + " of weights and " + format_binary(p.overhead_bytes()) + " of overhead, " +
         format_binary(p.total_bytes()) + " of the GPU's " + format_binary(out.gpu.reported_total) + " (" + fit.engine + ": " +
         why + "); a pooling model runs on one GPU: lower " + knob;
}

// The rate view's latency targets: --slo, else --max-ttft / --max-tpot read as p99 targets
// (the distribution's tail under arrivals stands in for the batch's single value), else none:
// the rate must only not overload the engine.
std::pair<std::vector<SloTarget>, std::string> rate_targets(const CheckRequest& req) {
  if (!req.slo.empty()) return {req.slo, "--slo"};
  std::vector<SloTarget> t;
  const auto add = [&](const std::optional<double>& limit, SloMetric metric, const char* name) {
    if (limit) t.push_back({metric, SloStat::P99, *limit, std::string("p99_") + name + "<=" + format_number("%.4g", *limit * 1e3) + "ms"});
  };
  add(req.targets.max_ttft_s, SloMetric::Ttft, "ttft");
  add(req.targets.max_tpot_s, SloMetric::Tpot, "tpot");
  if (!t.empty()) return {t, "--max-ttft / --max-tpot, as p99 targets"};
  return {t, "none given: only that the rate does not overload the engine"};
}

// The batch table at a rate: the same ladder of batches, each as a running-request cap per
// replica, simulated at the rate (batch_at_rate.hpp).
BatchAtRate range_at_rate(const PlanSession& session, const CheckRequest& req, const BatchRange& range,
                          const DataRoot& root) {
  BatchAtRateRequest br;
  br.plan.model = req.model;
  br.plan.gpu = req.gpu;
  br.plan.gpu_memory = req.gpu_memory;
  br.plan.cluster = req.cluster;
  br.plan.engine = req.engine;
  br.plan.args = req.args;
  br.plan.weights = req.weights;
  br.plan.spec_accept_length = req.spec_accept_length;
  br.rate_per_s = *req.rate;
  br.replicas = req.replicas;
  // Requests as the batch range's sequences, within the engine's length (one output token at least).
  const std::uint64_t length = session.planned_context(req.args, {std::nullopt, std::nullopt});
  const std::uint64_t total = std::min(req.range_workload.input_len + req.range_workload.output_len, length);
  if (total < 2) throw_usage("the batch range at a rate: the engine's length " + std::to_string(length) + " leaves no room for a request");
  br.input_len = std::min(req.range_workload.input_len, total - 1);
  br.output_len = total - br.input_len;
  std::tie(br.slo, br.slo_basis) = rate_targets(req);
  br.requests_per_probe = req.probe_requests;
  for (const std::uint64_t b : range_ladder(range)) br.ladder.push_back(ceil_div(b, req.replicas));
  br.ladder.erase(std::unique(br.ladder.begin(), br.ladder.end()), br.ladder.end());
  return batch_at_rate(br, root);
}

}  // namespace

CheckOutcome run_check(const CheckRequest& req, const DataRoot& root, std::unique_ptr<memory::Engine> engine) {
  if (req.gpu.empty()) throw_usage("--gpu is required");
  if (!(req.policy.headroom >= 0 && req.policy.headroom < 1)) throw_usage("--headroom must be in [0%, 100%)");
  if (req.model.empty()) throw_usage("--model is required");
  if (req.rate && !req.batch_range) throw_usage("--rate applies to the batch range: add --batch-range");
  if (!req.slo.empty() && !req.rate) throw_usage("--slo applies to the batch range at a rate: add --rate R");
  if (req.rate && req.context)
    throw_usage("--rate replays requests of --input-len + --output-len tokens; --context describes a static batch: give one or the other");
  if (req.rate) check_probe_requests(req.probe_requests);
  const PlanSession session(root, req.model, engine ? std::move(engine) : memory::make_engine(req.engine, root.data()));
  CheckOutcome out;
  out.request = req;
  out.model_id = session.model().id;
  out.model_source = session.model().source;
  // A pooling model generates nothing: the batch table (decode tok/s, TPOT, TTFT of generated
  // sequences) does not apply, as simulate, trial and sweep --rate refuse it; and the workload
  // flags it has no use for are refused as plan refuses them.
  if (is_pooling_model(session.model())) {
    if (req.batch_range)
      throw_usage("--batch-range: " + out.model_id + " is a pooling model (" + session.model().arch.architecture +
                  "): it generates nothing, so the batch table's decode tok/s, TPOT and TTFT do not apply; its "
                  "throughput in inputs/s is in vramplan plan, an offline job's in vramplan plan --documents N");
    memory::refuse_pooling_workload_flags(session.model(), session.engine().name(),
                                          {req.batch.has_value(), req.context.has_value(), req.spec_accept_length.has_value()});
  }
  const Parallel p = session.parallel_of(req.args);
  out.gpu = memory::in_cluster(session.device(req.gpu, req.gpu_memory), req.cluster, session.engine().name(), req.args,
                               p.gpus());
  out.bounds = ErrorBounds::load(root.data_file("accuracy_bounds.json")).for_engine(std::string(session.engine().name()));
  out.bounds_source = root.data_file("accuracy_bounds.json").filename().string();
  const ErrorBounds& bounds = out.bounds;

  Scenario s{out.gpu, req.args, req.weights, req.replicas, req.batch, req.context};
  // Will it run at all? Asked before any memory is sized: an unsupported combination is the answer.
  out.compat = scenario_compatibility(session, out.gpu, req.args, req.weights);
  for (auto& w : compatibility_warnings(out.compat)) out.warnings.push_back(std::move(w));
  if (out.compat.support == compat::Support::Unsupported) {
    out.line = unsupported_line(out.compat);
    return out;
  }
  for (const auto* t : {&req.targets.max_tpot_s, &req.targets.max_ttft_s})
    if (*t && !(**t > 0 && std::isfinite(**t))) throw_usage("--max-tpot / --max-ttft must be a positive number of ms");
  require_valid_split(session.model().arch, out.model_id, p.tp, p.pp);
  out.eval = evaluate(session, s, req.policy, bounds);
  // The engine refuses the flags themselves (vLLM's max_model_len beyond the model's positions,
  // llama.cpp's quantized V cache without flash attention, ...): no card or layout starts them, so
  // the answer is UNSUPPORTED, not a memory verdict that a larger card would change.
  if (out.eval.plan.refuses_configuration && !out.eval.plan.fits) {
    out.compat.support = compat::Support::Unsupported;
    out.compat.findings.insert(out.compat.findings.begin(),
                               compat::Finding{std::string(session.engine().name()) + "-refuses-flags",
                                               compat::Support::Unsupported, out.eval.plan.reason, "", "",
                                               "the engine's own check of its flags at start-up, quoted"});
    out.line = unsupported_line(out.compat);
    return out;
  }
  // A quantization that finds nothing to quantize (mxfp4 on a dense model) is served unquantized:
  // the verdict stands on the dtype's size, and says so instead of labelling it with the scheme.
  if (req.weights)
    if (const PrecisionPlan w = plan_precision(session.model(), session.quant(), {*req.weights, ""});
        !w.nothing_quantized.empty())
      out.warnings.push_back(w.nothing_quantized);
  if (!out.eval.capped_context.empty()) out.warnings.push_back(out.eval.capped_context);
  for (const auto& w : out.eval.plan.flag_warnings) out.warnings.push_back(w);  // flags taken without effect
  // A batch beyond the engine's running cap is memory for sequences it never runs together.
  if (const auto cap = engine_sequence_cap(out.eval.plan); cap && req.batch && out.eval.fit.batch > cap->sequences)
    out.warnings.push_back(out.eval.fit.engine + " runs at most " + std::to_string(cap->sequences) +
                           " sequences at once per instance (" + cap->setting + "): " +
                           std::to_string(out.eval.fit.batch - cap->sequences) +
                           " of the batch wait in its queue; the verdict is on the memory of all " +
                           std::to_string(out.eval.fit.batch));
  // A refusal about memory gets what layout would fit; one of the configuration itself is its own reason.
  const bool no_kv = out.eval.plan.kv.bytes_per_token == 0 && out.eval.fit.expected.kv_pool.count() == 0;
  if (no_kv && is_pooling_model(session.model()) && out.eval.fit.verdict == Verdict::DoesNotFit &&
      !out.eval.plan.refuses_configuration)
    out.eval.fit.reason = pooling_reason(out, std::string(session.engine().name()));
  else if (out.eval.fit.limit == Limit::Engine && out.eval.fit.expected.kv_pool.count() == 0 && !out.eval.plan.refuses_configuration)
    out.eval.fit.reason = planning_reason(session, s, req, out) + " (" + out.eval.fit.engine + ": " + out.eval.fit.reason + ")";
  // HF generate() holds no pool: the room left at the checked batch is not what more sequences
  // get, because its activation peak grows with the batch (memory/hf_engine.cpp). The verdict
  // counts the sequences that fit with their own activations, as --limits' max batch does.
  std::string grown_note;
  if (session.engine().name() == "hf" && !no_kv && out.eval.fit.verdict != Verdict::DoesNotFit) {
    const std::uint64_t room = out.eval.fit.expected_sequences;
    const LimitResult fitting = max_batch(session, s, req.policy, bounds);
    if (fitting.value < room) {
      out.eval.fit.expected_sequences = fitting.value;
      grown_note = "; generate()'s activation peak grows with the batch: " + std::to_string(fitting.value) +
                   " sequences fit, not the " + std::to_string(room) + " the room left at batch " +
                   std::to_string(out.eval.fit.batch) + " holds";
    }
  }
  if (out.gpu.vendor == "amd")
    out.warnings.push_back("the activation and non-torch figures of " + out.eval.fit.engine +
                           " were fitted on NVIDIA H100 logs: unvalidated on AMD GPUs");
  out.line = fit_line(out.eval.fit, out.gpu.id, out.eval.gpus_total(), p.tp, p.pp, req.replicas) + grown_note;
  if (out.eval.fit.verdict != Verdict::DoesNotFit) {
    out.launch = launch_command(out.eval.plan, out.gpu, p.tp, p.pp, req.args, req.model);
  }

  if (req.limits) {
    CheckLimits l;
    l.max_batch = max_batch(session, s, req.policy, bounds);
    l.batch_context = out.eval.fit.context;
    // At the check's own batch, so the limit agrees with the verdict above it.
    l.context_batch = req.batch.value_or(req.replicas);
    l.max_context = max_context(session, s, req.policy, bounds);
    Scenario at_len = s;
    at_len.context = std::nullopt;
    l.engine_length = session.planned_context(s.args, {std::nullopt, std::nullopt});
    l.max_concurrency = max_batch(session, at_len, req.policy, bounds);
    l.min_gpus = min_gpus(session, s, req.policy, bounds, req.max_gpus);
    // Host memory (--gpu cpu) is not a card: there is no smaller card to look for.
    if (out.gpu.id != "cpu") l.smallest_card = smallest_card(session, s, req.policy, bounds, false);
    out.limits = std::move(l);
  }
  if (req.batch_range) {
    const auto defaults = perf::load_perf_defaults(root.data_file("perf_defaults.json"));
    const ThroughputModel model =
        throughput_model(session, out.gpu, req.args, req.weights, defaults, engine_token_budget(out.eval.plan),
                         out.eval.plan);
    out.range = batch_range(session, s, req.policy, bounds, model, req.targets, req.range_workload);
    if (req.rate && out.range->memory_max > 0) {
      out.at_rate = range_at_rate(session, req, *out.range, root);
      // The answer gets a row of its own in the table when no row is at it.
      const std::uint64_t best = out.at_rate->best;
      const bool shown = std::any_of(out.range->rows.begin(), out.range->rows.end(), [&](const BatchRow& row) {
        return ceil_div(row.batch, req.replicas) == best;
      });
      if (best > 0 && !shown)
        out.range = batch_range(session, s, req.policy, bounds, model, req.targets, req.range_workload, {best * req.replicas});
    }
    // The command at the recommended cap: the rate answer, else the static high end.
    out.range_cap = out.at_rate ? out.at_rate->best : ceil_div(out.range->high, req.replicas);
    if (out.at_rate) {
      out.range_launch = out.at_rate->launch;
    } else if (out.range_cap > 0) {
      memory::EngineArgs args = req.args;
      std::optional<std::uint64_t> batch;
      if (const std::string flag = running_cap_flag(req.engine); flag.empty()) batch = out.range_cap;
      else args[flag] = std::to_string(out.range_cap);
      out.range_launch = launch_command(session.plan(out.gpu, args, req.weights, {batch, req.context}), out.gpu, p.tp,
                                        p.pp, args, req.model);
    }
    // Name data files relative to the data root, as everywhere else in the output (and so the
    // text does not depend on where vramplan is installed).
    const std::string prefix = root.root.string() + "/";
    for (std::size_t at; (at = out.range->basis.find(prefix)) != std::string::npos;)
      out.range->basis.erase(at, prefix.size());
  }
  return out;
}

}  // namespace vramplan::plan
