// Reads data/compat/*.json into CompatRules (the rule shape is in docs/compatibility.md).
#include <algorithm>

#include "vramplan/compat/compat.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::compat {
namespace {

std::vector<std::string> string_list(const JsonView& v, std::string_view key) {
  std::vector<std::string> out;
  if (const auto list = v.get(key))
    for (const auto& item : list->items()) out.push_back(item.as_string());
  return out;
}

VersionRange range_at(const JsonView& v) {
  try {
    return VersionRange::parse(v.as_string());
  } catch (const Error& e) {
    v.fail(e.what());
  }
}

Support verdict_at(const JsonView& v) {
  const std::string s = v.as_string();
  if (s == "unsupported") return Support::Unsupported;
  if (s == "fallback") return Support::Fallback;
  v.fail("verdict must be \"unsupported\" or \"fallback\"");
}

Condition read_condition(const JsonView& w) {
  static const std::vector<std::string> known = {"vendor", "cc_at_least", "cc_below", "gfx_in", "gfx_not_in",
                                                 "families", "gpu_ids", "architectures", "dtype", "kv",
                                                 "tp_above", "instance_gpus_above", "instance_above_node",
                                                 "tp_above_node", "dp_above_node", "mig", "backends", "gguf_types"};
  for (const auto& [key, value] : w.members())
    if (std::find(known.begin(), known.end(), key) == known.end()) w.fail_at(key, "unknown condition");
  Condition c;
  c.vendor = w.opt_string("vendor").value_or("");
  c.cc_at_least = w.opt_number("cc_at_least");
  c.cc_below = w.opt_number("cc_below");
  c.gfx_in = string_list(w, "gfx_in");
  c.gfx_not_in = string_list(w, "gfx_not_in");
  c.families = string_list(w, "families");
  c.gpu_ids = string_list(w, "gpu_ids");
  c.architectures = string_list(w, "architectures");
  c.dtype = w.opt_string("dtype").value_or("");
  c.kv = w.opt_string("kv").value_or("");
  c.tp_above = w.opt_u64("tp_above");
  c.instance_gpus_above = w.opt_u64("instance_gpus_above");
  c.instance_above_node = w.opt_bool("instance_above_node");
  c.tp_above_node = w.opt_bool("tp_above_node");
  c.dp_above_node = w.opt_bool("dp_above_node");
  c.mig = w.opt_bool("mig");
  c.backends = string_list(w, "backends");
  c.gguf_types = string_list(w, "gguf_types");
  return c;
}

void check_families(const JsonView& at, const std::vector<std::string>& families,
                    const std::vector<std::string>& known) {
  for (const auto& f : families)
    if (std::find(known.begin(), known.end(), f) == known.end())
      at.fail("family '" + f + "' is not in formats.json /families");
}

}  // namespace

CompatRules CompatRules::load(const std::filesystem::path& dir) {
  CompatRules out;
  {
    const auto path = dir / "formats.json";
    const auto doc = read_json_file(path);
    const JsonView root(doc, path.string());
    out.families_ = string_list(root, "families");
    for (const auto& [engine, v] : root.at("engines").members()) {
      EngineFormats e{string_list(v, "families"), v.req_string("instead"), v.req_string("source"), {}, {}, {}};
      check_families(v.at("families"), e.families, out.families_);
      if (const auto b = v.get("backends")) {
        // {"builds": [...], "default": {vendor: build}, "source": "..."}: an engine built per platform.
        e.backends = string_list(*b, "builds");
        if (e.backends.empty()) b->fail_at("builds", "name at least one build");
        for (const auto& [vendor, build] : b->at("default").members()) {
          const std::string name = build.as_string();
          if (std::find(e.backends.begin(), e.backends.end(), name) == e.backends.end())
            build.fail("default build '" + name + "' is not in /builds");
          e.default_backend.emplace(vendor, name);
        }
        e.backend_source = b->req_string("source");
      }
      out.formats_.emplace(engine, std::move(e));
    }
  }
  for (const char* group : {"platforms", "quantization", "features"}) {
    const auto path = dir / (std::string(group) + ".json");
    const auto doc = read_json_file(path);
    const JsonView root(doc, path.string());
    for (const auto& r : root.at("rules").items()) {
      Rule rule{r.req_string("id"), group, string_list(r, "engines"), range_at(r.at("versions")),
                read_condition(r.at("when")), verdict_at(r.at("verdict")), r.opt_string("kernel").value_or(""),
                r.req_string("message"), r.req_string("instead"), r.req_string("source")};
      if (rule.engines.empty()) r.fail_at("engines", "name at least one engine");
      for (const auto& e : rule.engines)
        if (!out.formats_.count(e)) r.fail_at("engines", "engine '" + e + "' is not in formats.json /engines");
      check_families(r.at("when"), rule.when.families, out.families_);
      for (const auto& b : rule.when.backends)
        for (const auto& e : rule.engines)
          if (const auto& builds = out.formats_.at(e).backends;
              std::find(builds.begin(), builds.end(), b) == builds.end())
            r.at("when").fail_at("backends", "'" + b + "' is not a build of " + e + " in formats.json");
      for (const auto& other : out.rules_)
        if (other.id == rule.id) r.fail_at("id", "duplicate rule id '" + rule.id + "'");
      out.rules_.push_back(std::move(rule));
    }
  }
  {
    const auto path = dir / "architectures.json";
    const auto doc = read_json_file(path);
    const JsonView root(doc, path.string());
    for (const auto& [engine, v] : root.at("engines").members()) {
      EngineRegistry reg;
      reg.instead = v.req_string("instead");
      reg.source = v.req_string("source");
      for (const auto& [arch, range] : v.at("architectures").members()) reg.architectures.emplace(arch, range_at(range));
      out.registries_.emplace(engine, std::move(reg));
    }
  }
  for (const auto& [engine, f] : out.formats_)
    if (!out.registries_.count(engine))
      throw_input((dir / "architectures.json").string(), "/engines",
                  "engine '" + engine + "' of formats.json has no model registry here");
  return out;
}

}  // namespace vramplan::compat
