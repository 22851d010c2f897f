// Valid GGUF files: exact tensor sizes, metadata and the ModelSpec they map to.
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/gguf_writer.hpp"
#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

using namespace test::ggml_type;


std::filesystem::path write(const test::ScratchDir& dir, const test::GgufDesc& d, const std::string& name = "m.gguf") {
  return dir.write(name, test::build_gguf(d).bytes);
}

const GgufTensor& tensor(const GgufFile& f, std::string_view name) {
  for (const auto& t : f.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + std::string(name));
}

const TensorInfo& info(const ModelSpec& s, std::string_view name) {
  for (const auto& t : s.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + std::string(name));
}

TEST(GgufHeader, LlamaLikeV3HasExactSizesAndMetadata) {
  test::ScratchDir dir;
  const auto built = test::build_gguf(test::llama_like_gguf());
  const auto path = dir.write("m.gguf", built.bytes);
  const GgufFile f = read_gguf_header(path, test::quant_formats());

  EXPECT_EQ(f.version, 3u);
  EXPECT_EQ(f.alignment, 32u);
  EXPECT_EQ(f.metadata.size(), 14u);
  ASSERT_EQ(f.tensors.size(), 21u);  // 3 global + 2 x 9 per layer
  EXPECT_EQ(f.data_offset, built.data_offset);
  EXPECT_EQ(f.data_offset % 32, 0u);
  EXPECT_EQ(f.file_type, 15u);
  EXPECT_EQ(f.file_type_name, "Q4_K_M");  // LLAMA_FTYPE_MOSTLY_Q4_K_M = 15

  // token_embd ne {256, 64} in Q4_K: 64 rows x (256 / 256 = 1 block) x 144 B = 9,216 B.
  EXPECT_EQ(tensor(f, "token_embd.weight").bytes, 9216u);
  EXPECT_EQ(tensor(f, "token_embd.weight").format, "Q4_K");
  // output_norm {256} F32: 256 x 4 = 1,024 B.
  EXPECT_EQ(tensor(f, "output_norm.weight").bytes, 1024u);
  EXPECT_EQ(tensor(f, "output_norm.weight").format, "fp32");
  // output {256, 64} Q6_K: 64 x 210 = 13,440 B.
  EXPECT_EQ(tensor(f, "output.weight").bytes, 13440u);
  // attn_output {256, 256} F16: 65,536 x 2 = 131,072 B.
  EXPECT_EQ(tensor(f, "blk.1.attn_output.weight").bytes, 131072u);
  EXPECT_EQ(tensor(f, "blk.1.attn_output.weight").format, "fp16");
  // ffn_down ne {512, 256} Q6_K: 256 rows x 2 blocks x 210 B = 107,520 B.
  EXPECT_EQ(tensor(f, "blk.0.ffn_down.weight").bytes, 107520u);
  EXPECT_EQ(tensor(f, "blk.0.ffn_down.weight").elements, 131072u);
  // Sum: global 9,216 + 1,024 + 13,440 = 23,680; per layer 1,024 + 36,864 + 18,432 + 26,880 +
  // 131,072 + 1,024 + 73,728 + 73,728 + 107,520 = 470,272; total 23,680 + 2 x 470,272 = 964,224.
  EXPECT_EQ(f.tensor_data_bytes(), 964224u);
  EXPECT_EQ(f.file_size, f.data_offset + 964224u);  // every size is a multiple of 32: no padding

  const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->count, 64u);
  ASSERT_EQ(tokens->items.size(), 64u);
  EXPECT_EQ(tokens->items[3].string_value, "tok3");
  EXPECT_FLOAT_EQ(static_cast<float>(f.find("llama.rope.freq_base")->float_value), 500000.0f);
}

TEST(GgufHeader, LlamaLikeMapsToModelSpec) {
  test::ScratchDir dir;
  const ModelSpec s = model_from_gguf_file(write(dir, test::llama_like_gguf()), test::quant_formats());
  EXPECT_EQ(s.id, "tiny-llama");
  EXPECT_EQ(s.source.kind, "gguf");
  const ModelArch& a = s.arch;
  EXPECT_EQ(a.model_type, "llama");
  EXPECT_EQ(a.hidden_size, 256u);
  EXPECT_EQ(a.num_layers, 2u);
  EXPECT_EQ(a.num_heads, 4u);
  EXPECT_EQ(a.num_kv_heads, 2u);
  EXPECT_EQ(a.head_dim, 64u);  // no key_length: 256 / 4
  EXPECT_EQ(a.v_head_dim, 64u);
  EXPECT_EQ(a.intermediate_size, 512u);
  EXPECT_EQ(a.vocab_size, 64u);  // no llama.vocab_size: the token list's length
  EXPECT_EQ(a.max_position_embeddings, 4096u);
  EXPECT_FALSE(a.tied_embeddings);
  EXPECT_EQ(a.num_experts, 0u);
  ASSERT_EQ(a.layer_attention.size(), 2u);
  EXPECT_EQ(a.layer_attention[1], LayerAttention::Full);
  ASSERT_EQ(a.rope_tables.size(), 1u);
  EXPECT_EQ(a.rope_tables[0].rotary_dim, 64u);
  EXPECT_EQ(a.rope_tables[0].max_positions, 4096u);
  EXPECT_TRUE(s.warnings.empty());

  ASSERT_EQ(s.tensors.size(), 21u);
  const TensorInfo& down = info(s, "blk.1.ffn_down.weight");
  EXPECT_EQ(down.role, TensorRole::FfnDown);
  EXPECT_EQ(down.layer, 1);
  EXPECT_EQ(down.shape, (std::vector<std::uint64_t>{256, 512}));  // ne {512, 256} reversed
  EXPECT_EQ(down.stored_format, "Q6_K");
  EXPECT_EQ(down.stored_bytes, 107520u);
  EXPECT_EQ(down.elements(), 131072u);
  const TensorInfo& embd = info(s, "token_embd.weight");
  EXPECT_EQ(embd.role, TensorRole::TokenEmbedding);
  EXPECT_FALSE(embd.layer.has_value());
  EXPECT_EQ(info(s, "output_norm.weight").role, TensorRole::OutputNorm);
  EXPECT_EQ(info(s, "blk.0.attn_k.weight").role, TensorRole::AttnK);
}

TEST(GgufHeader, NoOutputTensorMeansTiedEmbeddings) {
  test::ScratchDir dir;
  const ModelSpec s = model_from_gguf_file(write(dir, test::llama_like_gguf(false)), test::quant_formats());
  EXPECT_TRUE(s.arch.tied_embeddings);
  EXPECT_EQ(s.tensors.size(), 20u);
}

TEST(GgufHeader, Version2IsRead) {
  test::ScratchDir dir;
  auto d = test::llama_like_gguf();
  d.version = 2;  // same layout as v3 (v3 only added big-endian files)
  const GgufFile f = read_gguf_header(write(dir, d), test::quant_formats());
  EXPECT_EQ(f.version, 2u);
  EXPECT_EQ(f.tensor_data_bytes(), 964224u);
}

TEST(GgufHeader, PaddingBetweenTensorsFollowsAlignment) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.alignment = 64;
  d.kvs = {test::kv_u32("general.alignment", 64)};
  // 10 F32 = 40 B, padded to 64, so the second tensor starts at 64.
  d.tensors = {{"a.weight", {10}, F32, 40}, {"b.weight", {32}, Q8_0, 34}};  // Q8_0: 32 elems = 34 B
  const GgufFile f = read_gguf_header(write(dir, d), test::quant_formats());
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.tensors[1].offset, 64u);
  EXPECT_EQ(f.tensors[1].bytes, 34u);
  EXPECT_EQ(f.data_offset % 64, 0u);
}

TEST(GgufHeader, LongArraysKeepOnlyTheirLeadingItems) {
  test::ScratchDir dir;
  test::GgufDesc d;
  std::vector<std::string> tokens(5000, "x");
  tokens[4999] = "last";
  std::vector<std::int32_t> types(5000, 1);
  d.kvs = {test::kv_arr_str("tokenizer.ggml.tokens", tokens), test::kv_arr_i32("tokenizer.ggml.token_type", types)};
  const GgufFile f = read_gguf_header(write(dir, d), test::quant_formats());
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->count, 5000u);
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->items.size(), kKeptArrayItems);
  EXPECT_EQ(f.find("tokenizer.ggml.token_type")->count, 5000u);
  EXPECT_EQ(f.find("tokenizer.ggml.token_type")->items[0].int_value, 1);
}

TEST(GgufHeader, LlamaFtypeNames) {
  EXPECT_EQ(llama_ftype_name(0), "F32");
  EXPECT_EQ(llama_ftype_name(7), "Q8_0");
  EXPECT_EQ(llama_ftype_name(15), "Q4_K_M");
  EXPECT_EQ(llama_ftype_name(32), "BF16");
  EXPECT_EQ(llama_ftype_name(38), "MXFP4_MOE");
  EXPECT_FALSE(llama_ftype_name(1024).has_value());  // LLAMA_FTYPE_GUESSED is never stored
}

// A Gemma-3-like file: scalar sliding-window period, per-layer KV heads, explicit key_length.
TEST(GgufModel, SlidingWindowPeriodAndPerLayerHeads) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "gemma3"),
           test::kv_u32("gemma3.block_count", 7),
           test::kv_u32("gemma3.embedding_length", 64),
           test::kv_arr_u32("gemma3.attention.head_count", {4, 4, 4, 4, 4, 4, 4}),
           test::kv_arr_u32("gemma3.attention.head_count_kv", {1, 1, 1, 1, 1, 2, 1}),
           test::kv_u32("gemma3.attention.key_length", 32),
           test::kv_u32("gemma3.attention.value_length", 32),
           test::kv_u32("gemma3.attention.sliding_window", 512),
           test::kv_u32("gemma3.attention.sliding_window_pattern", 6)};
  d.tensors = {{"token_embd.weight", {64, 10}, F32, 640 * 4}};
  const ModelSpec s = model_from_gguf_file(write(dir, d), test::quant_formats());
  EXPECT_EQ(s.arch.num_kv_heads, 2u);  // the maximum of the per-layer array
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("gemma3.attention.head_count_kv varies per layer (1..2)"), std::string::npos);
  EXPECT_EQ(s.arch.head_dim, 32u);
  EXPECT_EQ(s.arch.sliding_window, 512u);
  // set_swa_pattern(6): layer il slides when il % 6 < 5 -> layers 0-4 and 6 slide, layer 5 global.
  const std::vector<LayerAttention> expect{LayerAttention::Sliding, LayerAttention::Sliding, LayerAttention::Sliding,
                                           LayerAttention::Sliding, LayerAttention::Sliding, LayerAttention::Full,
                                           LayerAttention::Sliding};
  EXPECT_EQ(s.arch.layer_attention, expect);
  EXPECT_TRUE(s.arch.tied_embeddings);
  EXPECT_EQ(s.arch.vocab_size, 10u);  // token_embd rows
}

// DeepSeek sparse attention: which layers keep an indexer (and its key cache). A glm-dsa file
// without attention.indexer.types and a context of 2^20 or more is GLM-5.2, which llama.cpp gives
// its built-in table (glm-dsa.cpp GLM_5_2_DEFAULT_INDEXER_TYPES: layers 0 and 1, then every fourth
// from 2): of 8 layers, 0, 1, 2 and 6. llama.cpp 0c1e5709 printed "4 layers" for the indexer cache
// of such a file (tools/llamacpp-oracle, glm52-tiny). Under 2^20 (GLM-5 / 5.1) every layer has one,
// and attention.indexer.types overrides both.
TEST(GgufModel, SparseAttentionIndexerLayers) {
  const auto indexers = [](std::uint32_t context, bool types) {
    test::ScratchDir dir;
    test::GgufDesc d;
    d.kvs = {test::kv_str("general.architecture", "glm-dsa"), test::kv_u32("glm-dsa.block_count", 8),
             test::kv_u32("glm-dsa.embedding_length", 64), test::kv_u32("glm-dsa.attention.head_count", 4),
             test::kv_u32("glm-dsa.attention.head_count_kv", 1), test::kv_u32("glm-dsa.context_length", context),
             test::kv_u32("glm-dsa.attention.kv_lora_rank", 32), test::kv_u32("glm-dsa.rope.dimension_count", 16),
             test::kv_u32("glm-dsa.attention.key_length", 48), test::kv_u32("glm-dsa.attention.value_length", 32),
             test::kv_u32("glm-dsa.attention.indexer.key_length", 16),
             test::kv_u32("glm-dsa.attention.indexer.head_count", 2)};
    if (types) d.kvs.push_back(test::kv_arr_u32("glm-dsa.attention.indexer.types", {1, 0, 0, 0, 0, 0, 0, 1}));
    d.tensors = {{"token_embd.weight", {64, 10}, F32, 640 * 4}};
    const ModelSpec s = model_from_gguf_file(write(dir, d), test::quant_formats());
    EXPECT_EQ(s.arch.index_head_dim, 16u);
    return s.arch.layer_has_indexer;
  };
  EXPECT_EQ(indexers(1048576, false), (std::vector<bool>{true, true, true, false, false, false, true, false}));
  EXPECT_EQ(indexers(202752, false), std::vector<bool>(8, true));
  EXPECT_EQ(indexers(1048576, true), (std::vector<bool>{true, false, false, false, false, false, false, true}));
}

// A Nemotron-H file as conversion/nemotron.py writes it: one head count, per-layer KV heads (0 off
// the attention layers) and per-layer FFN sizes (0 off the MLP layers), the Mamba-2 sizes in ssm.*.
// nemotron-h.cpp: a layer with neither is a Mamba-2 mixer (is_recr), one with an FFN an MLP.
TEST(GgufModel, NemotronHybridLayersAndMambaShape) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "nemotron_h"), test::kv_u32("nemotron_h.block_count", 4),
           test::kv_u32("nemotron_h.embedding_length", 64), test::kv_u32("nemotron_h.attention.head_count", 4),
           test::kv_arr_u32("nemotron_h.attention.head_count_kv", {0, 0, 0, 2}),
           test::kv_arr_u32("nemotron_h.feed_forward_length", {0, 96, 0, 0}),
           test::kv_u32("nemotron_h.ssm.conv_kernel", 4), test::kv_u32("nemotron_h.ssm.state_size", 16),
           test::kv_u32("nemotron_h.ssm.group_count", 2), test::kv_u32("nemotron_h.ssm.inner_size", 128),
           test::kv_u32("nemotron_h.ssm.time_step_rank", 8)};
  d.tensors = {{"token_embd.weight", {64, 10}, F32, 640 * 4}};
  const ModelSpec s = model_from_gguf_file(write(dir, d), test::quant_formats());
  EXPECT_EQ(s.arch.layer_attention, (std::vector<LayerAttention>{LayerAttention::Recurrent, LayerAttention::None,
                                                                  LayerAttention::Recurrent, LayerAttention::Full}));
  EXPECT_FALSE(s.arch.recurrent_in_every_layer);
  const auto& r = s.arch.recurrent_shape;
  EXPECT_EQ(r.conv_window, 3u);      // conv_kernel - 1
  EXPECT_EQ(r.conv_channels, 128u);  // d_inner
  EXPECT_EQ(r.groups, 2u);
  EXPECT_EQ(r.group_state, 16u);
  EXPECT_EQ(r.ssm_heads, 8u);
  EXPECT_EQ(r.ssm_head_elems, 16u * 16u);                   // head_dim 128 / 8 x d_state 16
  EXPECT_EQ(s.arch.recurrent_conv_state_elems, 3u * 192u);  // 3 x (128 + 2 x 2 x 16)
  EXPECT_EQ(s.arch.recurrent_ssm_state_elems, 128u * 16u);
}

// Nemotron-3 Super's latent MoE: conversion/nemotron.py writes moe_latent_size, and nemotron-h.cpp
// sizes the experts at it ({latent, n_ff_exp, n_expert} up) with ffn_latent_down / _up around them.
// A latent wider than the model is no such file.
TEST(GgufModel, NemotronLatentMoeSizeAndProjections) {
  const auto model = [](std::uint32_t latent) {
    test::ScratchDir dir;
    test::GgufDesc d;
    d.kvs = {test::kv_str("general.architecture", "nemotron_h_moe"), test::kv_u32("nemotron_h_moe.block_count", 2),
             test::kv_u32("nemotron_h_moe.embedding_length", 64), test::kv_u32("nemotron_h_moe.attention.head_count", 4),
             test::kv_arr_u32("nemotron_h_moe.attention.head_count_kv", {0, 0}),
             test::kv_arr_u32("nemotron_h_moe.feed_forward_length", {0, 32}),
             test::kv_u32("nemotron_h_moe.expert_count", 4), test::kv_u32("nemotron_h_moe.expert_used_count", 2),
             test::kv_u32("nemotron_h_moe.expert_feed_forward_length", 32),
             test::kv_u32("nemotron_h_moe.moe_latent_size", latent),
             test::kv_u32("nemotron_h_moe.ssm.conv_kernel", 4), test::kv_u32("nemotron_h_moe.ssm.state_size", 16),
             test::kv_u32("nemotron_h_moe.ssm.group_count", 2), test::kv_u32("nemotron_h_moe.ssm.inner_size", 128),
             test::kv_u32("nemotron_h_moe.ssm.time_step_rank", 8)};
    d.tensors = {{"token_embd.weight", {64, 10}, F32, 640 * 4},
                 {"blk.1.ffn_latent_down.weight", {64, 16}, F32, 64 * 16 * 4},
                 {"blk.1.ffn_up_exps.weight", {16, 32, 4}, F32, 16 * 32 * 4 * 4}};
    return model_from_gguf_file(write(dir, d), test::quant_formats());
  };
  const ModelSpec s = model(16);
  EXPECT_EQ(s.arch.moe_latent_size, 16u);
  EXPECT_EQ(s.arch.moe_hidden_size(), 16u);
  EXPECT_EQ(s.tensors[1].role, TensorRole::FfnLatentDown);
  const auto msg = test::error_message([&] { (void)model(128); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("moe_latent_size"), std::string::npos) << msg;
}

// Granite-4.0-H's converter writes rope.scaling.finetuned = false for a hybrid without RoPE
// (conversion/granite.py GraniteHybridModel use_rope); granite-hybrid.cpp reads it as has_rope.
TEST(GgufModel, GraniteHybridWithoutRopeHasNoRopeTable) {
  const auto rope_tables = [](bool finetuned) {
    test::ScratchDir dir;
    test::GgufDesc d;
    d.kvs = {test::kv_str("general.architecture", "granitehybrid"), test::kv_u32("granitehybrid.block_count", 2),
             test::kv_u32("granitehybrid.embedding_length", 64), test::kv_u32("granitehybrid.attention.head_count", 4),
             test::kv_arr_u32("granitehybrid.attention.head_count_kv", {0, 2}),
             test::kv_u32("granitehybrid.context_length", 1048576),
             test::kv_u32("granitehybrid.ssm.conv_kernel", 4), test::kv_u32("granitehybrid.ssm.state_size", 16),
             test::kv_u32("granitehybrid.ssm.group_count", 1), test::kv_u32("granitehybrid.ssm.inner_size", 128),
             test::kv_u32("granitehybrid.ssm.time_step_rank", 8),
             test::kv_bool("granitehybrid.rope.scaling.finetuned", finetuned)};
    d.tensors = {{"token_embd.weight", {64, 10}, F32, 640 * 4}};
    return model_from_gguf_file(write(dir, d), test::quant_formats()).arch.rope_tables.size();
  };
  EXPECT_EQ(rope_tables(false), 0u);
  EXPECT_EQ(rope_tables(true), 1u);
}

TEST(GgufModel, SlidingWindowBoolArrayPattern) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "gemma4"), test::kv_u32("gemma4.block_count", 3),
           test::kv_u32("gemma4.embedding_length", 64), test::kv_u32("gemma4.attention.head_count", 2),
           test::kv_u32("gemma4.attention.sliding_window", 1024),
           test::kv_arr_bool("gemma4.attention.sliding_window_pattern", {true, false, true})};
  d.tensors = {{"token_embd.weight", {64, 10}, F32, 64 * 10 * 4}};  // a file with no tensor is refused
  const ModelSpec s = model_from_gguf_file(write(dir, d), test::quant_formats());
  EXPECT_EQ(s.arch.layer_attention,
            (std::vector<LayerAttention>{LayerAttention::Sliding, LayerAttention::Full, LayerAttention::Sliding}));
}

// Layouts llama.cpp sets in code (llama_model::load_hparams @00342301; gguf_model.cpp kWindowLayouts): a
// file of `layers` blocks with 2 KV heads, plus the given keys.
std::vector<LayerAttention> swa_layers(const std::string& arch, std::uint32_t layers, std::vector<test::GgufKv> extra,
                                       std::uint64_t* window = nullptr, std::size_t* warnings = nullptr,
                                       std::vector<int>* shared = nullptr) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", arch), test::kv_u32(arch + ".block_count", layers),
           test::kv_u32(arch + ".embedding_length", 64), test::kv_u32(arch + ".attention.head_count", 2)};
  for (auto& kv : extra) d.kvs.push_back(std::move(kv));
  d.tensors = {{"token_embd.weight", {64, 10}, F32, 64 * 10 * 4}};
  const ModelSpec s = model_from_gguf_file(write(dir, d), test::quant_formats());
  if (window) *window = s.arch.sliding_window;
  if (warnings) *warnings = s.warnings.size();
  if (shared) *shared = s.arch.kv_shared_with;
  return s.arch.layer_attention;
}

constexpr auto kSwaSliding = LayerAttention::Sliding;
constexpr auto kSwaFull = LayerAttention::Full;

TEST(GgufModel, HardCodedWindowLayouts) {
  std::uint64_t window = 0;
  std::size_t warnings = 9;
  // gemma2: n_swa = 4096 "default value of gemma 2" when the file has none; set_swa_pattern(2).
  EXPECT_EQ(swa_layers("gemma2", 4, {}, &window), (std::vector<LayerAttention>{kSwaSliding, kSwaFull, kSwaSliding, kSwaFull}));
  EXPECT_EQ(window, 4096u);
  // olmo2 (OLMo-3): set_swa_pattern(4) only when sliding_window > 0: layers 3 and 7 global.
  EXPECT_EQ(swa_layers("olmo2", 8, {test::kv_u32("olmo2.attention.sliding_window", 4096)}),
            (std::vector<LayerAttention>{kSwaSliding, kSwaSliding, kSwaSliding, kSwaFull, kSwaSliding, kSwaSliding, kSwaSliding, kSwaFull}));
  EXPECT_EQ(swa_layers("olmo2", 2, {}, nullptr, &warnings), (std::vector<LayerAttention>{kSwaFull, kSwaFull}));  // OLMo-2
  EXPECT_EQ(warnings, 0u);
  // exaone4: windowed only at 64 layers (32B), n_swa 4096 unless the file says otherwise; the 30-layer
  // 1.2B has no window even with the key.
  const auto exaone32b = swa_layers("exaone4", 64, {}, &window);
  EXPECT_EQ(window, 4096u);
  EXPECT_EQ(std::count(exaone32b.begin(), exaone32b.end(), kSwaFull), 16);  // 64 / 4
  EXPECT_EQ(exaone32b[3], kSwaFull);
  EXPECT_EQ(swa_layers("exaone4", 30, {test::kv_u32("exaone4.attention.sliding_window", 4096)}, nullptr, &warnings),
            std::vector<LayerAttention>(30, kSwaFull));
  EXPECT_EQ(warnings, 0u);
  // smallthinker: set_swa_pattern(4, true) (dense first: layers 0 and 4 global), n_swa forced to 4096.
  EXPECT_EQ(swa_layers("smallthinker", 6, {test::kv_u32("smallthinker.attention.sliding_window", 2048)}, &window),
            (std::vector<LayerAttention>{kSwaFull, kSwaSliding, kSwaSliding, kSwaSliding, kSwaFull, kSwaSliding}));
  EXPECT_EQ(window, 4096u);
  // phi3: "Phi SWA is currently disabled": every layer full, and no over-estimate warning (llama.cpp agrees).
  EXPECT_EQ(swa_layers("phi3", 3, {test::kv_u32("phi3.attention.sliding_window", 2047)}, nullptr, &warnings),
            std::vector<LayerAttention>(3, kSwaFull));
  EXPECT_EQ(warnings, 0u);
  // gemma3n: set_swa_pattern(5) and n_layer_kv_from_start = 20: layers 20-29 hold no KV of their own
  // and read layer 18's (sliding) or 19's (global).
  std::vector<int> shared;
  const auto e2b = swa_layers("gemma3n", 30, {test::kv_u32("gemma3n.attention.sliding_window", 512)}, nullptr,
                              nullptr, &shared);
  EXPECT_EQ(e2b[4], kSwaFull);
  EXPECT_EQ(e2b[5], kSwaSliding);
  EXPECT_EQ(e2b[19], kSwaFull);
  EXPECT_EQ(std::count(e2b.begin(), e2b.end(), kSwaFull), 6);  // layers 4, 9, ..., 29
  ASSERT_EQ(shared.size(), 30u);
  EXPECT_EQ(shared[19], -1);
  EXPECT_EQ(shared[20], 18);  // sliding
  EXPECT_EQ(shared[24], 19);  // global
  // An architecture with a window and no known layout keeps every layer full, with a warning
  // (starcoder2: one llama.cpp loads, with no per-architecture pattern in kWindowLayouts; an
  // architecture llama.cpp does not know is refused).
  EXPECT_EQ(swa_layers("starcoder2", 2, {test::kv_u32("starcoder2.attention.sliding_window", 512)}, nullptr, &warnings),
            std::vector<LayerAttention>(2, kSwaFull));
  EXPECT_EQ(warnings, 1u);
}

// llama_model::create_memory builds no cache for encoders (nomic-embed-text is a nomic-bert GGUF).
TEST(GgufModel, EncodersHoldNoKvCache) {
  EXPECT_EQ(swa_layers("nomic-bert", 3, {}), std::vector<LayerAttention>(3, LayerAttention::None));
  EXPECT_EQ(swa_layers("gemma-embedding", 2, {test::kv_u32("gemma-embedding.attention.sliding_window", 512)}),
            std::vector<LayerAttention>(2, LayerAttention::None));
  EXPECT_EQ(swa_layers("llama", 2, {}), std::vector<LayerAttention>(2, kSwaFull));
}

// A DeepSeek-V3-like MoE + MLA file (split attn_k_b / attn_v_b, one leading dense layer, an MTP
// layer counted in block_count).
TEST(GgufModel, DeepseekLikeMoeAndMla) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "deepseek2"),
           test::kv_u32("deepseek2.block_count", 3),
           test::kv_u32("deepseek2.nextn_predict_layers", 1),
           test::kv_u32("deepseek2.embedding_length", 256),
           test::kv_u32("deepseek2.feed_forward_length", 512),
           test::kv_u32("deepseek2.attention.head_count", 4),
           test::kv_u32("deepseek2.attention.head_count_kv", 1),
           test::kv_u32("deepseek2.attention.key_length", 96),       // latent 64 + rope 32
           test::kv_u32("deepseek2.attention.value_length", 64),
           test::kv_u32("deepseek2.attention.key_length_mla", 80),   // nope 48 + rope 32
           test::kv_u32("deepseek2.attention.value_length_mla", 48),
           test::kv_u32("deepseek2.attention.q_lora_rank", 128),
           test::kv_u32("deepseek2.attention.kv_lora_rank", 64),
           test::kv_u32("deepseek2.rope.dimension_count", 32),
           test::kv_u32("deepseek2.expert_count", 8),
           test::kv_u32("deepseek2.expert_used_count", 2),
           test::kv_u32("deepseek2.expert_shared_count", 1),
           test::kv_u32("deepseek2.expert_feed_forward_length", 256),
           test::kv_u32("deepseek2.leading_dense_block_count", 1)};
  d.tensors = {
      {"blk.0.ffn_down.weight", {512, 256}, Q8_0, 256 * 16 * 34},          // 16 blocks x 34 B per row
      {"blk.0.attn_k_b.weight", {48, 64, 4}, F16, 48 * 64 * 4 * 2},
      {"blk.1.ffn_down_exps.weight", {256, 256, 8}, Q4_K, 8 * 256 * 144},  // {E, h, I_e}: 1 block per row
      {"blk.1.ffn_up_shexp.weight", {256, 256}, Q4_K, 256 * 144},
      {"blk.1.attn_v_b.weight", {64, 48, 4}, F16, 64 * 48 * 4 * 2},
      {"blk.2.nextn.eh_proj.weight", {512, 256}, Q8_0, 256 * 16 * 34},
  };
  const ModelSpec s = model_from_gguf_file(write(dir, d), test::quant_formats());
  const ModelArch& a = s.arch;
  EXPECT_EQ(a.num_layers, 2u);  // block_count 3 minus 1 MTP layer
  EXPECT_EQ(a.mtp_layers, 1u);
  EXPECT_EQ(a.head_dim, 80u);    // key_length_mla wins over the latent key_length
  EXPECT_EQ(a.v_head_dim, 48u);
  EXPECT_EQ(a.kv_lora_rank, 64u);
  EXPECT_EQ(a.q_lora_rank, 128u);
  EXPECT_EQ(a.qk_rope_head_dim, 32u);
  EXPECT_EQ(a.qk_nope_head_dim, 48u);  // 80 - 32
  EXPECT_EQ(a.layer_attention, (std::vector<LayerAttention>{LayerAttention::Mla, LayerAttention::Mla}));
  EXPECT_EQ(a.num_experts, 8u);
  EXPECT_EQ(a.experts_per_token, 2u);
  EXPECT_EQ(a.moe_intermediate_size, 256u);
  EXPECT_EQ(a.num_shared_experts, 1u);
  EXPECT_EQ(a.shared_expert_intermediate_size, 256u);  // ffn_up_shexp {256, 256}
  EXPECT_EQ(a.layer_is_moe, (std::vector<bool>{false, true}));
  EXPECT_EQ(info(s, "blk.0.attn_k_b.weight").role, TensorRole::AttnKVB);
  EXPECT_EQ(info(s, "blk.1.attn_v_b.weight").role, TensorRole::AttnKVB);
  EXPECT_EQ(info(s, "blk.1.ffn_down_exps.weight").role, TensorRole::FfnDownExps);
  EXPECT_EQ(info(s, "blk.1.ffn_down_exps.weight").shape, (std::vector<std::uint64_t>{8, 256, 256}));
  EXPECT_EQ(info(s, "blk.2.nextn.eh_proj.weight").role, TensorRole::Mtp);
}

TEST(GgufModel, MissingArchitectureKeyIsNamed) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.kvs = {test::kv_u32("llama.block_count", 2)};
  try {
    model_from_gguf_file(write(dir, d), test::quant_formats());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find("key 'general.architecture': missing"), std::string::npos) << e.what();
  }
}

TEST(GgufModel, PerLayerArrayOfWrongLengthIsRefused) {
  test::ScratchDir dir;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "llama"), test::kv_u32("llama.block_count", 3),
           test::kv_u32("llama.embedding_length", 64), test::kv_arr_u32("llama.attention.head_count", {4, 4})};
  try {
    model_from_gguf_file(write(dir, d), test::quant_formats());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find("per-layer array has 2 entries for 3 layers"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vramplan
