// Encoder task and head, from the family that built the inventory and the architecture name.
#include "vramplan/model/encoder.hpp"

namespace vramplan {
namespace {

constexpr std::string_view kEncoderFamilies[] = {"bert", "roberta", "deberta_v2", "modernbert", "nomic_bert"};

bool ends_with_text(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

EncoderTask encoder_task(const ModelArch& arch) {
  bool encoder = false;
  for (auto f : kEncoderFamilies) encoder = encoder || arch.family == f;
  if (!encoder) return EncoderTask::None;
  if (ends_with_text(arch.architecture, "ForSequenceClassification")) return EncoderTask::Classify;
  if (ends_with_text(arch.architecture, "ForMaskedLM")) return EncoderTask::MaskedLm;
  return EncoderTask::Embed;
}

std::string_view encoder_task_name(EncoderTask task) {
  switch (task) {
    case EncoderTask::Embed: return "embed";
    case EncoderTask::Classify: return "classify";
    case EncoderTask::MaskedLm: return "masked-lm";
    case EncoderTask::None: break;
  }
  return "";
}

std::uint64_t classifier_labels(const ModelSpec& spec) {
  if (encoder_task(spec.arch) != EncoderTask::Classify) return 0;
  // The last linear of the head: BertForSequenceClassification / DebertaV2 `classifier`,
  // RobertaClassificationHead `classifier.out_proj`.
  std::uint64_t labels = 0;
  for (const auto& t : spec.tensors)
    if ((t.name == "classifier.weight" || t.name == "classifier.out_proj.weight") && !t.shape.empty())
      labels = t.shape.front();
  return labels;
}

bool has_pooler(const ModelSpec& spec) {
  for (const auto& t : spec.tensors)
    if (t.name == "pooler.dense.weight" || t.name.ends_with(".pooler.dense.weight")) return true;
  return false;
}

std::string_view encoder_families_text() {
  return "BERT (BertModel, BertForSequenceClassification, BertForMaskedLM), RoBERTa / XLM-R "
         "(RobertaModel, XLMRobertaModel, *ForSequenceClassification, *ForMaskedLM), DeBERTa-v2/v3, "
         "ModernBERT, NomicBERT";
}

}  // namespace vramplan
