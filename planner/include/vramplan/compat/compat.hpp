// vramplan/compat/compat.hpp — will this engine (at this version) run this model, weight format
// and feature set on this GPU? One data-driven model (data/compat/*.json, docs/compatibility.md)
// consulted by every decision before any memory is sized.
//
// Layer: compat sits between quant / hardware (which it reads) and memory (which may ask it which
// kernel path an engine takes). Every rule names the engine source file / function it comes
// from and the engine versions it holds for.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/compat/version_range.hpp"

namespace vramplan {
struct GpuSpec;
struct ModelSpec;
struct WeightScheme;
class QuantCatalog;
}  // namespace vramplan

namespace vramplan::compat {

//! Ordered by severity: a verdict is the worst of its findings.
enum class Support { Supported, Fallback, Unsupported };
//! "supported" / "fallback" / "unsupported" (JSON values).
std::string_view support_name(Support s);

//! What a rule asks of the query; every condition given must hold (absent = any).
struct Condition {
  std::string vendor;  //!< "nvidia" / "amd"
  std::optional<double> cc_at_least, cc_below;  //!< NVIDIA compute capability; needs a known one
  std::vector<std::string> gfx_in, gfx_not_in;  //!< AMD gfx target; needs a known one
  std::vector<std::string> families;            //!< any weight format family of the query
  std::vector<std::string> gpu_ids;             //!< the card (a MIG slice: its parent card)
  std::vector<std::string> architectures;       //!< any of the model's architectures
  std::string dtype;                            //!< the model's float dtype ("bf16")
  std::string kv;                               //!< KV cache storage ("fp8")
  std::optional<std::uint64_t> tp_above;        //!< tensor parallel size greater than this
  std::optional<std::uint64_t> instance_gpus_above;  //!< TP x PP (GPUs of one instance) greater than this
  std::optional<bool> instance_above_node;  //!< TP x PP more (true) / not more than the card's node_gpus
  std::optional<bool> tp_above_node;        //!< TP alone more (true) / not more than the card's node_gpus
  //! Every data-parallel engine's GPUs together (DP x TP x PP) more (true) / not more than node_gpus
  std::optional<bool> dp_above_node;
  std::optional<bool> mig;                      //!< the GPU is (not) a MIG slice
  std::vector<std::string> backends;    //!< the engine build the query runs ("cuda", "vulkan"; llama.cpp)
  std::vector<std::string> gguf_types;  //!< any GGUF tensor type of the weights ("TQ1_0")
};

struct Rule {
  std::string id;
  std::string group;  //!< the data file: "platforms", "quantization", "features"
  std::vector<std::string> engines;
  VersionRange versions;
  Condition when;
  Support verdict = Support::Unsupported;
  std::string kernel;  //!< the path the engine takes instead ("marlin", "TRITON_ATTN"); may be ""
  std::string message, instead, source;
};

//! Which weight format families an engine loads at all (data/compat/formats.json), and for an
//! engine built per platform (llama.cpp) the builds it has and the one each GPU vendor gets.
struct EngineFormats {
  std::vector<std::string> families;
  std::string instead, source;
  std::vector<std::string> backends;                 //!< empty: one build, no choice
  std::map<std::string, std::string> default_backend;  //!< vendor -> backend
  std::string backend_source;
};

//! An engine's model registry: architecture -> the releases that have it.
struct EngineRegistry {
  std::map<std::string, VersionRange> architectures;
  std::string instead, source;
};

//! The facts a verdict depends on. Build it with gpu_facts() / weight_families() or by hand.
struct Query {
  std::string engine;          //!< registry name: "vllm", "sglang", "trtllm", "llamacpp", "hf"
  std::string engine_version;  //!< "0.19"; "" = the newest release
  std::string gpu_id;          //!< catalogue card id (a MIG slice: its parent)
  std::string vendor;          //!< "nvidia" / "amd" / "unknown"
  std::optional<double> compute_capability;
  std::string gfx_target;
  bool mig = false;
  std::vector<std::string> weight_families;  //!< quant_formats.json families of the weights
  std::vector<std::string> gguf_types;       //!< GGUF tensor types of the weights (GGUF files only)
  std::string backend;  //!< the engine build (llama.cpp: "cuda" / "hip" / "vulkan" / "cpu"); "" = by vendor
  std::optional<std::uint64_t> node_gpus;  //!< GPUs one host holds (data/gpus.json node_gpus)
  std::string dtype;                         //!< model float dtype ("bf16", "fp16", "fp32")
  std::string kv;                            //!< "fp8" when the KV cache is stored in fp8, else ""
  std::uint64_t tensor_parallel = 1;
  std::uint64_t pipeline_parallel = 1;
  std::uint64_t data_parallel = 1;           //!< engines of TP x PP GPUs each (vLLM --data-parallel-size)
  std::vector<std::string> architectures;    //!< config.json `architectures`
  //! The --weights scheme quantizes no tensor of the model (mxfp4 on a dense model: vLLM's
  //! Mxfp4Config gives every Linear UnquantizedLinearMethod), so it is served in the dtype: a
  //! fallback rule about the scheme's quantized formats (Marlin padding MXFP4 experts) does not
  //! hold; an engine's refusal of the method itself (its minimum capability) still does.
  bool weights_quantize_nothing{};
};

//! One rule that holds for the query.
struct Finding {
  std::string rule;
  Support support = Support::Unsupported;
  std::string message, instead, kernel, source;
};

struct Verdict {
  Support support = Support::Supported;  //!< the worst finding
  std::string backend;                   //!< the engine build the rules were read for ("" = none)
  std::vector<Finding> findings;         //!< unsupported first, then fallbacks, in rule order
  std::vector<std::string> unchecked;    //!< facts the data has no answer for (unknown architecture)
};

class CompatRules {
 public:
  //! Reads data/compat/{platforms,quantization,features,formats,architectures}.json. Faults are
  //! Error(InputFile) naming the file and field; a rule naming a family outside /families or an
  //! unknown verdict is a fault.
  static CompatRules load(const std::filesystem::path& compat_dir);

  //! Every rule that holds for `q`. Throws Error(UnknownName) for an engine the data does not
  //! cover, for a weight family outside formats.json /families and for a backend the engine does
  //! not build (Error(Usage) when the engine has no backends at all): nothing passes unchecked.
  Verdict evaluate(const Query& q) const;

  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<std::string>& families() const { return families_; }
  const std::map<std::string, EngineFormats>& engine_formats() const { return formats_; }
  const std::map<std::string, EngineRegistry>& registries() const { return registries_; }

 private:
  std::vector<Rule> rules_;
  std::vector<std::string> families_;
  std::map<std::string, EngineFormats> formats_;
  std::map<std::string, EngineRegistry> registries_;
};

//! Vendor, compute capability, gfx target, MIG, node size and card id of a catalogue GPU.
void set_gpu_facts(Query& q, const GpuSpec& gpu);

//! The format families a --weights scheme stores its quantized tensors in, plus "float" for the
//! tensors it keeps in the model dtype. A checkpoint scheme ("keep what the checkpoint stores")
//! returns {}: the caller adds the checkpoint's own families.
std::vector<std::string> weight_families(const WeightScheme& scheme, const QuantCatalog& catalog);

//! The families a model's weights are held in: the --weights scheme's (`weights`), else the
//! checkpoint's quantization_config, else the formats its tensors are stored in (GGUF types, bf16).
std::vector<std::string> model_weight_families(const ModelSpec& model, const QuantCatalog& catalog,
                                               const std::optional<std::string>& weights);

//! Whether the --weights scheme `weights` quantizes no tensor of `model` (precision_plan.hpp
//! nothing_quantized): Query::weights_quantize_nothing.
bool weights_quantize_nothing(const ModelSpec& model, const QuantCatalog& catalog, const std::optional<std::string>& weights);

//! The GGUF tensor types of a --weights scheme: a GGUF file type's base type (gguf:TQ1_0 ->
//! TQ1_0), or the GGUF type a format names (Q4_K); {} for schemes that are not GGUF.
std::vector<std::string> gguf_types(const WeightScheme& scheme, const QuantCatalog& catalog);

//! The GGUF tensor types ("Q4_K", "TQ1_0", "F16") a model's weights are stored in: the --weights
//! scheme's (gguf_types), else the .gguf file's own tensor types; {} for weights that are not GGUF.
std::vector<std::string> model_gguf_types(const ModelSpec& model, const QuantCatalog& catalog,
                                          const std::optional<std::string>& weights);

//! "bf16" / "fp16" / "fp32" for a config's torch_dtype or an engine's --dtype ("bfloat16", "half").
std::string float_dtype(std::string_view dtype);

//! {"verdict": "supported"|"fallback"|"unsupported", "backend": "vulkan" (engines built per
//! platform only), "findings": [{rule, verdict, message,
//! instead, kernel, source}], "unchecked": [...]} — the `compatibility` member of check / plan JSON.
nlohmann::json verdict_json(const Verdict& v);

//! One line per finding: "UNSUPPORTED: <message> [<rule>; <source>]; instead: <instead>". A source
//! over 300 characters is cut to its first clause there (the file and function); JSON keeps it whole.
std::string finding_line(const Finding& f);

}  // namespace vramplan::compat
