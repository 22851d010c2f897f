// The transformers BERT forward replayed through the caching allocator (memory/hf_encoder_replay.hpp):
// hand-computed peak allocated for a batch whose tensors are all 512 B multiples.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/memory/hf_encoder_replay.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

std::vector<std::uint64_t> fp32_bytes(const ModelSpec& m) {
  std::vector<std::uint64_t> out;
  for (const auto& t : m.tensors) out.push_back(t.elements() * 4);
  return out;
}

TEST(HfEncoderReplay, EagerPeakIsEightTokenTensorsAndTwoScoreMatrices) {
  // bge-base-en-v1.5 (h 768, 12 heads, intermediate 3072, 12 layers), 64 inputs x 256 tokens, fp32:
  //   token tensor th = 64 x 256 x 768 x 4 = 50,331,648 B; score matrix sc = 64 x 12 x 256² x 4 = 201,326,592 B.
  // The peak is inside a layer >= 1 of the second forward, at torch.matmul(attention_probs, value_layer):
  //   the previous forward's outputs (th + pooled 64 x 768 x 4 = 196,608), the embedding output, the
  //   layer input, q, k, v, the value copy and the context (8 th), scores + probs (2 sc); besides the
  //   weights: the inputs 3 x 64 x 256 x 8 = 393,216, the extended mask 64 x 256 x 4 = 65,536 and the
  //   cuBLAS workspace 2 x 4096 KiB + 8 x 16 KiB = 8,519,680 (A100: compute capability 8).
  //   8 x 50,331,648 + 2 x 201,326,592 + 196,608 + 393,216 + 65,536 + 8,519,680 = 814,481,408 B.
  const auto m = load_catalogue_model(test::source_root(), "bge-base-en-v1.5");
  const auto r = replay_hf_encoder_forward(m, fp32_bytes(m), {64, 256, 4, true}, cublas_workspace_bytes(8));
  EXPECT_EQ(r.peak_allocated - r.weights_allocated, 814'481'408ull);
  EXPECT_EQ(r.workspace, 8'519'680ull);
  EXPECT_GE(r.reserved, r.peak_allocated);
  EXPECT_GE(r.forwards, 2u);
}

TEST(HfEncoderReplay, SdpaHoldsNoScoreMatrix) {
  // SDPA: at the output's reshape copy the live set is the previous outputs (th + pooled), the
  // embedding output, the layer input, q, k, v, the SDPA output and its copy (8 th = 402,653,184);
  // the MLP holds the previous outputs, embedding output, layer input, attention output (4 th) + up
  // and GELU (2 x 64 x 256 x 3072 x 4 = 2 x 201,326,592): 4 th + 2 ti = 603,979,776, the peak.
  //   4 x 50,331,648 + 2 x 201,326,592 + 196,608 + 393,216 + 65,536 + 8,519,680 = 613,154,816 B.
  const auto m = load_catalogue_model(test::source_root(), "bge-base-en-v1.5");
  const auto r = replay_hf_encoder_forward(m, fp32_bytes(m), {64, 256, 4, false}, cublas_workspace_bytes(8));
  EXPECT_EQ(r.peak_allocated - r.weights_allocated, 613'154'816ull);
}

TEST(HfEncoderReplay, XlmRobertaFollowsTheSameLayerCode) {
  // bge-m3 (XLMRobertaModel: h 1024, 16 heads, intermediate 4096, 24 layers), 64 x 256, fp32 eager:
  //   th = 64 x 256 x 1024 x 4 = 67,108,864; sc = 64 x 16 x 256² x 4 = 268,435,456.
  //   Peak at the P @ V matmul: 8 th + 2 sc = 1,073,741,824 (the MLP's 4 th + 2 x 268,435,456 is
  //   less; RobertaEmbeddings' per-token position ids and lookup are freed before the first layer)
  //   + pooled 64 x 1024 x 4 = 262,144 + inputs 393,216 + mask 65,536 + workspace 8,519,680
  //   = 1,082,982,400 B.
  const auto m = load_catalogue_model(test::source_root(), "bge-m3");
  const auto r = replay_hf_encoder_forward(m, fp32_bytes(m), {64, 256, 4, true}, cublas_workspace_bytes(8));
  EXPECT_TRUE(hf_encoder_replay_applies(m));
  EXPECT_EQ(r.peak_allocated - r.weights_allocated, 1'082'982'400ull);
}

TEST(HfEncoderReplay, CublasWorkspaceFollowsTheComputeCapability) {
  EXPECT_EQ(cublas_workspace_bytes(8), 4096ull * 1024 * 2 + 16ull * 1024 * 8);
  EXPECT_EQ(cublas_workspace_bytes(9), 32ull * 1024 * 1024);
}

}  // namespace
}  // namespace vramplan::memory
