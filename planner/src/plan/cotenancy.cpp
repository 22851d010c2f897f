#include "vramplan/plan/cotenancy.hpp"

#include <algorithm>
#include <set>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>

#include "vramplan/core/error.hpp"
#include "vramplan/diffusion/pipeline.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/plan/mig_layout.hpp"
#include "plan/numbers.hpp"

namespace vramplan::plan {
namespace {

// How each engine sizes itself when other processes already hold memory on its GPU.
struct StartRule {
  std::string_view engine;
  bool sizes_from_total;  // true: from the device total (others do not shrink it); false: from free memory
  bool allocates_what_it_needs;  // true: no budget; false: a KV pool fills a budget
  std::string_view sizing;
};
constexpr std::array<StartRule, 6> kStartRules = {{
    {"vllm", true, false,
     "device total x gpu_memory_utilization; refuses to start when free < ceil(total x utilization) "
     "(vllm/v1/worker/utils.py request_memory)"},
    {"sglang", false, false,
     "memory free at start x mem_fraction_static (sglang model_runner_kv_cache_mixin.py profile_max_num_token: "
     "total_gpu_memory is the pre-load free memory)"},
    {"trtllm", false, false, "memory free after loading x free_gpu_memory_fraction (TensorRT-LLM KvCacheConfig)"},
    {"hf", false, true, "allocates what it needs from the memory free at start"},
    {"llamacpp", false, true, "allocates its buffers from the memory free at start"},
    {"tei", false, true,
     "allocates what it needs from the memory free at start: its warm-up batch of --max-batch-tokens "
     "(text-embeddings-inference has no KV pool to fill)"},
}};

const StartRule& start_rule(std::string_view engine) {
  for (const auto& r : kStartRules)
    if (r.engine == engine) return r;
  throw_internal("co-tenancy: no start-up rule for engine '" + std::string(engine) + "'");
}

// Python's repr of a float (vLLM formats with f-strings): shortest round-trip digits, ".0" on
// whole numbers.
std::string py_float(double v) {
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  std::string s(buf.data(), end);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// vllm/utils/mem_utils.py format_gib: round(b / GiB_bytes, 2).
std::string vllm_gib(std::uint64_t bytes) {
  return py_float(std::round(static_cast<double>(bytes) / static_cast<double>(1ull << 30) * 100.0) / 100.0);
}

std::optional<std::uint64_t> to_u64(const std::string& key, const std::string& value, std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v == 0)
    throw_usage("--tenant '" + std::string(text) + "': " + key + " expects a positive integer, got '" + value + "'");
  return v;
}

// The tenant's engine flags under their canonical names, checked against the engine.
memory::EngineArgs canonical_flags(const TenantSpec& t, const memory::Engine& engine, const std::string& who) {
  memory::EngineArgs out;
  const auto options = engine.options();
  for (const auto& [key, value] : t.flags) {
    const memory::EngineOption* option = nullptr;
    for (const auto& o : options) {
      if (o.name == key) option = &o;
      for (const auto& a : o.aliases)
        if (a == key) option = &o;
    }
    if (!option) throw_usage(who + ": " + std::string(engine.name()) + " has no option --" + key);
    if (option->is_switch) {
      if (value != "" && value != "true" && value != "false")
        throw_usage(who + ": --" + key + " is a switch (true or false), got '" + value + "'");
      if (value != "false") out[option->name] = "true";
    } else {
      if (value.empty()) throw_usage(who + ": --" + key + " needs a value (" + key + "=VALUE)");
      out[option->name] = value;
    }
  }
  return out;
}

struct Tenant {
  const TenantSpec* spec = nullptr;
  std::string who;  // "tenant 2 (qwen2.5-7b, vllm)"
  std::unique_ptr<PlanSession> session;
  memory::EngineArgs args;
};

// One tenant started on a device with `free` bytes free: how its engine sizes itself, whether it
// starts, and its own fit there.
struct TenantStart {
  bool started = false;
  Bytes sized_from;
  Evaluation eval;
  std::string refusal;  // why it did not start
};

TenantStart start_tenant(const Tenant& t, const GpuSpec& device, Bytes free, const FitPolicy& own,
                         const ErrorBounds& bounds, const Bytes& held_before) {
  TenantStart st;
  const StartRule& rule = start_rule(t.session->engine().name());
  if (!rule.sizes_from_total && free.count() == 0) {
    st.refusal = "no memory is free when it starts (the tenants before it hold " + format_gib(held_before) + ")";
    return st;
  }
  const GpuSpec sized = rule.sizes_from_total ? device : with_reported_total(device, free);
  st.sized_from = sized.reported_total;
  const Scenario s{sized, t.args, t.spec->weights, 1, t.spec->batch, t.spec->context};
  try {
    st.eval = evaluate(*t.session, s, own, bounds.for_engine(std::string(t.session->engine().name())));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    throw_usage(t.who + ": " + e.what());
  }
  if (rule.engine == "vllm") {
    const auto it = st.eval.plan.engine_view.find("gpu_memory_utilization");
    if (it == st.eval.plan.engine_view.end() || !it->is_number())
      throw_internal("vLLM plan without gpu_memory_utilization in its engine view");
    st.refusal = vllm_startup_refusal(free, device.reported_total, it->get<double>());
  }
  st.started = st.refusal.empty();
  return st;
}

// What a tenant holds on the upper bounds. A paged engine keeps its budget (its pool shrinks by
// the excess; what it captures after sizing the pool adds: FitFigures::held of the upper side).
// An engine that allocates what it needs (HF, llama.cpp) holds the whole non-KV excess on top.
Bytes upper_held(const FitResult& fit, const StartRule& rule) {
  if (!rule.allocates_what_it_needs) return fit.upper.held;
  const Bytes excess = fit.upper.non_kv() > fit.expected.non_kv() ? fit.upper.non_kv() - fit.expected.non_kv() : Bytes();
  return std::max(fit.upper.held, fit.expected.held + excess);
}

Bytes free_after(Bytes total, Bytes held) { return Bytes(total.count() > held.count() ? total.count() - held.count() : 0); }

// Plans the tenants of one device in start order; fills their outcomes and the device's.
// First on the expected values (DOES NOT FIT when something breaks), then the same start order
// replayed on the upper bounds (MARGINAL when something breaks there).
void run_device(std::vector<Tenant>& tenants, const std::vector<std::size_t>& order, DeviceOutcome& dev,
                std::vector<TenantOutcome>& outs, const FitPolicy& policy, const ErrorBounds& bounds) {
  const Bytes total = dev.gpu.reported_total;
  Bytes held_before;
  // Each tenant is judged on its own without a headroom requirement: headroom is the device's.
  FitPolicy own = policy;
  own.headroom = 0;
  for (const std::size_t i : order) {
    const Tenant& t = tenants[i];
    TenantOutcome& o = outs[i];
    o.free_at_start = free_after(total, held_before);
    o.sizing = start_rule(t.session->engine().name()).sizing;
    TenantStart st = start_tenant(t, dev.gpu, o.free_at_start, own, bounds, held_before);
    o.started = st.started;
    o.sized_from = st.sized_from;
    o.eval = std::move(st.eval);
    o.reason = st.refusal;
    if (!o.started) continue;
    o.held = o.eval.plan.total_bytes();
    held_before = held_before + o.held;
    o.verdict = o.eval.fit.verdict == Verdict::DoesNotFit ? Verdict::DoesNotFit : Verdict::Fits;
    o.reason = o.verdict == Verdict::DoesNotFit ? o.eval.fit.reason : "";
  }
  dev.held = held_before;
  dev.headroom_bytes = static_cast<std::int64_t>(total.count()) - static_cast<std::int64_t>(dev.held.count());
  dev.headroom_fraction = static_cast<double>(dev.headroom_bytes) / static_cast<double>(total.count());
  for (const std::size_t i : order)
    if (outs[i].verdict == Verdict::DoesNotFit) {
      dev.reason = tenants[i].who + ": " + outs[i].reason;
      break;
    }
  if (dev.reason.empty() && dev.held > total)
    dev.reason = "the tenants hold " + format_gib(dev.held) + " of " + format_gib(total) + " (over-subscribed)";
  if (dev.reason.empty() && dev.headroom_fraction < policy.headroom)
    dev.reason = "headroom " + percent(dev.headroom_fraction, 1) + " is below the required " + percent(policy.headroom, 1) +
                 " (" + format_gib(dev.held) + " held of " + format_gib(total) + ")";
  dev.verdict = dev.reason.empty() ? Verdict::Fits : Verdict::DoesNotFit;

  // The upper-bound replay: each tenant holds its upper figure; a tenant that sizes from free
  // memory is planned again on what the upper figures of the earlier ones leave.
  Bytes upper_before;
  for (const std::size_t i : order) {
    const Tenant& t = tenants[i];
    TenantOutcome& o = outs[i];
    o.upper_free_at_start = free_after(total, upper_before);
    if (!o.started) continue;
    // The same free memory starts it the same way: no second plan.
    const TenantStart up = o.upper_free_at_start == o.free_at_start
                               ? TenantStart{true, o.sized_from, o.eval, ""}
                               : start_tenant(t, dev.gpu, o.upper_free_at_start, own, bounds, upper_before);
    if (o.verdict == Verdict::DoesNotFit) continue;
    std::string why;
    if (!up.started)
      why = "on the upper bounds of the tenants before it (" + format_gib(upper_before) + " held): " + up.refusal;
    else if (up.eval.fit.verdict != Verdict::Fits)
      why = up.eval.fit.reason;
    if (up.started) {
      o.upper_held = upper_held(up.eval.fit, start_rule(t.session->engine().name()));
      upper_before = upper_before + o.upper_held;
    }
    if (!why.empty()) {
      o.verdict = Verdict::Marginal;
      o.reason = why;
    }
  }
  dev.upper_held = upper_before;
  dev.upper_headroom_bytes = static_cast<std::int64_t>(total.count()) - static_cast<std::int64_t>(dev.upper_held.count());
  if (dev.verdict == Verdict::Fits) {
    for (const std::size_t i : order)
      if (outs[i].verdict == Verdict::Marginal) {
        dev.reason = tenants[i].who + ": " + outs[i].reason;
        break;
      }
    const double upper_fraction = static_cast<double>(dev.upper_headroom_bytes) / static_cast<double>(total.count());
    if (dev.reason.empty() && dev.upper_held > total)
      dev.reason = "on the upper bounds the tenants hold " + format_gib(dev.upper_held) + " of " + format_gib(total) +
                   " (" + format_binary(dev.upper_held - total) + " short)";
    else if (dev.reason.empty() && upper_fraction < policy.headroom)
      dev.reason = "on the upper bounds headroom " + percent(upper_fraction, 1) + " is below the required " +
                   percent(policy.headroom, 1) + " (" + format_gib(dev.upper_held) + " held of " + format_gib(total) + ")";
    if (!dev.reason.empty()) dev.verdict = Verdict::Marginal;
  }
  const auto decides_fit = [&](Verdict v) {
    return v == Verdict::Fits || (v == Verdict::Marginal && !policy.conservative);
  };
  dev.fits = decides_fit(dev.verdict);
  for (const std::size_t i : order) outs[i].fits = decides_fit(outs[i].verdict);
}

std::string verdict_line(const CotenancyOutcome& o) {
  std::string where = o.card.id;
  if (!o.mig_layout.empty()) {
    where += " MIG ";
    for (std::size_t i = 0; i < o.mig_layout.size(); ++i) where += (i ? "," : "") + o.mig_layout[i];
  }
  where += ", " + std::to_string(o.tenants.size()) + " tenants";
  const auto slice = [&](std::size_t d) {
    return "slice " + std::to_string(d + 1) + " (" + o.devices[d].gpu.mig->profile + ")";
  };
  for (const Verdict v : {Verdict::DoesNotFit, Verdict::Marginal})
    for (std::size_t d = 0; d < o.devices.size(); ++d)
      if (o.devices[d].verdict == v) {
        const DeviceOutcome& dev = o.devices[d];
        std::string line = std::string(verdict_name(v)) + " " + where + ": " + (o.mig_layout.empty() ? "" : slice(d) + ": ");
        if (v == Verdict::Marginal)
          line += "fits on the expected values (" + gib1(dev.held) + "/" + gib1(dev.gpu.reported_total) +
                  " GiB held), not on the upper bounds: ";
        return line + dev.reason;
      }
  if (o.mig_layout.empty()) {
    const DeviceOutcome& dev = o.devices.front();
    return "FITS " + where + ": " + gib1(dev.held) + "/" + gib1(dev.gpu.reported_total) + " GiB held, headroom " +
           percent(dev.headroom_fraction, 1);
  }
  std::size_t least = 0;
  for (std::size_t d = 1; d < o.devices.size(); ++d)
    if (o.devices[d].headroom_fraction < o.devices[least].headroom_fraction) least = d;
  return "FITS " + where + ": every slice fits, least headroom " + percent(o.devices[least].headroom_fraction, 1) +
         " on " + slice(least);
}

}  // namespace

std::string vllm_startup_refusal(Bytes free, Bytes total, double utilization) {
  const auto requested = static_cast<std::uint64_t>(std::ceil(static_cast<double>(total.count()) * utilization));
  if (free.count() >= requested) return "";
  return "Free memory on device cuda:0 (" + vllm_gib(free.count()) + "/" + vllm_gib(total.count()) +
         " GiB) on startup is less than desired GPU memory utilization (" + py_float(utilization) + ", " +
         vllm_gib(requested) + " GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";
}

TenantSpec parse_tenant(std::string_view text) {
  TenantSpec t;
  bool has_model = false;
  std::size_t start = 0;
  std::set<std::string> seen;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty())
      throw_usage("--tenant '" + std::string(text) + "': expected key=value pairs separated by commas");
    const std::size_t eq = item.find('=');
    const std::string key(item.substr(0, eq));
    // Two values for one key: which one the user meant is unknown (the last silently won).
    if (!seen.insert(key).second) throw_usage("--tenant '" + std::string(text) + "': " + key + " is given twice");
    const std::string value(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
    if (key == "model") {
      t.model = value;
      has_model = !value.empty();
    } else if (key == "engine") {
      t.engine = value;
    } else if (key == "weights") {
      t.weights = value;
    } else if (key == "batch") {
      t.batch = to_u64(key, value, text);
    } else if (key == "context") {
      t.context = to_u64(key, value, text);
    } else {
      t.flags[key] = value;
    }
  }
  if (!has_model) throw_usage("--tenant '" + std::string(text) + "': model=M is required");
  if (t.engine.empty()) throw_usage("--tenant '" + std::string(text) + "': engine= needs a value");
  return t;
}

std::vector<TenantSpec> load_tenants_file(const std::filesystem::path& file) {
  const auto json = read_json_file(file);
  const JsonView root(json, file.string());
  if (root.req_string("schema") != "vramplan.tenants/1")
    root.fail_at("schema", "expected \"vramplan.tenants/1\"");
  std::vector<TenantSpec> out;
  for (const JsonView& t : root.at("tenants").items()) {
    TenantSpec s;
    s.model = t.req_string("model");
    s.engine = t.opt_string("engine").value_or("vllm");
    s.weights = t.opt_string("weights");
    s.batch = t.opt_u64("batch");
    s.context = t.opt_u64("context");
    if (s.batch == 0u || s.context == 0u) t.fail("batch and context must be >= 1");
    if (const auto flags = t.get("flags"))
      for (const auto& [name, value] : flags->members())
        s.flags[name] = value.raw().is_boolean() ? (value.as_bool() ? "true" : "false")
                        : value.raw().is_number() ? value.raw().dump()
                                                  : value.as_string();
    out.push_back(std::move(s));
  }
  return out;
}

CotenancyOutcome run_cotenancy(const CotenancyRequest& req, const DataRoot& root) {
  if (req.gpu.empty()) throw_usage("--gpu is required");
  if (req.gpu == "cpu") throw_usage("--tenant: co-tenancy plans instances sharing a GPU; --gpu cpu is not one");
  if (req.tenants.size() < 2) throw_usage("co-tenancy needs at least two --tenant instances");
  // Each tenant is a whole plan (a model loaded, an engine sized): 64 processes on one node's GPUs
  // is far past any deployment, and the work grows with the count.
  if (req.tenants.size() > 64)
    throw_usage("co-tenancy plans at most 64 tenants, got " + std::to_string(req.tenants.size()));
  if (!(req.policy.headroom >= 0 && req.policy.headroom < 1)) throw_usage("--headroom must be in [0%, 100%)");
  if (!req.mig_layout.empty() && req.mig_layout.size() != req.tenants.size())
    throw_usage("--mig-layout has " + std::to_string(req.mig_layout.size()) + " slices for " +
                std::to_string(req.tenants.size()) + " tenants: give one tenant per slice");
  std::vector<Tenant> tenants(req.tenants.size());
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    Tenant& t = tenants[i];
    t.spec = &req.tenants[i];
    // A diffusers pipeline is no serving engine's model: it has its own plan and check.
    if (diffusion::is_pipeline(t.spec->model, root))
      throw_usage("tenant " + std::to_string(i + 1) + ": " + t.spec->model +
                  " is a diffusion pipeline; co-tenancy plans serving instances (LLMs and embedders): check it alone "
                  "with vramplan check --model " + t.spec->model);
    t.session = std::make_unique<PlanSession>(root, t.spec->model, memory::make_engine(t.spec->engine, root.data()));
    t.who = "tenant " + std::to_string(i + 1) + " (" + t.session->model().id + ", " +
            std::string(t.session->engine().name()) + ")";
    t.args = canonical_flags(*t.spec, t.session->engine(), t.who);
    const Parallel p = t.session->parallel_of(t.args);
    if (p.gpus() != 1)
      throw_usage(t.who + ": co-tenancy plans instances on one GPU each; this one has TP " + std::to_string(p.tp) +
                  ", PP " + std::to_string(p.pp));
  }
  const GpuCatalog& catalog = tenants.front().session->gpus();
  CotenancyOutcome out;
  out.card = tenants.front().session->device(req.gpu, req.gpu_memory);
  out.mig_layout = req.mig_layout;
  out.required_headroom = req.policy.headroom;
  out.conservative = req.policy.conservative;
  const ErrorBounds bounds = ErrorBounds::load(root.data_file("accuracy_bounds.json"));
  out.tenants.resize(tenants.size());
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    out.tenants[i].index = i + 1;
    out.tenants[i].model_id = tenants[i].session->model().id;
    out.tenants[i].engine = tenants[i].session->engine().name();
    out.tenants[i].engine_version = tenants[i].session->engine().version();
  }
  if (req.mig_layout.empty()) {
    DeviceOutcome dev;
    dev.gpu = out.card;
    for (std::size_t i = 0; i < tenants.size(); ++i) dev.tenants.push_back(i);
    out.devices.push_back(std::move(dev));
  } else {
    std::vector<GpuSpec> slices = resolve_mig_layout(catalog, out.card, req.mig_layout);
    for (std::size_t i = 0; i < slices.size(); ++i) {
      DeviceOutcome dev;
      dev.gpu = std::move(slices[i]);
      dev.tenants = {i};
      out.devices.push_back(std::move(dev));
    }
  }
  for (std::size_t d = 0; d < out.devices.size(); ++d) {
    for (const std::size_t i : out.devices[d].tenants) out.tenants[i].device = d;
    run_device(tenants, out.devices[d].tenants, out.devices[d], out.tenants, req.policy, bounds);
  }
  out.verdict = Verdict::Fits;
  for (const auto& d : out.devices)
    if (d.verdict == Verdict::DoesNotFit || (d.verdict == Verdict::Marginal && out.verdict == Verdict::Fits)) out.verdict = d.verdict;
  out.fits = out.verdict == Verdict::Fits || (out.verdict == Verdict::Marginal && !req.policy.conservative);
  out.line = verdict_line(out);
  return out;
}

}  // namespace vramplan::plan
