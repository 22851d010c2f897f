// MIG slice sizes against each other and against their card (docs/gpus.md, MIG slices): slices
// with the same memory slices have one size, and no slice is planned on more than its card.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "support/test_support.hpp"
#include "vramplan/core/bytes.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan {
namespace {

const GpuCatalog& mig_catalog() {
  static const GpuCatalog cat = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  return cat;
}

constexpr std::uint64_t kMigMiB = 1ull << 20;

TEST(MigSizes, SameMemorySlicesShareOneSize) {
  // nvidia-smi mig -lgip lists A100-40GB 3g.20gb and 4g.20gb both at 19.62 GiB: a strictly larger
  // slice must not be planned on less memory than its measured sibling (4g.20gb was 19.00 GiB est.
  // against 3g.20gb's 19.62 before 2026-12-08).
  std::map<std::pair<std::string, std::string>, std::pair<std::string, Bytes>> first;
  std::size_t compared = 0;
  for (const GpuSpec& g : mig_catalog().all()) {
    if (g.kind != GpuKind::Mig) continue;
    const auto key = std::make_pair(g.parent_id, g.mig->memory_fraction.str());
    const auto [it, inserted] = first.emplace(key, std::make_pair(g.id, g.reported_total));
    if (inserted) continue;
    ++compared;
    EXPECT_EQ(g.reported_total, it->second.second) << g.id << " vs " << it->second.first;
  }
  EXPECT_GE(compared, 10u);
}

TEST(MigSizes, NoSliceExceedsItsCard) {
  std::size_t slices = 0;
  for (const GpuSpec& g : mig_catalog().all()) {
    if (g.kind != GpuKind::Mig) continue;
    ++slices;
    EXPECT_LE(g.reported_total, mig_catalog().find(g.parent_id).reported_total) << g.id;
  }
  EXPECT_GE(slices, 40u);
}

TEST(MigSizes, PublishedA100Sizes) {
  // nvidia-smi mig -lgip on an A100-SXM4-40GB: 1g.5gb 4.75 GiB = 4864 MiB, 2g.10gb 9.75 GiB =
  // 9984 MiB, 4g.20gb as 3g.20gb's created device, 20096 MiB.
  EXPECT_EQ(mig_catalog().find("a100-sxm-40/1g.5gb").reported_total, Bytes(4864 * kMigMiB));
  EXPECT_EQ(mig_catalog().find("a100-sxm-40/2g.10gb").reported_total, Bytes(9984 * kMigMiB));
  EXPECT_EQ(mig_catalog().find("a100-sxm-40/4g.20gb").reported_total, Bytes(20096 * kMigMiB));
  EXPECT_EQ(mig_catalog().find("a100-sxm-40/4g.20gb").reported_basis, MemoryBasis::Measured);
  // A100-80GB: 4g.40gb as 3g.40gb (-lgip 39.25 GiB), 1g.20gb as 2g.20gb (19968 MiB).
  EXPECT_EQ(mig_catalog().find("a100-sxm-80/4g.40gb").reported_total, Bytes::from_gib(39.25));
  EXPECT_EQ(mig_catalog().find("a100-sxm-80/1g.20gb").reported_total, Bytes(19968 * kMigMiB));
}

TEST(MigSizes, AFullMemorySliceIsCappedAtItsCard) {
  // H100 SXM: -lgip lists 7g.80gb at 79.25 GiB, the card's CUDA total is 79.19 GiB (vLLM 0.19):
  // the slice is planned on 79.19 and its note says why.
  const GpuSpec& h100 = mig_catalog().find("h100-sxm-80");
  const GpuSpec& seven = mig_catalog().find("h100-sxm-80/7g.80gb");
  EXPECT_EQ(seven.reported_total, h100.reported_total);
  EXPECT_EQ(seven.reported_total, Bytes::from_gib(79.19));
  EXPECT_NE(seven.reported_note.find("capped at the card's"), std::string::npos) << seven.reported_note;
  // H200: 7g.141gb's 139.75 GiB is below the card's 139.81 (vLLM's total_gpu_memory): not capped,
  // nor is 3g.71gb (69.50).
  EXPECT_EQ(mig_catalog().find("h200/7g.141gb").reported_total, Bytes::from_gib(139.75));
  EXPECT_LT(mig_catalog().find("h200/7g.141gb").reported_total, mig_catalog().find("h200").reported_total);
  EXPECT_EQ(mig_catalog().find("h200/3g.71gb").reported_total, Bytes::from_gib(69.50));
}

}  // namespace
}  // namespace vramplan
