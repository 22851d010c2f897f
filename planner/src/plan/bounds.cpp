#include "vramplan/plan/bounds.hpp"

#include <cmath>

#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::plan {

ErrorBounds ErrorBounds::load(const std::filesystem::path& file) {
  const auto json = read_json_file(file);
  const JsonView root(json, file.string(), "");
  std::vector<ComponentMargin> margins;
  for (const auto& item : root.at("components").items()) {
    ComponentMargin m;
    m.prefix = item.req_string("prefix");
    m.engine = item.opt_string("engine").value_or("");
    m.relative = item.opt_number("relative").value_or(0.0);
    if (!(m.relative >= 0 && m.relative <= 1)) item.fail_at("relative", "expected a fraction in [0, 1]");
    if (const auto text = item.opt_string("absolute")) {
      try {
        m.absolute = parse_bytes(*text, "absolute").count();
      } catch (const Error& e) {
        item.fail_at("absolute", e.what());
      }
    }
    m.source = item.req_string("source");
    for (const auto& other : margins)
      if (other.prefix == m.prefix && other.engine == m.engine)
        item.fail_at("prefix", "duplicate margin for '" + m.prefix + "'" + (m.engine.empty() ? "" : " on " + m.engine));
    margins.push_back(std::move(m));
  }
  return ErrorBounds(std::move(margins));
}

ErrorBounds ErrorBounds::for_engine(const std::string& engine) const {
  std::vector<ComponentMargin> out;
  for (const auto& m : margins_) {
    if (m.engine == engine) {
      out.push_back(m);
    } else if (m.engine.empty()) {
      bool overridden = false;
      for (const auto& o : margins_) overridden = overridden || (o.engine == engine && o.prefix == m.prefix);
      if (!overridden) out.push_back(m);
    }
  }
  return ErrorBounds(std::move(out));
}

const ComponentMargin* ErrorBounds::margin_for(const std::string& component) const {
  const ComponentMargin* best = nullptr;
  for (const auto& m : margins_) {
    if (component.rfind(m.prefix, 0) != 0) continue;
    if (best == nullptr || m.prefix.size() > best->prefix.size() ||
        (m.prefix.size() == best->prefix.size() && best->engine.empty() && !m.engine.empty()))
      best = &m;
  }
  return best;
}

std::vector<MarginUse> ErrorBounds::uses(const std::vector<memory::Component>& parts) const {
  std::vector<MarginUse> out;
  for (const auto& c : parts) {
    const ComponentMargin* m = margin_for(c.name);
    if (m == nullptr || c.bytes.count() == 0) continue;  // nothing allocated (graphs under --enforce-eager)
    MarginUse* use = nullptr;
    for (auto& u : out)
      if (u.margin == m && u.outside_kv_budget == c.outside_kv_budget) use = &u;
    if (use == nullptr) use = &out.emplace_back(MarginUse{m, c.outside_kv_budget, Bytes(), Bytes()});
    use->expected = use->expected + c.bytes;
  }
  for (auto& u : out) {
    const double rel = std::ceil(static_cast<double>(u.expected.count()) * u.margin->relative);
    u.extra = Bytes(static_cast<std::uint64_t>(rel)) + Bytes(u.margin->absolute);
  }
  return out;
}

Bytes ErrorBounds::upper_sum(const std::vector<memory::Component>& parts) const {
  Bytes sum = sum_bytes(parts);
  for (const auto& u : uses(parts)) sum = sum + u.extra;
  return sum;
}

}  // namespace vramplan::plan
