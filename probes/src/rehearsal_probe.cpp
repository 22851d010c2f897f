#include "rehearsal_probe.hpp"

#include <algorithm>

#include "cuda_check.hpp"
#include "gemm_probe.hpp"
#include "lt_gemm.hpp"
#include "timing.hpp"

namespace vramplan::probe {
namespace {

// Weights are allocated in pieces of at most 1 GiB, as frameworks allocate one tensor per weight
// rather than one slab (but at least as large as the largest GEMM weight operand, which must lie
// inside one piece).
constexpr std::uint64_t kWeightPiece = std::uint64_t{1} << 30;

struct Tracker {
  std::size_t baseline_free = 0;
  std::size_t min_free = 0;
  void sample() { min_free = std::min(min_free, free_bytes()); }
};

}  // namespace

nlohmann::json run_rehearsal(ProbeEnv& env, const calib::RehearsalInput& input) {
  using nlohmann::json;
  Tracker t;
  t.baseline_free = t.min_free = free_bytes();
  json steps = json::array();
  bool fits = true;
  std::string failed;

  std::uint64_t largest_b = 0, largest_ac = 0;
  for (const auto& g : input.gemms) {
    const auto e = calib::rehearsal_dtype_bytes(g.dtype);
    largest_b = std::max(largest_b, g.n * g.k * e);
    largest_ac = std::max(largest_ac, g.m * g.k * e + g.m * g.n * 2);
  }

  std::vector<DeviceBuffer> held;
  auto allocate = [&](const std::string& name, std::uint64_t bytes) -> void* {
    if (!fits || bytes == 0) return nullptr;
    DeviceBuffer b;
    if (!DeviceBuffer::try_allocate(bytes, b)) {
      fits = false;
      failed = name;
      steps.push_back({{"allocation", name}, {"bytes", bytes}, {"granted", false}});
      return nullptr;
    }
    void* ptr = b.get();
    held.push_back(std::move(b));
    t.sample();
    steps.push_back({{"allocation", name}, {"bytes", bytes}, {"granted", true},
                     {"free_after_bytes", t.min_free}});
    return ptr;
  };

  const std::uint64_t piece = std::max(kWeightPiece, largest_b);
  void* first_weights = nullptr;
  for (std::uint64_t done = 0; done < input.weights.count() && fits; done += piece) {
    void* p = allocate("weights", std::min(piece, input.weights.count() - done));
    if (!first_weights) first_weights = p;
  }
  allocate("kv_cache", input.kv_block.count() * input.kv_blocks);
  void* activations = allocate("activation_workspace", input.activation_workspace.count());

  // GEMM operands live inside the plan's own buffers when they fit there; otherwise they are
  // extra allocations, reported as such (the plan under-counted them).
  json gemms = json::array();
  if (fits && !input.gemms.empty()) {
    void* b_operand = input.weights.count() >= largest_b ? first_weights : allocate("extra_gemm_weight", largest_b);
    void* ac_operand = input.activation_workspace.count() >= largest_ac ? activations
                                                                        : allocate("extra_gemm_activations", largest_ac);
    cublasLtHandle_t handle = nullptr;
    CUBLAS_CHECK(cublasLtCreate(&handle));
    t.sample();
    std::size_t workspace_bytes = 0;
    std::vector<std::unique_ptr<LtGemm>> plans;
    for (const auto& g : input.gemms) {
      plans.push_back(std::make_unique<LtGemm>(handle, GemmShape{parse_dtype(g.dtype), g.m, g.n, g.k}, kWorkspaceCap));
      workspace_bytes = std::max(workspace_bytes, plans.back()->supported() ? plans.back()->workspace_bytes() : 0);
    }
    void* workspace = allocate("cublaslt_workspace", workspace_bytes);
    for (std::size_t i = 0; fits && i < input.gemms.size(); ++i) {
      const auto& g = input.gemms[i];
      json entry = {{"name", g.name}, {"dtype", g.dtype}, {"m", g.m}, {"n", g.n}, {"k", g.k}};
      if (!plans[i]->supported()) {
        entry["skipped"] = true;
        entry["skip_reason"] = plans[i]->unsupported_reason();
      } else {
        auto* a = static_cast<char*>(ac_operand);
        void* c = a + g.m * g.k * calib::rehearsal_dtype_bytes(g.dtype);
        const double seconds = median_seconds(env.stream, env.repeats, [&] {
          plans[i]->run(b_operand, a, c, workspace, env.stream);
        });
        t.sample();
        entry["seconds"] = seconds;
        entry["tflops"] = 2.0 * static_cast<double>(g.m * g.n * g.k) / seconds / 1e12;
        entry["workspace_bytes"] = plans[i]->workspace_bytes();
      }
      gemms.push_back(entry);
    }
    plans.clear();
    CUBLAS_CHECK(cublasLtDestroy(handle));
  }

  const std::uint64_t peak = t.baseline_free - t.min_free;
  json result = {{"schema", "vramplan.rehearsal-result/1"},
                 {"label", input.label},
                 {"device", env.device.name},
                 {"fits", fits},
                 {"failed_allocation", fits ? json(nullptr) : json(failed)},
                 {"planned_bytes", input.total().count()},
                 {"free_before_bytes", t.baseline_free},
                 {"min_free_bytes", t.min_free},
                 {"peak_used_bytes", peak},
                 {"steps", steps},
                 {"gemms", gemms}};
  result["predicted_peak_bytes"] = input.predicted_peak ? json(input.predicted_peak->count()) : json(nullptr);
  return result;  // `held` releases everything
}

}  // namespace vramplan::probe
