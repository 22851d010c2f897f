// vLLM's MTP speculative decoding; the rules and their sources are in
// vramplan/memory/vllm_speculative.hpp.
#include "vramplan/memory/vllm_speculative.hpp"

#include <nlohmann/json.hpp>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/core/version.hpp"
#include "vramplan/memory/mtp_draft.hpp"

namespace vramplan::memory {

VllmSpeculative vllm_speculative(const EngineArgs& a, const ModelSpec& model, std::string_view release, bool v0,
                                 std::uint64_t pp) {
  VllmSpeculative s;
  const auto text = arg_string(a, "speculative-config");
  if (!text) return s;
  const auto cfg = nlohmann::json::parse(*text, nullptr, false);
  if (cfg.is_discarded() || !cfg.is_object())
    throw_usage("--speculative-config: expected a JSON object, e.g. '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'");
  // Only these keys change the plan; any other would be silently ignored, so it is refused.
  for (const auto& item : cfg.items())
    if (const std::string& key = item.key(); key != "method" && key != "num_speculative_tokens" && key != "model")
      throw_usage("--speculative-config: key " + escape_control(excerpt(key)) +
                  " is not modelled (modelled: \"method\", \"num_speculative_tokens\")");
  const auto method = cfg.find("method");
  if (method == cfg.end() || !method->is_string())
    throw_usage("--speculative-config: \"method\" missing (only \"mtp\", the checkpoint's own MTP layer, is modelled)");
  std::string m = method->get<std::string>();
  // MTPModelTypes: the per-family names are deprecated aliases of "mtp".
  for (const char* alias : {"deepseek_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp"})
    if (m == alias) {
      s.notes.push_back(std::string("speculative method ") + alias + " runs as mtp (config/speculative.py)");
      m = "mtp";
    }
  if (m != "mtp")
    throw_usage("--speculative-config: method \"" + m + "\" not modelled (only \"mtp\", the checkpoint's own MTP layer)");
  if (cfg.contains("model") && !cfg.at("model").is_null())
    throw_usage("--speculative-config: a separate draft \"model\" is not modelled (leave it out: vLLM then drafts "
                "with the target's own MTP layer)");
  const auto k = cfg.find("num_speculative_tokens");
  if (k == cfg.end() || !k->is_number_unsigned() || k->get<std::uint64_t>() == 0)
    throw_usage("--speculative-config: \"num_speculative_tokens\" must be a whole number >= 1 (vLLM requires it when "
                "no draft model is given)");
  const std::vector<std::uint64_t> numbers = release_numbers(release);
  if (v0 || released_before(numbers, {0, 19}))
    throw_usage("--speculative-config: modelled from vLLM 0.19 on, read in its wheel (0.11 kept its own copy of the "
                "LM head in the MTP layer; the V0 engine drafts otherwise): plan with vllm@0.19 or later");
  if (pp > 1) throw_usage("--speculative-config: speculative decoding with pipeline parallelism is not modelled");
  if (const std::string why = mtp_draft_unsupported(model.arch); !why.empty())
    throw_usage("--speculative-config: " + why);
  s.on = true;
  s.method = "mtp";
  s.tokens = k->get<std::uint64_t>();
  if (s.tokens > 1)
    s.notes.push_back("num_speculative_tokens " + std::to_string(s.tokens) +
                      ": vLLM runs the one MTP layer that many times per step (config/speculative.py warns of a lower "
                      "acceptance rate)");
  return s;
}

}  // namespace vramplan::memory
