// Encoder task and head, from the family that built the inventory and the architecture name.
#include "vramplan/model/encoder.hpp"

#include <algorithm>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

// The exclusion apply_pooling_view records: "pooling view: <mode> pooling ...".
constexpr std::string_view kPoolingViewNote = "pooling view: ";
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

void apply_pooling_view(ModelSpec& spec, const std::string& pooling, const std::string& where) {
  // sentence-transformers 1_Pooling/config.json modes a decoder embedder uses.
  if (pooling != "last_token" && pooling != "mean" && pooling != "cls")
    throw Error(ErrorKind::InputFile, where + ": _pooling: expected last_token, mean or cls, got '" + pooling + "'");
  if (is_encoder(spec.arch))
    throw Error(ErrorKind::InputFile, where + ": _pooling: " + spec.arch.architecture + " is already an encoder");
  std::erase_if(spec.tensors, [](const TensorInfo& t) { return t.role == TensorRole::Output; });
  spec.exclusions.push_back(std::string(kPoolingViewNote) + pooling + " pooling of the hidden states; lm_head not built "
                            "(an embedding checkpoint holds none)");
}

std::string pooling_view_mode(const ModelSpec& spec) {
  for (const auto& e : spec.exclusions)
    if (e.starts_with(kPoolingViewNote)) {
      const auto rest = e.substr(kPoolingViewNote.size());
      return rest.substr(0, rest.find(' '));
    }
  return "";
}

std::string_view encoder_families_text() {
  return "BERT (BertModel, BertForSequenceClassification, BertForMaskedLM), RoBERTa / XLM-R "
         "(RobertaModel, XLMRobertaModel, *ForSequenceClassification, *ForMaskedLM), DeBERTa-v2/v3, "
         "ModernBERT, NomicBERT";
}

}  // namespace vramplan
