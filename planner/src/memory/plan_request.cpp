#include "vramplan/memory/plan_request.hpp"

#include <cmath>
#include <cstdio>

#include "vramplan/calib/calibration.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/report/table.hpp"

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

}  // namespace

PlanOutcome run_plan(const PlanRequest& r, const DataRoot& root) {
  if (r.model.empty()) throw_usage("--model is required");
  if (r.gpu.empty()) throw_usage("--gpu is required");
  auto engine = make_engine(r.engine, root.data());
  const QuantCatalog quant = QuantCatalog::load(root.data_file("quant_formats.json"), root.data_file("quant_schemes.json"));
  const GpuCatalog gpus = GpuCatalog::load(root.data_file("gpus.json"));
  GpuSpec spec = r.gpu == "cpu" ? cpu_host() : gpus.resolve_one(r.gpu);
  if (r.gpu_memory) spec = with_reported_total(spec, *r.gpu_memory);
  PlanOutcome out{load_model(r.model, root), {}, {}, {}};
  out.gpu.id = spec.id;
  out.gpu.name = spec.name;
  out.gpu.total = spec.reported_total;
  if (spec.compute_capability) out.gpu.compute_capability = spec.compute_capability->str();
  out.gpu_memory_note = r.gpu_memory ? "--gpu-memory" : spec.reported_note;
  PlanInput input{out.model, quant, out.gpu, r.workload, r.args, r.weights, std::nullopt, ""};
  const std::optional<calib::Calibration> cal =
      r.calibration ? std::optional(calib::load_calibration(*r.calibration)) : calib::find_calibration(root, spec.id);
  if (cal && cal->origin == calib::CalibrationOrigin::Measured && cal->figures.context_overhead) {
    input.measured_context = cal->figures.context_overhead;
    input.measured_context_source = "measured, " + cal->source;
  }
  out.plan = engine->plan(input);
  out.gpu.count = out.plan.gpu_count;
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

}  // namespace

nlohmann::json plan_json(const PlanOutcome& o) {
  const auto& p = o.plan;
  return {
      {"schema", "vramplan.plan/1"},
      {"engine", p.engine},
      {"engine_version", p.engine_version},
      {"engine_profile", p.engine_profile_note},
      {"model", {{"id", o.model.id}, {"source", o.model.source.kind}, {"exclusions", o.model.exclusions}}},
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
  };
}

std::string plan_text(const PlanOutcome& o) {
  const auto& p = o.plan;
  std::string s = "model " + o.model.id + " on " + std::to_string(p.gpu_count) + " x " + o.gpu.name + " (" +
                  format_gib(o.gpu.total) + " each), engine " + p.engine_profile_note + "\n";
  s += "weights " + p.weights_precision + ", compute " + p.compute_precision + "\n\n";
  Table t({{"component (per GPU)", Align::Left}, {"GiB", Align::Right}, {"how", Align::Left}});
  for (const auto* v : {&p.weights, &p.kv_cache, &p.activation, &p.overhead})
    for (const auto& c : *v) t.add_row({c.name, format_gib(c.bytes), c.explain});
  t.add_row({"total", format_gib(p.total_bytes()), ""});
  t.add_row({"capacity", format_gib(p.gpu_total), o.gpu_memory_note});
  const std::int64_t head = p.headroom_bytes();
  t.add_row({"headroom", (head < 0 ? "-" : "") + format_gib(Bytes(static_cast<std::uint64_t>(std::llabs(head)))), ""});
  s += t.render_text() + "\n";
  s += p.kv.explain + "\n";
  char buf[128];
  std::snprintf(buf, sizeof buf, "KV capacity %s tokens, max concurrency %.2f\n",
                p.kv.capacity_tokens ? std::to_string(*p.kv.capacity_tokens).c_str() : "unknown",
                p.kv.max_concurrency.value_or(0.0));
  s += buf;
  s += p.fits ? "fits: yes\n" : "fits: NO - " + p.reason + "\n";
  for (const auto& n : p.notes) s += "note: " + n + "\n";
  return s;
}

}  // namespace vramplan::memory
