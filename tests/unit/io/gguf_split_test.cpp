// Split GGUF models (llama.cpp gguf-split): every split read, as llama_model_loader reads them.
#include <gtest/gtest.h>

#include <cstdio>

#include "support/catalogs.hpp"
#include "support/gguf_split_writer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"

namespace vramplan {
namespace {

// llama_like_gguf: 21 tensors (3 global + 2 x 9 per layer). Cut into 3 files at tensors 0, 8
// and 15 (8 + 7 + 6 tensors), named as llama_split_path names them.
std::vector<std::filesystem::path> write_splits(const test::ScratchDir& dir, const test::GgufDesc& whole,
                                                const std::vector<std::size_t>& cuts, const std::string& prefix = "m") {
  const auto parts = test::split_gguf(whole, cuts);
  std::vector<std::filesystem::path> paths;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "%s-%05zu-of-%05zu.gguf", prefix.c_str(), k + 1, parts.size());
    paths.push_back(dir.write(name, test::build_gguf(parts[k]).bytes));
  }
  return paths;
}

TEST(GgufSplit, EverySplitIsReadAndTheTensorsSumToTheWholeModel) {
  test::ScratchDir dir;
  const auto whole = test::llama_like_gguf();
  const auto paths = write_splits(dir, whole, {0, 8, 15});
  const GgufFile split = read_gguf_model(paths[0], test::quant_formats());
  const GgufFile single = read_gguf_header(dir.write("whole.gguf", test::build_gguf(whole).bytes), test::quant_formats());
  EXPECT_EQ(split.splits, 3u);
  ASSERT_EQ(split.tensors.size(), 21u);
  // Tensor bytes (gguf_writer.cpp): 9,216 + 1,024 + 13,440 + 2 x (1,024 + 36,864 + 18,432 +
  // 26,880 + 131,072 + 1,024 + 73,728 + 73,728 + 107,520) = 23,680 + 2 x 470,272 = 964,224.
  EXPECT_EQ(split.tensor_data_bytes(), 964'224u);
  EXPECT_EQ(split.tensor_data_bytes(), single.tensor_data_bytes());
  EXPECT_EQ(split.tensors.back().name, "blk.1.ffn_down.weight");  // the last split's last tensor

  // The model built from it is the unsplit model: same tensors, same metadata.
  const ModelSpec a = model_from_gguf_file(paths[0], test::quant_formats());
  const ModelSpec b = model_from_gguf(single, test::quant_formats());
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (std::size_t i = 0; i < a.tensors.size(); ++i) EXPECT_EQ(a.tensors[i].stored_bytes, b.tensors[i].stored_bytes);
  EXPECT_EQ(a.arch.num_layers, 2u);
  EXPECT_EQ(a.source.path, paths[0].string());
}

TEST(GgufSplit, ALaterSplitIsRefusedNamingTheFirst) {
  test::ScratchDir dir;
  const auto paths = write_splits(dir, test::llama_like_gguf(), {0, 8, 15});
  EXPECT_EQ(test::error_message([&] { read_gguf_model(paths[1], test::quant_formats()); }, ErrorKind::InputFile),
            paths[1].string() + ": key 'split.no': this is split 2 of 3; pass the first split (...-00001-of-00003.gguf), "
                                "as llama.cpp requires");
}

TEST(GgufSplit, AMissingSplitIsAnIoErrorNamingIt) {
  test::ScratchDir dir;
  const auto paths = write_splits(dir, test::llama_like_gguf(), {0, 8, 15});
  std::filesystem::remove(paths[2]);
  EXPECT_EQ(test::error_message([&] { read_gguf_model(paths[0], test::quant_formats()); }, ErrorKind::Io),
            paths[2].string() + ": no such file (split 3 of 3 of " + paths[0].string() + ")");
}

TEST(GgufSplit, AFirstSplitRenamedCannotFindTheOthers) {
  test::ScratchDir dir;
  const auto paths = write_splits(dir, test::llama_like_gguf(), {0, 8});
  const auto renamed = dir.path() / "model.gguf";
  std::filesystem::rename(paths[0], renamed);
  EXPECT_NE(test::error_message([&] { read_gguf_model(renamed, test::quant_formats()); }, ErrorKind::InputFile)
                .find("does not end in '-00001-of-00002.gguf'"),
            std::string::npos);
}

TEST(GgufSplit, TensorCountAndDuplicatesAreChecked) {
  test::ScratchDir dir;
  auto whole = test::llama_like_gguf();
  // split.tensors.count says 21; drop one tensor from the last split: 20 found.
  auto parts = test::split_gguf(whole, {0, 8});
  parts[1].tensors.pop_back();
  dir.write("c-00001-of-00002.gguf", test::build_gguf(parts[0]).bytes);
  dir.write("c-00002-of-00002.gguf", test::build_gguf(parts[1]).bytes);
  EXPECT_EQ(test::error_message([&] { read_gguf_model(dir.path() / "c-00001-of-00002.gguf", test::quant_formats()); },
                                ErrorKind::InputFile),
            (dir.path() / "c-00001-of-00002.gguf").string() +
                ": key 'split.tensors.count': 21 tensors expected, 20 found in the 2 splits");
  // The same tensor in two splits.
  parts = test::split_gguf(whole, {0, 8});
  parts[1].tensors.push_back(parts[0].tensors.front());
  dir.write("d-00001-of-00002.gguf", test::build_gguf(parts[0]).bytes);
  dir.write("d-00002-of-00002.gguf", test::build_gguf(parts[1]).bytes);
  EXPECT_EQ(test::error_message([&] { read_gguf_model(dir.path() / "d-00001-of-00002.gguf", test::quant_formats()); },
                                ErrorKind::InputFile),
            (dir.path() / "d-00002-of-00002.gguf").string() + ": tensor 'token_embd.weight': is also in an earlier split");
}

TEST(GgufSplit, ASplitWithTheWrongIndexIsRefused) {
  test::ScratchDir dir;
  auto parts = test::split_gguf(test::llama_like_gguf(), {0, 8, 15});
  dir.write("e-00001-of-00003.gguf", test::build_gguf(parts[0]).bytes);
  dir.write("e-00002-of-00003.gguf", test::build_gguf(parts[2]).bytes);  // split 3's file in split 2's place
  dir.write("e-00003-of-00003.gguf", test::build_gguf(parts[2]).bytes);
  EXPECT_EQ(test::error_message([&] { read_gguf_model(dir.path() / "e-00001-of-00003.gguf", test::quant_formats()); },
                                ErrorKind::InputFile),
            (dir.path() / "e-00002-of-00003.gguf").string() + ": key 'split.no': expected 1 for split 2 of 3");
}

TEST(GgufSplit, AnUnsplitFileIsReadAsBefore) {
  test::ScratchDir dir;
  const auto path = dir.write("m.gguf", test::build_gguf(test::llama_like_gguf()).bytes);
  const GgufFile f = read_gguf_model(path, test::quant_formats());
  EXPECT_EQ(f.splits, 1u);
  EXPECT_EQ(f.tensors.size(), 21u);
}

}  // namespace
}  // namespace vramplan
