// The shipped GPU catalogue (data/gpus.json): required cards and MIG profiles, published figures,
// the estimation rule, lookups (aliases, MIG ids, lists, custom:SIZE) and the memory override.
#include <gtest/gtest.h>

#include <cmath>

#include <functional>
#include <string>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan {
namespace {

const GpuCatalog& catalog() {
  static const GpuCatalog cat = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  return cat;
}

ErrorKind kind_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::Internal;  // nothing thrown: never the expected kind in these tests
}

TEST(GpuCatalog, EveryRequiredCardIsPresent) {
  for (const char* id : {"rtx-3090", "rtx-4090", "rtx-5090", "rtx-a6000", "rtx-6000-ada", "a10", "a10g", "l4",
                         "l40", "l40s", "a100-sxm-40", "a100-pcie-40", "a100-sxm-80", "a100-pcie-80",
                         "h100-pcie-80", "h100-sxm-80", "h100-nvl-94", "h200", "h200-nvl", "gh200", "b200",
                         "mi300x", "mi325x", "v100-16", "v100-32", "t4",
                         // issue 17: 40+ cards
                         "b300", "gb200", "mi355x", "mi250x", "rtx-pro-6000", "a40", "l20", "h20", "h800", "a800",
                         "rtx-a5000", "rtx-4080", "rtx-5080", "gaudi3", "gaudi2", "mi350x", "gb300"}) {
    const GpuSpec& g = catalog().find(id);
    EXPECT_EQ(g.kind, GpuKind::Card) << id;
    EXPECT_GT(g.reported_total.count(), 0u) << id;
    EXPECT_LT(g.reported_total, g.physical) << id;
    EXPECT_FALSE(g.sources.at("specs").empty()) << id;
  }
}

TEST(GpuCatalog, CountsCardsAndSlices) {
  // 26 cards and 40 slices before issue 17; it added 15 cards (Gaudi 2 and 3 listed, not plannable)
  // and the 3 GB200 slices of gpu-operator PR #1303; the MI350X came on 2026-12-04, the GB300 on
  // 2026-12-06.
  int cards = 0, slices = 0;
  for (const GpuSpec& g : catalog().all()) (g.kind == GpuKind::Card ? cards : slices) += 1;
  EXPECT_EQ(cards, 43);
  EXPECT_EQ(slices, 43);
}

// Where a source may point: a URL, a stored public file the index does not attribute (kept, marked
// unverified, as the reference research does), or the project brief's seed facts.
bool is_catalogue_source(const std::string& s) {
  return s.rfind("https://", 0) == 0 || s.rfind("http://", 0) == 0 ||
         s.rfind("github-unattributed public code:", 0) == 0 || s.rfind("project brief", 0) == 0;
}

TEST(GpuCatalog, EveryEntryParsesAndEveryFigureHasASource) {
  for (const GpuSpec& g : catalog().all()) {
    const auto specs = g.sources.find("specs");
    ASSERT_NE(specs, g.sources.end()) << g.id;
    for (const auto& [group, urls] : g.sources)
      for (const auto& url : urls) EXPECT_TRUE(is_catalogue_source(url)) << g.id << " " << group << ": " << url;
    // A measured total (runtime, nvidia-smi, -lgip) names where it was seen and says what it is.
    const bool measured = g.reported_basis == MemoryBasis::Measured;
    if (measured || g.nvidia_smi_total) {
      EXPECT_TRUE(g.sources.count("reported_memory")) << g.id;
      if (measured) {
        EXPECT_FALSE(g.reported_note.empty()) << g.id;
      }
    }
    // An estimated total says which rule made it.
    if (!measured) {
      EXPECT_NE(g.reported_note.find("estimated"), std::string::npos) << g.id;
    }
    EXPECT_GT(g.reported_total.count(), 0u) << g.id;
    EXPECT_LE(g.reported_total, g.physical) << g.id;
    // A measured matmul ceiling is below the datasheet's peak of the same dtype, which it needs.
    for (auto field : {&DenseTflops::bf16, &DenseTflops::fp16, &DenseTflops::fp8})
      if (g.mamf_tflops.*field) {
        ASSERT_TRUE(g.tflops.*field || g.kind == GpuKind::Mig) << g.id;
        if (g.tflops.*field) {
          EXPECT_LT(*(g.mamf_tflops.*field), *(g.tflops.*field)) << g.id;
        }
      }
    // A card that cannot be planned says why.
    if (g.kind == GpuKind::Card && g.vendor == "intel") {
      EXPECT_FALSE(g.not_plannable.empty()) << g.id;
    }
  }
}

// node_gpus: the GPUs one host of the card's platform holds, the multi-node threshold of the
// compatibility rules (data/compat/features.json). Every plannable card has it with a source:
// HGX / DGX and AMD UBB boards hold 8 (AWS p5.48xlarge: 8 H100), a GB200 NVL72 compute tray 4
// (NVIDIA multi-node tuning guide: "18x 1RU Compute trays (4 GPUs per compute tray)"), GeForce
// workstations 4. A MIG slice carries its card's.
TEST(GpuCatalog, NodeSizePerCard) {
  for (const GpuSpec& g : catalog().all()) {
    if (!g.not_plannable.empty()) continue;
    ASSERT_TRUE(g.node_gpus.has_value()) << g.id;
    if (g.kind == GpuKind::Card) {
      EXPECT_TRUE(g.sources.count("node_gpus")) << g.id;
    }
  }
  EXPECT_EQ(catalog().find("gb200").node_gpus, 4u);
  EXPECT_EQ(catalog().find("h100-sxm-80").node_gpus, 8u);
  EXPECT_EQ(catalog().find("mi300x").node_gpus, 8u);
  EXPECT_EQ(catalog().find("rtx-4090").node_gpus, 4u);
  EXPECT_EQ(catalog().find("a100-sxm-80/3g.40gb").node_gpus, 8u);
  EXPECT_FALSE(catalog().resolve_one("custom:24GiB").node_gpus.has_value());
}

TEST(GpuCatalog, NewCardsPublishedFigures) {
  // B300: nvidia-smi 275040 MiB (several captures), torch total 267.69 GiB = device_total_bytes
  // 287,428,771,840 (a 16-GPU B300 run); the package holds 288 GiB, the driver exposes 268.59.
  const GpuSpec& b300 = catalog().find("b300");
  EXPECT_EQ(b300.nvidia_smi_total, Bytes(275040 * kMiB));
  EXPECT_EQ(b300.reported_total, Bytes(287428771840ull));
  EXPECT_EQ(b300.reported_basis, MemoryBasis::Measured);
  EXPECT_EQ(b300.compute_capability->str(), "10.3");
  // GB200 per GPU: nvidia-smi 189471 MiB, 1200 W; glennklockwood's GB200 table: bf16 2500 dense.
  const GpuSpec& gb200 = catalog().find("gb200");
  EXPECT_EQ(gb200.nvidia_smi_total, Bytes(189471 * kMiB));
  EXPECT_DOUBLE_EQ(*gb200.tflops.bf16, 2500);
  EXPECT_DOUBLE_EQ(*gb200.tdp_w, 1200);
  EXPECT_EQ(catalog().find("gb200/1g.24gb").reported_total, Bytes(20 * kGiB));  // -lgip 20.00 GiB
  // MI250X per GCD: half of the OAM's 128 GB, 3.2 TB/s and 383 TFLOPS.
  const GpuSpec& gcd = catalog().find("mi250x");
  EXPECT_DOUBLE_EQ(gcd.marketed_gb, 64);
  EXPECT_DOUBLE_EQ(*gcd.bandwidth_gbps, 1600);
  EXPECT_DOUBLE_EQ(*gcd.tflops.bf16, 191.5);
  EXPECT_EQ(gcd.gfx_target, "gfx90a");
  // RTX PRO 6000 Blackwell: 97887 MiB in nvidia-smi with ECC on or off (no carve-out).
  EXPECT_EQ(catalog().find("rtx-pro-6000").nvidia_smi_total, Bytes(97887 * kMiB));
  EXPECT_FALSE(catalog().find("rtx-pro-6000").ecc_carveout);
  // Runtime totals from ollama logs: RTX 4080 "CUDA totalMem 16076 mb" (ollama #9245); A40
  // cuMemGetInfo "total=44.4 GiB" (ollama #9858), kept at the low end of its rounding, 44.35 GiB.
  EXPECT_EQ(catalog().find("rtx-4080").reported_total, Bytes(16076 * kMiB));
  EXPECT_EQ(catalog().find("a40").reported_total, Bytes::from_gib(44.35));
  EXPECT_EQ(catalog().find("a40").reported_basis, MemoryBasis::Measured);
  // torch OOM totals: L20 44.53 GiB (HunyuanCustom #36), A800-80G 79.33 GiB (PB-LLM #3).
  EXPECT_EQ(catalog().find("l20").reported_total, Bytes::from_gib(44.53));
  EXPECT_EQ(catalog().find("a800").reported_total, Bytes::from_gib(79.33));
  EXPECT_EQ(catalog().find("h20").reported_total, Bytes::from_gib(95.00));  // DiffSynth-Studio #1238
  // Gaudi 3 (Intel Hot Chips 2024): 128 GB, 3.67 TB/s, BF16 1835; listed, not plannable.
  const GpuSpec& gaudi = catalog().find("gaudi3");
  EXPECT_DOUBLE_EQ(*gaudi.tflops.bf16, 1835);
  EXPECT_NE(gaudi.not_plannable.find("HPU"), std::string::npos) << gaudi.not_plannable;
  EXPECT_EQ(kind_of([&] { require_plannable(gaudi); }), ErrorKind::Usage);
  EXPECT_NO_THROW(require_plannable(b300));
}

TEST(GpuCatalog, MigProfilesOfEveryMigFamilyArePresent) {
  for (const char* id :
       {"a100-sxm-40/1g.5gb", "a100-sxm-40/2g.10gb", "a100-sxm-40/3g.20gb", "a100-sxm-40/7g.40gb",
        "a100-sxm-80/1g.10gb", "a100-sxm-80/2g.20gb", "a100-sxm-80/3g.40gb", "a100-sxm-80/7g.80gb",
        "h100-sxm-80/1g.10gb", "h100-sxm-80/2g.20gb", "h100-sxm-80/3g.40gb", "h100-sxm-80/7g.80gb",
        "h100-nvl-94/1g.12gb", "h100-nvl-94/3g.47gb", "h200/1g.18gb", "h200/3g.71gb", "h200/7g.141gb",
        "b200/1g.23gb", "b200/2g.45gb", "b200/7g.180gb"}) {
    const GpuSpec& g = catalog().find(id);
    EXPECT_EQ(g.kind, GpuKind::Mig) << id;
    ASSERT_TRUE(g.mig.has_value()) << id;
    const GpuSpec& parent = catalog().find(g.parent_id);
    EXPECT_LE(g.reported_total, parent.physical) << id;
  }
}

TEST(GpuCatalog, PublishedMemoryFigures) {
  const GpuSpec& h100 = catalog().find("h100-sxm-80");
  // nvidia-smi 81559 MiB (Modal, NCCL #1264, vLLM #55169 captures).
  EXPECT_EQ(h100.nvidia_smi_total, Bytes(81559 * kMiB));
  // vLLM 0.19 "total_gpu_memory 79.19GiB" on H100-80GB (llm-d-planner logs).
  EXPECT_EQ(h100.reported_total, Bytes::from_gib(79.19));
  EXPECT_EQ(h100.reported_basis, MemoryBasis::Measured);
  EXPECT_DOUBLE_EQ(*h100.bandwidth_gbps, 3350);
  EXPECT_DOUBLE_EQ(*h100.tflops.bf16, 989.4);  // dense, not the 1979 sparse headline
  EXPECT_EQ(h100.compute_capability->str(), "9.0");
  // L40S with ECC: 46068 MiB in nvidia-smi (modal-client PR #2797).
  EXPECT_EQ(catalog().find("l40s").nvidia_smi_total, Bytes(46068 * kMiB));
  // A100-SXM4-40GB deviceQuery totalGlobalMem 42,298,834,944 B.
  EXPECT_EQ(catalog().find("a100-sxm-40").reported_total, Bytes(42298834944ull));
  // B200: CUDA totalGlobalMem 178.35 GiB (TensorRT-LLM #10278).
  EXPECT_EQ(catalog().find("b200").reported_total, Bytes::from_gib(178.35));
}

TEST(GpuCatalog, PublishedMigSliceSizes) {
  // nvidia-smi mig -lgip: H100 3g.40gb 39.50 GiB; H200 1g.18gb 16.00 GiB (mig-parted #120).
  const GpuSpec& h100_3g = catalog().find("h100-sxm-80/3g.40gb");
  EXPECT_EQ(h100_3g.reported_total, Bytes::from_gib(39.50));
  EXPECT_EQ(h100_3g.mig->memory_fraction.str(), "4/8");
  EXPECT_EQ(h100_3g.mig->sm_fraction.str(), "3/7");
  EXPECT_EQ(h100_3g.mig->max_instances, 2);
  EXPECT_DOUBLE_EQ(*h100_3g.bandwidth_gbps, 3350.0 / 2);  // 4 of 8 memory slices
  EXPECT_FALSE(h100_3g.tflops.bf16.has_value());           // not sourced per slice
  EXPECT_EQ(catalog().find("h200/1g.18gb").reported_total, Bytes(16 * kGiB));
  // A100 80GB 2g.20gb: 19968 MiB per MIG device in nvidia-smi (nvitop PR #8).
  EXPECT_EQ(catalog().find("a100-sxm-80/2g.20gb").reported_total, Bytes(19968 * kMiB));
}

TEST(GpuCatalog, VllmStartupLogsAgree) {
  // total_gpu_memory_gib of the vLLM start-up logs (shared ground truth, vllm_startup_logs.jsonl):
  // H100 80GB 79.18 / 79.19 / 79.22 GiB across versions; RTX 3090 23.58 GiB (vLLM #10517).
  for (const double gib : {79.18, 79.19, 79.22})
    EXPECT_NEAR(catalog().find("h100").reported_total.gib(), gib, 0.05);
  EXPECT_NEAR(catalog().find("rtx-3090").reported_total.gib(), 23.58, 0.005);
  // H200 SXM: vLLM 0.7's total_gpu_memory 139.81 GiB beside nvidia-smi's 143771MiB (data/gpus.json
  // runtime_total_note), 0.93 GiB above what the estimation rule gives its 141 GiB (138.88).
  EXPECT_EQ(catalog().find("h200").reported_basis, MemoryBasis::Measured);
  EXPECT_NEAR(catalog().find("h200").reported_total.gib(), 139.81, 0.005);
}

TEST(EstimationRule, HandComputedValues) {
  // H200 NVL, no runtime total found: base 141 GiB = 151,397,597,184 B;
  // reserve = ceil(151,397,597,184 x 15 / 1000) = 2,270,963,958 B (1.5 % > 1 GiB);
  // 151,397,597,184 - 2,270,963,958 = 149,126,633,226 B -> 142218 MiB (138.885 GiB).
  const GpuSpec& h200 = catalog().find("h200-nvl");
  EXPECT_EQ(h200.reported_basis, MemoryBasis::Estimated);
  EXPECT_EQ(h200.reported_total, Bytes(142218 * kMiB));
  // A10G: 24 GiB GDDR6 with ECC -> base 24 x 15/16 = 22.5 GiB; reserve 1 GiB (1.5 % = 0.34 GiB)
  // -> 21.5 GiB = 22016 MiB; capped at its nvidia-smi total 23028 MiB - 1024 MiB = 22004 MiB.
  const GpuSpec& a10g = catalog().find("a10g");
  EXPECT_TRUE(a10g.reported_estimated());
  EXPECT_EQ(a10g.reported_total, Bytes(22004 * kMiB));
  // GB200: base 186 GiB = 199,715,979,264 B; reserve ceil(1.5 %) = 2,995,739,689 B ->
  // 196,720,239,575 B -> 187607 MiB (183.21 GiB); the cap 189471 - 1024 = 188447 MiB is higher.
  EXPECT_EQ(catalog().find("gb200").reported_total, Bytes(187607 * kMiB));
  // The cap on its own: B300 without its runtime total would be 288 GiB - 4.32 GiB = 290488 MiB by
  // the base rule, above the 275040 MiB nvidia-smi shows; capped: 275040 - 1024 = 274016 MiB.
  EXPECT_EQ(estimate_card_runtime_total(Bytes(288 * kGiB), false, Bytes(275040 * kMiB)), Bytes(274016 * kMiB));
  EXPECT_EQ(estimate_card_runtime_total(Bytes(288 * kGiB), false, std::nullopt), Bytes(290488 * kMiB));
  // A100 80GB 1g.10gb (no measured size): 1/8 of 80 GiB = 10 GiB; reserve 1 GiB -> 9 GiB.
  EXPECT_EQ(catalog().find("a100-sxm-80/1g.10gb").reported_total, Bytes(9 * kGiB));
}

TEST(EstimationRule, IsBelowEveryMeasuredCard) {
  // The rule claims to be conservative: applied to a card that has a measured runtime total, it
  // must not exceed that measurement (otherwise estimated cards could be over-promised).
  int measured = 0;
  for (const GpuSpec& g : catalog().all()) {
    if (g.kind != GpuKind::Card || g.reported_basis != MemoryBasis::Measured) continue;
    ++measured;
    const Bytes estimate = estimate_card_runtime_total(g.physical, g.ecc_carveout, g.nvidia_smi_total);
    EXPECT_LE(estimate, g.reported_total) << g.id << ": rule " << format_gib(estimate)
                                          << " vs measured " << format_gib(g.reported_total);
  }
  EXPECT_GE(measured, 21);
}

TEST(GpuCatalog, AliasesAndCase) {
  EXPECT_EQ(catalog().find("h100").id, "h100-sxm-80");
  EXPECT_EQ(catalog().find("H200-SXM").id, "h200");
  EXPECT_EQ(catalog().find(" a100 ").id, "a100-sxm-80");
  EXPECT_EQ(catalog().find("h100/3g.40gb").id, "h100-sxm-80/3g.40gb");
}

TEST(GpuCatalog, UnknownIdListsClosest) {
  try {
    catalog().find("h100-sxn-80");
    FAIL() << "found an unknown id";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownName);
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown GPU 'h100-sxn-80'"), std::string::npos) << m;
    EXPECT_NE(m.find("h100-sxm-80"), std::string::npos) << m;
  }
}

TEST(GpuCatalog, ResolveList) {
  const auto list = catalog().resolve("h100-sxm-80, h200,L40S");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, "h100-sxm-80");
  EXPECT_EQ(list[1].id, "h200");
  EXPECT_EQ(list[2].id, "l40s");
  EXPECT_EQ(kind_of([] { catalog().resolve(""); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { catalog().resolve("h100,,h200"); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { catalog().resolve("h100,nope"); }), ErrorKind::UnknownName);
}

TEST(GpuCatalog, CustomGpuHasOnlyMemory) {
  const GpuSpec g = catalog().resolve_one("custom:46068MiB");
  EXPECT_EQ(g.reported_total, Bytes(46068 * kMiB));  // 48,305,799,168 B
  EXPECT_EQ(g.reported_total.count(), 48305799168ull);
  EXPECT_EQ(g.reported_basis, MemoryBasis::UserSupplied);
  EXPECT_FALSE(g.bandwidth_gbps.has_value());
  EXPECT_FALSE(g.tflops.bf16.has_value());
  EXPECT_FALSE(g.compute_capability.has_value());
  EXPECT_EQ(kind_of([] { custom_gpu("custom:abc"); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { custom_gpu("custom:0GiB"); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { custom_gpu("custom:"); }), ErrorKind::Usage);
}

TEST(GpuCatalog, ReportedTotalOverrideKeepsOtherFigures) {
  const GpuSpec g = with_reported_total(catalog().find("h100-pcie-80"), parse_bytes("79.22GiB"));
  EXPECT_EQ(g.reported_total, Bytes::from_gib(79.22));
  EXPECT_EQ(g.reported_basis, MemoryBasis::UserSupplied);
  EXPECT_DOUBLE_EQ(*g.bandwidth_gbps, 2000);
  EXPECT_EQ(g.id, "h100-pcie-80");
  EXPECT_EQ(kind_of([&] { with_reported_total(g, Bytes(0)); }), ErrorKind::Usage);
}

TEST(GpuCatalog, ClusterFlagsReplaceTheHostAndTheNetwork) {
  // An H100 cluster of 4-GPU hosts on 800 Gb/s a GPU: the fabric ends after 4 GPUs, the sources
  // name the flags; everything else is the card's.
  const GpuSpec g = with_cluster(catalog().find("h100-sxm-80"), {4, 800.0});
  EXPECT_EQ(g.node_gpus, 4u);
  EXPECT_EQ(fabric_gpus(g), 4u);
  EXPECT_DOUBLE_EQ(*g.interconnect.network_gbit, 800);
  EXPECT_EQ(g.sources.at("node_gpus"), std::vector<std::string>{"--node-gpus"});
  EXPECT_EQ(g.sources.at("network"), std::vector<std::string>{"--network-gbit"});
  EXPECT_DOUBLE_EQ(*g.bandwidth_gbps, *catalog().find("h100-sxm-80").bandwidth_gbps);
  // Nothing given: the card as catalogued.
  EXPECT_EQ(with_cluster(catalog().find("h100-sxm-80"), {}).sources, catalog().find("h100-sxm-80").sources);
  // A GB200 NVL72 rack's NVLink domain still spans 72 GPUs past hosts of 2.
  EXPECT_EQ(fabric_gpus(with_cluster(catalog().find("gb200"), {2, std::nullopt})), 72u);
  // A custom card gains a host size.
  EXPECT_EQ(fabric_gpus(with_cluster(catalog().resolve_one("custom:24GiB"), {8, std::nullopt})), 8u);
  EXPECT_EQ(kind_of([] { with_cluster(catalog().find("h100-sxm-80"), {0, std::nullopt}); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { with_cluster(catalog().find("h100-sxm-80"), {1025, std::nullopt}); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { with_cluster(catalog().find("h100-sxm-80"), {std::nullopt, 0.0}); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { with_cluster(catalog().find("h100-sxm-80"), {std::nullopt, std::nan("")}); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { with_cluster(catalog().find("h100-sxm-80"), {std::nullopt, 2e5}); }), ErrorKind::Usage);
  EXPECT_EQ(kind_of([] { with_cluster(catalog().find("a100-sxm-80/3g.40gb"), {8, std::nullopt}); }), ErrorKind::Usage);
}

}  // namespace
}  // namespace vramplan
