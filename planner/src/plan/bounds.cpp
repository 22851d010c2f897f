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
    m.relative = item.opt_number("relative").value_or(0.0);
    if (m.relative < 0 || m.relative > 1) item.fail_at("relative", "expected a fraction in [0, 1]");
    if (const auto text = item.opt_string("absolute")) {
      try {
        m.absolute = parse_bytes(*text, "absolute").count();
      } catch (const Error& e) {
        item.fail_at("absolute", e.what());
      }
    }
    m.source = item.req_string("source");
    margins.push_back(std::move(m));
  }
  return ErrorBounds(std::move(margins));
}

const ComponentMargin* ErrorBounds::margin_for(const std::string& component) const {
  const ComponentMargin* best = nullptr;
  for (const auto& m : margins_)
    if (component.rfind(m.prefix, 0) == 0 && (best == nullptr || m.prefix.size() > best->prefix.size())) best = &m;
  return best;
}

Bytes ErrorBounds::upper(const memory::Component& c) const {
  const ComponentMargin* m = margin_for(c.name);
  if (m == nullptr) return c.bytes;
  const double extra = std::ceil(static_cast<double>(c.bytes.count()) * m->relative);
  return c.bytes + Bytes(static_cast<std::uint64_t>(extra)) + Bytes(m->absolute);
}

Bytes ErrorBounds::upper_sum(const std::vector<memory::Component>& parts) const {
  Bytes sum;
  for (const auto& c : parts) sum = sum + upper(c);
  return sum;
}

}  // namespace vramplan::plan
