// Achieved rates: calibration first, else datasheet x default efficiency as a range.
#include "vramplan/perf/hardware_rates.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <string_view>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::perf {
namespace {

PerfDefaults shipped_defaults() {
  return load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
}

TEST(PerfDefaults, ShippedFileLoads) {
  const PerfDefaults d = shipped_defaults();
  EXPECT_DOUBLE_EQ(d.bandwidth_efficiency.expected, 0.8);
  // Engines without a fitted entry (sglang, hf, ...) get "default": 0.5 ms per step.
  EXPECT_DOUBLE_EQ(d.step_overhead_for("sglang").per_step_s.expected, 0.5e-3);
  EXPECT_EQ(&d.step_overhead_for(""), &d.step_overhead.at("default"));
  EXPECT_TRUE(d.step_overhead_for("trtllm").fitted);
  EXPECT_DOUBLE_EQ(d.link_latency_s.expected, 10e-6);    // 10 us in the file
  // Fitted jointly with the trtllm step overhead (PerfAccuracy.MemoryComputeOverlapIsTheFittedValue,
  // PerfAccuracy.StepOverheadIsTheFittedValuePerEngine); range 0..1.
  EXPECT_DOUBLE_EQ(d.memory_compute_overlap.expected, 0.3);
  EXPECT_DOUBLE_EQ(d.step_overhead_for("trtllm").per_layer_s.expected, 33.9e-6);  // 33.9 us in the file
  // The share of a card's measured matmul ceiling a forward's GEMMs reach: 0.65 / 0.8 of the default.
  EXPECT_DOUBLE_EQ(d.tensor_share_of_mamf.expected, 0.8125);
  EXPECT_DOUBLE_EQ(d.tensor_share_of_mamf.max, 1.0);
  EXPECT_DOUBLE_EQ(d.memory_compute_overlap.max, 1.0);
  EXPECT_DOUBLE_EQ(d.pcie_gbps_per_direction.at(5), 63.0);
  EXPECT_DOUBLE_EQ(d.network_latency_s.expected, 45e-6);  // 45 us in the file
  EXPECT_DOUBLE_EQ(d.network_efficiency.expected, 0.92);
  EXPECT_DOUBLE_EQ(d.network_gbit_default.expected, 200);
}

// Collectives beyond the host's fabric: the reference platform's NIC (H100: DGX H100's 400 Gb/s
// ConnectX-7 per GPU), else the assumed default, said in the basis either way.
TEST(PerfHardware, NetworkBeyondTheHostFromTheReferencePlatform) {
  const PerfDefaults d = shipped_defaults();
  const GpuCatalog cat = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  const PerfHardware h100 = perf_hardware_from(cat.find("h100-sxm-80"), nullptr, "bf16", d);
  EXPECT_EQ(h100.expected.scale_up_gpus, 8u);
  EXPECT_DOUBLE_EQ(h100.expected.network_bytes_per_s, 400e9 / 8 * 0.92);  // 46 GB/s
  EXPECT_DOUBLE_EQ(h100.slow->network_bytes_per_s, 400e9 / 8 * 0.85);
  EXPECT_DOUBLE_EQ(h100.fast->network_bytes_per_s, 400e9 / 8 * 0.96);
  EXPECT_DOUBLE_EQ(h100.slow->network_latency_s, 135e-6);
  EXPECT_DOUBLE_EQ(h100.fast->network_latency_s, 20e-6);
  EXPECT_NE(h100.basis.find("beyond 8 GPUs (one host): network 400 Gb/s per GPU (data/gpus.json reference platform)"),
            std::string::npos)
      << h100.basis;
  // DGX A100: 200 Gb/s HDR per GPU.
  EXPECT_DOUBLE_EQ(perf_hardware_from(cat.find("a100-sxm-80"), nullptr, "bf16", d).expected.network_bytes_per_s,
                   200e9 / 8 * 0.92);
  // L40S: no reference platform, the assumed 200 [100-400] Gb/s.
  const PerfHardware l40s = perf_hardware_from(cat.find("l40s"), nullptr, "bf16", d);
  EXPECT_DOUBLE_EQ(l40s.expected.network_bytes_per_s, 200e9 / 8 * 0.92);
  EXPECT_DOUBLE_EQ(l40s.slow->network_bytes_per_s, 100e9 / 8 * 0.85);
  EXPECT_NE(l40s.basis.find("(assumed: no reference platform for this card)"), std::string::npos);
  // GB200 NVL72: the NVLink domain, not the 4-GPU compute tray, bounds the fabric.
  const PerfHardware gb200 = perf_hardware_from(cat.find("gb200"), nullptr, "bf16", d);
  EXPECT_EQ(gb200.expected.scale_up_gpus, 72u);
  EXPECT_NE(gb200.basis.find("beyond 72 GPUs (one NVLink domain)"), std::string::npos);
  // The user's cluster (--node-gpus 4 --network-gbit 800): 4-GPU hosts, 800e9 / 8 x 0.92 =
  // 92 GB/s a GPU between them, the same figure at both ends of the range; the basis names the flags.
  const PerfHardware own = perf_hardware_from(with_cluster(cat.find("h100-sxm-80"), {4, 800.0}), nullptr, "bf16", d);
  EXPECT_EQ(own.expected.scale_up_gpus, 4u);
  EXPECT_DOUBLE_EQ(own.expected.network_bytes_per_s, 92e9);
  EXPECT_DOUBLE_EQ(own.slow->network_bytes_per_s, 800e9 / 8 * 0.85);
  EXPECT_NE(own.basis.find("beyond 4 GPUs (one host, --node-gpus): network 800 Gb/s per GPU (--network-gbit)"),
            std::string::npos)
      << own.basis;
}

// Loading `path` fails as a bad input file whose message names every one of `needles`.
void expect_defaults_error(const std::filesystem::path& path, std::initializer_list<std::string_view> needles) {
  try {
    load_perf_defaults(path);
    ADD_FAILURE() << "expected an error naming " << *needles.begin();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    for (const auto needle : needles) EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(PerfDefaults, BadRangeNamesFileAndField) {
  test::ScratchDir dir;
  const auto path = dir.write("perf.json", R"({"schema": "vramplan.perf-defaults/1",
    "bandwidth_efficiency": {"min": 0.9, "expected": 0.8, "max": 0.95, "sources": []}})");
  expect_defaults_error(path, {"/bandwidth_efficiency", "perf.json"});
}

// A per-capability kernel cost is keyed by a compute capability major: "9", not "sm90" or "9.0".
TEST(PerfDefaults, KernelCostByCapabilityNeedsAMajorAsItsKey) {
  nlohmann::json d = read_json_file(test::source_dir() / "data" / "perf_defaults.json");
  auto& by_cc = d["step_overhead"]["engines"]["sglang"]["kernel_counts"]["kernel_us_by_capability"];
  by_cc["9.0"] = by_cc["9"];
  test::ScratchDir dir;
  expect_defaults_error(dir.write("perf.json", d.dump()), {"kernel_us_by_capability/9.0"});
}

TEST(PerfDefaults, StepOverheadNeedsADefaultEntryAndNonNegativeFigures) {
  nlohmann::json doc = read_json_file(test::source_dir() / "data" / "perf_defaults.json");
  test::ScratchDir dir;
  auto expect_error = [&](const nlohmann::json& j, std::string_view pointer) {
    expect_defaults_error(dir.write("perf.json", j.dump()), {pointer});
  };
  nlohmann::json negative = doc;
  negative["step_overhead"]["engines"]["vllm"]["layer_us"]["min"] = -1;
  expect_error(negative, "/step_overhead/engines/vllm/layer_us");
  doc["step_overhead"]["engines"].erase("default");
  expect_error(doc, "/step_overhead/engines");
}

DatasheetFigures h100_sheet() {
  // data/gpus.json h100-sxm-80: 3350 GB/s, bf16 989.4 dense TFLOPS, NVLink 900 GB/s total.
  return DatasheetFigures{"h100-sxm-80", 3350, 989.4, "bf16", 450, "NVLink 900 GB/s total / 2"};
}

TEST(PerfHardware, DatasheetTimesDefaultEfficiencyIsARange) {
  const PerfHardware hw = perf_hardware_from(h100_sheet(), std::nullopt, shipped_defaults());
  EXPECT_FALSE(hw.calibrated);
  // 3350e9 x 0.8 = 2.68e12 B/s; 989.4e12 x 0.65 = 643.11e12 FLOP/s; link 450e9 x 0.7 = 315e9.
  EXPECT_DOUBLE_EQ(hw.expected.bandwidth_bytes_per_s, 3350e9 * 0.8);
  EXPECT_DOUBLE_EQ(hw.expected.tensor_flops_per_s, 989.4e12 * 0.65);
  EXPECT_DOUBLE_EQ(hw.expected.link_bytes_per_s, 450e9 * 0.7);
  ASSERT_TRUE(hw.slow && hw.fast);
  EXPECT_DOUBLE_EQ(hw.slow->bandwidth_bytes_per_s, 3350e9 * 0.6);
  EXPECT_DOUBLE_EQ(hw.fast->bandwidth_bytes_per_s, 3350e9 * 0.9);
  EXPECT_DOUBLE_EQ(hw.slow->step_overhead_s, 2e-3);  // no engine named: "default", max 2 ms
  EXPECT_NE(hw.basis.find("datasheet 3350 GB/s"), std::string::npos) << hw.basis;
}

TEST(PerfHardware, EngineSelectsItsStepOverhead) {
  const PerfDefaults d = shipped_defaults();
  const PerfHardware vllm = perf_hardware_from(h100_sheet(), std::nullopt, d, "vllm");
  EXPECT_DOUBLE_EQ(vllm.expected.step_overhead_s, d.step_overhead.at("vllm").per_step_s.expected);
  EXPECT_DOUBLE_EQ(vllm.expected.layer_overhead_s, d.step_overhead.at("vllm").per_layer_s.expected);
  EXPECT_DOUBLE_EQ(vllm.slow->layer_overhead_s, d.step_overhead.at("vllm").per_layer_s.max);
  EXPECT_DOUBLE_EQ(vllm.fast->layer_overhead_s, d.step_overhead.at("vllm").per_layer_s.min);
  EXPECT_NE(vllm.basis.find("step overhead (vllm, fitted)"), std::string::npos) << vllm.basis;
  // An engine without its own entry gets "default" and says so, with no MoE terms.
  const PerfHardware hf = perf_hardware_from(h100_sheet(), std::nullopt, d, "hf");
  EXPECT_DOUBLE_EQ(hf.expected.layer_overhead_s, d.step_overhead.at("default").per_layer_s.expected);
  EXPECT_EQ(hf.expected.moe_layer_overhead_s, 0);
  EXPECT_NE(hf.basis.find("step overhead (default, not fitted)"), std::string::npos) << hf.basis;
  // SGLang's entry adds the fitted MoE-layer terms (20 us decode, 700 us with prompt tokens),
  // their range ends on the slow and fast rates.
  const PerfHardware sglang = perf_hardware_from(h100_sheet(), std::nullopt, d, "sglang");
  EXPECT_DOUBLE_EQ(sglang.expected.moe_layer_overhead_s, 20e-6);
  EXPECT_DOUBLE_EQ(sglang.expected.prompt_moe_layer_overhead_s, 700e-6);
  EXPECT_DOUBLE_EQ(sglang.slow->prompt_moe_layer_overhead_s, d.step_overhead.at("sglang").prompt_per_moe_layer_s.max);
  EXPECT_DOUBLE_EQ(sglang.fast->moe_layer_overhead_s, d.step_overhead.at("sglang").per_moe_layer_s.min);
  EXPECT_NE(sglang.basis.find("per MoE layer (fitted) 20 us in a decode step, 700 us in a step with prompt tokens"),
            std::string::npos)
      << sglang.basis;
}

TEST(PerfHardware, StepOverheadEntryFollowsHowTheEngineRunsAStep) {
  // The engine plan's view decides (memory/vllm_async_scheduling.cpp resolves vLLM's
  // async_scheduling from the release and flags; llamacpp_engine.cpp its cuda_graphs).
  EXPECT_EQ(step_overhead_entry("vllm", {{"async_scheduling", false}}), "vllm-sync");
  EXPECT_EQ(step_overhead_entry("vllm", {{"async_scheduling", true}}), "vllm");
  EXPECT_EQ(step_overhead_entry("vllm", nlohmann::json::object()), "vllm");  // encoder on the pooling runner
  EXPECT_EQ(step_overhead_entry("llamacpp", {{"cuda_graphs", false}}), "llamacpp-nograph");
  EXPECT_EQ(step_overhead_entry("llamacpp", {{"cuda_graphs", true}}), "llamacpp");
  EXPECT_EQ(step_overhead_entry("llamacpp", nlohmann::json::object()), "llamacpp");  // CPU-only: no view entry
  // A figure only means something for its own engine.
  EXPECT_EQ(step_overhead_entry("sglang", {{"cuda_graphs", false}, {"async_scheduling", false}}), "sglang");
  // The async entry has no per-step term (it overlaps the forward); the serial one keeps it.
  const PerfDefaults d = shipped_defaults();
  EXPECT_EQ(d.step_overhead.at("vllm").per_step_s.expected, 0);
  EXPECT_GT(d.step_overhead.at("vllm-sync").per_step_s.expected, 0);
}

TEST(PerfHardware, BlockFp8GemmTermFollowsTheGpuVendor) {
  const PerfDefaults d = shipped_defaults();
  // A sheet without a vendor (a custom GPU) gets no per-launch term, NVIDIA 5 us in a decode step
  // and 140 us with prompt tokens, AMD 40 and 250 us (fitted, data/perf_defaults.json
  // step_overhead.sglang block_fp8_gemm_us, prompt_block_fp8_gemm_us).
  EXPECT_EQ(perf_hardware_from(h100_sheet(), std::nullopt, d, "sglang").expected.block_fp8_gemm_overhead_s, 0);
  DatasheetFigures nvidia = h100_sheet();
  nvidia.vendor = "nvidia";
  const PerfHardware nv = perf_hardware_from(nvidia, std::nullopt, d, "sglang");
  EXPECT_DOUBLE_EQ(nv.expected.block_fp8_gemm_overhead_s, 5e-6);
  EXPECT_DOUBLE_EQ(nv.expected.prompt_block_fp8_gemm_overhead_s, 140e-6);
  DatasheetFigures amd = h100_sheet();
  amd.vendor = "amd";
  const PerfHardware mi = perf_hardware_from(amd, std::nullopt, d, "sglang");
  EXPECT_DOUBLE_EQ(mi.expected.block_fp8_gemm_overhead_s, 40e-6);
  EXPECT_DOUBLE_EQ(mi.slow->block_fp8_gemm_overhead_s, 65.9e-6);
  EXPECT_DOUBLE_EQ(mi.fast->block_fp8_gemm_overhead_s, 17.2e-6);
  EXPECT_DOUBLE_EQ(mi.expected.prompt_block_fp8_gemm_overhead_s, 250e-6);
  EXPECT_NE(mi.basis.find("per block-scaled FP8 GEMM on amd (fitted) 40 us [17.2-65.9] in a decode step, 250 us "
                          "[107.4-411.6] in a step with prompt tokens"),
            std::string::npos)
      << mi.basis;
  // Engines without the term: none on any vendor.
  EXPECT_EQ(perf_hardware_from(amd, std::nullopt, d, "vllm").expected.block_fp8_gemm_overhead_s, 0);
}

// SGLang's cost per counted decode kernel: 4.5 us fitted on B200, 2.7 us on Hopper, fitted apart
// (data/perf_defaults.json kernel_counts.kernel_us / kernel_us_by_capability."9").
TEST(PerfHardware, CountedKernelCostFollowsTheComputeCapability) {
  const PerfDefaults d = shipped_defaults();
  DatasheetFigures sheet = h100_sheet();
  sheet.vendor = "nvidia";
  sheet.capability_major = 10;
  EXPECT_DOUBLE_EQ(perf_hardware_from(sheet, std::nullopt, d, "sglang").expected.decode_kernel_overhead_s, 4.5e-6);
  sheet.capability_major = 9;
  const PerfHardware hopper = perf_hardware_from(sheet, std::nullopt, d, "sglang");
  EXPECT_DOUBLE_EQ(hopper.expected.decode_kernel_overhead_s, 2.7e-6);
  EXPECT_NE(hopper.basis.find("2.7 us [1.9-7.4] per kernel of a decode step (compute capability 9.x)"), std::string::npos)
      << hopper.basis;
  sheet.capability_major.reset();  // unknown: the general value
  EXPECT_DOUBLE_EQ(perf_hardware_from(sheet, std::nullopt, d, "sglang").expected.decode_kernel_overhead_s, 4.5e-6);
  // From the catalogue: the H200 is 9.0.
  const GpuCatalog cat = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  EXPECT_DOUBLE_EQ(perf_hardware_from(cat.find("h200"), nullptr, "bf16", d, "sglang").expected.decode_kernel_overhead_s,
                   2.7e-6);
}

TEST(PerfHardware, CalibrationWinsAndCollapsesTheRange) {
  const MeasuredFigures m{"data/calibration/h100.json", 2900, 700};
  const PerfHardware hw = perf_hardware_from(h100_sheet(), m, shipped_defaults());
  EXPECT_TRUE(hw.calibrated);
  EXPECT_DOUBLE_EQ(hw.expected.bandwidth_bytes_per_s, 2900e9);
  EXPECT_DOUBLE_EQ(hw.slow->bandwidth_bytes_per_s, 2900e9);
  EXPECT_DOUBLE_EQ(hw.fast->tensor_flops_per_s, 700e12);
  EXPECT_NE(hw.basis.find("calibration data/calibration/h100.json"), std::string::npos) << hw.basis;
}

TEST(PerfHardware, CatalogueGpuAndCalibrationFile) {
  const PerfDefaults d = shipped_defaults();
  const GpuCatalog cat = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  const DatasheetFigures sheet = datasheet_figures(cat.find("h200"), "fp8", d);
  EXPECT_DOUBLE_EQ(*sheet.bandwidth_gbps, 4800);
  EXPECT_DOUBLE_EQ(*sheet.tensor_tflops, 1978.9);
  EXPECT_DOUBLE_EQ(*sheet.link_gbps, 450);
  EXPECT_THROW(datasheet_figures(cat.find("h200"), "fp9", d), Error);
  // MI300X: 7 Infinity Fabric links of 128 GB/s (both directions) per OAM, not PCIe.
  const DatasheetFigures mi300x = datasheet_figures(cat.find("mi300x"), "bf16", d);
  EXPECT_DOUBLE_EQ(*mi300x.link_gbps, 64);
  EXPECT_EQ(mi300x.link_mesh_links, 7);
  EXPECT_EQ(perf_hardware_from(mi300x, std::nullopt, d).expected.link_mesh_links, 7);

  calib::Calibration cal;
  cal.origin = calib::CalibrationOrigin::Measured;
  cal.source = "h200.json";
  cal.figures.copy_bandwidth_gbps = 4100;
  cal.figures.achieved_tflops["fp8_e4m3"] = 1300;
  const auto m = measured_figures(cal, "fp8");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(*m->bandwidth_gbps, 4100);
  EXPECT_DOUBLE_EQ(*m->tensor_tflops, 1300);
  // Defaults-origin calibrations measure nothing.
  EXPECT_FALSE(measured_figures(calib::default_calibration(9), "bf16"));
  // A custom GPU knows only its memory: no rates, an error rather than a guess.
  EXPECT_THROW(perf_hardware_from(custom_gpu("custom:80GiB"), nullptr, "bf16", d), Error);
}

TEST(PerfHardware, MigSliceIsTheCardScaledByItsFractions) {
  // NVIDIA publishes no TFLOPS per MIG profile. h100-sxm-80/3g.40gb has 3 of the card's 7 compute
  // slices and 4 of its 8 memory slices (MIG user guide, data/gpus.json):
  //   tensor    = 989.4 x 3/7 = 424.028571... dense bf16 TFLOPS
  //   bandwidth = 3350 x 4/8  = 1675 GB/s
  // expected rates with the shipped efficiencies: 1675e9 x 0.8 = 1.34e12 B/s. The tensor rate is the
  // card's measured matmul ceiling (794.5 bf16 TFLOPS) x 3/7 = 340.5 x 0.8125 = 276.65625e12 FLOP/s,
  // not the datasheet's 424.0286e12 x 0.65. No NVLink on a slice: PCIe gen 5, 63 GB/s.
  const PerfDefaults d = shipped_defaults();
  const GpuCatalog cat = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  const GpuSpec& slice = cat.find("h100-sxm-80/3g.40gb");
  const DatasheetFigures sheet = datasheet_figures(slice, "bf16", d);
  EXPECT_DOUBLE_EQ(*sheet.bandwidth_gbps, 1675.0);
  EXPECT_DOUBLE_EQ(*sheet.tensor_tflops, 989.4 * 3.0 / 7.0);
  EXPECT_NEAR(*sheet.tensor_tflops, 424.0286, 1e-4);
  EXPECT_DOUBLE_EQ(*sheet.link_gbps, 63.0);
  EXPECT_EQ(sheet.scaled_from,
            "MIG 3g.40gb scaled from the full h100-sxm-80: 3/7 of its SMs (tensor rate), 4/8 of its memory "
            "slices (bandwidth 3350 GB/s x 4/8)");
  const PerfHardware hw = perf_hardware_from(slice, nullptr, "bf16", d);
  EXPECT_DOUBLE_EQ(hw.expected.bandwidth_bytes_per_s, 1675e9 * 0.8);
  EXPECT_DOUBLE_EQ(*sheet.mamf_tflops, 794.5 * 3.0 / 7.0);
  EXPECT_EQ(sheet.mamf_label, "bf16 (3/7 of the card's 794.5)");
  EXPECT_DOUBLE_EQ(hw.expected.tensor_flops_per_s, 794.5e12 * 3.0 / 7.0 * 0.8125);
  EXPECT_EQ(hw.basis.rfind(sheet.scaled_from, 0), 0u) << hw.basis;  // stated first
  // A 1g slice of the same card: 1/7 of the SMs, 1/8 of the bandwidth (3350 / 8 = 418.75 GB/s);
  // fp8: 1978.9 x 1/7 = 282.7 TFLOPS.
  const DatasheetFigures small = datasheet_figures(cat.find("h100-sxm-80/1g.10gb"), "fp8", d);
  EXPECT_DOUBLE_EQ(*small.bandwidth_gbps, 418.75);
  EXPECT_DOUBLE_EQ(*small.tensor_tflops, 1978.9 / 7.0);
  // A card is not scaled and says nothing about MIG.
  EXPECT_TRUE(datasheet_figures(cat.find("h100-sxm-80"), "bf16", d).scaled_from.empty());
  EXPECT_TRUE(mig_scaling_note(cat.find("h100-sxm-80")).empty());
}

// A card with a published matmul ceiling (data/gpus.json mamf_tflops) takes its tensor rate from it
// x tensor_share_of_mamf (0.625 / 0.8125 / 1); the others keep the datasheet x tensor_efficiency.
TEST(PerfHardware, MeasuredMatmulCeilingSetsTheTensorRate) {
  const PerfDefaults d = shipped_defaults();
  const GpuCatalog cat = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  // MI300X bf16: 668.4 TFLOPS measured (ml-engineering MAMF table) against 1307.4 on the datasheet:
  // 668.4 x 0.8125 = 543.075, range 668.4 x 0.625 = 417.75 to 668.4.
  const PerfHardware mi300x = perf_hardware_from(cat.find("mi300x"), nullptr, "bf16", d);
  EXPECT_DOUBLE_EQ(mi300x.expected.tensor_flops_per_s, 668.4e12 * 0.8125);
  ASSERT_TRUE(mi300x.slow && mi300x.fast);
  EXPECT_DOUBLE_EQ(mi300x.slow->tensor_flops_per_s, 668.4e12 * 0.625);
  EXPECT_DOUBLE_EQ(mi300x.fast->tensor_flops_per_s, 668.4e12);
  EXPECT_NE(mi300x.basis.find("tensor bf16: measured matmul ceiling (MAMF) 668.4 TFLOPS (data/gpus.json) x 0.8125 "
                              "[0.625-1]"),
            std::string::npos)
      << mi300x.basis;
  // fp8 has its own ceiling (H100 SXM 1402.6 against the datasheet's 1978.9), fp16 on NVIDIA takes
  // the bf16 one x 989.4 / 989.4 (A100 SXM: 271.2), and MI300X fp16 its own (AMD's 654).
  EXPECT_DOUBLE_EQ(*datasheet_figures(cat.find("h100-sxm-80"), "fp8", d).mamf_tflops, 1402.6);
  const DatasheetFigures a100 = datasheet_figures(cat.find("a100-sxm-80"), "fp16", d);
  EXPECT_DOUBLE_EQ(*a100.mamf_tflops, 271.2);
  EXPECT_EQ(a100.mamf_label, "fp16 (bf16 ceiling x datasheet fp16 / bf16)");
  EXPECT_DOUBLE_EQ(*datasheet_figures(cat.find("mi300x"), "fp16", d).mamf_tflops, 654.0);
  // An H100 keeps its rate within 0.4 %: 794.5 x 0.8125 = 645.53 against 989.4 x 0.65 = 643.11.
  const PerfHardware h100 = perf_hardware_from(cat.find("h100-sxm-80"), nullptr, "bf16", d);
  EXPECT_NEAR(h100.expected.tensor_flops_per_s / (989.4e12 * 0.65), 1.0, 0.004);
  // No published ceiling: the datasheet x 0.65 (RTX 4090 bf16 165.2 TFLOPS).
  const PerfHardware rtx = perf_hardware_from(cat.find("rtx-4090"), nullptr, "bf16", d);
  EXPECT_FALSE(datasheet_figures(cat.find("rtx-4090"), "bf16", d).mamf_tflops);
  EXPECT_DOUBLE_EQ(rtx.expected.tensor_flops_per_s, 165.2e12 * 0.65);
}

}  // namespace
}  // namespace vramplan::perf
