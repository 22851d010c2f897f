// The "vramplan.calibration/1" file format: Calibration <-> JSON. Layout in docs/calibration.md
// and docs/schemas/calibration.schema.json.
#include <array>
#include <string>
#include <utility>

#include "vramplan/calib/calibration.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::calib {
namespace {

using nlohmann::json;

json fit_to_json(const LineFit& f) {
  return {{"t0_seconds", f.t0_seconds},
          {"rate_per_second", f.rate_per_second},
          {"rms_residual_seconds", f.rms_residual_seconds},
          {"max_rel_residual", f.max_rel_residual},
          {"points", f.points}};
}

LineFit fit_from_json(const JsonView& v) {
  LineFit f;
  f.t0_seconds = v.req_number("t0_seconds");
  f.rate_per_second = v.req_positive("rate_per_second");
  f.rms_residual_seconds = v.req_number("rms_residual_seconds");
  f.max_rel_residual = v.req_number("max_rel_residual");
  f.points = v.req_u64("points");
  return f;
}

json device_to_json(const DeviceFacts& d) {
  return {{"name", d.name},
          {"uuid", d.uuid},
          {"pci_bus_id", d.pci_bus_id},
          {"compute_capability", std::to_string(d.compute_capability_major) + "." +
                                     std::to_string(d.compute_capability_minor)},
          {"sm_count", d.sm_count},
          {"total_bytes_runtime", d.total_bytes_runtime.count()},
          {"total_bytes_driver", d.total_bytes_driver.count()},
          {"free_bytes_at_start", d.free_bytes_at_start.count()},
          {"driver_version", d.driver_version},
          {"cuda_driver_version", d.cuda_driver_version},
          {"cuda_runtime_version", d.cuda_runtime_version},
          {"mig_mode", d.mig_mode},
          {"ecc_enabled", d.ecc_enabled}};
}

DeviceFacts device_from_json(const JsonView& v) {
  DeviceFacts d;
  d.name = v.req_string("name");
  d.uuid = v.req_string("uuid");
  d.pci_bus_id = v.req_string("pci_bus_id");
  const std::string cc = v.req_string("compute_capability");
  const auto dot = cc.find('.');
  try {
    if (dot == std::string::npos) throw std::invalid_argument(cc);
    d.compute_capability_major = std::stoi(cc.substr(0, dot));
    d.compute_capability_minor = std::stoi(cc.substr(dot + 1));
  } catch (const std::exception&) {
    v.fail_at("compute_capability", "expected \"<major>.<minor>\", got \"" + cc + "\"");
  }
  const auto sm = v.req_u64("sm_count");
  if (sm == 0 || sm > 100000) v.fail_at("sm_count", "expected a count between 1 and 100000");
  d.sm_count = static_cast<std::uint32_t>(sm);
  d.total_bytes_runtime = Bytes(v.req_u64("total_bytes_runtime"));
  d.total_bytes_driver = Bytes(v.req_u64("total_bytes_driver"));
  d.free_bytes_at_start = Bytes(v.req_u64("free_bytes_at_start"));
  d.driver_version = v.req_string("driver_version");
  d.cuda_driver_version = v.req_string("cuda_driver_version");
  d.cuda_runtime_version = v.req_string("cuda_runtime_version");
  d.mig_mode = v.req_string("mig_mode");
  d.ecc_enabled = v.req_bool("ecc_enabled");
  return d;
}

// Byte figures in the file are required integers; optional in memory only for defaults.
void put_bytes(json& out, const char* key, const std::optional<Bytes>& b) {
  out[key] = b ? json(b->count()) : json(nullptr);
}
void put_number(json& out, const char* key, const std::optional<double>& x) {
  out[key] = x ? json(*x) : json(nullptr);
}

json figures_to_json(const CalibrationFigures& f) {
  json out = json::object();
  put_number(out, "copy_bandwidth_gbps", f.copy_bandwidth_gbps);
  put_number(out, "read_bandwidth_gbps", f.read_bandwidth_gbps);
  out["achieved_tflops"] = f.achieved_tflops;
  put_number(out, "launch_overhead_us", f.launch_overhead_us);
  put_bytes(out, "context_overhead_bytes", f.context_overhead);
  put_bytes(out, "context_overhead_eager_bytes", f.context_overhead_eager);
  put_bytes(out, "stream_bytes", f.stream_bytes);
  put_bytes(out, "cublas_handle_bytes", f.cublas_handle_bytes);
  put_bytes(out, "cublaslt_handle_bytes", f.cublaslt_handle_bytes);
  put_bytes(out, "cublaslt_workspace_bytes", f.cublaslt_workspace);
  put_bytes(out, "allocation_granularity_bytes", f.allocation_granularity);
  put_bytes(out, "reported_total_bytes", f.reported_total);
  put_bytes(out, "largest_single_allocation_bytes", f.largest_single_allocation);
  put_bytes(out, "largest_total_allocation_bytes", f.largest_total_allocation);
  return out;
}

CalibrationFigures figures_from_json(const JsonView& v) {
  CalibrationFigures f;
  f.copy_bandwidth_gbps = v.req_positive("copy_bandwidth_gbps");
  f.read_bandwidth_gbps = v.req_positive("read_bandwidth_gbps");
  // A card without fp8 (or a sweep that skipped a dtype) simply has fewer entries.
  for (const auto& [dtype, tflops] : v.at("achieved_tflops").members()) {
    const double value = tflops.as_number();
    if (!(value > 0)) v.at("achieved_tflops").fail_at(dtype, "expected a positive number");
    f.achieved_tflops[dtype] = value;
  }
  f.launch_overhead_us = v.req_positive("launch_overhead_us");
  f.context_overhead = Bytes(v.req_u64("context_overhead_bytes"));
  f.context_overhead_eager = Bytes(v.req_u64("context_overhead_eager_bytes"));
  f.stream_bytes = Bytes(v.req_u64("stream_bytes"));
  f.cublas_handle_bytes = Bytes(v.req_u64("cublas_handle_bytes"));
  f.cublaslt_handle_bytes = Bytes(v.req_u64("cublaslt_handle_bytes"));
  f.cublaslt_workspace = Bytes(v.req_u64("cublaslt_workspace_bytes"));
  const auto granularity = v.req_u64("allocation_granularity_bytes");
  if (granularity == 0) v.fail_at("allocation_granularity_bytes", "expected a positive size");
  f.allocation_granularity = Bytes(granularity);
  f.reported_total = Bytes(v.req_u64("reported_total_bytes"));
  f.largest_single_allocation = Bytes(v.req_u64("largest_single_allocation_bytes"));
  f.largest_total_allocation = Bytes(v.req_u64("largest_total_allocation_bytes"));
  return f;
}

json gemm_to_json(const GemmCurve& c) {
  json points = json::array();
  for (const auto& p : c.points)
    points.push_back({{"m", p.m}, {"seconds", p.seconds}, {"tflops", p.tflops},
                      {"workspace_bytes", p.workspace_bytes}});
  return {{"dtype", c.dtype}, {"shape", c.shape}, {"n", c.n}, {"k", c.k},
          {"fit", fit_to_json(c.fit)}, {"points", points}};
}

GemmCurve gemm_from_json(const JsonView& v) {
  GemmCurve c;
  c.dtype = v.req_string("dtype");
  c.shape = v.req_string("shape");
  c.n = v.req_u64("n");
  c.k = v.req_u64("k");
  c.fit = fit_from_json(v.at("fit"));
  for (const auto& p : v.at("points").items()) {
    GemmPoint point;
    point.m = p.req_u64("m");
    point.seconds = p.req_positive("seconds");
    point.tflops = p.req_positive("tflops");
    point.workspace_bytes = p.req_u64("workspace_bytes");
    c.points.push_back(point);
  }
  return c;
}

json bandwidth_to_json(const BandwidthCurve& c) {
  json points = json::array();
  for (const auto& p : c.points) points.push_back({{"bytes", p.x}, {"seconds", p.seconds}});
  return {{"kind", c.kind}, {"fit", fit_to_json(c.fit)}, {"points", points}};
}

BandwidthCurve bandwidth_from_json(const JsonView& v) {
  BandwidthCurve c;
  c.kind = v.req_string("kind");
  c.fit = fit_from_json(v.at("fit"));
  for (const auto& p : v.at("points").items())
    c.points.push_back({p.req_positive("bytes"), p.req_positive("seconds")});
  return c;
}

// The figures a deployment entry may carry (vLLM, SGLang, TensorRT-LLM), with their file keys.
constexpr std::array<std::pair<const char*, std::optional<Bytes> DeploymentFigures::*>, 8> kDeploymentFigures = {{
    {"non_torch_bytes", &DeploymentFigures::non_torch},
    {"activation_peak_bytes", &DeploymentFigures::activation_peak},
    {"cuda_graph_bytes", &DeploymentFigures::cuda_graphs},
    {"free_before_load_bytes", &DeploymentFigures::free_before_load},
    {"free_for_kv_bytes", &DeploymentFigures::free_for_kv},
    {"execution_context_bytes", &DeploymentFigures::execution_context},
    {"runtime_buffers_bytes", &DeploymentFigures::runtime_buffers},
    {"decoder_buffers_bytes", &DeploymentFigures::decoder_buffers},
}};

}  // namespace

json deployment_to_json(const DeploymentFigures& d) {
  json figures = json::object();
  for (const auto& [key, slot] : kDeploymentFigures)
    if (d.*slot) figures[key] = (d.*slot)->count();
  return {{"model", d.model}, {"engine", d.engine}, {"engine_version", d.engine_version}, {"gpu", d.gpu},
          {"tp", d.tp},       {"pp", d.pp},         {"figures", figures},                 {"source", d.source}};
}

namespace {

DeploymentFigures deployment_from_json(const JsonView& v) {
  DeploymentFigures d;
  d.model = v.req_string("model");
  d.engine = v.req_string("engine");
  d.engine_version = v.req_string("engine_version");
  d.gpu = v.req_string("gpu");
  d.tp = v.opt_u64("tp").value_or(1);
  d.pp = v.opt_u64("pp").value_or(1);
  if (d.tp == 0 || d.pp == 0) v.fail_at(d.tp == 0 ? "tp" : "pp", "expected a parallel degree >= 1");
  const JsonView figures = v.at("figures");
  bool any = false;
  for (const auto& [key, slot] : kDeploymentFigures)
    if (const auto b = figures.opt_u64(key)) {
      d.*slot = Bytes(*b);
      any = true;
    }
  if (!any) {
    std::string keys;
    for (const auto& entry : kDeploymentFigures) keys += (keys.empty() ? "" : ", ") + std::string(entry.first);
    v.fail_at("figures", "expected at least one of " + keys);
  }
  d.source = v.opt_string("source").value_or("");
  return d;
}

}  // namespace

json calibration_to_json(const Calibration& cal) {
  json out = json::object();
  out["schema"] = kCalibrationSchema;
  out["created_utc"] = cal.created_utc;
  // A deployment-only file measured no device: it has neither device, figures nor fits.
  if (cal.origin != CalibrationOrigin::Deployment) {
    out["device"] = cal.device ? device_to_json(*cal.device) : json(nullptr);
    out["figures"] = figures_to_json(cal.figures);
    json bandwidth = json::array();
    for (const auto& c : cal.bandwidth) bandwidth.push_back(bandwidth_to_json(c));
    json gemm = json::array();
    for (const auto& c : cal.gemm) gemm.push_back(gemm_to_json(c));
    out["fits"] = {{"bandwidth", bandwidth}, {"gemm", gemm}};
    out["measurements"] = cal.measurements;
  }
  if (!cal.deployment.empty()) {
    json entries = json::array();
    for (const auto& d : cal.deployment) entries.push_back(deployment_to_json(d));
    out["deployment"] = entries;
  }
  return out;
}

Calibration calibration_from_json(const json& doc, const std::string& origin) {
  const JsonView root(doc, origin);
  if (!root.is_object()) root.fail("expected a JSON object");
  const std::string schema = root.req_string("schema");
  if (schema != kCalibrationSchema)
    root.fail_at("schema", "expected \"" + std::string(kCalibrationSchema) + "\", got \"" + schema + "\"");
  Calibration cal;
  cal.origin = CalibrationOrigin::Measured;
  cal.source = origin;
  cal.created_utc = root.req_string("created_utc");
  if (const auto d = root.get("deployment")) {
    for (const auto& entry : d->items()) cal.deployment.push_back(deployment_from_json(entry));
    if (cal.deployment.empty()) root.fail_at("deployment", "expected at least one entry");
    // Only deployment entries: a file reconcile started, no device measured.
    if (!root.has("device") && !root.has("figures") && !root.has("fits")) {
      cal.origin = CalibrationOrigin::Deployment;
      return cal;
    }
  }
  cal.device = device_from_json(root.at("device"));
  cal.figures = figures_from_json(root.at("figures"));
  const JsonView fits = root.at("fits");
  for (const auto& c : fits.at("bandwidth").items()) cal.bandwidth.push_back(bandwidth_from_json(c));
  for (const auto& c : fits.at("gemm").items()) cal.gemm.push_back(gemm_from_json(c));
  if (const auto m = root.get("measurements")) {
    if (!m->is_object()) root.fail_at("measurements", "expected an object");
    cal.measurements = m->raw();
  }
  return cal;
}

}  // namespace vramplan::calib
