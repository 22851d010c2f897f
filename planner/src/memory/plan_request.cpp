#include "vramplan/memory/plan_request.hpp"

#include <cmath>
#include <cstdio>

#include "vramplan/calib/calibration.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/host_offload.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/report/table.hpp"
#include "vramplan/report/sizes.hpp"

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

// The engine flag spelled `alias` ("tp", "pp") among its options; "" when it has none.
std::string flag_with_alias(const std::vector<EngineOption>& options, std::string_view alias) {
  for (const auto& o : options) {
    if (o.name == alias) return o.name;
    for (const auto& a : o.aliases)
      if (a == alias) return o.name;
  }
  return "";
}

std::uint64_t parallel_degree(const Engine& engine, const EngineArgs& args, std::string_view alias) {
  const std::string flag = flag_with_alias(engine.options(), alias);
  return flag.empty() ? 1 : arg_u64(args, flag).value_or(1);
}

bool declares(const Engine& engine, std::string_view flag) { return !flag_with_alias(engine.options(), flag).empty(); }

// The tensor-core rate a step runs at: fp8 GEMMs when the linear weights are fp8 and the card has
// an fp8 rate (vLLM / SGLang / TensorRT-LLM run W8A8 on Hopper and newer), else the activation dtype.
std::string tensor_dtype(const MemoryPlan& plan, const GpuSpec& gpu, const calib::Calibration* cal) {
  // llama.cpp's CUDA backend multiplies GGUF block-quantized weights in fp16 (cuBLAS on
  // dequantized weights for large batches; its MMQ kernels for small ones are not faster in peak):
  // ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_mul_mat.
  if (plan.engine == "llamacpp") return "fp16";
  const bool fp8_weights = plan.weights_precision.rfind("fp8", 0) == 0;
  const bool fp8_rate = gpu.tflops.fp8 || (cal && cal->figures.achieved_tflops.count("fp8_e4m3"));
  return fp8_weights && fp8_rate ? "fp8" : plan.compute_precision;
}

// The performance side of a plan: the model's per-GPU shape from the same per-tensor bytes the
// engine resolved and the plan's KV bytes per token, the GPU's rates from the calibration or the
// datasheet. Everything it cannot know is `unavailable`, with the reason.
// A pooling model has no decode and no TTFT: its figure is inputs per second, compute-bound
// (every token of every input goes through every layer once): the tensor rate of the GPU (the
// same calibration / datasheet x efficiency basis as generation) over the FLOPs of one input of
// `length` tokens (encoder_flops_per_input). Recorded in the plan (engine_view, a note).
PlanPerformance pooling_performance(PlanOutcome& out, const GpuSpec& gpu, const calib::Calibration* cal,
                                    const DataRoot& root, std::uint64_t length) {
  PlanPerformance perf;
  MemoryPlan& p = out.plan;
  perf.unavailable = "decode / TTFT do not apply to a pooling model (" + out.model.arch.architecture +
                     "); its throughput in inputs/s is in the plan's notes";
  try {
    perf.tensor_dtype = tensor_dtype(p, gpu, cal);
    perf::PerfDefaults defaults = perf::load_perf_defaults(root.data_file("perf_defaults.json"));
    defaults.source = "data/perf_defaults.json";
    const perf::PerfHardware hw = perf::perf_hardware_from(gpu, cal, perf.tensor_dtype, defaults, p.engine);
    const double flops = encoder_flops_per_input(out.model, length);
    const auto rate = [&](const perf::HardwareRates& h) { return h.tensor_flops_per_s / flops; };
    const double expected = rate(hw.expected);
    const double low = hw.slow ? rate(*hw.slow) : expected, high = hw.fast ? rate(*hw.fast) : expected;
    p.engine_view["inputs_per_s"] = {{"low", low}, {"expected", expected}, {"high", high}, {"input_tokens", length},
                                     {"flops_per_input", flops}};
    char line[200];
    std::snprintf(line, sizeof line, "throughput (compute-bound): %.0f [%.0f-%.0f] inputs/s of %llu tokens = %s tensor rate / %.3g FLOPs per input",
                  expected, low, high, static_cast<unsigned long long>(length), perf.tensor_dtype.c_str(), flops);
    p.notes.push_back(std::string(line) + " (" + hw.basis + ")");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    p.notes.push_back("throughput unknown: " + std::string(e.what()));
  }
  return perf;
}

PlanPerformance plan_performance(const PlanRequest& r, const PlanOutcome& out, const Engine& engine,
                                 const QuantCatalog& quant, const GpuSpec& gpu, const calib::Calibration* cal,
                                 const DataRoot& root) {
  PlanPerformance perf;
  const MemoryPlan& p = out.plan;
  perf.query.batch = r.workload.batch.value_or(1);
  perf.query.prompt_tokens = r.prompt_tokens.value_or(perf::kDefaultPromptTokens);
  perf.query.decode_context = r.workload.context.value_or(perf.query.prompt_tokens);
  if (p.engine_view.contains("max_num_batched_tokens"))
    perf.query.token_budget = p.engine_view.at("max_num_batched_tokens").get<std::uint64_t>();
  else if (p.engine == "llamacpp" && p.engine_view.contains("n_ubatch"))  // llama_context::decode splits a prompt into ubatches
    perf.query.token_budget = p.engine_view.at("n_ubatch").get<std::uint64_t>();
  if (p.fits && p.kv.capacity_tokens && perf.query.decode_context > 0)
    perf.query.max_batch = *p.kv.capacity_tokens / perf.query.decode_context;
  // llama.cpp: engine_view "offloaded_layers" is "k/n" with n = layers + the output layer; with
  // k < n the CPU layers stream from host memory (perf/host_offload.hpp). A CPU-only plan has no
  // such entry and no compute rate of its own: not modelled.
  std::optional<std::uint64_t> host_layers;
  if (p.engine == "llamacpp") {
    const auto it = p.engine_view.find("offloaded_layers");
    const std::string layers = it != p.engine_view.end() && it->is_string() ? it->get<std::string>() : "";
    const std::size_t slash = layers.find('/');
    if (slash == std::string::npos) {
      perf.unavailable = "performance model: a CPU-only llama.cpp run (no GPU rates) is not modelled";
      return perf;
    }
    const std::uint64_t k = std::stoull(layers.substr(0, slash)), n = std::stoull(layers.substr(slash + 1));
    if (k < n) host_layers = n - 1 - std::min(k, n - 1);  // the first layers stay on the CPU
  }
  const WeightRequest wr{arg_string(r.args, "dtype"),
                         declares(engine, "quantization") ? arg_string(r.args, "quantization") : std::nullopt,
                         r.weights, p.engine != "hf"};
  const ResolvedWeights rw = resolve_weights(out.model, quant, wr);
  perf::ShapeOptions so;
  so.tp = static_cast<std::uint32_t>(out.tp);
  so.pp = static_cast<std::uint32_t>(out.pp);
  so.activation_bytes = static_cast<double>(rw.compute_bytes);
  so.kv_bytes_per_token_per_gpu = static_cast<double>(p.kv.bytes_per_token);
  try {
    const perf::PerfModelShape shape = perf::shape_from_model(out.model, rw.tensor_bytes, so);
    perf.tensor_dtype = tensor_dtype(p, gpu, cal);
    perf::PerfDefaults defaults = perf::load_perf_defaults(root.data_file("perf_defaults.json"));
    defaults.source = "data/perf_defaults.json";  // the basis names the catalogue file, not this install's path
    const perf::PerfHardware hw = perf::perf_hardware_from(gpu, cal, perf.tensor_dtype, defaults, p.engine);
    perf.calibrated = hw.calibrated;
    if (host_layers) {
      // Partial offload: decode reads the CPU layers at host bandwidth, prompt micro-batches copy
      // them over PCIe (perf/host_offload.hpp); the output layer stays on the CPU (k < n).
      perf::HostOffload off;
      off.gpu_share = perf::streamed_gpu_share(out.model, rw.tensor_bytes, *host_layers, false);
      const auto hb = arg_string(r.args, "host-bandwidth");
      off.host_bandwidth_bytes_per_s = 1e9 * (hb ? perf::parse_gbps(*hb, "--host-bandwidth") : perf::kDefaultHostBandwidthGBps);
      const auto pcie = gpu.interconnect.pcie_gen ? defaults.pcie_gbps_per_direction.find(*gpu.interconnect.pcie_gen)
                                                  : defaults.pcie_gbps_per_direction.end();
      if (pcie == defaults.pcie_gbps_per_direction.end())
        throw_usage("performance model: partial offload needs the GPU's PCIe generation, which the catalogue lacks");
      off.pcie_bytes_per_s = 1e9 * pcie->second;
      perf.estimate = perf::estimate_serving(shape, perf::decode_with_host_offload(hw, off), perf.query);
      perf.estimate->ttft_s = perf::estimate_ttft(shape, perf::prefill_with_host_offload(hw, off), perf.query.prompt_tokens,
                                                  perf.query.token_budget);
      char host[48];
      std::snprintf(host, sizeof host, "%g GB/s", off.host_bandwidth_bytes_per_s / 1e9);
      perf.estimate->notes.push_back("partial offload: " + std::to_string(*host_layers) + " layers and the output on the CPU, read at " +
                                     host + (hb ? " (--host-bandwidth)" : " (default; --host-bandwidth)") +
                                     "; prompt micro-batches copy them over PCIe; CPU compute and core count not modelled");
    } else {
      perf.estimate = perf::estimate_serving(shape, hw, perf.query);
    }
    perf.shape = shape;
    perf.hardware = hw;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    perf.unavailable = e.what();
  }
  return perf;
}

}  // namespace

PlanOutcome run_plan(const PlanRequest& r, const DataRoot& root) {
  if (r.model.empty()) throw_usage("--model is required");
  if (r.gpu.empty()) throw_usage("--gpu is required");
  auto engine = make_engine(r.engine, root.data());
  const QuantCatalog quant = QuantCatalog::load(root.data_file("quant_formats.json"), root.data_file("quant_schemes.json"));
  const GpuCatalog gpus = GpuCatalog::load(root.data_file("gpus.json"));
  GpuSpec spec = r.gpu == "cpu" ? cpu_host() : gpus.resolve_one(r.gpu);
  require_plannable(spec);
  if (r.gpu_memory) spec = with_reported_total(spec, *r.gpu_memory);
  PlanOutcome out{load_model(r.model, root), {}, {}, {}, {}, {}, 1, 1, {}};
  out.gpu.id = spec.id;
  out.gpu.name = spec.name;
  out.gpu.total = spec.reported_total;
  if (spec.compute_capability) out.gpu.compute_capability = spec.compute_capability->str();
  out.gpu_memory_note = r.gpu_memory ? "--gpu-memory" : spec.reported_note;
  PlanInput input{out.model, quant, out.gpu, r.workload, r.args, r.weights, std::nullopt, ""};
  const std::optional<calib::Calibration> cal =
      r.calibration ? std::optional(calib::load_calibration(*r.calibration)) : calib::find_calibration(root, spec.id);
  out.calibration.selected = r.calibration ? "--calibration" : cal ? "matched to " + spec.id + " in data/calibration" : "none";
  out.calibration.memory = "documented defaults (engine data files)";
  if (cal) out.calibration.file = cal->source;
  if (cal && cal->origin == calib::CalibrationOrigin::Measured && cal->figures.context_overhead) {
    input.measured_context = cal->figures.context_overhead;
    input.measured_context_source = "measured, " + cal->source;
  }
  const bool pooling = is_encoder(out.model.arch) || engine->name() == "tei";
  if (is_encoder(out.model.arch) && engine->name() != "hf" && engine->name() != "vllm" && engine->name() != "tei")
    throw_usage("--engine " + std::string(engine->name()) + ": " + out.model.id + " is an encoder (" + out.model.arch.architecture +
                "); encoders are planned under hf (sentence-transformers), vllm (pooling runner) and tei");
  out.plan = engine->plan(input);
  // Say what the engine really took from the file: vLLM's non-torch figure is a measured total
  // of its own and does not use the context overhead.
  for (const auto& c : out.plan.overhead)
    if (input.measured_context && c.explain.find(cal->source) != std::string::npos)
      out.calibration.memory = c.name + " " + format_mib(c.bytes) + " from the calibration; the rest documented defaults";
  out.gpu.count = out.plan.gpu_count;
  out.tp = parallel_degree(*engine, r.args, "tp");
  out.pp = parallel_degree(*engine, r.args, "pp");
  if (r.gpu == "cpu") {
    out.compat.unchecked.push_back("a CPU plan: the compatibility rules cover GPUs");
  } else {
    compat::Query q;
    q.engine = std::string(engine->name());
    q.engine_version = std::string(engine->version());
    compat::set_gpu_facts(q, spec);
    q.weight_families = compat::model_weight_families(out.model, quant, r.weights);
    const auto dtype = arg_string(r.args, "dtype");
    q.dtype = compat::float_dtype(dtype && *dtype != "auto" ? *dtype : out.model.arch.torch_dtype);
    const auto kv = arg_string(r.args, "kv-cache-dtype");
    if (kv && kv->starts_with("fp8")) q.kv = "fp8";
    q.tensor_parallel = out.tp;
    q.pipeline_parallel = out.pp;
    if (!out.model.arch.architecture.empty()) q.architectures = {out.model.arch.architecture};
    out.compat = compat::CompatRules::load(root.data() / "compat").evaluate(q);
  }
  if (pooling) {
    // The length of one input: --context, else the engine's padded length, else its longest input.
    std::uint64_t length = r.workload.context.value_or(0);
    for (const char* key : {"sequence_length", "max_input_length", "max_model_len"})
      if (length == 0 && out.plan.engine_view.contains(key)) length = out.plan.engine_view.at(key).get<std::uint64_t>();
    out.performance = pooling_performance(out, spec, cal ? &*cal : nullptr, root, length ? length : 512);
  } else {
    out.performance = plan_performance(r, out, *engine, quant, spec, cal ? &*cal : nullptr, root);
  }
  // Every plan's parts must add up (a bug otherwise).
  std::vector<Component> all = out.plan.weights;
  for (const auto* v : {&out.plan.kv_cache, &out.plan.activation, &out.plan.overhead}) all.insert(all.end(), v->begin(), v->end());
  check_parts_sum(all, out.plan.total_bytes(), "plan per GPU");
  return out;
}

namespace {

nlohmann::json opt_json(const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json parts_json(const std::vector<Component>& parts) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : parts) a.push_back({{"name", c.name}, {"bytes", c.bytes.count()}, {"explain", c.explain}});
  return a;
}

nlohmann::json range_json(const perf::Range& r) {
  return {{"low", r.low}, {"expected", r.expected}, {"high", r.high}};
}

nlohmann::json curve_json(const perf::ThroughputCurve& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& pt : c.points)
    points.push_back({{"batch", pt.batch}, {"tokens_per_s", range_json(pt.tokens_per_s)}, {"tpot_s", range_json(pt.step_s)},
                      {"memory_bound", pt.memory_bound}});
  return {{"context", c.context},          {"max_batch", c.points.back().batch}, {"knee_batch", c.knee_batch},
          {"half_batch", c.half_batch},    {"plateau_tokens_per_s", c.plateau_tokens_per_s},
          {"knee_fraction", perf::kKneeFraction}, {"points", points}};
}

nlohmann::json performance_json(const PlanPerformance& perf) {
  const auto& q = perf.query;
  nlohmann::json j = {{"available", perf.estimate.has_value()},
                      {"reason", perf.estimate ? nlohmann::json(nullptr) : nlohmann::json(perf.unavailable)},
                      {"batch", q.batch},
                      {"prompt_tokens", q.prompt_tokens},
                      {"decode_context", q.decode_context},
                      {"prefill_chunk_tokens", q.token_budget},
                      {"tensor_dtype", perf.tensor_dtype.empty() ? nlohmann::json(nullptr) : nlohmann::json(perf.tensor_dtype)},
                      {"calibrated", perf.calibrated},
                      {"basis", nullptr}, {"decode", nullptr}, {"ttft_s", nullptr}, {"throughput_vs_batch", nullptr},
                      {"notes", nlohmann::json::array()}};
  if (!perf.estimate) return j;
  const auto& e = *perf.estimate;
  j["basis"] = e.basis;
  j["decode"] = {{"tokens_per_s", range_json(e.decode.tokens_per_s)}, {"tpot_s", range_json(e.decode.step_s)},
                 {"memory_bound", e.decode.step.memory_bound}};
  j["ttft_s"] = range_json(e.ttft_s);
  if (e.curve) j["throughput_vs_batch"] = curve_json(*e.curve);
  j["notes"] = e.notes;
  return j;
}

std::string num(double v, const char* spec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string range_text(const perf::Range& r, double scale, const char* spec) {
  return num(r.expected * scale, spec) + " [" + num(r.low * scale, spec) + "-" + num(r.high * scale, spec) + "]";
}

// Each line of `text` wrapped to the output width, continuation lines indented under the value
// ("  basis    " is 11 characters).
std::string wrap_performance_lines(const std::string& text) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    out += wrap_paragraph(line, text_width(), line.starts_with("  ") ? 11 : 2) + "\n";
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

std::string performance_text(const PlanPerformance& perf) {
  const auto& q = perf.query;
  if (!perf.estimate) return "performance: unknown - " + perf.unavailable + "\n";
  const auto& e = *perf.estimate;
  std::string s = "performance (" + std::string(perf.calibrated ? "calibrated" : "uncalibrated: datasheet x default efficiency") +
                  ", " + perf.tensor_dtype + " tensor rate):\n";
  s += "  decode   batch " + std::to_string(q.batch) + " at " + std::to_string(q.decode_context) + " tokens: " +
       range_text(e.decode.tokens_per_s, 1, "%.0f") + " tok/s, TPOT " + range_text(e.decode.step_s, 1e3, "%.2f") + " ms\n";
  s += "  TTFT     prompt " + std::to_string(q.prompt_tokens) + " tokens: " + range_text(e.ttft_s, 1e3, "%.1f") + " ms\n";
  if (e.curve)
    s += "  knee     batch " + std::to_string(e.curve->knee_batch) + " reaches 80 % of " +
         num(e.curve->plateau_tokens_per_s, "%.0f") + " tok/s at the memory limit of " +
         std::to_string(e.curve->points.back().batch) + " sequences (50 % at batch " + std::to_string(e.curve->half_batch) + ")\n";
  s += "  basis    " + e.basis + "\n";
  for (const auto& n : e.notes) s += "  note     " + n + "\n";
  return s;
}

}  // namespace

nlohmann::json plan_json(const PlanOutcome& o) {
  const auto& p = o.plan;
  return {
      {"schema", "vramplan.plan/1"},
      {"compatibility", compat::verdict_json(o.compat)},
      {"engine", p.engine},
      {"engine_version", p.engine_version},
      {"engine_profile", p.engine_profile_note},
      {"model", {{"id", o.model.id}, {"source", o.model.source.kind}, {"path", o.model.source.path},
                 {"read_from", model_source_text(o.model.source)}, {"exclusions", o.model.exclusions}}},
      {"gpu", {{"id", o.gpu.id}, {"name", o.gpu.name}, {"count", p.gpu_count}, {"total_bytes", o.gpu.total.count()},
               {"total_source", o.gpu_memory_note}}},
      {"per_gpu",
       {{"weights_bytes", p.weights_bytes().count()},
        {"kv_cache_bytes", p.kv_cache_bytes().count()},
        {"activation_bytes", p.activation_bytes().count()},
        {"overhead_bytes", p.overhead_bytes().count()},
        {"breakdown", {{"weights", parts_json(p.weights)}, {"kv_cache", parts_json(p.kv_cache)},
                       {"activation", parts_json(p.activation)}, {"overhead", parts_json(p.overhead)}}},
        {"total_bytes", p.total_bytes().count()},
        {"capacity_bytes", p.gpu_total.count()},
        {"headroom_bytes", p.headroom_bytes()}}},
      {"kv", {{"bytes_per_token", p.kv.bytes_per_token}, {"capacity_tokens", opt_json(p.kv.capacity_tokens)},
              {"max_concurrency", opt_json(p.kv.max_concurrency)}, {"explain", p.kv.explain}}},
      {"fits", p.fits},
      {"reason", p.fits ? nlohmann::json(nullptr) : nlohmann::json(p.reason)},
      {"weights_precision", p.weights_precision},
      {"compute_precision", p.compute_precision},
      {"engine_view", p.engine_view},
      {"notes", p.notes},
      {"calibration", {{"file", o.calibration.file ? nlohmann::json(*o.calibration.file) : nlohmann::json(nullptr)},
                       {"selected", o.calibration.selected},
                       {"memory", o.calibration.memory},
                       {"performance", o.performance.estimate ? nlohmann::json(o.performance.estimate->basis)
                                                              : nlohmann::json(nullptr)}}},
      {"performance", performance_json(o.performance)},
  };
}

std::string plan_text(const PlanOutcome& o) {
  const auto& p = o.plan;
  // Free text is wrapped to the output width (report/table.hpp text_width); tables wrap their
  // "how" column the same way.
  const std::size_t width = text_width();
  std::string s = wrap_paragraph("model " + o.model.id + " from the " + model_source_text(o.model.source), width, 2) +
                  "\n" +
                  wrap_paragraph("on " + std::to_string(p.gpu_count) + " x " + o.gpu.name + " (" + format_gib(o.gpu.total) +
                                     " each), engine " + p.engine_profile_note,
                                 width, 2) +
                  "\n";
  // Will it run? Said before the memory table (data/compat, docs/compatibility.md).
  for (const auto& f : o.compat.findings) s += compat::finding_line(f) + "\n";
  for (const auto& u : o.compat.unchecked) s += "compatibility: " + u + "\n";
  s += "weights " + p.weights_precision + ", compute " + p.compute_precision + "\n\n";
  Table t({{"component (per GPU)", Align::Left}, {"size", Align::Right}, {"how", Align::Wrap}});
  for (const auto* v : {&p.weights, &p.kv_cache, &p.activation, &p.overhead})
    for (const auto& c : *v) t.add_row({c.name, size_cell(c.bytes), c.explain});
  t.add_row({"total", format_gib(p.total_bytes()), ""});
  t.add_row({"capacity", format_gib(p.gpu_total), o.gpu_memory_note});
  const std::int64_t head = p.headroom_bytes();
  t.add_row({"headroom", (head < 0 ? "-" : "") + format_gib(Bytes(static_cast<std::uint64_t>(std::llabs(head)))), ""});
  s += t.render_text() + "\n";
  s += wrap_paragraph(p.kv.explain, width, 2) + "\n";
  if (p.kv.bytes_per_token > 0 || !p.kv_cache.empty()) {  // a pooling model has no KV figures to give
    char buf[128];
    std::snprintf(buf, sizeof buf, "KV capacity %s tokens, max concurrency %.2f\n",
                  p.kv.capacity_tokens ? std::to_string(*p.kv.capacity_tokens).c_str() : "unknown",
                  p.kv.max_concurrency.value_or(0.0));
    s += buf;
  }
  s += p.fits ? "fits: yes\n" : wrap_paragraph("fits: NO - " + p.reason, width, 6) + "\n";
  for (const auto& n : p.notes) s += wrap_paragraph("note: " + n, width, 6) + "\n";
  s += "\n" + wrap_performance_lines(performance_text(o.performance));
  s += wrap_paragraph("calibration: " + (o.calibration.file ? *o.calibration.file + " (" + o.calibration.selected + ")" : std::string("none")) +
                          "; memory: " + o.calibration.memory,
                      width, 2) +
       "\n";
  return s;
}

}  // namespace vramplan::memory

namespace vramplan::memory {

namespace {

// The rehearsal's GEMM element type for the tensor rate the performance side used.
std::optional<std::string> rehearsal_dtype(const PlanOutcome& o) {
  const std::string& t = o.performance.tensor_dtype.empty() ? o.plan.compute_precision : o.performance.tensor_dtype;
  if (t == "fp8") return "fp8_e4m3";
  if (t == "bf16" || t == "fp16") return t;
  return std::nullopt;
}

// The projections of one decoder layer on one TP rank (column-parallel outputs and row-parallel
// inputs divided by tp, K/V heads replicated when fewer than tp), `m` tokens per forward.
std::vector<calib::RehearsalGemm> layer_gemms(const ModelArch& a, std::uint64_t tp, std::uint64_t m,
                                              const std::string& dtype) {
  std::vector<calib::RehearsalGemm> g;
  const std::uint64_t h = a.hidden_size, d = a.head_dim;
  if (a.kv_lora_rank == 0 && a.num_heads > 0 && d > 0) {  // MLA projections have other shapes: left out
    const std::uint64_t q = std::max<std::uint64_t>(1, a.num_heads / tp);
    const std::uint64_t kv = std::max<std::uint64_t>(1, a.num_kv_heads / tp);
    g.push_back({"qkv_proj", dtype, m, (q + 2 * kv) * d, h});
    g.push_back({"o_proj", dtype, m, h, q * d});
  }
  if (a.num_experts > 0 && a.moe_intermediate_size > 0) {
    // Tokens one expert sees on average under uniform routing: m x k / E.
    const std::uint64_t me = std::max<std::uint64_t>(1, m * a.experts_per_token / a.num_experts);
    const std::uint64_t inter = std::max<std::uint64_t>(1, a.moe_intermediate_size / tp);
    g.push_back({"expert_gate_up_proj", dtype, me, 2 * inter, h});
    g.push_back({"expert_down_proj", dtype, me, h, inter});
  } else if (a.intermediate_size > 0) {
    const std::uint64_t inter = std::max<std::uint64_t>(1, a.intermediate_size / tp);
    g.push_back({"gate_up_proj", dtype, m, 2 * inter, h});
    g.push_back({"down_proj", dtype, m, h, inter});
  }
  return g;
}

}  // namespace

calib::RehearsalInput rehearsal_input(const PlanOutcome& o) {
  const MemoryPlan& p = o.plan;
  if (o.gpu.id == "cpu") throw_usage("--emit-rehearsal: a CPU plan has no GPU to rehearse on");
  if (p.kv_cache_bytes().count() == 0)
    throw_usage("--emit-rehearsal: the plan reserves no KV cache (" + (p.fits ? std::string("none planned") : p.reason) + ")");
  calib::RehearsalInput in;
  in.label = o.model.id + " " + p.weights_precision + ", " + p.engine + " " + p.engine_version + ", TP " +
             std::to_string(o.tp) + " PP " + std::to_string(o.pp) + ", per GPU on " + o.gpu.name;
  in.weights = p.weights_bytes();
  const std::uint64_t blocks = p.engine_view.value("gpu_blocks", std::uint64_t{0});
  if (blocks > 0 && p.kv_cache_bytes().count() % blocks == 0) {
    in.kv_blocks = blocks;
    in.kv_block = Bytes(p.kv_cache_bytes().count() / blocks);
  } else {
    in.kv_blocks = 1;  // one pool (SGLang, TensorRT-LLM, HF): the probe allocates it in one piece anyway
    in.kv_block = p.kv_cache_bytes();
  }
  in.activation_workspace = p.activation_bytes();
  const std::uint64_t m = o.performance.query.token_budget ? o.performance.query.token_budget
                                                           : o.performance.query.prompt_tokens;
  if (const auto dtype = rehearsal_dtype(o)) in.gemms = layer_gemms(o.model.arch, o.tp, m, *dtype);
  in.predicted_peak = in.total();
  return in;
}

}  // namespace vramplan::memory
