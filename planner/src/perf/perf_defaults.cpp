#include "vramplan/perf/perf_defaults.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::perf {
namespace {

constexpr std::string_view kSchema = "vramplan.perf-defaults/1";

DefaultRange read_range(const JsonView& root, std::string_view key, double scale, bool fraction) {
  const JsonView r = root.at(key);
  DefaultRange out{r.req_positive("min") * scale, r.req_positive("expected") * scale,
                   r.req_positive("max") * scale};
  if (!(out.min <= out.expected && out.expected <= out.max))
    r.fail("expected min <= expected <= max");
  if (fraction && out.max > 1) r.fail_at("max", "a fraction must be at most 1");
  if (!r.get("sources")) r.fail("every default needs its sources");
  return out;
}

// A figure that may be zero (read_range demands positive ones): the overlap fraction (upper bound
// 1), an engine's per-layer overhead (no upper bound).
DefaultRange read_nonnegative(const JsonView& r, double scale, double upper) {
  DefaultRange out{r.req_number("min") * scale, r.req_number("expected") * scale, r.req_number("max") * scale};
  if (!(0 <= out.min && out.min <= out.expected && out.expected <= out.max && out.max <= upper))
    r.fail(upper == 1 ? "expected 0 <= min <= expected <= max <= 1" : "expected 0 <= min <= expected <= max");
  return out;
}

DefaultRange read_unit_interval(const JsonView& root, std::string_view key) {
  const JsonView r = root.at(key);
  const DefaultRange out = read_nonnegative(r, 1, 1);
  if (!r.get("sources")) r.fail("every default needs its sources");
  return out;
}

KernelCountDefaults read_kernel_counts(const JsonView& k) {
  KernelCountDefaults out;
  out.vendor = k.req_string("vendor");
  for (auto [key, range] : {std::pair{"kernel_us", &out.per_kernel_s}, std::pair{"prompt_launch_us", &out.per_prompt_launch_s},
                            std::pair{"prompt_block_fp8_gemm_us", &out.prompt_block_fp8_s}}) {
    const JsonView cost = k.at(key);
    *range = read_nonnegative(cost, 1e-6, std::numeric_limits<double>::infinity());
    out.fitted = out.fitted || cost.opt_bool("fitted").value_or(false);
    if (!cost.get("sources")) cost.fail("every default needs its sources");
  }
  if (auto by_cc = k.get("kernel_us_by_capability"))
    for (const auto& [major, cost] : by_cc->members()) {
      int cc = 0;
      try {
        cc = std::stoi(major);
      } catch (const std::exception&) {
        cost.fail("expected a compute capability major as the key");
      }
      if (cc < 1 || cc > 99 || std::to_string(cc) != major) cost.fail("expected a compute capability major in 1..99 as the key");
      out.per_kernel_s_by_capability[cc] = read_nonnegative(cost, 1e-6, std::numeric_limits<double>::infinity());
      out.fitted = out.fitted || cost.opt_bool("fitted").value_or(false);
      if (!cost.get("sources")) cost.fail("every default needs its sources");
    }
  for (const auto& [arch, e] : k.at("architectures").members()) {
    LayerKernelCounts c;
    c.weights = e.req_string("weights");
    if (c.weights != "bf16" && c.weights != "fp8-block" && c.weights != "mxfp4")
      e.fail_at("weights", "expected \"bf16\", \"fp8-block\" or \"mxfp4\"");
    if (auto cc = e.get("capability_major")) {
      const double major = cc->as_number();
      if (!(major >= 1 && major <= 99 && major == static_cast<int>(major))) cc->fail("expected a compute capability major in 1..99");
      c.capability_major = static_cast<int>(major);
    }
    const auto count = [&](const JsonView& v) {
      const double n = v.as_number();
      if (!(n >= 0 && n <= 1000)) v.fail("expected a kernel count in 0..1000");
      return n;
    };
    // A layer kind as model/spec.hpp names it ("full", "mla", "recurrent", ...): a misspelt one
    // would leave every model of the architecture uncounted without a word.
    const auto kind_name = [](const JsonView& parts, const std::string& kind) {
      if (!layer_attention_from_name(kind)) parts.fail_at(kind, "not a layer kind (full, sliding, chunked, mla, recurrent, none)");
      return kind;
    };
    const JsonView attention = e.at("attention");
    for (const auto& [kind, n] : attention.members()) c.attention.emplace(kind_name(attention, kind), count(n));
    if (auto m = e.get("moe_mlp")) c.moe_mlp = count(*m);
    if (auto m = e.get("dense_mlp")) c.dense_mlp = count(*m);
    if (auto m = e.get("extra_allreduces")) c.extra_allreduces = count(*m);
    const JsonView launches = e.at("launches");
    const JsonView launched = launches.at("attention");
    for (const auto& [kind, n] : launched.members()) c.launches.attention.emplace(kind_name(launched, kind), count(n));
    if (auto m = launches.get("moe_mlp")) c.launches.moe_mlp = count(*m);
    if (auto m = launches.get("dense_mlp")) c.launches.dense_mlp = count(*m);
    if (!e.get("source")) e.fail("every count needs its source");
    out.architectures.emplace(arch, std::move(c));
  }
  return out;
}

StepOverheadDefaults read_step_overhead(const JsonView& engine) {
  StepOverheadDefaults s;
  s.per_step_s = read_nonnegative(engine.at("step_ms"), 1e-3, std::numeric_limits<double>::infinity());
  s.per_layer_s = read_nonnegative(engine.at("layer_us"), 1e-6, std::numeric_limits<double>::infinity());
  s.fitted = engine.opt_bool("fitted").value_or(false);
  constexpr double kNoUpper = std::numeric_limits<double>::infinity();
  for (auto [key, range] : {std::pair{"moe_layer_us", &s.per_moe_layer_s},
                            std::pair{"prompt_moe_layer_us", &s.prompt_per_moe_layer_s}})
    if (auto p = engine.get(key)) {
      *range = read_nonnegative(*p, 1e-6, kNoUpper);
      s.moe_fitted = s.moe_fitted || p->opt_bool("fitted").value_or(false);
    }
  for (auto [key, by_vendor] : {std::pair{"block_fp8_gemm_us", &s.block_fp8_gemm_s},
                                 std::pair{"prompt_block_fp8_gemm_us", &s.prompt_block_fp8_gemm_s}})
    if (auto b = engine.get(key))
      for (const auto& [vendor, range] : b->members()) {
        by_vendor->emplace(vendor, read_nonnegative(range, 1e-6, kNoUpper));
        s.block_fp8_fitted = s.block_fp8_fitted || range.opt_bool("fitted").value_or(false);
      }
  if (auto k = engine.get("kernel_counts")) s.kernel_counts = read_kernel_counts(*k);
  if (!engine.get("sources")) engine.fail("every default needs its sources");
  return s;
}

}  // namespace

PerfDefaults load_perf_defaults(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file);
  const JsonView root(doc, file.string());
  if (root.req_string("schema") != kSchema)
    root.fail_at("schema", "expected \"" + std::string(kSchema) + "\"");
  PerfDefaults d;
  d.source = file.string();
  d.bandwidth_efficiency = read_range(root, "bandwidth_efficiency", 1, true);
  d.tensor_efficiency = read_range(root, "tensor_efficiency", 1, true);
  // Derived, not stored: the efficiency's range over its max, which is what the best GEMMs reach
  // on Hopper (tensor_efficiency's sources), so an H100's ceiling x the share is its old rate.
  d.tensor_share_of_mamf = {d.tensor_efficiency.min / d.tensor_efficiency.max,
                            d.tensor_efficiency.expected / d.tensor_efficiency.max, 1.0};
  d.training_efficiency = read_range(root, "training_efficiency", 1, true);
  const JsonView overhead = root.at("step_overhead");
  for (const auto& [engine, entry] : overhead.at("engines").members())
    d.step_overhead.emplace(engine, read_step_overhead(entry));
  if (!d.step_overhead.contains("default"))
    overhead.at("engines").fail("expected a \"default\" entry (engines without their own)");
  d.link_efficiency = read_range(root, "link_efficiency", 1, true);
  d.link_latency_s = read_range(root, "link_latency_us", 1e-6, false);
  d.network_efficiency = read_range(root, "network_efficiency", 1, true);
  d.network_latency_s = read_range(root, "network_latency_us", 1e-6, false);
  d.network_gbit_default = read_range(root, "network_gbit_default", 1, false);
  d.memory_compute_overlap = read_unit_interval(root, "memory_compute_overlap");
  if (root.get("llamacpp_mmvq_bytes_per_sm_cycle"))
    d.llamacpp_mmvq_bytes_per_sm_cycle = read_range(root, "llamacpp_mmvq_bytes_per_sm_cycle", 1, false);
  for (const auto& [gen, value] : root.at("pcie_gbps_per_direction").members()) {
    if (gen == "unit" || gen == "sources") continue;
    int g = 0;
    try {
      g = std::stoi(gen);
    } catch (const std::exception&) {
      value.fail("expected a PCIe generation number as the key");
    }
    const double gbps = value.as_number();
    if (!(gbps > 0)) value.fail("expected a positive number");
    d.pcie_gbps_per_direction[g] = gbps;
  }
  return d;
}

std::string step_overhead_entry(std::string_view engine, const nlohmann::json& engine_view) {
  const auto off = [&](const char* key) {
    const auto it = engine_view.find(key);
    return it != engine_view.end() && it->is_boolean() && !it->get<bool>();
  };
  if (engine == "vllm" && off("async_scheduling")) return "vllm-sync";
  if (engine == "llamacpp" && off("cuda_graphs")) return "llamacpp-nograph";
  return std::string(engine);
}

std::string_view kernel_count_format(const std::vector<bool>& block_scaled_fp8, std::string_view weights_precision) {
  if (std::find(block_scaled_fp8.begin(), block_scaled_fp8.end(), true) != block_scaled_fp8.end()) return "fp8-block";
  if (weights_precision.starts_with("mxfp4")) return "mxfp4";  // gpt-oss: "mxfp4 (mixed: ... bf16 kept)"
  return weights_precision == "bf16" || weights_precision == "fp16" ? "bf16" : "";
}

const LayerKernelCounts* StepOverheadDefaults::counted_layers(std::string_view vendor, int capability_major,
                                                               std::string_view architecture,
                                                               const std::vector<bool>& block_scaled_fp8,
                                                               std::string_view weights_precision) const {
  if (!kernel_counts || kernel_counts->vendor != vendor) return nullptr;
  const std::string_view weights = kernel_count_format(block_scaled_fp8, weights_precision);
  const auto it = kernel_counts->architectures.find(architecture);
  if (it == kernel_counts->architectures.end() || it->second.weights != weights) return nullptr;
  if (it->second.capability_major && *it->second.capability_major != capability_major) return nullptr;
  return &it->second;
}

const DefaultRange& KernelCountDefaults::per_kernel_for(std::optional<int> capability_major) const {
  if (capability_major)
    if (const auto it = per_kernel_s_by_capability.find(*capability_major); it != per_kernel_s_by_capability.end())
      return it->second;
  return per_kernel_s;
}

const StepOverheadDefaults& PerfDefaults::step_overhead_for(std::string_view engine) const {
  if (auto it = step_overhead.find(engine); it != step_overhead.end()) return it->second;
  return step_overhead.at("default");  // the loader guarantees it
}

}  // namespace vramplan::perf
