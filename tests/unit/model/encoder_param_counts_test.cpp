// Encoder inventories (model/family_encoder.cpp): exact parameter counts from the tensor shapes,
// with the arithmetic, against the publishers' figures.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/hf_names.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

std::uint64_t total_of(const ModelSpec& spec) { return count_params(spec).total; }

std::uint64_t catalogue_total(const std::string& id) {
  return total_of(load_catalogue_model(test::source_root(), id));
}

// BERT-large layer: q, k, v, o 4 x (1024 x 1024 + 1024) = 4,198,400; two LayerNorms 2 x 2,048;
// intermediate 1024 x 4096 + 4096 = 4,198,400; output 4096 x 1024 + 1024 = 4,195,328
// -> 12,596,224 per layer, x 24 = 302,309,376.
constexpr std::uint64_t kBertLargeLayers = 24ull * 12'596'224ull;
constexpr std::uint64_t kPooler = 1024ull * 1024 + 1024;  // 1,049,600

TEST(EncoderParamCounts, BgeLargeEnV15IsBertLargeWithPooler) {
  // word 30522 x 1024 = 31,254,528; positions 512 x 1024 = 524,288; token types 2 x 1024 = 2,048;
  // embedding LayerNorm 2,048; layers 302,309,376; pooler 1,049,600 -> 335,141,888
  // (huggingface.co/BAAI/bge-large-en-v1.5: "335M params").
  EXPECT_EQ(31'254'528ull + 524'288 + 2'048 + 2'048 + kBertLargeLayers + kPooler, 335'141'888ull);
  EXPECT_EQ(catalogue_total("bge-large-en-v1.5"), 335'141'888ull);
}

TEST(EncoderParamCounts, BgeBaseEnV15IsBertBaseWithPooler) {
  // BERT-base: embeddings 30522 x 768 + 512 x 768 + 2 x 768 + LN 1,536 = 23,837,184; layer
  // 4 x (768 x 768 + 768) + 2 x 1,536 + (768 x 3072 + 3072) + (3072 x 768 + 768) = 7,087,872, x 12 =
  // 85,054,464; pooler 768 x 768 + 768 = 590,592 -> 109,482,240
  // (huggingface.co/BAAI/bge-base-en-v1.5: "109M params").
  EXPECT_EQ(23'837'184ull + 85'054'464 + 590'592, 109'482'240ull);
  EXPECT_EQ(catalogue_total("bge-base-en-v1.5"), 109'482'240ull);
}

TEST(EncoderParamCounts, BgeM3IsXlmRobertaLargeWithPooler) {
  // word 250002 x 1024 = 256,002,048; positions 8194 x 1024 = 8,390,656; one token type 1,024;
  // LayerNorm 2,048; layers 302,309,376; pooler 1,049,600 -> 567,754,752
  // (huggingface.co/BAAI/bge-m3: "568M params").
  EXPECT_EQ(256'002'048ull + 8'390'656 + 1'024 + 2'048 + kBertLargeLayers + kPooler, 567'754'752ull);
  EXPECT_EQ(catalogue_total("bge-m3"), 567'754'752ull);
}

TEST(EncoderParamCounts, BgeRerankerV2M3HasTheClassificationHeadNotThePooler) {
  // bge-m3's 567,754,752 - pooler 1,049,600 + classifier.dense 1,049,600 + out_proj 1 x 1024 + 1
  // = 567,755,777 (huggingface.co/BAAI/bge-reranker-v2-m3: "568M params").
  const auto spec = load_catalogue_model(test::source_root(), "bge-reranker-v2-m3");
  EXPECT_EQ(total_of(spec), 567'754'752ull - kPooler + kPooler + 1'025);
  EXPECT_EQ(classifier_labels(spec), 1u);
  EXPECT_FALSE(has_pooler(spec));
  EXPECT_EQ(encoder_task(spec.arch), EncoderTask::Classify);
}

TEST(EncoderParamCounts, E5LargeV2AndGteLargeAreBertLargeWithPooler) {
  // Both publish BERT-large dimensions (BertModel, vocab 30522, 512 positions, 2 token types) and
  // keep the pooler: the same 335,141,888 as bge-large-en-v1.5 above
  // (huggingface.co/intfloat/e5-large-v2 and huggingface.co/thenlper/gte-large: "335M params").
  EXPECT_EQ(catalogue_total("e5-large-v2"), 31'254'528ull + 524'288 + 2'048 + 2'048 + kBertLargeLayers + kPooler);
  EXPECT_EQ(catalogue_total("gte-large"), 335'141'888ull);
}

TEST(EncoderParamCounts, NomicEmbedTextV15CatalogueEntry) {
  // The catalogue entry's config gives the dimension test's 136,731,648 below ("137M params").
  const auto spec = load_catalogue_model(test::source_root(), "nomic-embed-text-v1.5");
  EXPECT_EQ(total_of(spec), 23'445'504ull + 1'536 + 1'536 + 12ull * 9'440'256);
  EXPECT_EQ(spec.arch.max_position_embeddings, 8192u);
}

TEST(EncoderParamCounts, Qwen3Embedding06BIsTheTiedDecoderWithoutGeneration) {
  // embed_tokens 151669 x 1024 = 155,309,056 (tied: no lm_head either way). Per layer: q_proj
  // 2048 x 1024 = 2,097,152, k / v 1024 x 1024 = 1,048,576 each, o_proj 2,097,152, q_norm + k_norm
  // 256, gate/up/down 3 x 3072 x 1024 = 9,437,184, two RMSNorms 2,048 -> 15,730,944; x 28 =
  // 440,466,432; final norm 1,024 -> 595,776,512 (huggingface.co/Qwen/Qwen3-Embedding-0.6B:
  // "596M params").
  const auto spec = load_catalogue_model(test::source_root(), "qwen3-embedding-0.6b");
  EXPECT_EQ(total_of(spec), 155'309'056ull + 28ull * 15'730'944 + 1'024);
  EXPECT_EQ(total_of(spec), 595'776'512ull);
  EXPECT_EQ(pooling_view_mode(spec), "last_token");
  EXPECT_TRUE(is_pooling_model(spec));
  EXPECT_FALSE(is_encoder(spec.arch));
}

TEST(EncoderParamCounts, Qwen3Embedding8BDropsTheUntiedLmHead) {
  // embed_tokens 151665 x 4096 = 621,219,840. Per layer: q / o 4096 x 4096 = 16,777,216 each,
  // k / v 1024 x 4096 = 4,194,304 each, q_norm + k_norm 256, gate/up/down 3 x 12288 x 4096 =
  // 150,994,944, two RMSNorms 8,192 -> 192,946,432; x 36 = 6,946,071,552; final norm 4,096
  // -> 7,567,295,488 (huggingface.co/Qwen/Qwen3-Embedding-8B: "7.57B params"). The config is
  // untied, but the pooling view has no lm_head (151665 x 4096 more would give 8.19B).
  const auto spec = load_catalogue_model(test::source_root(), "qwen3-embedding-8b");
  EXPECT_EQ(total_of(spec), 621'219'840ull + 36ull * 192'946'432 + 4'096);
  EXPECT_EQ(total_of(spec), 7'567'295'488ull);
  for (const auto& t : spec.tensors) EXPECT_NE(t.role, TensorRole::Output) << t.name;
}

TEST(EncoderParamCounts, PoolingViewRefusesAnUnknownMode) {
  auto spec = load_catalogue_model(test::source_root(), "qwen3-8b");
  EXPECT_THROW(apply_pooling_view(spec, "max", "x.json"), Error);
  auto enc = load_catalogue_model(test::source_root(), "bge-m3");
  EXPECT_THROW(apply_pooling_view(enc, "cls", "x.json"), Error);
}

ModelSpec encoder_spec_from_config(const nlohmann::json& config) {
  auto spec = model_from_hf_config(config, "inline-config.json");
  for (const auto& t : spec.tensors) {  // the checkpoint path classifies the same names alike
    const auto cls = role_from_hf_tensor_name(t.name, spec.arch);
    EXPECT_EQ(cls.role, t.role) << t.name;
    EXPECT_EQ(cls.layer, t.layer) << t.name;
    EXPECT_EQ(cls.is_bias, t.is_bias) << t.name;
  }
  return spec;
}

TEST(EncoderParamCounts, NomicBertAtNomicEmbedTextV15Dimensions) {
  // nomic-ai/nomic-embed-text-v1.5 config keys (NomicBertModel, SwiGLU, rotary, no biases).
  const auto spec = encoder_spec_from_config({{"architectures", {"NomicBertModel"}}, {"model_type", "nomic_bert"},
                                 {"n_embd", 768}, {"n_layer", 12}, {"n_head", 12}, {"n_inner", 3072},
                                 {"vocab_size", 30528}, {"type_vocab_size", 2},
                                 {"max_position_embeddings", 2048}, {"n_positions", 8192},
                                 {"activation_function", "swiglu"}, {"rotary_emb_fraction", 1.0},
                                 {"qkv_proj_bias", false}, {"mlp_fc1_bias", false},
                                 {"mlp_fc2_bias", false}, {"torch_dtype", "float32"}});
  // word 30528 x 768 = 23,445,504; token types 1,536; emb_ln 1,536; per layer Wqkv 3 x 768^2
  // = 1,769,472 + out_proj 589,824 + fc11/fc12/fc2 3 x 2,359,296 + norms 3,072 = 9,440,256,
  // x 12 = 113,283,072 -> 136,731,648 (huggingface.co/nomic-ai/nomic-embed-text-v1.5: "137M").
  EXPECT_EQ(total_of(spec), 23'445'504ull + 1'536 + 1'536 + 12ull * 9'440'256);
  EXPECT_EQ(spec.arch.max_position_embeddings, 8192u);
  EXPECT_TRUE(is_encoder(spec.arch));
}

TEST(EncoderParamCounts, ModernBertBaseDimensions) {
  // answerdotai/ModernBERT-base dimensions; ModernBertModel (no MLM head).
  const auto spec = encoder_spec_from_config({{"architectures", {"ModernBertModel"}}, {"model_type", "modernbert"},
                                 {"hidden_size", 768}, {"num_hidden_layers", 22},
                                 {"num_attention_heads", 12}, {"intermediate_size", 1152},
                                 {"vocab_size", 50368}, {"max_position_embeddings", 8192},
                                 {"global_attn_every_n_layers", 3}, {"local_attention", 128}});
  // tok_embeddings 50368 x 768 = 38,682,624; embeddings.norm 768; per layer Wqkv 1,769,472 + Wo
  // 589,824 + Wi 2 x 1152 x 768 = 1,769,472 + mlp Wo 884,736 + two norms 1,536 = 5,015,040,
  // x 22 - 768 (layer 0 has no attn_norm) = 110,330,112; final_norm 768 -> 149,014,272
  // (ModernBERT paper, arXiv:2412.13663: base 149M).
  EXPECT_EQ(total_of(spec), 38'682'624ull + 768 + 22ull * 5'015'040 - 768 + 768);
  EXPECT_EQ(spec.arch.layer_attention[0], LayerAttention::Full);
  EXPECT_EQ(spec.arch.layer_attention[1], LayerAttention::Sliding);
  EXPECT_EQ(spec.arch.layer_attention[3], LayerAttention::Full);
}

TEST(EncoderParamCounts, DebertaV3LargeDimensions) {
  // microsoft/deberta-v3-large dimensions (relative attention, shared keys, no absolute positions).
  const auto spec = encoder_spec_from_config({{"architectures", {"DebertaV2Model"}}, {"model_type", "deberta-v2"},
                                 {"hidden_size", 1024}, {"num_hidden_layers", 24},
                                 {"num_attention_heads", 16}, {"intermediate_size", 4096},
                                 {"vocab_size", 128100}, {"max_position_embeddings", 512},
                                 {"type_vocab_size", 0}, {"position_biased_input", false},
                                 {"relative_attention", true}, {"position_buckets", 256},
                                 {"norm_rel_ebd", "layer_norm"}, {"share_att_key", true},
                                 {"pos_att_type", {"p2c", "c2p"}}, {"max_relative_positions", -1}});
  // word 128100 x 1024 = 131,174,400 (card: "131M parameters in the Embedding layer"); LayerNorm
  // 2,048; layers 302,309,376; rel_embeddings 512 x 1024 = 524,288; encoder LayerNorm 2,048
  // -> 434,012,160 (card: 304M backbone + 131M embedding; the backbone here is 302.8M).
  EXPECT_EQ(total_of(spec), 131'174'400ull + 2'048 + kBertLargeLayers + 524'288 + 2'048);
}

TEST(EncoderParamCounts, BertForMaskedLmHasTheTiedHeadAndNoPooler) {
  // bert-base-uncased dimensions: embeddings 30522 x 768 + 512 x 768 + 2 x 768 + LN 1,536
  // = 23,837,184; layer 4 x 590,592 + 2 x 1,536 + 2,362,368 + 2,360,064 = 7,087,872, x 12 =
  // 85,054,464; MLM transform 590,592 + LN 1,536 + decoder bias 30,522 -> 109,514,298.
  const auto spec = encoder_spec_from_config({{"architectures", {"BertForMaskedLM"}}, {"model_type", "bert"},
                                 {"hidden_size", 768}, {"num_hidden_layers", 12},
                                 {"num_attention_heads", 12}, {"intermediate_size", 3072},
                                 {"vocab_size", 30522}, {"max_position_embeddings", 512},
                                 {"type_vocab_size", 2}});
  EXPECT_EQ(total_of(spec), 23'837'184ull + 85'054'464 + 590'592 + 1'536 + 30'522);
  EXPECT_FALSE(has_pooler(spec));
  EXPECT_EQ(encoder_task(spec.arch), EncoderTask::MaskedLm);
}

}  // namespace
}  // namespace vramplan
