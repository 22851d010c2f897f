#include "bandwidth_probe.hpp"

#include <algorithm>

#include "cuda_check.hpp"
#include "kernels.hpp"
#include "lt_gemm.hpp"
#include "model_shapes.hpp"
#include "timing.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::probe {
namespace {

const std::vector<std::string> kBufferSizes = {"16777216", "33554432", "67108864", "134217728",
                                               "268435456", "536870912", "1073741824", "2147483648"};
// Only buffers this many times the L2 enter the fit: smaller ones are partly served from cache.
constexpr std::size_t kFitAboveL2 = 4;
constexpr int kReadBlocksPerSm = 8;
constexpr int kLaunchBatch = 1000;
// The GEMV chain takes at most this share of free memory (a full 8B stack is ~14 GB).
constexpr std::size_t kChainMemoryDivisor = 4;
constexpr std::size_t kAlign = 256;

}  // namespace

BandwidthResult probe_bandwidth(ProbeEnv& env) {
  std::size_t largest = 0;
  for (const auto& s : kBufferSizes) largest = std::max<std::size_t>(largest, std::stoull(s));
  DeviceBuffer src(largest), dst(largest), sink(sizeof(unsigned long long));
  CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5a, largest, env.stream));
  const int read_blocks = static_cast<int>(env.device.sm_count) * kReadBlocksPerSm;

  std::map<std::string, calib::BandwidthCurve> curves;
  env.recorder.sweep("bandwidth", {{"kind", {"copy", "read"}}, {"bytes", kBufferSizes}}, [&](const Point& p) {
    const std::string kind = p.get_string("kind");
    const auto size = static_cast<std::size_t>(p.get_int("bytes"));
    if (size == 0 || size > largest || size % 16 != 0)
      return env.recorder.skip("bandwidth", p, "size must be a multiple of 16 up to 2 GiB");
    double moved = 0, seconds = 0;
    if (kind == "copy") {
      moved = 2.0 * static_cast<double>(size);  // every byte read once and written once
      seconds = median_seconds(env.stream, env.repeats, [&] {
        CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), size, cudaMemcpyDeviceToDevice, env.stream));
      });
    } else if (kind == "read") {
      moved = static_cast<double>(size);
      seconds = median_seconds(env.stream, env.repeats, [&] {
        read_stream(src.get(), size, static_cast<unsigned long long*>(sink.get()), read_blocks, env.stream);
      });
    } else {
      return env.recorder.skip("bandwidth", p, "unknown kind (copy, read)");
    }
    const double gbps = moved / seconds / 1e9;
    env.recorder.record("bandwidth", p, {{"time", value(seconds, "s")}, {"bytes_moved", value(moved, "bytes")},
                                         {"bandwidth", value(gbps, "GB/s")}});
    if (size >= kFitAboveL2 * env.l2_bytes) {
      auto& curve = curves[kind];
      curve.kind = kind;
      curve.points.push_back({moved, seconds});
    }
  });

  BandwidthResult result;
  for (auto& [kind, curve] : curves) {
    try {
      curve.fit = calib::fit_time_vs_work(curve.points, kind + " bandwidth");
      result.curves.push_back(curve);
    } catch (const Error& e) {
      Point p;
      p.set("kind", kind);
      env.recorder.skip("bandwidth_fit", p, e.what());
    }
  }

  // Launch overhead: a batch of empty kernels back to back, as a decode step issues them.
  Point p;
  p.set("launches", std::to_string(kLaunchBatch));
  const double batch = median_seconds(env.stream, env.repeats, [&] {
    for (int i = 0; i < kLaunchBatch; ++i) launch_empty(env.stream);
  });
  result.launch_overhead_us = batch / kLaunchBatch * 1e6;
  env.recorder.record("launch", p, {{"per_launch", value(result.launch_overhead_us, "us")}});
  return result;
}

void probe_gemv_chain(ProbeEnv& env, cublasLtHandle_t handle, double read_gbps) {
  const Dtype dtype = Dtype::Bf16;
  std::size_t layer_bytes = 0, max_k = 0, max_n = 0;
  for (std::size_t i = kLlama8bFirst; i < kLlama8bFirst + kLlama8bCount; ++i) {
    const auto& s = kLinearShapes[i];
    layer_bytes += (s.n * s.k * dtype_bytes(dtype) + kAlign - 1) / kAlign * kAlign;
    max_k = std::max<std::size_t>(max_k, s.k);
    max_n = std::max<std::size_t>(max_n, s.n);
  }
  const std::uint64_t layers =
      std::min<std::uint64_t>(kLlama8bLayers, free_bytes() / kChainMemoryDivisor / layer_bytes);
  Point p;
  p.set("model", "llama3-8b");
  p.set("dtype", "bf16");
  p.set("layers", std::to_string(layers));
  if (layers == 0) return env.recorder.skip("gemv_chain", p, "not enough free memory for one layer");
  if (env.recorder.out_of_time()) return env.recorder.skip("gemv_chain", p, "time budget exhausted");

  DeviceBuffer weights(layers * layer_bytes), x(max_k * 2), y(max_n * 2);
  fill_random(weights.get(), dtype, weights.bytes() / 2, 3, env.stream);
  fill_random(x.get(), dtype, max_k, 4, env.stream);
  std::vector<std::unique_ptr<LtGemm>> gemms;
  std::size_t workspace_bytes = 0;
  for (std::size_t i = kLlama8bFirst; i < kLlama8bFirst + kLlama8bCount; ++i) {
    gemms.push_back(std::make_unique<LtGemm>(handle, GemmShape{dtype, 1, kLinearShapes[i].n, kLinearShapes[i].k},
                                             std::size_t{32} << 20));
    if (!gemms.back()->supported()) return env.recorder.skip("gemv_chain", p, gemms.back()->unsupported_reason());
    workspace_bytes = std::max(workspace_bytes, gemms.back()->workspace_bytes());
  }
  DeviceBuffer workspace(workspace_bytes);
  const double seconds = median_seconds(env.stream, env.repeats, [&] {
    auto* base = static_cast<char*>(weights.get());
    for (std::uint64_t l = 0; l < layers; ++l) {
      for (std::size_t g = 0; g < gemms.size(); ++g) {
        const auto& s = kLinearShapes[kLlama8bFirst + g];
        gemms[g]->run(base, x.get(), y.get(), workspace.get(), env.stream);
        base += (s.n * s.k * 2 + kAlign - 1) / kAlign * kAlign;
      }
    }
  });
  const double bytes = static_cast<double>(weights.bytes());
  const double count = static_cast<double>(layers * gemms.size());
  nlohmann::json values = {{"time", value(seconds, "s")}, {"weight_bytes", value(bytes, "bytes")},
                           {"effective_bandwidth", value(bytes / seconds / 1e9, "GB/s")},
                           {"gemms", value(count, "count")}};
  if (read_gbps > 0)
    values["overhead_per_gemm"] = value((seconds - bytes / (read_gbps * 1e9)) / count * 1e6, "us");
  env.recorder.record("gemv_chain", p, std::move(values));
}

}  // namespace vramplan::probe
