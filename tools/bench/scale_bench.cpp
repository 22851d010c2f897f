// Inputs at real extremes parse in well under a second (issue 14): a 100,000-tensor sharded
// safetensors checkpoint (index + every shard header; DeepSeek-V3 has ~91,000 tensors, Kimi-K2
// more), a 1,000,000-tensor GGUF header, and vLLM's weight-allocation replay over a
// 100,000-tensor GGUF model (all in one layer: the case a per-parameter linear search made
// quadratic). Files are written once per process under the temp directory.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/gguf_writer.hpp"
#include "support/safetensors_writer.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"
#include "vramplan/io/safetensors.hpp"
#include "vramplan/memory/vllm_weight_allocation.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/quant/format.hpp"

namespace {

using namespace vramplan;

std::filesystem::path source(const std::string& relative) { return std::filesystem::path(VRAMPLAN_SOURCE_DIR) / relative; }

const QuantCatalog& catalog() {
  static const QuantCatalog c = QuantCatalog::load(source("data/quant_formats.json"), source("data/quant_schemes.json"));
  return c;
}

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "vramplan-scale-bench";
  std::filesystem::create_directories(dir);
  return dir / name;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// 10 shards of 10,000 BF16 [4, 4] tensors each, and the index naming them.
const std::filesystem::path& sharded_checkpoint() {
  static const std::filesystem::path dir = [] {
    constexpr int kShards = 10, kPerShard = 10'000;
    const auto d = scratch("st100k");
    std::filesystem::create_directories(d);
    std::string index = R"({"metadata": {}, "weight_map": {)";
    for (int s = 0; s < kShards; ++s) {
      const std::string shard = "model-" + std::to_string(s) + ".safetensors";
      std::vector<test::SafetensorsEntry> entries;
      for (int k = 0; k < kPerShard; ++k) {
        const std::string name = "model.layers." + std::to_string(s) + ".experts." + std::to_string(k) + ".w.weight";
        entries.emplace_back(name, "BF16", std::vector<std::uint64_t>{4, 4}, 32);
        index += (s + k == 0 ? "\"" : ", \"") + name + "\": \"" + shard + "\"";
      }
      write_file(d / shard, test::build_safetensors(entries));
    }
    write_file(d / "model.safetensors.index.json", index + "}}");
    return d;
  }();
  return dir;
}

// `n` F32 [8] tensors in block 0 of a one-block llama GGUF.
std::filesystem::path gguf_with(std::size_t n, const std::string& name) {
  using namespace test::ggml_type;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "llama"), test::kv_u32("llama.block_count", 1),
           test::kv_u32("llama.embedding_length", 64), test::kv_u32("llama.feed_forward_length", 128),
           test::kv_u32("llama.attention.head_count", 4), test::kv_u32("llama.context_length", 256)};
  d.tensors.reserve(n);
  for (std::size_t k = 0; k < n; ++k) d.tensors.push_back({"blk.0.t" + std::to_string(k) + ".weight", {8}, F32, 32});
  const auto path = scratch(name);
  write_file(path, test::build_gguf(d).bytes);
  return path;
}

void BM_SafetensorsIndex100kTensors(benchmark::State& state) {
  const auto& dir = sharded_checkpoint();
  for (auto _ : state) benchmark::DoNotOptimize(read_safetensors_dir(dir, catalog()));
  state.counters["tensors"] = 100'000;
}
BENCHMARK(BM_SafetensorsIndex100kTensors)->Unit(benchmark::kMillisecond);

void BM_GgufHeader1MTensors(benchmark::State& state) {
  static const auto path = gguf_with(1'000'000, "t1m.gguf");
  for (auto _ : state) benchmark::DoNotOptimize(model_from_gguf_file(path, catalog()));
  state.counters["tensors"] = 1'000'000;
}
BENCHMARK(BM_GgufHeader1MTensors)->Unit(benchmark::kMillisecond);

void BM_VllmReplayGguf100kTensors(benchmark::State& state) {
  static const auto path = gguf_with(100'000, "t100k.gguf");
  const auto model = model_from_gguf_file(path, catalog());
  const auto weights = memory::resolve_weights(model, catalog(), memory::WeightRequest{});
  for (auto _ : state)
    benchmark::DoNotOptimize(memory::replay_vllm_allocations(memory::vllm_allocation_plan(model, weights, {})));
  state.counters["tensors"] = 100'000;
}
BENCHMARK(BM_VllmReplayGguf100kTensors)->Unit(benchmark::kMillisecond);

}  // namespace
