// Every (engine [x build], catalogue GPU, catalogue weight scheme) gets a defined answer —
// supported, fallback or unsupported — with nothing passing through unchecked (llama.cpp is asked
// once per build of data/compat/formats.json and once with the vendor's default): every weight family the
// catalogue can produce is known to data/compat, every engine of the registry is covered, and
// every non-supported answer names its rule, source and (for unsupported) what would work.
#include <gtest/gtest.h>

#include <map>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/compat/compat.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan::compat {
namespace {

std::vector<std::string> catalogue_schemes(const QuantCatalog& catalog) {
  std::vector<std::string> out;
  const SchemeTable& table = catalog.schemes();
  for (const auto& s : table.schemes()) out.push_back(s.name);
  for (const auto& t : catalog.templates()) out.push_back(t.prefix + "-" + std::to_string(t.bits.front()) + "bit-g128");
  for (const auto& g : table.gguf_file_types()) out.push_back("gguf:" + g.name);
  for (const auto& m : table.vllm_methods()) out.push_back("vllm:" + m.name);
  return out;
}

TEST(CompatTable, EveryEngineGpuAndFormatHasAnAnswer) {
  const CompatRules rules = CompatRules::load(test::source_dir() / "data" / "compat");
  const GpuCatalog gpus = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  const QuantCatalog& catalog = test::quant_catalog();
  const auto schemes = catalogue_schemes(catalog);
  ASSERT_GT(schemes.size(), 30u);
  std::map<Support, std::size_t> count;
  std::size_t cells = 0;
  for (const auto& engine : memory::engine_registry()) {
    const auto& formats = rules.engine_formats().at(std::string(engine.name));
    std::vector<std::string> builds = {""};  // "" = the vendor's default build
    builds.insert(builds.end(), formats.backends.begin(), formats.backends.end());
    for (const auto& gpu : gpus.all()) {
      // Cards no engine profile serves (Intel Gaudi) are refused before compatibility is asked.
      if (!gpu.not_plannable.empty()) continue;
      for (const auto& build : builds) {
        // TP 1, and TP 8: one node of most cards, two of a GB200 tray or a GeForce workstation.
        for (const std::uint64_t tp : {1u, 8u}) {
          for (const auto& name : schemes) {
            Query q;
            q.engine = std::string(engine.name);
            q.backend = build;
            set_gpu_facts(q, gpu);
            const WeightScheme scheme = parse_weight_scheme(name, catalog);
            q.weight_families = weight_families(scheme, catalog);
            q.gguf_types = gguf_types(scheme, catalog);
            q.dtype = "bf16";
            q.tensor_parallel = tp;
            const std::string cell = std::string(engine.name) + " [" + build + "] / " + gpu.id + " / TP " +
                                     std::to_string(tp) + " / " + name;
            Verdict v;
            ASSERT_NO_THROW(v = rules.evaluate(q)) << cell;
            EXPECT_TRUE(v.unchecked.empty()) << cell;
            EXPECT_EQ(v.backend.empty(), formats.backends.empty()) << cell;
            ASSERT_EQ(v.support == Support::Supported, v.findings.empty());
            for (const auto& f : v.findings) {
              EXPECT_FALSE(f.rule.empty());
              EXPECT_FALSE(f.source.empty()) << f.rule;
              if (f.support == Support::Unsupported) {
                EXPECT_FALSE(f.instead.empty()) << f.rule;
              }
            }
            ++count[v.support];
            ++cells;
          }
        }
      }
    }
  }
  // Each answer occurs: the table is neither all-pass nor all-fail.
  EXPECT_GT(count[Support::Supported], 0u);
  EXPECT_GT(count[Support::Fallback], 0u);
  EXPECT_GT(count[Support::Unsupported], 0u);
  EXPECT_EQ(count[Support::Supported] + count[Support::Fallback] + count[Support::Unsupported], cells);
}

// A few cells of the table, by hand from the rules they come from.
TEST(CompatTable, KnownCells) {
  const CompatRules rules = CompatRules::load(test::source_dir() / "data" / "compat");
  const GpuCatalog gpus = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  const QuantCatalog& catalog = test::quant_catalog();
  const auto answer = [&](std::string engine, std::string_view gpu, std::string_view scheme, std::string build = "") {
    Query q;
    q.engine = std::move(engine);
    q.backend = std::move(build);
    set_gpu_facts(q, gpus.find(gpu));
    const WeightScheme s = parse_weight_scheme(scheme, catalog);
    q.weight_families = weight_families(s, catalog);
    q.gguf_types = gguf_types(s, catalog);
    q.dtype = "fp16";
    return rules.evaluate(q).support;
  };
  EXPECT_EQ(answer("vllm", "mi300x", "nvfp4"), Support::Unsupported);     // vllm-nvfp4-rocm
  EXPECT_EQ(answer("vllm", "h100", "nvfp4"), Support::Fallback);          // vllm-nvfp4-marlin
  EXPECT_EQ(answer("vllm", "b200", "nvfp4"), Support::Supported);
  EXPECT_EQ(answer("vllm", "v100-32", "fp16"), Support::Unsupported);     // vllm-cuda-min-capability
  EXPECT_EQ(answer("llamacpp", "v100-32", "gguf:Q4_K_M"), Support::Supported);
  EXPECT_EQ(answer("llamacpp", "h100", "awq-4bit-g128"), Support::Unsupported);  // llamacpp-loads-awq
  EXPECT_EQ(answer("vllm", "a100", "vllm:gptq_marlin"), Support::Supported);
  EXPECT_EQ(answer("hf", "h100", "hqq-4bit-g128"), Support::Supported);
  EXPECT_EQ(answer("vllm", "h100", "hqq-4bit-g128"), Support::Unsupported);      // vllm-loads-hqq
  // llama.cpp per build and GGUF type (ggml-org/ggml @d99724f2 supports_op of each backend)
  EXPECT_EQ(answer("llamacpp", "h100", "gguf:TQ1_0"), Support::Fallback);            // ...-cuda-no-ternary-matmul
  EXPECT_EQ(answer("llamacpp", "h100", "gguf:TQ2_0", "vulkan"), Support::Supported);  // Vulkan has TQ2_0
  EXPECT_EQ(answer("llamacpp", "h100", "gguf:TQ1_0", "vulkan"), Support::Fallback);   // ...-vulkan-no-tq1-matmul
  EXPECT_EQ(answer("llamacpp", "mi300x", "gguf:Q4_K_M", "cuda"), Support::Unsupported);  // ...-cuda-build-nvidia-only
  EXPECT_EQ(answer("llamacpp", "mi300x", "gguf:Q4_K_M", "vulkan"), Support::Supported);
  EXPECT_EQ(answer("llamacpp", "rtx-4090", "gguf:Q4_K_M", "cpu"), Support::Fallback);     // llamacpp-cpu-build
}

}  // namespace
}  // namespace vramplan::compat
