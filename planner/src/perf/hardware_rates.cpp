#include "vramplan/perf/hardware_rates.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "vramplan/core/error.hpp"

namespace vramplan::perf {
namespace {

std::string fmt(double v, const char* spec = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string range_text(const DefaultRange& r) {
  return fmt(r.expected) + " [" + fmt(r.min) + "-" + fmt(r.max) + "]";
}

struct DtypeRow {
  std::string_view dtype;
  std::optional<double> DenseTflops::*field;
  std::string_view calibration_key;
};
constexpr DtypeRow kDtypes[] = {
    {"bf16", &DenseTflops::bf16, "bf16"}, {"fp16", &DenseTflops::fp16, "fp16"},
    {"fp8", &DenseTflops::fp8, "fp8_e4m3"}, {"int8", &DenseTflops::int8, "int8"},
    {"fp4", &DenseTflops::fp4, "fp4"},    {"tf32", &DenseTflops::tf32, "tf32"},
    {"fp32", &DenseTflops::fp32, "fp32"},
};

const DtypeRow& dtype_row(std::string_view dtype) {
  for (const DtypeRow& row : kDtypes)
    if (row.dtype == dtype) return row;
  throw_usage("performance model: unknown compute dtype '" + std::string(dtype) +
              "' (bf16, fp16, fp8, int8, fp4, tf32, fp32)");
}

// Collectives over more GPUs than the link joins run between hosts (docs/performance.md "Across
// hosts"): the NIC per GPU x the achieved share, a fixed time per collective; the slow end takes
// the low share and the long time, and for a card without a reference platform the low NIC rate.
void set_network(const DatasheetFigures& sheet, const PerfDefaults& d, HardwareRates& exp, HardwareRates& slow,
                 HardwareRates& fast, std::string& basis) {
  const DefaultRange nic = sheet.network_gbit ? DefaultRange{*sheet.network_gbit, *sheet.network_gbit, *sheet.network_gbit}
                                              : d.network_gbit_default;
  const auto bytes = [](double gbit) { return gbit / 8 * 1e9; };
  for (HardwareRates* r : {&exp, &slow, &fast}) r->scale_up_gpus = sheet.scale_up_gpus;
  exp.network_bytes_per_s = bytes(nic.expected) * d.network_efficiency.expected;
  slow.network_bytes_per_s = bytes(nic.min) * d.network_efficiency.min;
  fast.network_bytes_per_s = bytes(nic.max) * d.network_efficiency.max;
  exp.network_latency_s = d.network_latency_s.expected;
  slow.network_latency_s = d.network_latency_s.max;
  fast.network_latency_s = d.network_latency_s.min;
  basis += "; beyond " + std::to_string(sheet.scale_up_gpus) + " GPUs (one " +
           (sheet.scale_up_is_nvlink_domain ? "NVLink domain" : sheet.node_from_flag ? "host, --node-gpus" : "host") +
           "): network " +
           (sheet.network_gbit ? fmt(*sheet.network_gbit) + " Gb/s per GPU (" +
                                     (sheet.network_from_flag ? std::string("--network-gbit")
                                                              : std::string("data/gpus.json reference platform")) + ")"
                               : range_text(d.network_gbit_default) +
                                     " Gb/s per GPU (assumed: no reference platform for this card)") +
           " x " + range_text(d.network_efficiency) + ", " + fmt(d.network_latency_s.expected * 1e6) +
           " us per collective between hosts";
}

}  // namespace

PerfHardware perf_hardware_from(const DatasheetFigures& sheet,
                                const std::optional<MeasuredFigures>& measured,
                                const PerfDefaults& d, std::string_view engine) {
  PerfHardware hw;
  HardwareRates exp, slow, fast;
  std::string basis;
  const std::string defaults_file = " (" + d.source + ")";
  // A rate = a published figure x an efficiency range: the slow end takes its min, the fast its max.
  const auto scaled_range = [&](double HardwareRates::*field, double figure, const DefaultRange& efficiency) {
    exp.*field = figure * efficiency.expected;
    slow.*field = figure * efficiency.min;
    fast.*field = figure * efficiency.max;
  };

  const bool bw_measured = measured && measured->bandwidth_gbps;
  if (bw_measured) {
    exp.bandwidth_bytes_per_s = slow.bandwidth_bytes_per_s = fast.bandwidth_bytes_per_s =
        *measured->bandwidth_gbps * 1e9;
    basis += "bandwidth: calibration " + measured->source + " (" + fmt(*measured->bandwidth_gbps) + " GB/s)";
  } else if (sheet.bandwidth_gbps) {
    scaled_range(&HardwareRates::bandwidth_bytes_per_s, *sheet.bandwidth_gbps * 1e9, d.bandwidth_efficiency);
    basis += "bandwidth: datasheet " + fmt(*sheet.bandwidth_gbps) + " GB/s x " +
             range_text(d.bandwidth_efficiency) + defaults_file;
  } else {
    throw_usage("performance model: no memory bandwidth known for " + sheet.gpu +
                " (data/gpus.json gives no sourced figure and no calibration measured one; "
                "docs/calibration.md)");
  }

  const bool flops_measured = measured && measured->tensor_tflops;
  if (flops_measured) {
    exp.tensor_flops_per_s = slow.tensor_flops_per_s = fast.tensor_flops_per_s =
        *measured->tensor_tflops * 1e12;
    basis += "; tensor: calibration " + measured->source + " (" + fmt(*measured->tensor_tflops) + " TFLOPS)";
  } else if (sheet.mamf_tflops) {
    // The card's measured matmul ceiling x the share of it a forward's GEMMs reach
    // (docs/performance.md section 4: the default efficiency's ratio to its Hopper ceiling).
    scaled_range(&HardwareRates::tensor_flops_per_s, *sheet.mamf_tflops * 1e12, d.tensor_share_of_mamf);
    basis += "; tensor " + sheet.mamf_label + ": measured matmul ceiling (MAMF) " + fmt(*sheet.mamf_tflops) +
             " TFLOPS (data/gpus.json) x " + range_text(d.tensor_share_of_mamf) + defaults_file;
  } else if (sheet.tensor_tflops) {
    scaled_range(&HardwareRates::tensor_flops_per_s, *sheet.tensor_tflops * 1e12, d.tensor_efficiency);
    basis += "; tensor " + sheet.tflops_label + ": datasheet " + fmt(*sheet.tensor_tflops) +
             " dense TFLOPS x " + range_text(d.tensor_efficiency) + defaults_file;
  } else {
    throw_usage("performance model: no " + sheet.tflops_label + " tensor throughput known for " +
                sheet.gpu + " (data/gpus.json gives no sourced figure and no calibration measured one; "
                "docs/calibration.md)");
  }

  // The probe does not measure the engine's step overhead: always the defaults, as a range.
  const bool own_entry = !engine.empty() && d.step_overhead.contains(engine);
  const StepOverheadDefaults& o = d.step_overhead_for(engine);
  // Overheads: the slow end takes each range's max, the fast end its min.
  const auto set_overhead = [&](double HardwareRates::*field, const DefaultRange& range) {
    exp.*field = range.expected;
    slow.*field = range.max;
    fast.*field = range.min;
  };
  set_overhead(&HardwareRates::step_overhead_s, o.per_step_s);
  set_overhead(&HardwareRates::layer_overhead_s, o.per_layer_s);
  set_overhead(&HardwareRates::moe_layer_overhead_s, o.per_moe_layer_s);
  set_overhead(&HardwareRates::prompt_moe_layer_overhead_s, o.prompt_per_moe_layer_s);
  basis += "; step overhead (" + (own_entry ? std::string(engine) : std::string("default")) + ", " +
           (o.fitted ? "fitted" : "not fitted") + "): " + fmt(o.per_step_s.expected * 1e3) + " ms [" +
           fmt(o.per_step_s.min * 1e3) + "-" + fmt(o.per_step_s.max * 1e3) + "] + " +
           fmt(o.per_layer_s.expected * 1e6) + " us [" + fmt(o.per_layer_s.min * 1e6) + "-" +
           fmt(o.per_layer_s.max * 1e6) + "] per layer";
  if (o.per_moe_layer_s.expected > 0 || o.prompt_per_moe_layer_s.expected > 0)
    basis += " + per MoE layer (" + std::string(o.moe_fitted ? "fitted" : "not fitted") + ") " +
             fmt(o.per_moe_layer_s.expected * 1e6) + " us in a decode step, " +
             fmt(o.prompt_per_moe_layer_s.expected * 1e6) + " us in a step with prompt tokens";
  const auto decode_fp8 = o.block_fp8_gemm_s.find(sheet.vendor);
  const auto prompt_fp8 = o.prompt_block_fp8_gemm_s.find(sheet.vendor);
  const DefaultRange none{};
  const DefaultRange& d_fp8 = decode_fp8 != o.block_fp8_gemm_s.end() ? decode_fp8->second : none;
  const DefaultRange& p_fp8 = prompt_fp8 != o.prompt_block_fp8_gemm_s.end() ? prompt_fp8->second : none;
  set_overhead(&HardwareRates::block_fp8_gemm_overhead_s, d_fp8);
  set_overhead(&HardwareRates::prompt_block_fp8_gemm_overhead_s, p_fp8);
  if (d_fp8.expected > 0 || p_fp8.expected > 0)
    basis += " + per block-scaled FP8 GEMM on " + sheet.vendor + " (" + (o.block_fp8_fitted ? "fitted" : "not fitted") +
             ") " + fmt(d_fp8.expected * 1e6) + " us [" + fmt(d_fp8.min * 1e6) + "-" + fmt(d_fp8.max * 1e6) +
             "] in a decode step, " + fmt(p_fp8.expected * 1e6) + " us [" + fmt(p_fp8.min * 1e6) + "-" +
             fmt(p_fp8.max * 1e6) + "] in a step with prompt tokens";

  if (o.kernel_counts && o.kernel_counts->vendor == sheet.vendor) {
    const DefaultRange& k = o.kernel_counts->per_kernel_for(sheet.capability_major);
    const bool own_cc = &k != &o.kernel_counts->per_kernel_s;
    set_overhead(&HardwareRates::decode_kernel_overhead_s, k);
    set_overhead(&HardwareRates::prompt_launch_overhead_s, o.kernel_counts->per_prompt_launch_s);
    set_overhead(&HardwareRates::counted_prompt_block_fp8_s, o.kernel_counts->prompt_block_fp8_s);
    const DefaultRange& pl = o.kernel_counts->per_prompt_launch_s;
    const DefaultRange& pf = o.kernel_counts->prompt_block_fp8_s;
    basis += "; for the architectures whose kernels were counted (" +
             std::to_string(o.kernel_counts->architectures.size()) + ", data/perf_defaults.json kernel_counts, " +
             (o.kernel_counts->fitted ? "fitted" : "not fitted") + "), instead of the per-layer terms: " +
             fmt(k.expected * 1e6) + " us [" + fmt(k.min * 1e6) + "-" + fmt(k.max * 1e6) + "] per kernel of a decode step" +
             (own_cc ? " (compute capability " + std::to_string(*sheet.capability_major) + ".x)" : std::string()) +
             ", " + fmt(pl.expected * 1e6) + " us [" + fmt(pl.min * 1e6) + "-" + fmt(pl.max * 1e6) +
             "] per kernel launched in a step with prompt tokens + " + fmt(pf.expected * 1e6) +
             " us per block-scaled FP8 GEMM in it";
  }

  // Overlap: the slow end hides the least (the larger of the two bounds' sum), the fast end the most.
  exp.memory_compute_overlap = d.memory_compute_overlap.expected;
  slow.memory_compute_overlap = d.memory_compute_overlap.min;
  fast.memory_compute_overlap = d.memory_compute_overlap.max;
  basis += "; memory/math overlap: default " + fmt(d.memory_compute_overlap.expected) + " [" +
           fmt(d.memory_compute_overlap.min) + "-" + fmt(d.memory_compute_overlap.max) + "]";

  if (sheet.link_gbps) {
    const double link = *sheet.link_gbps * 1e9;
    exp.link_bytes_per_s = link * d.link_efficiency.expected;
    slow.link_bytes_per_s = link * d.link_efficiency.min;
    fast.link_bytes_per_s = link * d.link_efficiency.max;
    exp.link_mesh_links = slow.link_mesh_links = fast.link_mesh_links = sheet.link_mesh_links;
    exp.link_latency_s = d.link_latency_s.expected;
    slow.link_latency_s = d.link_latency_s.max;
    fast.link_latency_s = d.link_latency_s.min;
    basis += "; link: " + sheet.link_label + " x " + range_text(d.link_efficiency) +
             ", " + fmt(d.link_latency_s.expected * 1e6) + " us per all-reduce";
    if (sheet.scale_up_gpus > 0) set_network(sheet, d, exp, slow, fast, basis);
  }

  // A MIG slice's datasheet figures are the card's, scaled: say so before the figures themselves.
  if (!sheet.scaled_from.empty() && !(bw_measured && flops_measured)) basis = sheet.scaled_from + "; " + basis;
  hw.expected = exp;
  hw.slow = slow;
  hw.fast = fast;
  hw.basis = basis;
  hw.calibrated = bw_measured && flops_measured;
  return hw;
}

DatasheetFigures datasheet_figures(const GpuSpec& gpu, std::string_view compute_dtype,
                                   const PerfDefaults& defaults) {
  const DtypeRow& row = dtype_row(compute_dtype);
  DatasheetFigures s;
  s.gpu = gpu.id;
  s.vendor = gpu.vendor;
  s.bandwidth_gbps = gpu.bandwidth_gbps;  // a slice's: the card's x its memory fraction (catalogue)
  const DenseTflops& tflops = gpu.mig ? gpu.mig->card_tflops : gpu.tflops;
  s.tensor_tflops = tflops.*row.field;
  s.tflops_label = std::string(row.dtype);
  if (!s.tensor_tflops && row.dtype == "bf16" && tflops.fp16) {
    s.tensor_tflops = tflops.fp16;
    s.tflops_label = "bf16 (fp16 figure)";
  }
  s.mamf_tflops = gpu.mamf_tflops.*row.field;
  s.mamf_label = std::string(row.dtype);
  // An fp16 forward on a card measured in bf16 only: the bf16 ceiling x the datasheet's fp16 / bf16
  // ratio (1 on NVIDIA, whose tensor cores run both at one rate).
  if (!s.mamf_tflops && row.dtype == "fp16" && gpu.mamf_tflops.bf16 && tflops.fp16 && tflops.bf16) {
    s.mamf_tflops = *gpu.mamf_tflops.bf16 * *tflops.fp16 / *tflops.bf16;
    s.mamf_label = "fp16 (bf16 ceiling x datasheet fp16 / bf16)";
  }
  if (gpu.mig) {
    // Tensor cores sit in the SMs: a slice with 3 of the card's 7 compute slices has 3/7 of its rate.
    const auto to_slice = [&](std::optional<double>& tflops_of_card, std::string& label) {
      if (!tflops_of_card) return;
      label += " (" + gpu.mig->sm_fraction.str() + " of the card's " + fmt(*tflops_of_card) + ")";
      *tflops_of_card *= gpu.mig->sm_fraction.value();
    };
    to_slice(s.mamf_tflops, s.mamf_label);
    to_slice(s.tensor_tflops, s.tflops_label);
    s.scaled_from = mig_scaling_note(gpu);
  }
  if (gpu.interconnect.peer_links && gpu.interconnect.peer_link_gbps) {
    s.link_gbps = *gpu.interconnect.peer_link_gbps / 2;
    s.link_mesh_links = *gpu.interconnect.peer_links;
    s.link_label = "GPU mesh of " + std::to_string(s.link_mesh_links) + " links x " +
                   fmt(*gpu.interconnect.peer_link_gbps) + " GB/s total / 2, min(TP - 1, " +
                   std::to_string(s.link_mesh_links) + ") of them per all-reduce";
  } else if (gpu.interconnect.nvlink_gbps) {
    s.link_gbps = *gpu.interconnect.nvlink_gbps / 2;
    s.link_label = "NVLink " + fmt(*gpu.interconnect.nvlink_gbps) + " GB/s total / 2";
  } else if (gpu.interconnect.pcie_gen) {
    auto it = defaults.pcie_gbps_per_direction.find(*gpu.interconnect.pcie_gen);
    if (it != defaults.pcie_gbps_per_direction.end()) {
      s.link_gbps = it->second;
      s.link_label = "PCIe gen " + std::to_string(it->first) + " x16 " + fmt(it->second) + " GB/s";
    }
  }
  s.scale_up_gpus = fabric_gpus(gpu).value_or(0);
  s.scale_up_is_nvlink_domain = gpu.interconnect.nvlink_domain_gpus.has_value();
  s.network_gbit = gpu.interconnect.network_gbit;
  const auto from_flag = [&](const char* group, const char* flag) {
    const auto it = gpu.sources.find(group);
    return it != gpu.sources.end() && std::find(it->second.begin(), it->second.end(), flag) != it->second.end();
  };
  s.network_from_flag = from_flag("network", kNetworkGbitFlag);
  s.node_from_flag = from_flag("node_gpus", kNodeGpusFlag);
  if (gpu.compute_capability) s.capability_major = gpu.compute_capability->major;
  return s;
}

std::string mig_scaling_note(const GpuSpec& gpu) {
  if (!gpu.mig) return "";
  return "MIG " + gpu.mig->profile + " scaled from the full " + gpu.parent_id + ": " + gpu.mig->sm_fraction.str() +
         " of its SMs (tensor rate), " + gpu.mig->memory_fraction.str() + " of its memory slices (bandwidth" +
         (gpu.mig->card_bandwidth_gbps ? " " + fmt(*gpu.mig->card_bandwidth_gbps) + " GB/s x " +
                                             gpu.mig->memory_fraction.str()
                                       : std::string()) +
         ")";
}

std::optional<MeasuredFigures> measured_figures(const calib::Calibration& cal,
                                                std::string_view compute_dtype) {
  if (cal.origin != calib::CalibrationOrigin::Measured) return std::nullopt;
  const DtypeRow& row = dtype_row(compute_dtype);
  MeasuredFigures m;
  m.source = cal.source;
  m.bandwidth_gbps = cal.figures.read_bandwidth_gbps ? cal.figures.read_bandwidth_gbps
                                                     : cal.figures.copy_bandwidth_gbps;
  const auto& tf = cal.figures.achieved_tflops;
  if (auto it = tf.find(std::string(row.calibration_key)); it != tf.end()) m.tensor_tflops = it->second;
  return m;
}

PerfHardware perf_hardware_from(const GpuSpec& gpu, const calib::Calibration* calibration,
                                std::string_view compute_dtype, const PerfDefaults& defaults,
                                std::string_view engine) {
  std::optional<MeasuredFigures> measured;
  if (calibration) measured = measured_figures(*calibration, compute_dtype);
  return perf_hardware_from(datasheet_figures(gpu, compute_dtype, defaults), measured, defaults, engine);
}

}  // namespace vramplan::perf
