#include "vramplan/calib/calibration.hpp"

#include <functional>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::calib {
namespace {

const std::filesystem::path kFixture = test::fixture("calib/h200-synthetic.json");

TEST(Calibration, LoadsEveryFigureOfTheFixture) {
  const Calibration cal = load_calibration(kFixture);
  EXPECT_EQ(cal.origin, CalibrationOrigin::Measured);
  EXPECT_EQ(cal.source, kFixture.string());
  ASSERT_TRUE(cal.device);
  EXPECT_EQ(cal.device->name, "NVIDIA H200");
  EXPECT_EQ(cal.device->compute_capability_major, 9);
  EXPECT_EQ(cal.device->sm_count, 132u);
  const auto& f = cal.figures;
  EXPECT_EQ(*f.copy_bandwidth_gbps, 4000.0);
  EXPECT_EQ(f.achieved_tflops.at("bf16"), 700.0);
  EXPECT_EQ(f.achieved_tflops.count("fp16"), 0u);  // a dtype the sweep skipped is simply absent
  EXPECT_EQ(f.context_overhead->count(), 500 * kMiB);  // 524288000 B in the file
  EXPECT_EQ(f.allocation_granularity->count(), 2 * kMiB);
  EXPECT_EQ(f.cublaslt_workspace->count(), 32 * kMiB);
  ASSERT_EQ(cal.gemm.size(), 1u);
  EXPECT_EQ(cal.gemm[0].points.size(), 3u);
  EXPECT_EQ(cal.gemm[0].points[0].m, 1024u);
  ASSERT_EQ(cal.bandwidth.size(), 1u);
  EXPECT_EQ(cal.bandwidth[0].fit.rate_per_second, 4e12);
}

TEST(Calibration, RoundTripsThroughAFile) {
  const Calibration original = load_calibration(kFixture);
  test::ScratchDir dir;
  const auto path = dir.path() / "copy.json";
  write_calibration(original, path);
  const Calibration again = load_calibration(path);
  EXPECT_EQ(calibration_to_json(again), calibration_to_json(original));
  EXPECT_EQ(again.figures.largest_total_allocation, original.figures.largest_total_allocation);
}

TEST(Calibration, MissingFieldNamesFileAndPointer) {
  auto doc = read_json_file(kFixture);
  doc["figures"].erase("allocation_granularity_bytes");
  test::ScratchDir dir;
  const auto path = dir.write("cal.json", doc.dump());
  const auto msg = test::error_message([&] { load_calibration(path); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("cal.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/figures/allocation_granularity_bytes"), std::string::npos) << msg;
}

TEST(Calibration, WrongTypeAndBadValuesNameTheField) {
  auto doc = read_json_file(kFixture);
  doc["device"]["compute_capability"] = "nine";
  auto msg = test::error_message([&] { calibration_from_json(doc, "x.json"); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("/device/compute_capability"), std::string::npos) << msg;

  doc = read_json_file(kFixture);
  doc["figures"]["achieved_tflops"]["bf16"] = -1;
  msg = test::error_message([&] { calibration_from_json(doc, "x.json"); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("/figures/achieved_tflops/bf16"), std::string::npos) << msg;

  doc = read_json_file(kFixture);
  doc["schema"] = "vramplan.calibration/2";
  msg = test::error_message([&] { calibration_from_json(doc, "x.json"); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("/schema"), std::string::npos) << msg;
}

TEST(Calibration, BadJsonAndMissingFile) {
  test::ScratchDir dir;
  const auto path = dir.write("broken.json", "{\"schema\": ");
  const auto msg = test::error_message([&] { load_calibration(path); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("broken.json"), std::string::npos) << msg;
  test::error_message([&] { load_calibration(dir.path() / "absent.json"); }, ErrorKind::Io);
}

TEST(Calibration, GpuKeyNormalisesNames) {
  EXPECT_EQ(gpu_key("NVIDIA H200"), "h200");
  EXPECT_EQ(gpu_key("nvidia-h200"), "h200");
  EXPECT_EQ(gpu_key("NVIDIA H100 80GB HBM3"), "h100-80gb-hbm3");
  EXPECT_EQ(gpu_key("  A100-SXM4-80GB  "), "a100-sxm4-80gb");
}

TEST(Calibration, FileNameCarriesGpuDriverAndCuda) {
  const Calibration cal = load_calibration(kFixture);
  EXPECT_EQ(calibration_file_name(*cal.device), "h200-580.159.03-cuda13.0.json");
}

TEST(Calibration, FindPicksTheNewestMatchingFile) {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "data/calibration");
  auto doc = read_json_file(kFixture);
  dir.write("data/calibration/old.json", doc.dump());
  doc["created_utc"] = "2026-12-01T00:00:00Z";
  doc["figures"]["copy_bandwidth_gbps"] = 4100.0;
  dir.write("data/calibration/new.json", doc.dump());
  doc["device"]["name"] = "NVIDIA H100 80GB HBM3";
  doc["device"]["uuid"] = "GPU-other";
  dir.write("data/calibration/h100.json", doc.dump());
  const DataRoot root{dir.path()};

  const auto h200 = find_calibration(root, "h200");
  ASSERT_TRUE(h200);
  EXPECT_EQ(*h200->figures.copy_bandwidth_gbps, 4100.0);
  EXPECT_EQ(h200->source, (dir.path() / "data/calibration/new.json").string());
  EXPECT_TRUE(find_calibration(root, "GPU-other"));  // by UUID
  EXPECT_FALSE(find_calibration(root, "NVIDIA A100-SXM4-80GB"));
  EXPECT_FALSE(find_calibration(DataRoot{dir.path() / "nowhere"}, "h200"));
}

TEST(Calibration, FindReportsAMalformedFileInsteadOfSkippingIt) {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "data/calibration");
  dir.write("data/calibration/bad.json", "[]");
  const auto msg = test::error_message([&] { find_calibration(DataRoot{dir.path()}, "h200"); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
}

TEST(Calibration, DefaultsAreMarkedAndSourced) {
  const Calibration hopper = default_calibration(9);
  EXPECT_EQ(hopper.origin, CalibrationOrigin::Defaults);
  EXPECT_NE(hopper.source.find("docs/calibration.md"), std::string::npos);
  // cuBLAS docs (cublasSetWorkspace): 32 MiB recommended on Hopper, 4 MiB elsewhere.
  EXPECT_EQ(hopper.figures.cublaslt_workspace->count(), 32 * kMiB);
  EXPECT_EQ(default_calibration(8).figures.cublaslt_workspace->count(), 4 * kMiB);
  EXPECT_EQ(hopper.figures.allocation_granularity->count(), 2 * kMiB);
  // No documented default for achieved rates: absent, so the planner must say "datasheet".
  EXPECT_FALSE(hopper.figures.copy_bandwidth_gbps);
  EXPECT_TRUE(hopper.figures.achieved_tflops.empty());
  EXPECT_FALSE(hopper.figures.launch_overhead_us);
}

// The optional deployment section (reconcile --update-calibration): a file holding only it loads
// as a Deployment calibration (no device, no figures); the probe's files load as before.
const std::filesystem::path kDeploymentFixture = test::fixture("calib/deployment-llama-3.1-8b-h100.json");

TEST(Calibration, DeploymentOnlyFileLoads) {
  const Calibration cal = load_calibration(kDeploymentFixture);
  EXPECT_EQ(cal.origin, CalibrationOrigin::Deployment);
  EXPECT_FALSE(cal.device);
  EXPECT_FALSE(cal.figures.copy_bandwidth_gbps);
  ASSERT_EQ(cal.deployment.size(), 1u);
  const auto& d = cal.deployment.front();
  EXPECT_EQ(d.model, "llama-3.1-8b-instruct");
  EXPECT_EQ(d.engine_version, "0.19");
  EXPECT_EQ(d.non_torch->count(), kGiB / 4);  // 0.25 GiB as logged
  EXPECT_EQ(find_deployment(cal, "llama-3.1-8b-instruct", "vllm", "0.19", "h100-sxm-80", 1, 1), &d);
  EXPECT_EQ(find_deployment(cal, "llama-3.1-8b-instruct", "vllm", "0.19", "h100-sxm-80", 2, 1), nullptr);  // another layout
  EXPECT_EQ(find_deployment(cal, "llama-3.1-8b-instruct", "vllm", "0.17", "h100-sxm-80", 1, 1), nullptr);  // another profile
  // Written back as it was read: no device, figures or fits appear.
  test::ScratchDir dir;
  write_calibration(cal, dir.path() / "copy.json");
  EXPECT_EQ(read_json_file(dir.path() / "copy.json"), read_json_file(kDeploymentFixture));
}

TEST(Calibration, DeploymentSectionRidesOnAMeasuredFile) {
  Calibration cal = load_calibration(kFixture);
  EXPECT_TRUE(cal.deployment.empty());  // the probe's file has none and still loads
  auto d = load_calibration(kDeploymentFixture).deployment.front();
  put_deployment(cal, d);
  d.cuda_graphs = Bytes(1);
  put_deployment(cal, d);  // the same deployment again: replaced, not added
  ASSERT_EQ(cal.deployment.size(), 1u);
  EXPECT_EQ(cal.deployment.front().cuda_graphs->count(), 1u);
  test::ScratchDir dir;
  write_calibration(cal, dir.path() / "both.json");
  const Calibration again = load_calibration(dir.path() / "both.json");
  EXPECT_EQ(again.origin, CalibrationOrigin::Measured);
  EXPECT_EQ(again.figures.copy_bandwidth_gbps, cal.figures.copy_bandwidth_gbps);
  EXPECT_EQ(calibration_to_json(again), calibration_to_json(cal));
}

TEST(Calibration, BadDeploymentEntryNamesTheField) {
  auto doc = read_json_file(kDeploymentFixture);
  doc["deployment"][0]["figures"] = nlohmann::json::object();
  test::ScratchDir dir;
  const auto msg = test::error_message([&] { load_calibration(dir.write("d.json", doc.dump())); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("/deployment/0/figures"), std::string::npos) << msg;
  doc = read_json_file(kDeploymentFixture);
  doc["deployment"][0].erase("gpu");
  const auto missing = test::error_message([&] { load_calibration(dir.write("e.json", doc.dump())); }, ErrorKind::InputFile);
  EXPECT_NE(missing.find("/deployment/0/gpu"), std::string::npos) << missing;
  // Without a deployment section the device is required, as before.
  doc = read_json_file(kDeploymentFixture);
  doc.erase("deployment");
  const auto bare = test::error_message([&] { load_calibration(dir.write("f.json", doc.dump())); }, ErrorKind::InputFile);
  EXPECT_NE(bare.find("/device"), std::string::npos) << bare;
}

TEST(Calibration, FindSkipsDeploymentOnlyFiles) {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "data/calibration");
  dir.write("data/calibration/deployment.json", test::read_text(kDeploymentFixture));
  EXPECT_FALSE(find_calibration(DataRoot{dir.path()}, "h100-sxm-80"));
}

}  // namespace
}  // namespace vramplan::calib
