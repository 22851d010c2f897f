// Bidirectional encoders served as embedders / rerankers: BERT (BGE, e5, gte), RoBERTa / XLM-R
// (bge-m3, bge-reranker-v2-m3), DeBERTa-v2/v3, ModernBERT and NomicBERT. Module shapes are read off
// the transformers modeling files (src/transformers/models/<type>/modeling_<type>.py):
//  * BertEmbeddings / RobertaEmbeddings: word_embeddings {V, h}, position_embeddings
//    {max_position_embeddings, h} (position_embedding_type "absolute"), token_type_embeddings
//    {type_vocab_size, h}, LayerNorm(h) with bias;
//  * BertLayer: attention.self.{query,key,value} and attention.output.dense (bias=True),
//    attention.output.LayerNorm, intermediate.dense {I, h}, output.dense {h, I} (bias=True),
//    output.LayerNorm: post-norm, no final norm;
//  * BertPooler.dense {h, h} + bias when the *Model is built with add_pooling_layer=True (the
//    default of BertModel / XLMRobertaModel); *ForSequenceClassification: Bert keeps the pooler and
//    adds classifier {num_labels, h}; RobertaForSequenceClassification drops the pooler
//    (add_pooling_layer=False) and adds RobertaClassificationHead: classifier.dense {h, h} +
//    classifier.out_proj {num_labels, h}, both with bias; *ForMaskedLM drops the pooler and adds
//    the MLM transform (dense + LayerNorm) and the decoder bias {V} (decoder weight tied).
// Classifier heads are role Other: Output means a vocabulary-sized head (sharded and padded by
// vocabulary rows, memory/weights.cpp); an MLM decoder bias {V} is Output.
// NomicBERT is nomic-ai's remote code (contrastors, modeling_hf_nomic_bert.py; vLLM
// model_executor/models/bert_with_rope.py loads the same names).
#include <algorithm>
#include <string>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {
namespace {

//! Which head an architecture carries, from the class name's suffix (transformers' naming).
enum class EncoderHead { None, BertClassifier, RobertaClassifier, BertMaskedLm, RobertaMaskedLm };

struct HeadRow {
  std::string_view architecture;
  EncoderHead head;
  std::string_view prefix;  //!< base-model prefix in the checkpoint ("" for the bare *Model)
  bool pooler;              //!< add_pooling_layer of the base model in this class
};
constexpr HeadRow kBertHeads[] = {
    {"BertModel", EncoderHead::None, "", true},
    {"BertForSequenceClassification", EncoderHead::BertClassifier, "bert.", true},
    {"BertForMaskedLM", EncoderHead::BertMaskedLm, "bert.", false},
    {"RobertaModel", EncoderHead::None, "", true},
    {"XLMRobertaModel", EncoderHead::None, "", true},
    {"RobertaForSequenceClassification", EncoderHead::RobertaClassifier, "roberta.", false},
    {"XLMRobertaForSequenceClassification", EncoderHead::RobertaClassifier, "roberta.", false},
    {"RobertaForMaskedLM", EncoderHead::RobertaMaskedLm, "roberta.", false},
    {"XLMRobertaForMaskedLM", EncoderHead::RobertaMaskedLm, "roberta.", false},
};

const HeadRow& head_row(const ModelArch& a) {
  for (const auto& row : kBertHeads)
    if (row.architecture == a.architecture) return row;
  return kBertHeads[0];  // unreachable: the family table lists exactly these architectures
}

//! PretrainedConfig.num_labels: the `num_labels` key, else the size of id2label, else 2.
std::uint64_t num_labels_of(const ConfigView& c) {
  if (auto n = c.positive_opt({"num_labels"})) return *n;
  if (auto labels = c.find({"id2label"}); labels && labels->is_object())
    if (auto size = labels->raw().size(); size > 0) return size;
  return 2;
}

void encoder_dims(const ConfigView& c, const Family& family, ModelArch& a) {
  read_common_dims(c, family, a);
  a.intermediate_size = c.positive({"intermediate_size", "n_inner"});
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  a.tied_embeddings = true;  // MLM decoders reuse word_embeddings; embedders have no output matrix
}

//! BERT-style post-norm layer under `p` ("encoder.layer.<i>.").
void bert_layer(InventoryBuilder& b, const std::string& p, std::uint64_t h, std::uint64_t inner,
                std::uint64_t I) {
  b.linear(p + "attention.self.query", R::AttnQ, inner, h, true);
  b.linear(p + "attention.self.key", R::AttnK, inner, h, true);
  b.linear(p + "attention.self.value", R::AttnV, inner, h, true);
  b.linear(p + "attention.output.dense", R::AttnOutput, h, inner, true);
  b.norm(p + "attention.output.LayerNorm", R::AttnPostNorm, h, true);
  b.linear(p + "intermediate.dense", R::FfnUp, I, h, true);
  b.linear(p + "output.dense", R::FfnDown, h, I, true);
  b.norm(p + "output.LayerNorm", R::FfnPostNorm, h, true);
}

}  // namespace

void build_bert(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  encoder_dims(c, family, a);
  const auto& row = head_row(a);
  const auto type = c.string({"position_embedding_type"}).value_or("absolute");
  if (type != "absolute")
    c.fail("position_embedding_type", "'" + type + "' is not supported (only \"absolute\": the "
                                      "relative_key variants add per-layer distance embeddings)");
  if (a.max_position_embeddings == 0) c.fail("max_position_embeddings", "required for BERT-style encoders");
  // RoBERTa / XLM-R number positions from padding_idx + 1 (modeling_roberta.py / modeling_xlm_roberta.py
  // create_position_ids_from_input_ids: cumsum(mask) + padding_idx; RobertaConfig pad_token_id=1):
  // the table's first pad_token_id + 1 rows are never an input's. TEI takes the same offset
  // (router/src/lib.rs: position_offset = pad_token_id + 1 for xlm-roberta, camembert, roberta).
  if (family.name == "roberta") {
    a.position_offset = c.u64({"pad_token_id"}).value_or(1) + 1;
    if (a.position_offset >= a.max_position_embeddings)
      c.fail("pad_token_id", "positions start at pad_token_id + 1 = " + std::to_string(a.position_offset) +
                                 ", which leaves no row of max_position_embeddings " + std::to_string(a.max_position_embeddings));
  }
  // BertConfig / XLMRobertaConfig default type_vocab_size=2; the published configs set it.
  const auto types = c.u64({"type_vocab_size"}).value_or(2);
  const auto h = a.hidden_size, V = a.vocab_size, I = a.intermediate_size;
  const auto inner = a.num_heads * a.head_dim;
  const std::string p(row.prefix);

  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(p + "embeddings.word_embeddings.weight", R::TokenEmbedding, {V, h});
  b.tensor(p + "embeddings.position_embeddings.weight", R::PositionEmbedding, {a.max_position_embeddings, h});
  if (types > 0) b.tensor(p + "embeddings.token_type_embeddings.weight", R::Other, {types, h});
  b.norm(p + "embeddings.LayerNorm", R::Other, h, true);
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    bert_layer(b, p + "encoder.layer." + std::to_string(i) + ".", h, inner, I);
  }
  b.set_layer(std::nullopt);
  if (row.pooler) b.linear(p + "pooler.dense", R::Other, h, h, true);
  switch (row.head) {
    case EncoderHead::None: break;
    case EncoderHead::BertClassifier:
      b.linear("classifier", R::Other, num_labels_of(c), h, true);
      break;
    case EncoderHead::RobertaClassifier:
      b.linear("classifier.dense", R::Other, h, h, true);
      b.linear("classifier.out_proj", R::Other, num_labels_of(c), h, true);
      break;
    case EncoderHead::BertMaskedLm:  // BertLMPredictionHead: transform + tied decoder + bias
      b.linear("cls.predictions.transform.dense", R::Other, h, h, true);
      b.norm("cls.predictions.transform.LayerNorm", R::Other, h, true);
      b.tensor("cls.predictions.bias", R::Output, {V}, true);
      break;
    case EncoderHead::RobertaMaskedLm:  // RobertaLMHead: dense + layer_norm + tied decoder + bias
      b.linear("lm_head.dense", R::Other, h, h, true);
      b.norm("lm_head.layer_norm", R::Other, h, true);
      b.tensor("lm_head.bias", R::Output, {V}, true);
      break;
  }
}

// DeBERTa-v2 / v3 (modeling_deberta_v2.py): DebertaV2Embeddings (word {V, embedding_size},
// position table only when position_biased_input, token types when type_vocab_size > 0,
// embed_proj when embedding_size != hidden, LayerNorm); DisentangledSelfAttention
// query_proj/key_proj/value_proj with bias, plus pos_key_proj / pos_query_proj when
// share_att_key is false; DebertaV2Encoder.rel_embeddings {2 x position_buckets (or
// 2 x max_relative_positions), h} + LayerNorm when norm_rel_ebd has "layer_norm", ConvLayer when
// conv_kernel_size > 0. DebertaV2ForSequenceClassification adds ContextPooler.dense + classifier.
void build_deberta_v2(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  encoder_dims(c, family, a);
  const bool classify = a.architecture == "DebertaV2ForSequenceClassification";
  const auto h = a.hidden_size, V = a.vocab_size, I = a.intermediate_size;
  const auto inner = a.num_heads * a.head_dim;
  const auto E = c.positive_opt({"embedding_size"}).value_or(h);
  const std::string p = classify ? "deberta." : "";

  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(p + "embeddings.word_embeddings.weight", R::TokenEmbedding, {V, E});
  if (c.flag("position_biased_input", true)) {
    if (a.max_position_embeddings == 0) c.fail("max_position_embeddings", "required when position_biased_input");
    b.tensor(p + "embeddings.position_embeddings.weight", R::PositionEmbedding, {a.max_position_embeddings, E});
  }
  if (const auto types = c.u64({"type_vocab_size"}).value_or(0); types > 0)
    b.tensor(p + "embeddings.token_type_embeddings.weight", R::Other, {types, E});
  if (E != h) b.linear(p + "embeddings.embed_proj", R::Other, h, E, false);
  b.norm(p + "embeddings.LayerNorm", R::Other, h, true);

  bool c2p = false, p2c = false;
  if (auto types = c.find({"pos_att_type"}); types && types->is_array())
    for (const auto& t : types->items()) {
      const auto name = t.as_string();
      c2p = c2p || name == "c2p";
      p2c = p2c || name == "p2c";
    }
  const bool relative = c.flag("relative_attention", false);
  const bool share = c.flag("share_att_key", false);
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto lp = p + "encoder.layer." + std::to_string(i) + ".";
    b.linear(lp + "attention.self.query_proj", R::AttnQ, inner, h, true);
    b.linear(lp + "attention.self.key_proj", R::AttnK, inner, h, true);
    b.linear(lp + "attention.self.value_proj", R::AttnV, inner, h, true);
    if (relative && !share) {
      if (c2p) b.linear(lp + "attention.self.pos_key_proj", R::Other, inner, h, true);
      if (p2c) b.linear(lp + "attention.self.pos_query_proj", R::Other, inner, h, true);
    }
    b.linear(lp + "attention.output.dense", R::AttnOutput, h, inner, true);
    b.norm(lp + "attention.output.LayerNorm", R::AttnPostNorm, h, true);
    b.linear(lp + "intermediate.dense", R::FfnUp, I, h, true);
    b.linear(lp + "output.dense", R::FfnDown, h, I, true);
    b.norm(lp + "output.LayerNorm", R::FfnPostNorm, h, true);
  }
  b.set_layer(std::nullopt);
  if (relative) {
    // DebertaV2Encoder: max_relative_positions < 1 means max_position_embeddings.
    const auto buckets = c.u64({"position_buckets"}).value_or(0);
    auto max_rel = c.number({"max_relative_positions"}).value_or(-1.0);
    const auto rel = buckets > 0 ? buckets : (max_rel < 1.0 ? a.max_position_embeddings
                                                            : static_cast<std::uint64_t>(max_rel));
    if (rel == 0) c.fail("max_relative_positions", "relative attention needs position_buckets or a position range");
    b.tensor(p + "encoder.rel_embeddings.weight", R::PositionEmbedding, {2 * rel, h});
    const auto norm_rel = c.string({"norm_rel_ebd"}).value_or("none");
    if (norm_rel.find("layer_norm") != std::string::npos) b.norm(p + "encoder.LayerNorm", R::Other, h, true);
  }
  if (const auto k = c.u64({"conv_kernel_size"}).value_or(0); k > 0) {
    const auto groups = c.positive_opt({"conv_groups"}).value_or(1);
    if (h % groups != 0) c.fail("conv_groups", "does not divide hidden_size");
    b.tensor(p + "encoder.conv.conv.weight", R::Other, {h, h / groups, k});
    b.tensor(p + "encoder.conv.conv.bias", R::Other, {h}, true);
    b.norm(p + "encoder.conv.LayerNorm", R::Other, h, true);
  }
  if (classify) {
    const auto ph = c.positive_opt({"pooler_hidden_size"}).value_or(h);
    b.linear("pooler.dense", R::Other, ph, h, true);
    b.linear("classifier", R::Other, num_labels_of(c), ph, true);
  }
}

// ModernBERT (modeling_modernbert.py): ModernBertEmbeddings.tok_embeddings + norm; per layer
// attn_norm (nn.Identity in layer 0), attn.Wqkv {3h, h}, attn.Wo, mlp_norm, mlp.Wi {2I, h} (GeGLU
// input and gate), mlp.Wo {h, I}; final_norm. Biases follow attention_bias / mlp_bias / norm_bias
// (all false in the published checkpoints). Every global_attn_every_n_layers-th layer attends
// globally, the rest within local_attention tokens (a sliding window of local_attention / 2 each
// side). ForMaskedLM keeps the model under "model." and adds head.dense + head.norm + decoder.bias.
void build_modernbert(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  encoder_dims(c, family, a);
  const bool mlm = a.architecture == "ModernBertForMaskedLM";
  const auto h = a.hidden_size, V = a.vocab_size, I = a.intermediate_size;
  const bool norm_bias = c.flag("norm_bias", false);
  const bool attn_bias = c.flag("attention_bias", false);
  const bool mlp_bias = c.flag("mlp_bias", false);
  const auto every = c.positive_opt({"global_attn_every_n_layers"}).value_or(3);
  if (const auto window = c.u64({"local_attention"}).value_or(0); window > 0) {
    for (std::uint64_t i = 0; i < a.num_layers; ++i)
      if (i % every != 0) a.layer_attention[i] = LayerAttention::Sliding;
    a.sliding_window = window;
  }
  const std::string p = mlm ? "model." : "";
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(p + "embeddings.tok_embeddings.weight", R::TokenEmbedding, {V, h});
  b.norm(p + "embeddings.norm", R::Other, h, norm_bias);
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto lp = layer_prefix(p, "layers", i);
    if (i != 0) b.norm(lp + "attn_norm", R::AttnNorm, h, norm_bias);
    b.linear(lp + "attn.Wqkv", R::AttnQKV, 3 * a.num_heads * a.head_dim, h, attn_bias);
    b.linear(lp + "attn.Wo", R::AttnOutput, h, a.num_heads * a.head_dim, attn_bias);
    b.norm(lp + "mlp_norm", R::FfnNorm, h, norm_bias);
    b.linear(lp + "mlp.Wi", R::FfnGateUp, 2 * I, h, mlp_bias);
    b.linear(lp + "mlp.Wo", R::FfnDown, h, I, mlp_bias);
  }
  b.set_layer(std::nullopt);
  b.norm(p + "final_norm", R::OutputNorm, h, norm_bias);
  if (mlm) {
    b.linear("head.dense", R::Other, h, h, c.flag("classifier_bias", false));
    b.norm("head.norm", R::Other, h, norm_bias);
    if (c.flag("decoder_bias", true)) b.tensor("decoder.bias", R::Output, {V}, true);
  }
}

// NomicBERT (nomic-embed-text-v1 / v1.5; GPT-2 style keys n_embd / n_layer / n_head / n_inner):
// embeddings.word_embeddings, token_type_embeddings when type_vocab_size > 0, a learned position
// table only without rotary (rotary_emb_fraction 0), emb_ln; per layer attn.Wqkv {3h, h} and
// attn.out_proj (bias = qkv_proj_bias), SwiGLU mlp.fc11 (up) / mlp.fc12 (gate) {I, h} with
// mlp_fc1_bias and mlp.fc2 {h, I} with mlp_fc2_bias (GELU: fc1 / fc2), post-norms norm1 / norm2.
// NomicBertModel is built without a pooler (add_pooling_layer=False).
void build_nomic_bert(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.intermediate_size = c.positive_opt({"n_inner", "intermediate_size"}).value_or(4 * a.hidden_size);
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  a.tied_embeddings = true;
  const double rotary = c.number({"rotary_emb_fraction"}).value_or(0.0);
  if (!(rotary >= 0.0 && rotary <= 1.0)) c.fail("rotary_emb_fraction", "must be in [0, 1]");
  // Rotary tables run to n_positions (8192 for v1.5), beyond the trained 2048.
  if (auto n = c.u64({"n_positions"})) a.max_position_embeddings = std::max(a.max_position_embeddings, *n);
  const auto h = a.hidden_size, V = a.vocab_size, I = a.intermediate_size;
  const auto act = c.string({"activation_function"}).value_or("gelu");
  const bool gated = act == "swiglu" || act == "geglu";
  const bool qkv_bias = c.flag("qkv_proj_bias", true);
  const bool fc1_bias = c.flag("mlp_fc1_bias", true), fc2_bias = c.flag("mlp_fc2_bias", true);
  const bool rms = c.flag("use_rms_norm", false);

  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("embeddings.word_embeddings.weight", R::TokenEmbedding, {V, h});
  if (rotary == 0.0) {
    if (a.max_position_embeddings == 0) c.fail("max_position_embeddings", "required without rotary embeddings");
    b.tensor("embeddings.position_embeddings.weight", R::PositionEmbedding, {a.max_position_embeddings, h});
  }
  if (const auto types = c.u64({"type_vocab_size"}).value_or(0); types > 0)
    b.tensor("embeddings.token_type_embeddings.weight", R::Other, {types, h});
  b.norm("emb_ln", R::Other, h, !rms);
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto lp = layer_prefix("encoder.", "layers", i);
    b.linear(lp + "attn.Wqkv", R::AttnQKV, 3 * a.num_heads * a.head_dim, h, qkv_bias);
    b.linear(lp + "attn.out_proj", R::AttnOutput, h, a.num_heads * a.head_dim, qkv_bias);
    if (gated) {
      b.linear(lp + "mlp.fc11", R::FfnUp, I, h, fc1_bias);
      b.linear(lp + "mlp.fc12", R::FfnGate, I, h, fc1_bias);
    } else {
      b.linear(lp + "mlp.fc1", R::FfnUp, I, h, fc1_bias);
    }
    b.linear(lp + "mlp.fc2", R::FfnDown, h, I, fc2_bias);
    b.norm(lp + "norm1", R::AttnPostNorm, h, !rms);
    b.norm(lp + "norm2", R::FfnPostNorm, h, !rms);
  }
  b.set_layer(std::nullopt);
  if (rotary > 0.0) read_rope_tables(c, static_cast<std::uint64_t>(static_cast<double>(a.head_dim) * rotary), a);
}

}  // namespace vramplan::hf
