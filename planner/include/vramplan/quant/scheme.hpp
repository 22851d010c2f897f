// vramplan/quant/scheme.hpp — weight schemes (--weights names) and the per-scheme precision rules
// (data/quant_schemes.json): which tensors each ecosystem keeps in higher precision, vLLM's
// --quantization names with their defaults and llama.cpp file types. Which engine loads which
// format on which GPU is the compatibility model's (compat/compat.hpp, data/compat/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/io/json_skim.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan {

//! Keep a tensor out of the scheme's quantized format. Matches by role, by `bias`, or by
//! dimension count (<= max_dims); `as` is "dtype" (the model dtype) or a format name ("fp32").
struct KeepRule {
  std::vector<TensorRole> roles;
  bool bias = false;
  std::uint32_t max_dims = 0;
  std::string as;
  std::string reason;
  std::string source;
};

struct RuleSet {
  std::string name;
  std::string source;
  std::vector<TensorRole> quantize_only;  //!< when non-empty, only these roles are quantized
  std::string only_reason;                //!< why the others stay in the model dtype
  std::vector<KeepRule> keep;
};

struct SchemeDef {
  std::string name;
  std::vector<std::string> aliases;
  std::string format;      //!< a row (or template name) of quant_formats.json
  std::string rules;       //!< RuleSet name
  std::string activation;  //!< "model", "fp16", "bf16", "fp32", "fp8", "int8", "fp4"
  std::string engine_method;
  std::string source;
};

struct SchemeTemplate {
  std::string prefix;  //!< matches a QuantTemplate prefix ("gptq", "awq-marlin", ...)
  std::string rules, activation, engine_method, source;
};

struct VllmMethod {
  std::string name;     //!< vLLM --quantization value
  std::string scheme;   //!< default scheme when the checkpoint has no quantization_config
  std::vector<std::string> checkpoint_methods;  //!< quant_method values this method loads
  std::string runtime_prefix;  //!< GroupInt layout prefix after loading ("gptq-marlin")
  std::string source;
};

struct GgufFileType {
  std::string name;    //!< "Q4_K_M"
  std::uint32_t ftype = 0;  //!< llama_ftype id (general.file_type)
  std::string base;    //!< llama_ftype_get_default_type, a GGUF type row name
};

class SchemeTable {
 public:
  //! Loads and validates data/quant_schemes.json against the format catalogue (every scheme's
  //! format must exist, every rule set and role name must be known). The keep-rule sets, two
  //! thirds of the file, are parsed and validated the first time rules() asks for one: most
  //! plans (plain dtypes) never use them. Not for concurrent first use from several threads.
  static SchemeTable load(const std::filesystem::path& file, const QuantCatalog& formats);

  //! A rule set named by a scheme (the loader checked the name exists); a fault inside it is
  //! Error(InputFile) naming the file and field.
  const RuleSet& rules(std::string_view name) const;
  //! Every rule set's name, in file order.
  std::vector<std::string> rule_set_names() const;
  const SchemeDef* find_scheme(std::string_view name) const;
  const SchemeTemplate* find_template(std::string_view prefix) const;
  const VllmMethod* find_vllm_method(std::string_view name) const;
  const GgufFileType* find_gguf_file_type(std::string_view name) const;
  const GgufFileType* find_gguf_file_type(std::uint32_t ftype) const;
  const std::vector<SchemeDef>& schemes() const { return schemes_; }
  const std::vector<VllmMethod>& vllm_methods() const { return vllm_methods_; }
  const std::vector<GgufFileType>& gguf_file_types() const { return gguf_file_types_; }

 private:
  SkimmedFile file_;  //!< keeps the rule sets' texts alive
  std::vector<std::pair<std::string, std::string_view>> rule_texts_;  //!< name -> text, file order
  mutable std::vector<std::optional<RuleSet>> rule_sets_;            //!< parsed on first use
  std::vector<SchemeDef> schemes_;
  std::vector<SchemeTemplate> templates_;
  std::vector<VllmMethod> vllm_methods_;
  std::vector<GgufFileType> gguf_file_types_;
};

enum class SchemeKind {
  Checkpoint,    //!< keep what the checkpoint stores (file inventory or quantization_config)
  Format,        //!< one quantized format + the scheme's keep rules
  GgufFileType,  //!< a llama.cpp file type (per-tensor mixture)
  VllmMethod,    //!< a vLLM --quantization name: the checkpoint's config, else its default
};

struct WeightScheme {
  std::string input;  //!< as typed
  std::string name;   //!< canonical: "gptq-4bit-g128", "gguf:Q4_K_M", "fp8-block", "vllm:gptq_marlin"
  SchemeKind kind = SchemeKind::Format;
  std::string format;         //!< Format: quantized format row name
  std::string rules;          //!< Format: RuleSet name
  std::string activation;     //!< "model", "fp16", "bf16", "fp32", "fp8", "int8", "fp4"
  std::string engine_method;  //!< the vLLM --quantization method that loads it ("" if none)
  std::string gguf_file_type; //!< GgufFileType: "Q4_K_M"
  std::string vllm_method;    //!< VllmMethod: "gptq_marlin"
  std::string source;
};

//! Parses a --weights value: a scheme name (fp32 bf16 fp16 fp8 fp8-block int8 w8a8 nf4 nf4-dq
//! fp4 mxfp4 nvfp4 ...), a parametric name (gptq-4bit-g128, awq-marlin-4bit-g64,
//! gptq-3bit-g-1-actorder, ct-4bit-g128-asym, hqq-4bit-g64), gguf:<FILE_TYPE> (gguf:Q4_K_M),
//! or a vLLM --quantization name (gptq_marlin, awq, compressed-tensors, bitsandbytes, modelopt,
//! ..., also written vllm:<name>). Throws Error(UnknownName) listing the accepted names.
WeightScheme parse_weight_scheme(std::string_view text, const QuantCatalog& catalog);

}  // namespace vramplan
