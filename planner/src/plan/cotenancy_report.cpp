// Renderings of a co-tenancy check: the verdict line plus a per-tenant and per-device table, and
// vramplan.check-tenants/1 JSON.
#include <cstdio>

#include "vramplan/core/text.hpp"
#include "vramplan/plan/cotenancy.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::plan {
namespace {

std::string gib2(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", b.gib());
  return buf;
}

// A result cell: "fits", "MARGINAL: <what breaks on the upper bounds>", or what breaks.
std::string cotenant_result(Verdict v, const std::string& reason) {
  if (v == Verdict::Fits) return "fits";
  return v == Verdict::Marginal ? "MARGINAL: " + reason : reason;
}

std::string device_name(const CotenancyOutcome& o, std::size_t d) {
  return o.mig_layout.empty() ? o.devices[d].gpu.id
                              : "slice " + std::to_string(d + 1) + " " + o.devices[d].gpu.mig->profile;
}

}  // namespace

nlohmann::json cotenancy_json(const CotenancyOutcome& o) {
  nlohmann::json tenants = nlohmann::json::array(), devices = nlohmann::json::array();
  for (const auto& t : o.tenants) {
    const auto& f = t.eval.fit.expected;
    nlohmann::json j = {{"index", t.index},
                        {"model", t.model_id},
                        {"engine", t.engine},
                        {"engine_version", t.engine_version},
                        {"device", t.device},
                        {"free_at_start_bytes", t.free_at_start.count()},
                        {"sized_from_bytes", t.started ? nlohmann::json(t.sized_from.count()) : nlohmann::json(nullptr)},
                        {"sizing", t.sizing},
                        {"started", t.started},
                        {"held_bytes", t.held.count()},
                        {"upper_free_at_start_bytes", t.upper_free_at_start.count()},
                        {"upper_held_bytes", t.upper_held.count()},
                        {"verdict", std::string(verdict_name(t.verdict))},
                        {"fits", t.fits},
                        {"reason", t.verdict == Verdict::Fits ? nlohmann::json(nullptr) : nlohmann::json(t.reason)}};
    if (t.started)
      j["own"] = {{"batch", t.eval.fit.batch},          {"context", t.eval.fit.context},
                  {"limit", std::string(limit_name(t.eval.fit.limit))},
                  {"kv_needed_bytes", f.kv_needed.count()}, {"kv_pool_bytes", f.kv_pool.count()},
                  {"needed_bytes", f.needed.count()}, {"verdict", std::string(verdict_name(t.eval.fit.verdict))}};
    tenants.push_back(std::move(j));
  }
  for (const auto& d : o.devices)
    devices.push_back({{"gpu", d.gpu.id},
                       {"reported_total_bytes", d.gpu.reported_total.count()},
                       {"tenants", d.tenants},
                       {"held_bytes", d.held.count()},
                       {"headroom_bytes", d.headroom_bytes},
                       {"headroom_fraction", d.headroom_fraction},
                       {"upper_held_bytes", d.upper_held.count()},
                       {"verdict", std::string(verdict_name(d.verdict))},
                       {"fits", d.fits},
                       {"reason", d.verdict == Verdict::Fits ? nlohmann::json(nullptr) : nlohmann::json(d.reason)}});
  return {{"schema", "vramplan.check-tenants/1"},
          {"verdict", std::string(verdict_name(o.verdict))},
          {"fits", o.fits},
          {"line", o.line},
          {"gpu", o.card.id},
          {"mig_layout", o.mig_layout},
          {"required_headroom", o.required_headroom},
          {"conservative", o.conservative},
          {"tenants", tenants},
          {"devices", devices}};
}

std::string cotenancy_text(const CotenancyOutcome& o, bool markdown) {
  Table t({{"#", Align::Right}, {"model", Align::Left}, {"engine", Align::Left}, {"device", Align::Left},
           {"free at start GiB", Align::Right}, {"sized from GiB", Align::Right}, {"held GiB", Align::Right},
           {"KV needed/pool GiB", Align::Right}, {"result", Align::Wrap}});
  for (const auto& x : o.tenants) {
    const auto& f = x.eval.fit.expected;
    t.add_row({std::to_string(x.index), x.model_id, x.engine, device_name(o, x.device), gib2(x.free_at_start),
               x.started ? gib2(x.sized_from) : "-", x.started ? gib2(x.held) : "-",
               x.started ? gib2(f.kv_needed) + "/" + gib2(f.kv_pool) : "-", cotenant_result(x.verdict, x.reason)});
  }
  Table d({{"device", Align::Left}, {"total GiB", Align::Right}, {"held GiB", Align::Right},
           {"headroom", Align::Right}, {"held on upper bounds GiB", Align::Right}, {"result", Align::Wrap}});
  for (std::size_t i = 0; i < o.devices.size(); ++i) {
    const auto& x = o.devices[i];
    d.add_row({device_name(o, i), gib2(x.gpu.reported_total), gib2(x.held), percent(x.headroom_fraction, 1),
               gib2(x.upper_held), cotenant_result(x.verdict, x.reason)});
  }
  std::string s = (markdown ? "**" + o.line + "**\n\n" : o.line + "\n\n");
  s += markdown ? t.render_markdown() : t.render_text();
  s += "\n";
  s += markdown ? d.render_markdown() : d.render_text();
  s += "\n" +
       wrap_paragraph("tenants start in the order given; each engine sizes itself as its row of docs/decisions.md "
                      "(co-tenancy) says; held = its plan (paged engines: the whole KV pool); the upper bounds replay "
                      "the start order with every tenant at its upper-bound figures (data/accuracy_bounds.json)",
                      text_width()) +
       "\n";
  return s;
}

}  // namespace vramplan::plan
