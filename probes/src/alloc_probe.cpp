#include "alloc_probe.hpp"

#include <algorithm>
#include <vector>

#include "cuda_check.hpp"
#include "timing.hpp"
#include "vramplan/calib/fit.hpp"

namespace vramplan::probe {
namespace {

constexpr int kRepeats = 3;
// Sizes straddling the expected 2 MiB granule, then powers up to 1 GiB (+1 to see rounding).
const std::vector<std::string> kSizes = {"1", "512", "4096", "65536", "1048576", "2097152", "2097153",
                                         "3145728", "4194305", "16777216", "67108865", "268435456",
                                         "1073741824", "1073741825"};
constexpr std::size_t kTotalChunk = std::size_t{1} << 30;  // "largest total": 1 GiB pieces first

// Largest size that cudaMalloc grants, a multiple of `step` not above `limit`. Huge allocations
// take time to map, so instead of bisecting all of [0, limit] it walks down from `limit` in
// doubling steps (the answer is normally within a few MiB of free memory), then bisects the
// last gap.
std::size_t largest_single(std::size_t step, std::size_t limit) {
  std::size_t refused = limit / step + 1;  // in units of `step`
  std::size_t granted = 0;
  for (std::size_t back = 0; refused > 0; back = back == 0 ? 1 : back * 2) {
    const std::size_t units = limit / step > back ? limit / step - back : 0;
    DeviceBuffer trial;
    if (units > 0 && DeviceBuffer::try_allocate(units * step, trial)) {
      granted = units;
      break;
    }
    refused = units;
    if (units == 0) return 0;
  }
  while (refused - granted > 1) {
    const std::size_t mid = granted + (refused - granted) / 2;
    DeviceBuffer trial;
    if (DeviceBuffer::try_allocate(mid * step, trial)) granted = mid;
    else refused = mid;
  }
  return granted * step;
}

// Sum of allocations granted until nothing more fits: 1 GiB pieces, then halving to `step`.
std::size_t largest_total(std::size_t step) {
  std::vector<DeviceBuffer> held;
  std::size_t total = 0;
  for (std::size_t chunk = std::max(kTotalChunk, step); chunk >= step; chunk /= 2) {
    DeviceBuffer b;
    while (DeviceBuffer::try_allocate(chunk, b)) {
      total += chunk;
      held.push_back(std::move(b));
    }
  }
  return total;  // `held` frees everything here
}

}  // namespace

AllocResult probe_allocation(ProbeEnv& env) {
  AllocResult result;
  std::size_t granularity = 0;
  env.recorder.sweep("alloc", {{"bytes", kSizes}}, [&](const Point& p) {
    const auto size = static_cast<std::size_t>(p.get_int("bytes"));
    std::vector<double> deltas;
    for (int r = 0; r < kRepeats; ++r) {
      const std::size_t before = free_bytes();
      DeviceBuffer b(size);
      const std::size_t after = free_bytes();
      deltas.push_back(static_cast<double>(before > after ? before - after : 0));
    }
    const auto delta = static_cast<std::size_t>(calib::median(deltas));
    if (delta > 0) granularity = granularity == 0 ? delta : std::min(granularity, delta);
    env.recorder.record("alloc", p, {{"free_delta_bytes", value(static_cast<double>(delta), "bytes")}});
  });
  if (granularity == 0) throw ProbeError("no allocation changed cudaMemGetInfo free: granularity unknown");
  result.granularity = Bytes(granularity);

  Point none;
  const std::size_t free_now = free_bytes();
  result.largest_single = Bytes(largest_single(granularity, free_now));
  result.largest_total = Bytes(largest_total(granularity));
  env.recorder.record("alloc_limits", none,
                      {{"free_bytes", value(static_cast<double>(free_now), "bytes")},
                       {"largest_single_bytes", value(static_cast<double>(result.largest_single.count()), "bytes")},
                       {"largest_total_bytes", value(static_cast<double>(result.largest_total.count()), "bytes")},
                       {"free_after_release_bytes", value(static_cast<double>(free_bytes()), "bytes")}});

  // cudaMallocAsync: what the pool reserves for a request, whether a freed block is returned at
  // the next synchronisation (release threshold 0, the default) or kept (threshold = max).
  int pools = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
  env.recorder.sweep("malloc_async", {{"bytes", {"1", "2097152", "268435456"}}}, [&](const Point& p) {
    if (!pools) return env.recorder.skip("malloc_async", p, "device does not support memory pools");
    const auto size = static_cast<std::size_t>(p.get_int("bytes"));
    cudaMemPool_t pool = nullptr;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    auto cycle = [&](std::uint64_t threshold) {
      CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
      const std::size_t before = free_bytes();
      void* ptr = nullptr;
      CUDA_CHECK(cudaMallocAsync(&ptr, size, env.stream));
      const std::size_t held = free_bytes();
      CUDA_CHECK(cudaFreeAsync(ptr, env.stream));
      const std::size_t after_free = free_bytes();
      return std::pair<double, double>{static_cast<double>(before > held ? before - held : 0),
                                       static_cast<double>(before > after_free ? before - after_free : 0)};
    };
    const auto [reserved, kept_default] = cycle(0);
    const auto [reserved_max, kept_max] = cycle(UINT64_MAX);
    CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    std::uint64_t zero = 0;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &zero));
    env.recorder.record("malloc_async", p,
                        {{"reserved_bytes", value(reserved, "bytes")},
                         {"kept_after_free_threshold_0_bytes", value(kept_default, "bytes")},
                         {"reserved_threshold_max_bytes", value(reserved_max, "bytes")},
                         {"kept_after_free_threshold_max_bytes", value(kept_max, "bytes")}});
  });
  return result;
}

}  // namespace vramplan::probe
