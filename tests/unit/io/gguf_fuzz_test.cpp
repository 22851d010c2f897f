// Truncations and random byte flips of a valid GGUF: each variant must load or fail with a
// vramplan Error — never crash, hang or allocate without bound (the suite also runs under
// ASan/UBSan in CI).
#include <random>

#include <gtest/gtest.h>

#include "support/gguf_writer.hpp"
#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"

namespace vramplan {
namespace {

using namespace test::ggml_type;


// Small but covering every value kind: scalars, strings, arrays of numbers, strings and bools,
// a nested array, and tensors of block and plain types.
test::GgufBytes fuzz_seed() {
  test::GgufDesc d;
  test::ByteWriter nested;  // array of 2 arrays of u32
  nested.u32(9).u64(2).u32(4).u64(1).u32(7).u32(4).u64(0);
  d.kvs = {test::kv_str("general.architecture", "llama"), test::kv_u32("general.alignment", 32),
           test::kv_u32("llama.block_count", 1),           test::kv_u32("llama.embedding_length", 32),
           test::kv_f32("llama.rope.freq_base", 10000.0f), test::kv_bool("llama.flag", true),
           test::kv_arr_str("tokenizer.ggml.tokens", {"a", "bc", "def"}),
           test::kv_arr_i32("llama.attention.head_count", {2}), test::kv_arr_bool("x.pattern", {true}),
           test::kv_raw("x.nested", 9, nested.bytes())};
  d.tensors = {{"token_embd.weight", {32, 3}, Q8_0, 3 * 34},  // 3 rows x 1 block x 34 B
               {"blk.0.attn_norm.weight", {32}, F32, 128}};
  return test::build_gguf(d);
}

// Returns true when the file loaded; fails the test on anything but a vramplan Error.
bool load_or_refuse(const std::filesystem::path& path) {
  try {
    const GgufFile f = read_gguf_header(path, test::quant_formats());
    if (f.find("general.architecture")) (void)model_from_gguf(f, test::quant_formats());
    return true;
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::InputFile || e.kind() == ErrorKind::Io) << e.what();
    return false;
  }
}

TEST(GgufFuzz, SeedLoads) {
  test::ScratchDir dir;
  EXPECT_TRUE(load_or_refuse(dir.write("seed.gguf", fuzz_seed().bytes)));
}

TEST(GgufFuzz, EveryTruncationOfTheHeaderIsRefused) {
  test::ScratchDir dir;
  const auto seed = fuzz_seed();
  for (std::size_t cut = 0; cut < seed.data_offset; ++cut) {
    const auto path = dir.write("cut.gguf", seed.bytes.substr(0, cut));
    EXPECT_FALSE(load_or_refuse(path)) << "a file cut at byte " << cut << " loaded";
  }
}

TEST(GgufFuzz, RandomByteFlipsLoadOrFailCleanly) {
  test::ScratchDir dir;
  const auto seed = fuzz_seed();
  std::mt19937_64 rng(20240611);  // fixed seed: reproducible
  std::uniform_int_distribution<std::size_t> pos(0, seed.data_offset - 1);
  std::uniform_int_distribution<int> byte(0, 255), count(1, 4);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = seed.bytes;
    for (int k = count(rng); k > 0; --k) bytes[pos(rng)] = static_cast<char>(byte(rng));
    load_or_refuse(dir.write("flip.gguf", bytes));
  }
}

}  // namespace
}  // namespace vramplan
