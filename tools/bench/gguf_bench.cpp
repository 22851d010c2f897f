// GGUF header reading must not depend on the file's size: a DeepSeek-V3-sized Q8_0 GGUF
// (~713 GB, written sparse with ftruncate so only its header occupies disk) must parse from the
// header alone in < 50 ms using < 64 MiB. Shapes: DeepSeek-V3 config.json (hidden 7168, 61
// layers of which 3 dense, 256 routed experts of 2048, 1 shared, MLA q_lora 1536 / kv_lora
// 512, 128 heads, vocab 129280); llama.cpp tensor names.
#include <sys/resource.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "support/gguf_writer.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"

namespace {

using namespace vramplan;
using namespace vramplan::test::ggml_type;

const FormatTable& formats() {
  static const FormatTable c = FormatTable::load(std::filesystem::path(VRAMPLAN_SOURCE_DIR) / "data" / "quant_formats.json");
  return c;
}

struct BigFile {
  std::filesystem::path path;
  std::uint64_t size = 0;
  std::uint64_t header = 0;
};

// ne innermost first; the stored size comes from the quant table.
void add(test::GgufDesc& d, std::string name, std::vector<std::int64_t> ne, std::uint32_t type) {
  std::vector<std::uint64_t> shape(ne.rbegin(), ne.rend());
  const auto bytes = tensor_bytes(*formats().find_gguf(type), shape, name);
  d.tensors.push_back({std::move(name), std::move(ne), type, bytes});
}

const BigFile& deepseek_v3_file() {
  static const BigFile file = [] {
    constexpr std::int64_t h = 7168, heads = 128, layers = 61, dense = 3, experts = 256, ie = 2048,
                           dense_ff = 18432, vocab = 129280;
    test::GgufDesc d;
    std::vector<std::string> tokens;
    for (std::int64_t k = 0; k < vocab; ++k) tokens.push_back("token_" + std::to_string(k));
    d.kvs = {test::kv_str("general.architecture", "deepseek2"), test::kv_str("general.name", "DeepSeek-V3-bench"),
             test::kv_u32("general.file_type", 7),             test::kv_u32("deepseek2.block_count", layers),
             test::kv_u32("deepseek2.embedding_length", h),    test::kv_u32("deepseek2.feed_forward_length", dense_ff),
             test::kv_u32("deepseek2.attention.head_count", heads), test::kv_u32("deepseek2.attention.head_count_kv", heads),
             test::kv_u32("deepseek2.attention.key_length", 192),   test::kv_u32("deepseek2.attention.value_length", 128),
             test::kv_u32("deepseek2.attention.q_lora_rank", 1536), test::kv_u32("deepseek2.attention.kv_lora_rank", 512),
             test::kv_u32("deepseek2.rope.dimension_count", 64),    test::kv_u32("deepseek2.context_length", 163840),
             test::kv_u32("deepseek2.expert_count", experts),       test::kv_u32("deepseek2.expert_used_count", 8),
             test::kv_u32("deepseek2.expert_shared_count", 1),      test::kv_u32("deepseek2.expert_feed_forward_length", ie),
             test::kv_u32("deepseek2.leading_dense_block_count", dense),
             test::kv_arr_str("tokenizer.ggml.tokens", tokens),
             test::kv_arr_i32("tokenizer.ggml.token_type", std::vector<std::int32_t>(vocab, 1))};
    add(d, "token_embd.weight", {h, vocab}, Q8_0);
    add(d, "output_norm.weight", {h}, F32);
    add(d, "output.weight", {h, vocab}, Q8_0);
    for (std::int64_t l = 0; l < layers; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      add(d, b + "attn_norm.weight", {h}, F32);
      add(d, b + "attn_q_a_norm.weight", {1536}, F32);
      add(d, b + "attn_kv_a_norm.weight", {512}, F32);
      add(d, b + "attn_q_a.weight", {h, 1536}, Q8_0);
      add(d, b + "attn_q_b.weight", {1536, heads * 192}, Q8_0);
      add(d, b + "attn_kv_a_mqa.weight", {h, 576}, Q8_0);
      add(d, b + "attn_kv_b.weight", {512, heads * 256}, Q8_0);
      add(d, b + "attn_output.weight", {heads * 128, h}, Q8_0);
      add(d, b + "ffn_norm.weight", {h}, F32);
      if (l < dense) {
        add(d, b + "ffn_gate.weight", {h, dense_ff}, Q8_0);
        add(d, b + "ffn_up.weight", {h, dense_ff}, Q8_0);
        add(d, b + "ffn_down.weight", {dense_ff, h}, Q8_0);
        continue;
      }
      add(d, b + "ffn_gate_inp.weight", {h, experts}, F32);
      add(d, b + "exp_probs_b.bias", {experts}, F32);
      add(d, b + "ffn_gate_exps.weight", {h, ie, experts}, Q8_0);
      add(d, b + "ffn_up_exps.weight", {h, ie, experts}, Q8_0);
      add(d, b + "ffn_down_exps.weight", {ie, h, experts}, Q8_0);
      add(d, b + "ffn_gate_shexp.weight", {h, ie}, Q8_0);
      add(d, b + "ffn_up_shexp.weight", {h, ie}, Q8_0);
      add(d, b + "ffn_down_shexp.weight", {ie, h}, Q8_0);
    }
    d.write_data = false;
    const auto built = test::build_gguf(d);
    BigFile f;
    f.path = std::filesystem::temp_directory_path() / ("vramplan-bench-" + std::to_string(getpid()) + ".gguf");
    { std::ofstream(f.path, std::ios::binary).write(built.bytes.data(), static_cast<std::streamsize>(built.bytes.size())); }
    f.header = built.data_offset;
    f.size = built.data_offset + built.data_bytes;
    std::filesystem::resize_file(f.path, f.size);  // ftruncate: sparse, no data blocks written
    std::atexit([] { std::filesystem::remove(deepseek_v3_file().path); });
    return f;
  }();
  return file;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void BM_ReadGgufHeader_DeepSeekV3(benchmark::State& state) {
  const BigFile& f = deepseek_v3_file();
  std::size_t tensors = 0;
  for (auto _ : state) {
    const GgufFile g = read_gguf_header(f.path, formats());
    tensors = g.tensors.size();
    benchmark::DoNotOptimize(g.data_offset);
  }
  state.counters["tensors"] = static_cast<double>(tensors);
  state.counters["file_GB"] = static_cast<double>(f.size) / 1e9;
  state.counters["header_MiB"] = static_cast<double>(f.header) / (1 << 20);
  // Whole-process peak: includes building the fixture's header in memory before the runs.
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_ReadGgufHeader_DeepSeekV3)->Unit(benchmark::kMillisecond);

void BM_ModelFromGguf_DeepSeekV3(benchmark::State& state) {
  const BigFile& f = deepseek_v3_file();
  for (auto _ : state) benchmark::DoNotOptimize(model_from_gguf_file(f.path, formats()).tensors.size());
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_ModelFromGguf_DeepSeekV3)->Unit(benchmark::kMillisecond);

}  // namespace
