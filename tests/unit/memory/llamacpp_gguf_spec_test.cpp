// The GGUF llama-quantize would write for a catalogue model: its attention layout is the converted
// architecture's in llama.cpp, not the config's (llamacpp::gguf_model_spec).
#include <gtest/gtest.h>

#include <algorithm>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/llamacpp.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan {
namespace {

ModelArch converted_arch(const std::string& id) {
  const auto& quant = test::quant_catalog();
  const GgufFileType* f16 = quant.schemes().find_gguf_file_type("F16");
  EXPECT_NE(f16, nullptr);
  return llamacpp::gguf_model_spec(load_catalogue_model(test::source_root(), id), *f16, quant).arch;
}

std::size_t count_kind(const ModelArch& a, LayerAttention kind) {
  return static_cast<std::size_t>(std::count(a.layer_attention.begin(), a.layer_attention.end(), kind));
}

TEST(LlamacppGgufSpec, WindowsOnlyWhereLlamaCppsLoaderSetsThem) {
  // Mistral-7B-v0.1's config says sliding_window 4096, but MistralForCausalLM converts to the llama
  // architecture, whose loader reads no window: 32 full layers (a 4608-cell SWA cache had been
  // planned at -c 32768, 72 MiB of KV where llama.cpp allocates 32 x 32768 x 1024 x 2 x 2 B = 4 GiB).
  const ModelArch mistral = converted_arch("mistral-7b-v0.1");
  EXPECT_EQ(count_kind(mistral, LayerAttention::Full), 32u);
  EXPECT_EQ(mistral.sliding_window, 0u);
  // Phi-3-mini (sliding_window 2047): "Phi SWA is currently disabled" (src/models/phi3.cpp).
  EXPECT_EQ(count_kind(converted_arch("phi-3-mini"), LayerAttention::Sliding), 0u);
  // Gemma-2 keeps its alternation (set_swa_pattern(2)): 13 of 26 layers slide over 4096 tokens.
  const ModelArch gemma2 = converted_arch("gemma-2-2b");
  EXPECT_EQ(count_kind(gemma2, LayerAttention::Sliding), 13u);
  EXPECT_EQ(gemma2.sliding_window, 4096u);
  // Llama-4 keeps its chunks (3 chunked, 1 global; 8192 tokens).
  EXPECT_EQ(count_kind(converted_arch("llama-4-scout"), LayerAttention::Chunked), 36u);
}

}  // namespace
}  // namespace vramplan
