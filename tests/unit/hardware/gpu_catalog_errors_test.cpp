// Loading a bad GPU catalogue: every fault is Error(InputFile) with one clear line naming the file,
// the JSON pointer of the field and the entry id. Fixtures: tests/fixtures/gpus/ (each one is
// valid_minimal.json with a single fault).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan {
namespace {

// Loads a fixture that must fail — when loaded or, for a fault inside an entry, when every entry
// is parsed (all()) — and returns the message after checking kind and file name.
std::string load_error(const std::string& name) {
  const auto path = test::fixture("gpus/" + name);
  try {
    GpuCatalog::load(path).all();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << name << " loaded without error";
  return {};
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

TEST(GpuCatalogErrors, ValidMinimalLoads) {
  const auto cat = GpuCatalog::load(test::fixture("gpus/valid_minimal.json"));
  EXPECT_EQ(cat.all().size(), 2u);
  EXPECT_EQ(cat.find("test").id, "test-80");
  EXPECT_EQ(cat.find("test/3g.40gb").reported_total, Bytes::from_gib(39.5));
}

TEST(GpuCatalogErrors, MissingField) {
  const auto m = load_error("missing_field.json");
  expect_contains(m, "/gpus/0/name: required field is missing");
  expect_contains(m, "(gpu 'test-80')");
}

// node_gpus is a sourced figure like the others: given without sources.node_gpus it is refused.
TEST(GpuCatalogErrors, NodeSizeWithoutSource) {
  const auto m = load_error("node_gpus_unsourced.json");
  expect_contains(m, "/gpus/0/sources/node_gpus: node_gpus is given, so its source is required");
  expect_contains(m, "(gpu 'test-80')");
}

// A measured matmul ceiling is a measurement: it needs its source like the other figures.
TEST(GpuCatalogErrors, MatmulCeilingWithoutSource) {
  const auto m = load_error("mamf_unsourced.json");
  expect_contains(m, "/gpus/0/sources/mamf: mamf_tflops is given, so its source is required");
  expect_contains(m, "(gpu 'test-80')");
}

// An Infinity Fabric mesh is given as links + each link's bandwidth, with its source.
TEST(GpuCatalogErrors, PeerLinksNeedTheirBandwidthAndSource) {
  expect_contains(load_error("peer_links_without_bandwidth.json"),
                  "/gpus/0/interconnect: peer_links and peer_link_gbps come together");
  expect_contains(load_error("peer_links_unsourced.json"),
                  "/gpus/0/sources/interconnect: peer_links is given, so its source is required");
}

TEST(GpuCatalogErrors, NetworkFiguresNeedTheirSourceAndAFabric) {
  expect_contains(load_error("network_unsourced.json"),
                  "/gpus/0/sources/network: network_gbit or nvlink_domain_gpus is given, so its source is required");
  expect_contains(load_error("nvlink_domain_without_nvlink.json"),
                  "/gpus/0/interconnect/nvlink_domain_gpus: an NVLink domain needs nvlink_gbps");
}

TEST(GpuCatalogErrors, NegativeSize) {
  const auto m = load_error("negative_size.json");
  expect_contains(m, "/gpus/0/memory/marketed_gb: must be positive, got -80");
  expect_contains(m, "(gpu 'test-80')");
}

TEST(GpuCatalogErrors, NegativeReportedTotal) {
  const auto m = load_error("negative_reported.json");
  expect_contains(m, "/gpus/0/memory/runtime_total: must be a positive size, got '-79GiB'");
}

TEST(GpuCatalogErrors, WrongType) {
  const auto m = load_error("wrong_type.json");
  expect_contains(m, "/gpus/0/memory_bandwidth_gbps: expected a number, got string");
}

TEST(GpuCatalogErrors, DuplicateId) {
  const auto m = load_error("duplicate_id.json");
  expect_contains(m, "/gpus/1/id: duplicate id 'test-80'");
}

TEST(GpuCatalogErrors, BadJson) {
  const auto m = load_error("bad_json.json");
  expect_contains(m, "invalid JSON at line 10");
}

TEST(GpuCatalogErrors, UnknownMigParent) {
  const auto m = load_error("unknown_mig_parent.json");
  expect_contains(m, "/mig_profiles/0/parent: unknown parent GPU 'test-90'");
  expect_contains(m, "(MIG profile 'test-90/3g.40gb')");
}

TEST(GpuCatalogErrors, SliceLargerThanParent) {
  const auto m = load_error("slice_larger_than_parent.json");
  // 81 GiB = 82944 MiB against the parent's 80 GiB = 81920 MiB.
  expect_contains(m, "/mig_profiles/0/reported_memory: slice memory 82944 MiB is larger than its parent's 81920 MiB");
}

TEST(GpuCatalogErrors, AliasToUnknownGpu) {
  const auto m = load_error("alias_unknown_target.json");
  expect_contains(m, "/aliases/h100: alias 'h100' points to unknown GPU 'nope'");
}

// Entries are parsed when first used: a fault in one card does not stop a lookup of another,
// and all() (as `vramplan gpus` uses) reports it with the entry's pointer.
TEST(GpuCatalogErrors, FaultInAnUnusedEntryShowsWhenItIsParsed) {
  const std::string good = test::read_text(test::fixture("gpus/valid_minimal.json"));
  // A second card, a copy of test-80 named test-81 with its bandwidth as a string.
  const auto card_begin = good.find("    {\n      \"id\": \"test-80\"");
  const auto card_end = good.find("\n    }\n  ],", card_begin) + 6;
  ASSERT_NE(card_begin, std::string::npos);
  std::string second = good.substr(card_begin, card_end - card_begin);
  second.replace(second.find("test-80"), 7, "test-81");
  second.replace(second.find("3350"), 4, "\"fast\"");
  std::string text = good;
  text.insert(card_end, ",\n" + second);
  test::ScratchDir dir;
  const auto cat = GpuCatalog::load(dir.write("two.json", text));
  EXPECT_EQ(cat.find("test-80").reported_total, Bytes::from_gib(79.19));
  const auto m = test::error_message([&] { cat.all(); }, ErrorKind::InputFile);
  expect_contains(m, "/gpus/1/memory_bandwidth_gbps: expected a number, got string");
  expect_contains(m, "(gpu 'test-81')");
}

TEST(GpuCatalogErrors, MissingFileIsIo) {
  try {
    GpuCatalog::load(test::fixture("gpus/no_such_file.json"));
    FAIL() << "loaded a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
}

}  // namespace
}  // namespace vramplan
