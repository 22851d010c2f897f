// Co-tenancy pieces with hand-computed values: vLLM's start-up rule and message, the --tenant
// syntax, MIG layout rules.
#include "vramplan/plan/cotenancy.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/plan/mig_layout.hpp"

namespace vramplan::plan {
namespace {

TEST(VllmStartup, RefusesWhenFreeIsBelowCeilTotalTimesUtilization) {
  // T = 81,088 MiB (79.1875 GiB), u = 0.5: requested = ceil(T x 0.5) = 40,544 MiB = 39.59375 GiB,
  // printed round(x, 2) = 39.59. Free 9,124 MiB = 8.91015625 GiB -> 8.91; T -> 79.19.
  const Bytes total(81088 * kMiB);
  EXPECT_EQ(vllm_startup_refusal(Bytes(9124 * kMiB), total, 0.5),
            "Free memory on device cuda:0 (8.91/79.19 GiB) on startup is less than desired GPU memory utilization "
            "(0.5, 39.59 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.");
  // Exactly the requested amount free: vLLM starts (its test is free < requested).
  EXPECT_EQ(vllm_startup_refusal(Bytes(40544 * kMiB), total, 0.5), "");
  EXPECT_NE(vllm_startup_refusal(Bytes(40544 * kMiB - 1), total, 0.5), "");
  // Python prints whole floats with ".0": utilization 1 -> "(1.0, 79.19 GiB)".
  EXPECT_NE(vllm_startup_refusal(Bytes(0), total, 1.0).find("(1.0, 79.19 GiB)"), std::string::npos);
}

TEST(TenantSpec, KeysAndEngineFlags) {
  const TenantSpec t = parse_tenant("model=qwen2.5-7b,engine=sglang,mem-fraction-static=0.4,batch=8,context=4096,"
                                    "weights=fp8,disable-cuda-graph");
  EXPECT_EQ(t.model, "qwen2.5-7b");
  EXPECT_EQ(t.engine, "sglang");
  EXPECT_EQ(t.weights, "fp8");
  EXPECT_EQ(t.batch, 8u);
  EXPECT_EQ(t.context, 4096u);
  EXPECT_EQ(t.flags.at("mem-fraction-static"), "0.4");
  EXPECT_EQ(t.flags.at("disable-cuda-graph"), "");
  EXPECT_EQ(parse_tenant("model=m").engine, "vllm");
  for (const char* bad : {"engine=vllm", "model=m,,batch=2", "model=m,batch=0", "model=m,context=x", ""}) {
    try {
      parse_tenant(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
    }
  }
}

TEST(MigLayout, FractionsAndInstanceLimits) {
  const GpuCatalog catalog = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  const GpuSpec& h100 = catalog.find("h100-sxm-80");
  // 3 x 2g.20gb + 1 x 1g.10gb: memory 2/8 x 3 + 1/8 = 7/8, compute 2/7 x 3 + 1/7 = 7/7: valid.
  EXPECT_EQ(resolve_mig_layout(catalog, h100, {"2g.20gb", "2g.20gb", "2g.20gb", "1g.10gb"}).size(), 4u);
  // 7 x 1g.10gb: the card's 7 instances (compute 7/7, memory 7/8).
  EXPECT_EQ(resolve_mig_layout(catalog, h100, std::vector<std::string>(7, "1g.10gb")).size(), 7u);
  // 4g.40gb + 4g.40gb: 1 instance per card (and 8/7 of the compute).
  EXPECT_THROW(resolve_mig_layout(catalog, h100, {"4g.40gb", "4g.40gb"}), Error);
  // 4g.40gb + 3g.40gb + 1g.10gb: memory 4/8 + 4/8 + 1/8 = 9/8.
  EXPECT_THROW(resolve_mig_layout(catalog, h100, {"4g.40gb", "3g.40gb", "1g.10gb"}), Error);
  // 3g.40gb + 2g.20gb + 2g.20gb: memory 4/8 + 2/8 + 2/8 = 1, compute 3/7 + 2/7 + 2/7 = 1: valid.
  EXPECT_EQ(resolve_mig_layout(catalog, h100, {"3g.40gb", "2g.20gb", "2g.20gb"}).size(), 3u);
  // 4g.40gb + 2g.20gb + 2g.20gb: memory 1, compute 4/7 + 4/7 = 8/7.
  try {
    resolve_mig_layout(catalog, h100, {"4g.40gb", "2g.20gb", "2g.20gb"});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("8/7 of the card's compute slices"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vramplan::plan
