#include "gemm_probe.hpp"

#include <algorithm>

#include "cuda_check.hpp"
#include "lt_gemm.hpp"
#include "model_shapes.hpp"
#include "timing.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::probe {
namespace {

const std::vector<std::string> kTokens = {"1", "2", "4", "8", "16", "32", "64", "128", "256",
                                          "512", "1024", "2048", "4096", "8192"};
// Short GEMMs (a few microseconds) are timed as a batch between one pair of events, so event
// resolution and launch jitter do not dominate; the batch time is divided back.
constexpr std::uint64_t kBatchBelowTokens = 64;
constexpr int kBatch = 10;

const LinearShape& find_shape(const std::string& name) {
  for (const auto& s : kLinearShapes)
    if (s.name == name) return s;
  throw_usage("unknown GEMM shape '" + name + "'");
}

}  // namespace

GemmResult probe_gemm(ProbeEnv& env, cublasLtHandle_t handle) {
  std::vector<std::string> shape_names;
  std::size_t max_w = 0, max_x = 0, max_y = 0;
  for (const auto& s : kLinearShapes) {
    shape_names.emplace_back(s.name);
    max_w = std::max<std::size_t>(max_w, s.n * s.k * 2);
    max_x = std::max<std::size_t>(max_x, 8192 * s.k * 2);
    max_y = std::max<std::size_t>(max_y, 8192 * s.n * 2);
  }
  // Sized for the default axes; an --axis override with larger M or shapes is skipped below.
  DeviceBuffer w(max_w), x(max_x), y(max_y), workspace(kWorkspaceCap);
  std::string filled;  // dtype the operand buffers currently hold

  GemmResult result;
  std::map<std::string, calib::GemmCurve> curves;  // key "dtype/shape"
  env.recorder.sweep("gemm", {{"dtype", {"bf16", "fp16", "fp8_e4m3"}}, {"shape", shape_names}, {"m", kTokens}},
                     [&](const Point& p) {
    const std::string dtype_text = p.get_string("dtype");
    const Dtype dtype = parse_dtype(dtype_text);
    const std::string why = dtype_unsupported_reason(dtype, env.device.compute_capability_major,
                                                     env.device.compute_capability_minor);
    if (!why.empty()) return env.recorder.skip("gemm", p, why);
    const auto& linear = find_shape(p.get_string("shape"));
    const GemmShape shape{dtype, static_cast<std::uint64_t>(p.get_int("m")), linear.n, linear.k};
    if (shape.m == 0 || shape.weight_bytes() > w.bytes() || shape.input_bytes() > x.bytes() ||
        shape.output_bytes() > y.bytes())
      return env.recorder.skip("gemm", p, "shape outside the buffers sized for M <= 8192");
    if (filled != dtype_text) {
      fill_random(w.get(), dtype, w.bytes() / dtype_bytes(dtype), 1, env.stream);
      fill_random(x.get(), dtype, x.bytes() / dtype_bytes(dtype), 2, env.stream);
      filled = dtype_text;
    }
    const LtGemm gemm(handle, shape, kWorkspaceCap);
    if (!gemm.supported()) return env.recorder.skip("gemm", p, gemm.unsupported_reason());
    const int batch = shape.m < kBatchBelowTokens ? kBatch : 1;
    double seconds = 0;
    try {
      seconds = median_seconds(env.stream, env.repeats, [&] {
        for (int b = 0; b < batch; ++b) gemm.run(w.get(), x.get(), y.get(), workspace.get(), env.stream);
      }) / batch;
    } catch (const ProbeError& e) {
      // The heuristic offered an algorithm that cublasLtMatmul then refused: a property of this
      // point, not of the card. A real device fault is sticky and surfaces at the next CUDA call.
      return env.recorder.skip("gemm", p, e.what());
    }
    const double tflops = shape.flops() / seconds / 1e12;
    env.recorder.record("gemm", p, {{"time", value(seconds, "s")}, {"throughput", value(tflops, "TFLOP/s")},
                                    {"workspace", value(static_cast<double>(gemm.workspace_bytes()), "bytes")}});
    result.max_workspace = std::max(result.max_workspace, Bytes(gemm.workspace_bytes()));
    auto& curve = curves[dtype_text + "/" + std::string(linear.name)];
    curve.dtype = dtype_text;
    curve.shape = linear.name;
    curve.n = linear.n;
    curve.k = linear.k;
    curve.points.push_back({shape.m, seconds, tflops, gemm.workspace_bytes()});
  });

  // Per shape class: t = t0 + flops / rate. Per dtype, the figure is the rate of the class with
  // the most work per token (largest N*K): its large-M points are the least launch-bound.
  std::map<std::string, std::uint64_t> best_nk;
  for (auto& [key, curve] : curves) {
    if (curve.points.size() < 2) continue;
    std::vector<calib::SamplePoint> samples;
    for (const auto& pt : curve.points)
      samples.push_back({2.0 * static_cast<double>(pt.m * curve.n * curve.k), pt.seconds});
    try {
      curve.fit = calib::fit_time_vs_work(samples, "GEMM " + key);
    } catch (const Error& e) {
      Point p;
      p.set("curve", key);
      env.recorder.skip("gemm_fit", p, e.what());
      continue;
    }
    const std::uint64_t nk = curve.n * curve.k;
    if (nk > best_nk[curve.dtype]) {
      best_nk[curve.dtype] = nk;
      result.achieved_tflops[curve.dtype] = curve.fit.rate_per_second / 1e12;
    }
    result.curves.push_back(curve);
  }
  return result;
}

}  // namespace vramplan::probe
