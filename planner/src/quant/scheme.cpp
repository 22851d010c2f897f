#include "vramplan/quant/scheme.hpp"

#include <algorithm>
#include <cctype>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/io/json_skim.hpp"

namespace vramplan {
namespace {

std::vector<std::string> strings(const JsonView& row, std::string_view key) {
  std::vector<std::string> out;
  if (auto list = row.get(key))
    for (const auto& item : list->items()) out.push_back(item.as_string());
  return out;
}

std::vector<TensorRole> roles(const JsonView& row, std::string_view key) {
  std::vector<TensorRole> out;
  if (auto list = row.get(key))
    for (const auto& item : list->items()) {
      const auto role = tensor_role_from_name(item.as_string());
      if (!role) item.fail("unknown tensor role '" + item.as_string() + "'");
      out.push_back(*role);
    }
  return out;
}

RuleSet parse_rule_set(const std::string& name, const JsonView& v) {
  RuleSet set;
  set.name = name;
  set.source = v.req_string("source");
  set.quantize_only = roles(v, "quantize_only");
  set.only_reason = v.opt_string("only_reason").value_or("");
  for (const auto& r : v.at("keep").items()) {
    KeepRule k;
    k.roles = roles(r, "roles");
    k.bias = r.opt_bool("bias").value_or(false);
    k.max_dims = static_cast<std::uint32_t>(r.opt_u64("max_dims").value_or(0));
    if (k.roles.empty() && !k.bias && k.max_dims == 0) r.fail("a keep rule needs roles, bias or max_dims");
    k.as = r.req_string("as");
    k.reason = r.req_string("reason");
    k.source = r.req_string("source");
    set.keep.push_back(std::move(k));
  }
  return set;
}

template <class T>
const T* by_name(const std::vector<T>& rows, std::string_view name) {
  const std::string key = to_lower(name);
  for (const auto& r : rows)
    if (to_lower(r.name) == key) return &r;
  return nullptr;
}

}  // namespace

// One top-level section of the file, parsed, with a view that knows its place in the file.
struct Section {
  nlohmann::json doc;
  JsonView view;
  Section(const SkimmedFile& file, std::string_view key)
      : doc(file.parse(file.required(key))), view(doc, file.file(), "/" + std::string(key)) {}
  Section(const Section&) = delete;  // `view` points into `doc`
  Section& operator=(const Section&) = delete;
};

SchemeTable SchemeTable::load(const std::filesystem::path& file, const QuantCatalog& formats) {
  SchemeTable t;
  t.file_ = SkimmedFile::read(file, "an object with \"keep_rules\" and \"schemes\"");
  t.rule_texts_ = skim_object(t.file_.required("keep_rules"), t.file_.source());
  t.rule_sets_.resize(t.rule_texts_.size());
  auto check_rules = [&](const JsonView& row, const std::string& rules) {
    for (const auto& [name, text] : t.rule_texts_)
      if (name == rules) return;
    row.fail_at("rules", "unknown rule set '" + rules + "'");
  };
  const Section schemes(t.file_, "schemes");
  for (const auto& row : schemes.view.items()) {
    SchemeDef s;
    s.name = row.req_string("name");
    s.aliases = strings(row, "aliases");
    s.format = row.req_string("format");
    if (!formats.find(s.format)) row.fail_at("format", "unknown format '" + s.format + "'");
    s.rules = row.req_string("rules");
    check_rules(row, s.rules);
    s.activation = row.req_string("activation");
    s.engine_method = row.opt_string("engine_method").value_or("");
    s.source = row.req_string("source");
    t.schemes_.push_back(std::move(s));
  }
  const Section scheme_templates(t.file_, "scheme_templates");
  for (const auto& row : scheme_templates.view.items()) {
    SchemeTemplate s;
    s.prefix = to_lower(row.req_string("prefix"));
    s.rules = row.req_string("rules");
    check_rules(row, s.rules);
    s.activation = row.req_string("activation");
    s.engine_method = row.opt_string("engine_method").value_or("");
    s.source = row.req_string("source");
    const bool known = std::any_of(formats.templates().begin(), formats.templates().end(),
                                   [&](const QuantTemplate& q) { return q.prefix == s.prefix; });
    if (!known) row.fail_at("prefix", "no format template with prefix '" + s.prefix + "'");
    t.templates_.push_back(std::move(s));
  }
  const Section vllm_methods(t.file_, "vllm_methods");
  for (const auto& row : vllm_methods.view.items()) {
    VllmMethod m;
    m.name = row.req_string("name");
    m.scheme = row.req_string("scheme");
    m.checkpoint_methods = strings(row, "checkpoint_methods");
    m.runtime_prefix = row.opt_string("runtime_prefix").value_or("");
    m.source = row.req_string("source");
    t.vllm_methods_.push_back(std::move(m));
  }
  const Section gguf_file_types(t.file_, "gguf_file_types");
  for (const auto& row : gguf_file_types.view.items()) {
    GgufFileType g;
    g.name = row.req_string("name");
    g.ftype = static_cast<std::uint32_t>(row.req_u64("ftype"));
    g.base = row.req_string("base");
    const QuantFormat* base = formats.find(g.base);
    if (!base || (!base->gguf_type_id)) row.fail_at("base", "'" + g.base + "' is not a GGUF type row");
    t.gguf_file_types_.push_back(std::move(g));
  }
  // vLLM defaults must parse (checked after everything else is loaded).
  for (std::size_t i = 0; i < t.vllm_methods_.size(); ++i) {
    const auto& m = t.vllm_methods_[i];
    if (m.scheme.empty()) continue;
    const bool ok = by_name(t.schemes_, m.scheme) != nullptr || formats.find(m.scheme) != nullptr;
    if (!ok) vllm_methods.view.at(i).fail_at("scheme", "unknown scheme '" + m.scheme + "'");
  }
  return t;
}

const RuleSet& SchemeTable::rules(std::string_view name) const {
  for (std::size_t k = 0; k < rule_texts_.size(); ++k) {
    const auto& [set_name, text] = rule_texts_[k];
    if (set_name != name) continue;
    if (!rule_sets_[k]) {
      const auto doc = file_.parse(text);
      rule_sets_[k] = parse_rule_set(set_name, JsonView(doc, file_.file(), "/keep_rules/" + set_name));
    }
    return *rule_sets_[k];
  }
  throw_internal("unknown precision rule set '" + std::string(name) + "'");
}

std::vector<std::string> SchemeTable::rule_set_names() const {
  std::vector<std::string> names;
  for (const auto& [name, text] : rule_texts_) names.push_back(name);
  return names;
}

const SchemeDef* SchemeTable::find_scheme(std::string_view name) const {
  const std::string key = to_lower(name);
  for (const auto& s : schemes_) {
    if (to_lower(s.name) == key) return &s;
    for (const auto& a : s.aliases)
      if (to_lower(a) == key) return &s;
  }
  return nullptr;
}

const SchemeTemplate* SchemeTable::find_template(std::string_view prefix) const {
  for (const auto& t : templates_)
    if (t.prefix == prefix) return &t;
  return nullptr;
}

const VllmMethod* SchemeTable::find_vllm_method(std::string_view name) const { return by_name(vllm_methods_, name); }

const GgufFileType* SchemeTable::find_gguf_file_type(std::string_view name) const {
  return by_name(gguf_file_types_, name);
}

const GgufFileType* SchemeTable::find_gguf_file_type(std::uint32_t ftype) const {
  for (const auto& g : gguf_file_types_)
    if (g.ftype == ftype) return &g;
  return nullptr;
}

WeightScheme parse_weight_scheme(std::string_view text, const QuantCatalog& catalog) {
  const SchemeTable& table = catalog.schemes();
  WeightScheme w;
  w.input = std::string(text);
  const std::string key = to_lower(text);
  if (key.starts_with("gguf:")) {
    const GgufFileType* ft = table.find_gguf_file_type(std::string_view(text).substr(5));
    if (!ft) {
      std::string known;
      for (const auto& g : table.gguf_file_types()) known += (known.empty() ? "" : " ") + g.name;
      throw_unknown("unknown GGUF file type '" + std::string(text.substr(5)) + "' (known: " + known + ")");
    }
    w.kind = SchemeKind::GgufFileType;
    w.name = "gguf:" + ft->name;
    w.gguf_file_type = ft->name;
    w.activation = "fp32";
    w.engine_method = "gguf";
    w.source = "llama.cpp src/llama-quant.cpp (llama_tensor_get_type)";
    return w;
  }
  const std::string vllm_key = key.starts_with("vllm:") ? key.substr(5) : key;
  if (const SchemeDef* s = table.find_scheme(key)) {
    w.kind = SchemeKind::Format;
    w.name = s->name;
    w.format = catalog.get(s->format).name;
    w.rules = s->rules;
    w.activation = s->activation;
    w.engine_method = s->engine_method;
    w.source = s->source;
    return w;
  }
  if (const QuantFormat* f = catalog.find(key); f && f->layout == QuantLayout::GroupInt) {
    // Template-generated names: the scheme template with the same prefix carries the rules.
    const SchemeTemplate* best = nullptr;
    for (const auto& t : catalog.templates())
      if (key.starts_with(t.prefix + "-"))
        if (const auto* st = table.find_template(t.prefix); st && (!best || st->prefix.size() > best->prefix.size()))
          best = st;
    if (best) {
      w.kind = SchemeKind::Format;
      w.name = f->name;
      w.format = f->name;
      w.rules = best->rules;
      w.activation = best->activation;
      w.engine_method = best->engine_method;
      w.source = best->source;
      return w;
    }
  }
  if (const VllmMethod* m = table.find_vllm_method(vllm_key)) {
    w.kind = SchemeKind::VllmMethod;
    w.name = "vllm:" + m->name;
    w.vllm_method = m->name;
    w.engine_method = m->name;
    w.source = m->source;
    return w;
  }
  std::string known;
  // "vllm:<method>" is an engine's --quantization flag (memory/weights.cpp): name that flag.
  if (key.starts_with("vllm:")) {
    for (const auto& m : table.vllm_methods()) known += (known.empty() ? "" : " ") + m.name;
    throw_unknown("unknown --quantization method '" + vllm_key + "' (known: " + known + ")");
  }
  for (const auto& s : table.schemes()) known += (known.empty() ? "" : " ") + s.name;
  for (const auto& t : catalog.templates()) known += " " + t.prefix + "-<bits>bit-g<group|-1>[-actorder]";
  known += " gguf:<FILE_TYPE>";
  for (const auto& m : table.vllm_methods()) known += " " + m.name;
  throw_unknown("unknown --weights scheme '" + std::string(text) + "' (known: " + known + ")");
}

}  // namespace vramplan
