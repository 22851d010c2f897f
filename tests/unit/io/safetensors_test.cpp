#include "vramplan/io/safetensors.hpp"

#include <gtest/gtest.h>

#include "support/safetensors_writer.hpp"
#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

// {vocab 16, hidden 8} embedding in BF16: 128 x 2 = 256 B; an F32 norm: 8 x 4 = 32 B; an
// MXFP4 block tensor as raw U8 {2, 8, 1, 16}: 256 B; a GPTQ qweight as I32 {1, 8}: 32 B.
std::vector<test::SafetensorsEntry> small_model() {
  return {{"model.embed_tokens.weight", "BF16", {16, 8}, 256},
          {"model.norm.weight", "F32", {8}, 32},
          {"model.layers.0.mlp.experts.down_proj_blocks", "U8", {2, 8, 1, 16}, 256},
          {"model.layers.0.self_attn.q_proj.qweight", "I32", {1, 8}, 32}};
}

void expect_refused(const std::filesystem::path& path, const std::string& expected, bool dir = false) {
  try {
    if (dir) read_safetensors_dir(path, test::quant_formats());
    else read_safetensors_file(path, test::quant_formats());
    ADD_FAILURE() << "accepted; expected: " << expected;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message: " << e.what() << "\nexpected: " << expected;
  }
}

TEST(Safetensors, SingleFileTensorsAndSizes) {
  test::ScratchDir dir;
  const auto path = dir.write("model.safetensors", test::build_safetensors(small_model()));
  const auto tensors = read_safetensors_file(path, test::quant_formats());
  ASSERT_EQ(tensors.size(), 4u);  // __metadata__ is not a tensor
  // Sorted by name.
  EXPECT_EQ(tensors[0].name, "model.embed_tokens.weight");
  EXPECT_EQ(tensors[0].dtype, "BF16");
  EXPECT_EQ(tensors[0].shape, (std::vector<std::uint64_t>{16, 8}));
  EXPECT_EQ(tensors[0].data_bytes, 256u);
  EXPECT_EQ(tensors[0].file, path);
  EXPECT_EQ(tensors[1].dtype, "U8");  // packed MXFP4 stays raw
  EXPECT_EQ(tensors[1].data_bytes, 256u);
  EXPECT_EQ(tensors[2].dtype, "I32");
  EXPECT_EQ(tensors[3].name, "model.norm.weight");
  EXPECT_EQ(tensors[3].data_bytes, 32u);
}

TEST(Safetensors, DirectoryWithSingleFile) {
  test::ScratchDir dir;
  dir.write("model.safetensors", test::build_safetensors(small_model()));
  EXPECT_EQ(read_safetensors_dir(dir.path(), test::quant_formats()).size(), 4u);
}

TEST(Safetensors, ShardedDirectoryWithIndex) {
  test::ScratchDir dir;
  auto all = small_model();
  dir.write("model-00001-of-00002.safetensors", test::build_safetensors({all[0], all[1]}));
  dir.write("model-00002-of-00002.safetensors", test::build_safetensors({all[2], all[3]}));
  dir.write("model.safetensors.index.json", R"({"metadata": {"total_size": 576}, "weight_map": {
    "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
    "model.norm.weight": "model-00001-of-00002.safetensors",
    "model.layers.0.self_attn.q_proj.qweight": "model-00002-of-00002.safetensors",
    "model.layers.0.mlp.experts.down_proj_blocks": "model-00002-of-00002.safetensors"}})");
  const auto tensors = read_safetensors_dir(dir.path(), test::quant_formats());
  ASSERT_EQ(tensors.size(), 4u);
  std::uint64_t total = 0;
  for (const auto& t : tensors) total += t.data_bytes;
  EXPECT_EQ(total, 576u);  // 256 + 32 + 256 + 32
  EXPECT_EQ(tensors[0].file.filename(), "model-00001-of-00002.safetensors");
}

TEST(Safetensors, HeaderLongerThanTheFile) {
  test::ScratchDir dir;
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw("{}", 0, 1000)),
                 "header length: 1000 bytes but only 2 bytes follow");
}

TEST(Safetensors, HeaderOverTheCap) {
  test::ScratchDir dir;
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw("{}", 0, 1ull << 40)),
                 "exceeds the limit of 104857600 bytes");
}

TEST(Safetensors, HeaderNotJson) {
  test::ScratchDir dir;
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw("{\"a\": [1, 2", 0)), "invalid JSON");
}

TEST(Safetensors, HeaderNotAnObject) {
  test::ScratchDir dir;
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw("[1]", 0)), "expected a JSON object, got array");
}

TEST(Safetensors, MissingDtype) {
  test::ScratchDir dir;
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw(R"({"w": {"shape": [2], "data_offsets": [0, 8]}})", 8)),
                 "/w/dtype");
}

TEST(Safetensors, UnknownDtype) {
  test::ScratchDir dir;
  expect_refused(dir.write("a.safetensors", test::build_safetensors({{"w", "F7", {2}, 2}})),
                 "unknown dtype 'F7'");
}

TEST(Safetensors, OffsetsPastTheDataSection) {
  test::ScratchDir dir;
  expect_refused(dir.write("a.safetensors",
                           test::build_safetensors_raw(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8)),
                 "end 16 is past the data section (8 bytes)");
}

TEST(Safetensors, SizeMismatchWithShape) {
  test::ScratchDir dir;
  // F32 {4} = 16 B, but the range holds 12.
  expect_refused(dir.write("a.safetensors", test::build_safetensors({{"w", "F32", {4}, 12}})),
                 "12 bytes, but shape and dtype give 4 elements x 4 bytes");
}

TEST(Safetensors, OverlappingTensors) {
  test::ScratchDir dir;
  test::SafetensorsEntry a{"a", "F32", {4}, 16, std::pair<std::uint64_t, std::uint64_t>{0, 16}};
  test::SafetensorsEntry b{"b", "F32", {4}, 16, std::pair<std::uint64_t, std::uint64_t>{8, 24}};
  expect_refused(dir.write("a.safetensors", test::build_safetensors({a, b})),
                 "tensor 'b': bytes [8, 24) overlap tensor 'a' [0, 16)");
}

TEST(Safetensors, DuplicateTensorName) {
  test::ScratchDir dir;
  const std::string header = R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                             R"( "w": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})";
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw(header, 2)), "tensor 'w' is listed twice");
}

TEST(Safetensors, DuplicateFoundThroughEscapesAndOnlyAtTheTopLevel) {
  // The duplicate scan decodes names (the escape u0077 is "w") and ignores keys nested in values
  // (__metadata__ may repeat a tensor's name; "dtype" appears in every entry).
  test::ScratchDir dir;
  const std::string escaped = R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                              R"( "\u0077": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})";
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw(escaped, 2)), "tensor 'w' is listed twice");
  const std::string nested = R"({"__metadata__": {"w": "x", "v": "w"}, "w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                             R"( "v": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})";
  EXPECT_EQ(read_safetensors_file(dir.write("b.safetensors", test::build_safetensors_raw(nested, 2)), test::quant_formats()).size(), 2u);
}

TEST(Safetensors, NulInTheHeaderIsRefused) {
  // Fuzz finding (tools/fuzz.sh, safetensors): nlohmann's parser ends its input at a NUL byte, so
  // a header cut short by NULs was accepted (and the duplicate scan ran on past the object into an
  // unterminated string: ASan heap-buffer-overflow). safetensors' own reader (serde_json over the
  // whole header) refuses it: so does vramplan, naming the byte. The valid object is 60 bytes, so
  // the first NUL is byte 60 of 60 + 3 + 5 = 68.
  test::ScratchDir dir;
  const std::string header = std::string(R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})") +
                             std::string(3, '\0') + "\"open";
  expect_refused(dir.write("a.safetensors", test::build_safetensors_raw(header, 1)),
                 "header: byte 60 of the 68-byte header is NUL (a safetensors header is JSON padded with spaces)");
  // Space padding, as safetensors' serialize() writes it, is fine.
  const std::string padded = std::string(R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})") + "   ";
  EXPECT_EQ(read_safetensors_file(dir.write("b.safetensors", test::build_safetensors_raw(padded, 1)), test::quant_formats()).size(), 1u);
}

TEST(Safetensors, IndexListingAMissingShard) {
  test::ScratchDir dir;
  dir.write("model-00001-of-00002.safetensors", test::build_safetensors({small_model()[0]}));
  dir.write("model.safetensors.index.json", R"({"weight_map": {
    "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
    "model.norm.weight": "model-00002-of-00002.safetensors"}})");
  // An absent shard is an I/O failure (exit 5), as an absent GGUF split is.
  try {
    read_safetensors_dir(dir.path(), test::quant_formats());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io) << e.what();
    EXPECT_EQ(std::string(e.what()), (dir.path() / "model-00002-of-00002.safetensors").string() +
                                         ": no such file (a shard model.safetensors.index.json lists)");
  }
}

TEST(Safetensors, IndexListingAMissingTensor) {
  test::ScratchDir dir;
  dir.write("model-00001-of-00001.safetensors", test::build_safetensors({small_model()[0]}));
  dir.write("model.safetensors.index.json", R"({"weight_map": {
    "model.embed_tokens.weight": "model-00001-of-00001.safetensors",
    "lm_head.weight": "model-00001-of-00001.safetensors"}})");
  expect_refused(dir.path(), "tensor 'lm_head.weight' is listed in shard 'model-00001-of-00001.safetensors', which does not contain it", true);
}

TEST(Safetensors, IndexShardOutsideTheDirectory) {
  test::ScratchDir dir;
  dir.write("model.safetensors.index.json", R"({"weight_map": {"w": "../other.safetensors"}})");
  expect_refused(dir.path(), "is not a file name in the checkpoint directory", true);
}

TEST(Safetensors, EmptyDirectoryIsAnIoError) {
  test::ScratchDir dir;
  try {
    read_safetensors_dir(dir.path(), test::quant_formats());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
}

}  // namespace
}  // namespace vramplan
