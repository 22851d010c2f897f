// `vramplan gpus` through the real executable: JSON against docs/schemas/gpus.schema.json,
// filters, MIG listing and the exit code of an unknown id.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan {
namespace {

// Follows a local "$ref": "#/$defs/name".
const nlohmann::json& deref(const nlohmann::json& root, const nlohmann::json& schema) {
  if (!schema.contains("$ref")) return schema;
  const std::string ref = schema["$ref"];
  return root.at(nlohmann::json::json_pointer(ref.substr(1)));
}

// A small walker (no validator library): every key a schema's "required" list names must be
// present in the instance, recursively through "properties" and array "items". Failures name
// the JSON pointer of the instance.
void check_required(const nlohmann::json& root, const nlohmann::json& schema_in,
                    const nlohmann::json& value, const std::string& where) {
  const nlohmann::json& schema = deref(root, schema_in);
  if (value.is_object()) {
    for (const auto& key : schema.value("required", nlohmann::json::array()))
      EXPECT_TRUE(value.contains(key.get<std::string>())) << where << ": missing '" << key << "'";
    if (schema.contains("properties"))
      for (const auto& [key, sub] : schema["properties"].items())
        if (value.contains(key)) check_required(root, sub, value[key], where + "/" + key);
  } else if (value.is_array() && schema.contains("items")) {
    for (std::size_t k = 0; k < value.size(); ++k)
      check_required(root, schema["items"], value[k], where + "/" + std::to_string(k));
  }
}

TEST(GpusCommand, JsonHasEveryRequiredKeyOfTheSchema) {
  std::ifstream in(test::source_dir() / "docs" / "schemas" / "gpus.schema.json");
  const auto schema = nlohmann::json::parse(in);
  const auto out = test::run_cli_json({"gpus", "--all", "--json"});
  EXPECT_EQ(out["schema"], "vramplan.gpus/1");
  EXPECT_EQ(out["gpus"].size(), 43u + 43u);  // every card and every MIG slice of data/gpus.json
  check_required(schema, schema, out, "");
}

TEST(GpusCommand, DefaultListsCardsWithIntegerBytes) {
  const auto out = test::run_cli_json({"gpus", "--json"});
  bool saw_h100 = false;
  for (const auto& g : out["gpus"]) {
    EXPECT_EQ(g["kind"], "gpu") << g["id"];
    EXPECT_TRUE(g["memory"]["reported_total_bytes"].is_number_unsigned()) << g["id"];
    if (g["id"] == "h100-sxm-80") {
      saw_h100 = true;
      EXPECT_EQ(g["memory"]["nvidia_smi_total_bytes"], 81559ull * 1048576);  // 81559 MiB
      EXPECT_EQ(g["memory"]["reported_memory_basis"], "measured");
      EXPECT_FALSE(g["sources"]["reported_memory"].empty());
    }
    if (g["id"] == "h200-nvl") {
      EXPECT_EQ(g["memory"]["reported_memory_basis"], "estimated");
    }
    // The measured matmul ceiling beside the datasheet (ml-engineering's MAMF table, AMD's fp16),
    // with its source; null where none is published.
    if (g["id"] == "mi300x") {
      EXPECT_EQ(g["mamf_tflops"]["bf16"], 668.4);
      EXPECT_EQ(g["mamf_tflops"]["fp16"], 654.0);
      EXPECT_EQ(g["tflops_dense"]["bf16"], 1307.4);
      EXPECT_FALSE(g["sources"]["mamf"].empty());
    }
    if (g["id"] == "rtx-4090") {
      EXPECT_TRUE(g["mamf_tflops"]["bf16"].is_null());
    }
  }
  EXPECT_TRUE(saw_h100);
}

TEST(GpusCommand, MinMemoryFiltersOnReportedTotal) {
  const auto out = test::run_cli_json({"gpus", "--json", "--min-memory", "100GiB"});
  std::vector<std::string> ids;
  for (const auto& g : out["gpus"]) {
    EXPECT_GE(g["memory"]["reported_total_bytes"].get<std::uint64_t>(), 100ull << 30) << g["id"];
    ids.push_back(g["id"]);
  }
  // h200 (138.88 GiB est.), b200 (178.35), mi300x (191.98), mi325x; not the 80 GB cards.
  EXPECT_NE(std::find(ids.begin(), ids.end(), "h200"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "b200"), ids.end());
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "h100-sxm-80"), ids.end());
}

TEST(GpusCommand, MigAndVendorFilters) {
  const auto mig = test::run_cli_json({"gpus", "--json", "--mig"});  // keep the document alive for the loop
  for (const auto& g : mig["gpus"]) {
    EXPECT_EQ(g["kind"], "mig");
  }
  const auto amd = test::run_cli_json({"gpus", "--json", "--vendor", "amd"})["gpus"];
  ASSERT_EQ(amd.size(), 5u);  // file order
  EXPECT_EQ(amd[0]["id"], "mi300x");
  EXPECT_EQ(amd[1]["id"], "mi325x");
  EXPECT_EQ(amd[2]["id"], "mi355x");
  EXPECT_EQ(amd[3]["id"], "mi350x");
  EXPECT_EQ(amd[4]["id"], "mi250x");
  // Intel Gaudi is listed with the reason it cannot be planned.
  const auto intel = test::run_cli_json({"gpus", "--json", "--vendor", "intel"})["gpus"];
  ASSERT_EQ(intel.size(), 2u);
  for (const auto& g : intel) EXPECT_TRUE(g["not_plannable"].is_string()) << g["id"];
  EXPECT_TRUE(test::run_cli_json({"gpus", "--json", "--gpu", "h100"})["gpus"][0]["not_plannable"].is_null());
}

// --mig with --gpu lists the named card's slices (it listed the card); a card without slices is
// said to have none.
TEST(GpusCommand, MigWithGpuListsThatCardsSlices) {
  const auto slices = test::run_cli_json({"gpus", "--json", "--mig", "--gpu", "h100-sxm-80"})["gpus"];
  ASSERT_FALSE(slices.empty());
  for (const auto& g : slices) {
    EXPECT_EQ(g["kind"], "mig") << g["id"];
    EXPECT_EQ(g["id"].get<std::string>().rfind("h100-sxm-80/", 0), 0u) << g["id"];
  }
  const auto all = test::run_cli_json({"gpus", "--json", "--all", "--gpu", "h100-sxm-80"})["gpus"];
  EXPECT_EQ(all.size(), slices.size() + 1);  // the card, then its slices
  const auto r = test::run_cli({"gpus", "--mig", "--gpu", "l4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vramplan: error: --mig: l4 has no MIG slices in the catalogue\n");
}

TEST(GpusCommand, NotPlannableCardsAreListedAndRefused) {
  const auto table = test::run_cli({"gpus", "--vendor", "intel"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("listed but not plannable"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("gaudi3: no vramplan engine profile serves Intel Gaudi (HPU)"), std::string::npos)
      << table.out;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"plan", "--model", "llama-3.1-8b", "--gpu", "gaudi3"},
        std::vector<std::string>{"check", "--model", "llama-3.1-8b", "--gpu", "gaudi-3"},
        std::vector<std::string>{"sweep", "--model", "llama-3.1-8b", "--gpu", "gaudi3,h100", "--tp", "1"}}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("GPU 'gaudi3' is listed in the catalogue but cannot be planned: no vramplan engine "
                         "profile serves Intel Gaudi (HPU)"),
              std::string::npos)
        << args[0] << ": " << r.err;
  }
}

TEST(GpusCommand, LotsAndOfferSizesFromPricesJson) {
  // data/prices.json: B200 in lots of 2 or 8 (seed fact); AWS p5.48xlarge quotes are 8-GPU offers.
  const auto out = test::run_cli_json({"gpus", "--json", "--gpu", "b200,h100"});
  EXPECT_EQ(out["gpus"][0]["lots"]["lot_sizes"], nlohmann::json::array({2, 8}));
  EXPECT_FALSE(out["gpus"][0]["lots"]["source"].get<std::string>().empty());
  EXPECT_TRUE(out["gpus"][1]["lots"].is_null());
  bool eight = false;
  for (const auto& q : out["gpus"][1]["prices"]) eight |= q["gpus_per_lot"] == 8;
  EXPECT_TRUE(eight);
}

TEST(GpusCommand, GpuListWithAliasMigAndCustom) {
  const auto out = test::run_cli_json({"gpus", "--json", "--gpu", "h100,h200/1g.18gb,custom:46068MiB"});
  ASSERT_EQ(out["gpus"].size(), 3u);
  EXPECT_EQ(out["gpus"][0]["id"], "h100-sxm-80");
  EXPECT_EQ(out["gpus"][1]["memory"]["reported_total_bytes"], 16ull << 30);  // -lgip 16.00 GiB
  EXPECT_EQ(out["gpus"][2]["memory"]["reported_total_bytes"], 46068ull << 20);
  EXPECT_EQ(out["gpus"][2]["memory"]["reported_memory_basis"], "user");
}

TEST(GpusCommand, TableMarksEstimates) {
  const auto r = test::run_cli({"gpus"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("138.88 est."), std::string::npos) << r.out;  // h200
  EXPECT_NE(r.out.find("79.19"), std::string::npos) << r.out;        // h100-sxm-80, measured
}

TEST(GpusCommand, UnknownIdExits4) {
  const auto r = test::run_cli({"gpus", "--gpu", "h100-sxn-80"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("h100-sxm-80"), std::string::npos) << r.err;
}

TEST(GpusCommand, BadOptionValuesAreUsage) {
  EXPECT_EQ(test::run_cli({"gpus", "--min-memory", "lots"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"gpus", "--vendor", "acme"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"gpus", "--mig", "--all"}).exit_code, 2);
}

}  // namespace
}  // namespace vramplan
