// vramplan/model/encoder.hpp — what an encoder checkpoint is served for.
//
// Bidirectional encoders (BERT, RoBERTa / XLM-R, DeBERTa-v2, ModernBERT, NomicBERT; built by
// model/family_encoder.cpp) have no KV cache and generate nothing: they are planned as pooling
// models (memory/encoder_memory.hpp). The task follows from the HF architecture class, the head
// from the inventory (a classifier / pooler tensor is there or not).
#pragma once

#include <cstdint>
#include <string_view>

#include "vramplan/model/spec.hpp"

namespace vramplan {

enum class EncoderTask { None, Embed, Classify, MaskedLm };

//! EncoderTask::None for decoders; for encoders the task of the architecture class
//! (*Model -> Embed, *ForSequenceClassification -> Classify, *ForMaskedLM -> MaskedLm).
EncoderTask encoder_task(const ModelArch& arch);
inline bool is_encoder(const ModelArch& arch) { return encoder_task(arch) != EncoderTask::None; }
std::string_view encoder_task_name(EncoderTask task);  //!< "embed", "classify", "masked-lm", ""

//! The pooling view of a decoder checkpoint (a catalogue entry's `_pooling`): drops the lm_head,
//! which an embedding checkpoint does not hold (sentence-transformers loads AutoModel =
//! Qwen3Model; vLLM's pooling adapter deletes it, vllm/model_executor/models/adapters.py
//! _create_pooling_model_cls), and records the view in spec.exclusions (shown in every output).
//! `pooling` must be last_token, mean or cls, else Error(InputFile) naming `where`.
void apply_pooling_view(ModelSpec& spec, const std::string& pooling, const std::string& where);
//! The pooling of a decoder seen through apply_pooling_view ("last_token", ...); "" otherwise.
std::string pooling_view_mode(const ModelSpec& spec);
//! An encoder, or a decoder in its pooling view: planned without generation, inputs/s instead.
inline bool is_pooling_model(const ModelSpec& spec) { return is_encoder(spec.arch) || !pooling_view_mode(spec).empty(); }

//! The longest input a pooling model takes, in tokens: max_position_embeddings less the rows its
//! position ids skip (ModelArch::position_offset: 8192 for XLM-R-based BGE-M3's 8194 rows, as
//! TEI's router/src/lib.rs max_position_embeddings - position_offset and transformers'
//! RoBERTa position ids); 0 when the config gives no positions.
inline std::uint64_t encoder_max_input(const ModelArch& arch) {
  return arch.max_position_embeddings > arch.position_offset ? arch.max_position_embeddings - arch.position_offset : 0;
}

//! Outputs of the classification head (rows of the last classifier matrix); 0 without one.
std::uint64_t classifier_labels(const ModelSpec& spec);
//! True when the inventory holds a BertPooler / RobertaPooler (`pooler.dense`).
bool has_pooler(const ModelSpec& spec);

//! The encoder families vramplan builds ("bert, roberta, deberta_v2, modernbert, nomic_bert").
std::string_view encoder_families_text();

}  // namespace vramplan
