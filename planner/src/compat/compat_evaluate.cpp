// Evaluates the compatibility rules for one query: the engine's loaders and model registry,
// then every platform / quantization / feature rule that holds.
#include <algorithm>

#include "vramplan/compat/compat.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::compat {
namespace {

bool contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool any_of(const std::vector<std::string>& wanted, const std::vector<std::string>& have) {
  return std::any_of(have.begin(), have.end(), [&](const std::string& h) { return contains(wanted, h); });
}

// A source longer than this is cut in a verdict line to its first clause; --json keeps it whole.
constexpr std::size_t kLineSourceChars = 300;

// The text of `source` before its first "; " outside parentheses: the file and function a rule
// was read from, without the per-release history that follows it (a registry's source runs to
// ~2,000 characters, too long for the one line a script reads).
std::string first_clause(const std::string& source) {
  int depth = 0;
  for (std::size_t i = 0; i + 1 < source.size(); ++i) {
    const char c = source[i];
    if (c == '(' || c == '[') ++depth;
    else if ((c == ')' || c == ']') && depth > 0) --depth;
    else if (c == ';' && depth == 0 && source[i + 1] == ' ') return source.substr(0, i);
  }
  return source;
}

bool holds(const Condition& c, const Query& q) {
  if (!c.vendor.empty() && c.vendor != q.vendor) return false;
  if (c.cc_at_least || c.cc_below) {
    if (!q.compute_capability) return false;  // not an NVIDIA card we know: the rule cannot apply
    // Capabilities are tenths (8.9): compare with a margin well below 0.1.
    if (c.cc_at_least && *q.compute_capability + 1e-6 < *c.cc_at_least) return false;
    if (c.cc_below && *q.compute_capability + 1e-6 >= *c.cc_below) return false;
  }
  if (!c.gfx_in.empty() || !c.gfx_not_in.empty()) {
    if (q.gfx_target.empty()) return false;
    if (!c.gfx_in.empty() && !contains(c.gfx_in, q.gfx_target)) return false;
    if (!c.gfx_not_in.empty() && contains(c.gfx_not_in, q.gfx_target)) return false;
  }
  if (!c.families.empty() && !any_of(c.families, q.weight_families)) return false;
  if (!c.gpu_ids.empty() && !contains(c.gpu_ids, q.gpu_id)) return false;
  if (!c.architectures.empty() && !any_of(c.architectures, q.architectures)) return false;
  if (!c.dtype.empty() && c.dtype != q.dtype) return false;
  if (!c.kv.empty() && c.kv != q.kv) return false;
  if (c.tp_above && q.tensor_parallel <= *c.tp_above) return false;
  if (c.instance_gpus_above && q.tensor_parallel * q.pipeline_parallel <= *c.instance_gpus_above) return false;
  if (c.instance_above_node || c.tp_above_node || c.dp_above_node) {
    if (!q.node_gpus) return false;  // a card without a node size: reported as unchecked
    const std::uint64_t instance = q.tensor_parallel * q.pipeline_parallel;
    if (c.instance_above_node && (instance > *q.node_gpus) != *c.instance_above_node) return false;
    if (c.tp_above_node && (q.tensor_parallel > *q.node_gpus) != *c.tp_above_node) return false;
    if (c.dp_above_node && (q.data_parallel * instance > *q.node_gpus) != *c.dp_above_node) return false;
  }
  if (c.mig && *c.mig != q.mig) return false;
  if (!c.backends.empty() && !contains(c.backends, q.backend)) return false;
  if (!c.gguf_types.empty() && !any_of(c.gguf_types, q.gguf_types)) return false;
  return true;
}

// The build the query runs: the one asked for, else the GPU vendor's (data/compat/formats.json
// default_backend); "" for engines with one build. A build the engine does not have is an error.
std::string resolve_backend(const Query& q, const EngineFormats& f) {
  if (f.backends.empty()) {
    if (!q.backend.empty())
      throw_usage("backend '" + q.backend + "': " + q.engine + " has no per-platform builds (only llama.cpp has)");
    return {};
  }
  if (q.backend.empty()) {
    const auto it = f.default_backend.find(q.vendor);
    return it == f.default_backend.end() ? std::string() : it->second;
  }
  if (!contains(f.backends, q.backend)) {
    std::string list;
    for (const auto& b : f.backends) list += (list.empty() ? "" : ", ") + b;
    throw_unknown("backend '" + q.backend + "' is not a " + q.engine + " build in data/compat/formats.json (" + list +
                  ")");
  }
  return q.backend;
}

std::string engine_label(const Query& q) {
  return q.engine_version.empty() ? q.engine : q.engine + " " + q.engine_version;
}

}  // namespace

std::string_view support_name(Support s) {
  switch (s) {
    case Support::Supported: return "supported";
    case Support::Fallback: return "fallback";
    case Support::Unsupported: return "unsupported";
  }
  return "unsupported";
}

Verdict CompatRules::evaluate(const Query& q) const {
  const auto formats = formats_.find(q.engine);
  const auto registry = registries_.find(q.engine);
  if (formats == formats_.end() || registry == registries_.end())
    throw_unknown("engine '" + q.engine + "' is not in data/compat/formats.json: its compatibility is unknown");
  Verdict v;
  Query resolved = q;
  resolved.backend = resolve_backend(q, formats->second);
  v.backend = resolved.backend;
  if (q.vendor != "nvidia" && q.vendor != "amd")
    v.unchecked.push_back("GPU vendor and compute capability unknown: platform, kernel and feature rules not checked");
  else if (!formats->second.backends.empty() && resolved.backend.empty())
    v.unchecked.push_back("no default " + q.engine + " build for a " + q.vendor + " GPU: backend rules not checked");
  if (!q.node_gpus && q.tensor_parallel * q.pipeline_parallel * q.data_parallel > 1)
    v.unchecked.push_back("GPUs per node unknown for this card: multi-node rules not checked");
  std::vector<Finding> found;
  for (const auto& family : q.weight_families) {
    if (!contains(families_, family))
      throw_unknown("weight format family '" + family + "' is not in data/compat/formats.json /families");
    if (!contains(formats->second.families, family))
      found.push_back({q.engine + "-loads-" + family, Support::Unsupported,
                       engine_label(q) + " does not load " + family + " weights", formats->second.instead, "",
                       formats->second.source});
  }
  for (const auto& arch : q.architectures) {
    const auto it = registry->second.architectures.find(arch);
    if (it == registry->second.architectures.end()) {
      const bool known_elsewhere = std::any_of(registries_.begin(), registries_.end(), [&](const auto& r) {
        return r.second.architectures.count(arch) > 0;
      });
      if (!known_elsewhere) {
        v.unchecked.push_back("architecture " + arch + " is not in data/compat/architectures.json: not checked");
        continue;
      }
      found.push_back({q.engine + "-registry", Support::Unsupported,
                       engine_label(q) + " has no " + arch + " in its model registry", registry->second.instead, "",
                       registry->second.source});
    } else if (!it->second.contains(q.engine_version)) {
      found.push_back({q.engine + "-registry", Support::Unsupported,
                       engine_label(q) + " predates " + arch + " (needs " + q.engine + " " + it->second.text() + ")",
                       registry->second.instead, "", registry->second.source});
    }
  }
  for (const auto& r : rules_) {
    if (!contains(r.engines, q.engine) || !r.versions.contains(q.engine_version) || !holds(r.when, resolved)) continue;
    // No tensor in the scheme's formats: their kernels' fallbacks do not run (Query::weights_quantize_nothing).
    if (q.weights_quantize_nothing && r.verdict == Support::Fallback && !r.when.families.empty() &&
        !contains(r.when.families, std::string("float")))
      continue;
    found.push_back({r.id, r.verdict, r.message, r.instead, r.kernel, r.source});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Finding& a, const Finding& b) { return a.support > b.support; });
  for (const auto& f : found) v.support = std::max(v.support, f.support);
  v.findings = std::move(found);
  return v;
}

std::string finding_line(const Finding& f) {
  std::string line = f.support == Support::Unsupported ? "UNSUPPORTED: " : "fallback: ";
  const std::string cut = f.source.size() > kLineSourceChars ? first_clause(f.source) : f.source;
  line += f.message + " [" + f.rule + "; " + cut + (cut.size() < f.source.size() ? "; the whole source: --json" : "") + "]";
  if (!f.instead.empty()) line += (f.support == Support::Unsupported ? "; instead: " : "; to avoid it: ") + f.instead;
  return line;
}

nlohmann::json verdict_json(const Verdict& v) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : v.findings)
    findings.push_back({{"rule", f.rule}, {"verdict", std::string(support_name(f.support))}, {"message", f.message},
                        {"instead", f.instead},
                        {"kernel", f.kernel.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.kernel)},
                        {"source", f.source}});
  nlohmann::json out = {{"verdict", std::string(support_name(v.support))}};
  if (!v.backend.empty()) out["backend"] = v.backend;
  out["findings"] = findings;
  out["unchecked"] = v.unchecked;
  return out;
}

}  // namespace vramplan::compat
