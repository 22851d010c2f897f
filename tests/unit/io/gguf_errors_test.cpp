// One handcrafted broken GGUF per way a header can be wrong (as llama.cpp's test-gguf.cpp
// handcrafted_file_type); each must fail with Error(InputFile) carrying its own message.
#include <gtest/gtest.h>

#include "support/gguf_writer.hpp"
#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/gguf.hpp"

namespace vramplan {
namespace {

using namespace test::ggml_type;


// Writes `bytes` as bad.gguf and expects an InputFile error naming the file and saying `expected`.
void expect_refused(const std::string& bytes, const std::string& expected) {
  test::ScratchDir dir;
  const auto path = dir.write("bad.gguf", bytes);
  try {
    read_gguf_header(path, test::quant_formats());
    ADD_FAILURE() << "accepted a file that should fail with: " << expected;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile) << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bad.gguf: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << "message: " << msg << "\nexpected: " << expected;
  }
}
void expect_refused(const test::GgufDesc& d, const std::string& expected) {
  expect_refused(test::build_gguf(d).bytes, expected);
}

// A minimal valid file: one F32 tensor of 8 elements (32 B) and one key.
test::GgufDesc one_tensor() {
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "llama")};
  d.tensors = {{"blk.0.attn_norm.weight", {8}, F32, 32}};
  return d;
}

TEST(GgufErrors, MinimalFileIsValid) {
  test::ScratchDir dir;
  EXPECT_NO_THROW(read_gguf_header(dir.write("ok.gguf", test::build_gguf(one_tensor()).bytes), test::quant_formats()));
}

TEST(GgufErrors, BadMagic) {
  auto d = one_tensor();
  d.magic = "GGML";
  expect_refused(d, "magic: 'GGML' is not 'GGUF': not a GGUF file");
}

TEST(GgufErrors, UnsupportedVersion) {
  auto d = one_tensor();
  d.version = 4;
  expect_refused(d, "version: unsupported GGUF version 4 (supported: 2, 3)");
}

TEST(GgufErrors, Version1IsRefusedWithAReason) {
  auto d = one_tensor();
  d.version = 1;
  expect_refused(d, "GGUF version 1 is not supported");
}

TEST(GgufErrors, BigEndianFileIsDetected) {
  auto d = one_tensor();
  d.version = 0x03000000;  // version 3 written big-endian reads as 50,331,648
  expect_refused(d, "a big-endian GGUF file, which is not supported");
}

TEST(GgufErrors, TruncatedHeader) {
  // Header: 24 B of magic/version/counts; the key/value 8 + 20 + 4 + 8 + 5 = 45 B (to 69);
  // the tensor name 8 + 22 B (to 99). Cut at 99, the counts still fit but n_dims is missing.
  expect_refused(test::build_gguf(one_tensor()).bytes.substr(0, 99),
                 "tensor 'blk.0.attn_norm.weight' n_dims: needs 4 bytes at offset 99, only 0 remain (file size "
                 "99): the file is truncated");
}

TEST(GgufErrors, KvCountLargerThanTheFileAllows) {
  auto d = one_tensor();
  d.n_kv = 1'000'000'000'000ull;
  expect_refused(d, "1000000000000 key/values need at least 14 bytes each");
}

TEST(GgufErrors, TensorCountLargerThanTheFileAllows) {
  auto d = one_tensor();
  d.n_tensors = 1ull << 60;
  expect_refused(d, "tensor count: 1152921504606846976 tensor infos need at least 33 bytes each");
}

TEST(GgufErrors, StringLengthPastEndOfFile) {
  auto d = one_tensor();
  // A string value claiming 1,000,000 bytes in a file of a few hundred.
  d.kvs.push_back(test::kv_raw("general.name", 8, test::ByteWriter().u64(1'000'000).raw("abc").bytes()));
  expect_refused(d, "string length 1000000 at offset");
}

TEST(GgufErrors, StringLengthOverTheCap) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_raw("general.name", 8, test::ByteWriter().u64(1ull << 40).bytes()));
  expect_refused(d, "exceeds the limit of 16777216 bytes");
}

TEST(GgufErrors, HugeArrayLength) {
  auto d = one_tensor();
  // Array of u32 with 2^62 elements: it would need 2^64 bytes.
  d.kvs.push_back(test::kv_raw("tokenizer.ggml.token_type", 9, test::ByteWriter().u32(4).u64(1ull << 62).bytes()));
  expect_refused(d, "array of 4611686018427387904 u32 elements");
}

TEST(GgufErrors, UnknownValueType) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_raw("general.name", 13, "x"));
  expect_refused(d, "unknown value type 13");
}

TEST(GgufErrors, DuplicateKey) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_str("general.architecture", "qwen2"));
  expect_refused(d, "key 'general.architecture': duplicate key (key #1 repeats key #0)");
}

TEST(GgufErrors, EmptyKey) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_u32("", 1));
  expect_refused(d, "key #1: empty key name");
}

TEST(GgufErrors, NonUtf8Key) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_u32("general.\xff\xfe", 1));
  expect_refused(d, "is not valid UTF-8 (byte 0xff at position 8)");
}

TEST(GgufErrors, DuplicateTensorName) {
  auto d = one_tensor();
  d.tensors.push_back({"blk.0.attn_norm.weight", {8}, F32, 32});
  expect_refused(d, "tensor 'blk.0.attn_norm.weight': duplicate tensor name");
}

TEST(GgufErrors, TooManyDimensions) {
  auto d = one_tensor();
  d.tensors[0].ne = {2, 2, 2, 1, 1};
  d.tensors[0].nbytes = 32;
  expect_refused(d, "n_dims 5 at offset");
}

TEST(GgufErrors, ZeroDimension) {
  auto d = one_tensor();
  d.tensors[0].ne = {8, 0};
  expect_refused(d, "tensor 'blk.0.attn_norm.weight' ne[1]: dimension 0 is not positive");
}

TEST(GgufErrors, NegativeDimension) {
  auto d = one_tensor();
  d.tensors[0].ne = {-8};
  expect_refused(d, "dimension -8 is not positive");
}

TEST(GgufErrors, ElementCountOverflow) {
  auto d = one_tensor();
  d.tensors[0].ne = {1ll << 32, 1ll << 32};  // 2^64 elements
  expect_refused(d, "element count overflows");
}

TEST(GgufErrors, ByteSizeOverflow) {
  auto d = one_tensor();
  d.tensors[0].ne = {1ll << 31, 1ll << 31};  // 2^62 elements x 4 B = 2^64 B
  expect_refused(d, "overflow");
}

TEST(GgufErrors, UnknownGgmlType) {
  auto d = one_tensor();
  d.tensors[0].type = 31;  // GGML_TYPE_Q4_0_4_4, removed from GGUF files
  expect_refused(d, "tensor 'blk.0.attn_norm.weight': unknown ggml type id 31");
}

TEST(GgufErrors, RowNotAMultipleOfTheBlock) {
  auto d = one_tensor();
  d.tensors[0] = {"blk.0.ffn_down.weight", {100, 4}, Q4_K, 576};
  expect_refused(d, "tensor 'blk.0.ffn_down.weight': ne[0] = 100 is not a multiple of Q4_K's block of 256 elements");
}

TEST(GgufErrors, MisalignedOffset) {
  auto d = one_tensor();
  d.tensors.push_back({"blk.0.ffn_norm.weight", {8}, F32, 32, 48});
  expect_refused(d, "tensor 'blk.0.ffn_norm.weight': offset 48 is not a multiple of the alignment 32");
}

TEST(GgufErrors, OffsetNotTheRunningSum) {
  auto d = one_tensor();
  d.tensors.push_back({"blk.0.ffn_norm.weight", {8}, F32, 32, 0});  // overlaps the first tensor
  expect_refused(d, "tensor 'blk.0.ffn_norm.weight': offset 0, expected 32");
}

TEST(GgufErrors, TensorDataPastEndOfFile) {
  auto d = one_tensor();
  d.write_data = false;  // header only: the 32 data bytes are missing
  expect_refused(d, "tensor 'blk.0.attn_norm.weight': 32 bytes of data from offset");
}

TEST(GgufErrors, TensorOffsetPastEndOfFile) {
  test::GgufDesc d;
  // a: 2 F32 = 8 B at offset 0, padded to 32; b starts at offset 32. Only a's 8 data bytes are
  // in the file, so b's offset lies past its end.
  d.tensors = {{"a.weight", {2}, F32, 8}, {"b.weight", {8}, F32, 32}};
  d.write_data = false;
  const auto built = test::build_gguf(d);
  const std::string bytes = built.bytes + std::string(8, '\0');
  expect_refused(bytes, "tensor 'b.weight': offset 32 (absolute " + std::to_string(built.data_offset) +
                            " + 32) is past the end of the file (size " +
                            std::to_string(built.data_offset + 8) + ")");
}

TEST(GgufErrors, AlignmentNotAPowerOfTwo) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_u32("general.alignment", 48));
  expect_refused(d, "key 'general.alignment': alignment 48 is not a power of two");
}

TEST(GgufErrors, AlignmentOfTheWrongType) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_str("general.alignment", "32"));
  expect_refused(d, "key 'general.alignment': expected u32, got string");
}

TEST(GgufErrors, BoolThatIsNeitherZeroNorOne) {
  auto d = one_tensor();
  d.kvs.push_back(test::kv_raw("llama.use_parallel_residual", 7, "\x02"));
  expect_refused(d, "bool value 2 at offset");
}

TEST(GgufErrors, TensorNameTooLong) {
  auto d = one_tensor();
  d.tensors[0].name = std::string(64, 'a');
  expect_refused(d, "exceeds the limit of 63 bytes");
}

TEST(GgufErrors, NotAFileIsAnIoError) {
  test::ScratchDir dir;
  try {
    read_gguf_header(dir.path() / "missing.gguf", test::quant_formats());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("missing.gguf: no such file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vramplan
