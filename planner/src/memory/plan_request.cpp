#include "vramplan/memory/plan_request.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/memory/launch_nodes.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/model/tp_validity.hpp"

namespace vramplan::memory {

namespace {

// --gpu cpu: a CPU-only run (llama.cpp); the "device" is host memory, sized by --gpu-memory.
GpuSpec cpu_host() {
  GpuSpec g;
  g.id = "cpu";
  g.name = "CPU (host memory)";
  g.reported_note = "host memory: not known (give --gpu-memory)";
  return g;
}

std::uint64_t parallel_degree(const Engine& engine, const EngineArgs& args, std::string_view alias) {
  const std::string flag = flag_with_alias(engine.options(), alias);
  return flag.empty() ? 1 : arg_u64(args, flag).value_or(1);
}

bool declares(const Engine& engine, std::string_view flag) { return !flag_with_alias(engine.options(), flag).empty(); }

}  // namespace

ResolvedPlan resolve_plan(const PlanRequest& r, const DataRoot& root) {
  if (r.model.empty()) throw_usage("--model is required");
  if (r.gpu.empty()) throw_usage("--gpu is required");
  auto engine = make_engine(r.engine, root.data());
  QuantCatalog quant = QuantCatalog::load(root.data_file("quant_formats.json"), root.data_file("quant_schemes.json"));
  const GpuCatalog gpus = GpuCatalog::load(root.data_file("gpus.json"));
  GpuSpec spec = r.gpu == "cpu" ? cpu_host() : gpus.resolve_one(r.gpu);
  require_plannable(spec);
  if (r.gpu_memory) spec = with_reported_total(spec, *r.gpu_memory);
  const std::uint64_t tp = parallel_degree(*engine, r.args, "tp"), pp = parallel_degree(*engine, r.args, "pp");
  spec = in_cluster(std::move(spec), r.cluster, engine->name(), r.args, tp * pp);
  PlanOutcome out{r.loaded_model ? *r.loaded_model : load_model(r.model, root), {}, {}, {}, {}, 1, 1, {}};
  out.gpu = gpu_target_of(spec);
  out.gpu_memory_note = r.gpu_memory ? "--gpu-memory" : spec.reported_note;
  PlanInput input{out.model, quant, out.gpu, r.workload, r.args, r.weights, std::nullopt, ""};
  std::optional<calib::Calibration> cal =
      r.calibration ? std::optional(calib::load_calibration(*r.calibration)) : calib::find_calibration(root, spec.id);
  out.calibration.selected = r.calibration ? "--calibration" : cal ? "matched to " + spec.id + " in data/calibration" : "none";
  out.calibration.memory = "documented defaults (engine data files)";
  if (cal) out.calibration.file = cal->source;
  if (cal && cal->origin == calib::CalibrationOrigin::Measured && cal->figures.context_overhead) {
    input.measured_context = cal->figures.context_overhead;
    input.measured_context_source = "measured, " + cal->source;
  }
  // The deployment's own figures (reconcile --update-calibration), when the file has an entry for
  // this model, engine profile, card and layout.
  if (cal && !cal->deployment.empty()) {
    if (const auto* d = calib::find_deployment(*cal, out.model.id, engine->name(), engine->version(), spec.id, tp, pp)) {
      input.deployment = PlanInput::Deployment{d->non_torch,         d->activation_peak, d->cuda_graphs,
                                               d->free_before_load,  d->free_for_kv,     d->execution_context,
                                               d->runtime_buffers,   d->decoder_buffers,
                                               "from calibration " + cal->source + (d->source.empty() ? "" : ", " + d->source)};
      out.calibration.memory = "the deployment's logged figures " + input.deployment->source;
    } else {
      out.calibration.memory += "; calibration " + cal->source + " has no deployment entry for " + out.model.id + " / " +
                                std::string(engine->name()) + "@" + std::string(engine->version()) + " / " + spec.id +
                                " / TP " + std::to_string(tp) + " PP " + std::to_string(pp);
    }
  }
  const bool pooling = is_pooling_model(out.model) || engine->name() == "tei";
  if (is_pooling_model(out.model) && engine->name() != "hf" && engine->name() != "vllm" && engine->name() != "tei")
    throw_usage("--engine " + std::string(engine->name()) + ": " + out.model.id + " is " +
                (is_encoder(out.model.arch) ? "an encoder (" + out.model.arch.architecture + ")"
                                            : "a pooling model (" + out.model.arch.architecture + ", " + pooling_view_mode(out.model) + " pooling)") +
                (is_encoder(out.model.arch) ? "; encoders" : "; pooling models") +
                " are planned under hf (sentence-transformers), vllm (pooling runner) and tei");
  // A pooling plan has no TTFT: the length of its inputs is --context (the throughput note's input).
  if (pooling && r.prompt_tokens)
    throw_usage("--prompt-len sizes a generating model's TTFT: a pooling plan takes its input length from --context");
  require_valid_split(out.model.arch, out.model.id, tp, pp);
  out.plan = engine->plan(input);
  // Say what the engine really took from the file: vLLM's non-torch figure is a measured total
  // of its own and does not use the context overhead.
  for (const auto& c : out.plan.overhead)
    if (input.measured_context && !input.deployment && c.explain.find(cal->source) != std::string::npos)
      out.calibration.memory = c.name + " " + format_mib(c.bytes) + " from the calibration; the rest documented defaults";
  out.gpu.count = out.plan.gpu_count;
  out.tp = tp;
  out.pp = pp;
  if (r.gpu == "cpu") {
    out.compat.unchecked.push_back("a CPU plan: the compatibility rules cover GPUs");
  } else {
    compat::Query q;
    q.engine = std::string(engine->name());
    q.engine_version = std::string(engine->release());
    compat::set_gpu_facts(q, spec);
    q.weight_families = compat::model_weight_families(out.model, quant, r.weights);
    q.gguf_types = compat::model_gguf_types(out.model, quant, r.weights);
    q.weights_quantize_nothing = compat::weights_quantize_nothing(out.model, quant, r.weights);
    // The llama.cpp build (plan/compatibility.cpp reads the same flag for check / sweep).
    if (const auto backend = arg_string(r.args, "llamacpp-backend")) q.backend = *backend;
    const auto dtype = arg_string(r.args, "dtype");
    q.dtype = compat::float_dtype(dtype && *dtype != "auto" ? *dtype : out.model.arch.torch_dtype);
    const auto kv = arg_string(r.args, "kv-cache-dtype");
    if (kv && kv->starts_with("fp8")) q.kv = "fp8";
    q.tensor_parallel = out.tp;
    q.pipeline_parallel = out.pp;
    q.data_parallel = out.plan.engine_view.value("data_parallel_size", std::uint64_t{1});
    if (!out.model.arch.architecture.empty()) q.architectures = {out.model.arch.architecture};
    out.compat = compat::CompatRules::load(root.data() / "compat").evaluate(q);
  }
  // Every plan's parts must add up (a bug otherwise).
  std::vector<Component> all = out.plan.weights;
  for (const auto* v : {&out.plan.kv_cache, &out.plan.activation, &out.plan.overhead}) all.insert(all.end(), v->begin(), v->end());
  check_parts_sum(all, out.plan.total_bytes(), "plan per GPU");
  // The weight request the performance side resolves per-tensor bytes from: --dtype, the engine's
  // --quantization when it declares one, --weights; fp32 checkpoints served in bf16 except under hf.
  WeightRequest weights{arg_string(r.args, "dtype"),
                        declares(*engine, "quantization") ? arg_string(r.args, "quantization") : std::nullopt, r.weights,
                        out.plan.engine != "hf"};
  return {std::move(out), {std::move(spec), std::move(cal), std::move(quant), std::move(weights), pooling}};
}

PlanOutcome run_plan(const PlanRequest& request, const DataRoot& root) { return resolve_plan(request, root).outcome; }

}  // namespace vramplan::memory
