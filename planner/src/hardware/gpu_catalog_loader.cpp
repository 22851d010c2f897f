// GpuCatalog::load — reads data/gpus.json and validates every entry. Each fault names the file,
// the JSON pointer and the entry id: "data/gpus.json: /gpus/3/memory/marketed_gb: must be
// positive, got -80 (gpu 'h100-sxm-80')".
#include <algorithm>
#include <charconv>

#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/io/json_skim.hpp"

namespace vramplan {
namespace {

bool is_id_text(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '+';
  });
}

std::string read_id(const JsonView& v, std::string_view key) {
  std::string id = v.req_string(key);
  if (!is_id_text(id))
    v.fail_at(key, "'" + id + "' is not a valid id (lower-case letters, digits, '-', '.', '+')");
  return id;
}

// A size string with an explicit unit ("81559MiB", "79.19GiB", "42298834944B").
Bytes read_size(const JsonView& v, std::string_view key) {
  const JsonView field = v.at(key);
  const std::string text = field.as_string();
  if (!text.empty() && text.front() == '-') field.fail("must be a positive size, got '" + text + "'");
  Bytes size;
  try {
    size = parse_bytes(text, key);
  } catch (const Error& e) {
    field.fail(e.what());
  }
  if (size.count() == 0) field.fail("must be a positive size, got '" + text + "'");
  return size;
}

std::optional<Bytes> opt_size(const JsonView& v, std::string_view key) {
  if (!v.has(key)) return std::nullopt;
  return read_size(v, key);
}

std::optional<double> opt_positive(const JsonView& v, std::string_view key) {
  if (!v.has(key)) return std::nullopt;
  return v.req_positive(key);
}

std::optional<int> opt_count(const JsonView& v, std::string_view key, std::uint64_t max) {
  const auto n = v.opt_u64(key);
  if (!n) return std::nullopt;
  if (*n == 0 || *n > max)
    v.fail_at(key, "must be between 1 and " + std::to_string(max) + ", got " + std::to_string(*n));
  return static_cast<int>(*n);
}

std::string opt_text(const JsonView& v, std::string_view key) { return v.opt_string(key).value_or(""); }

// Rejects members the loader does not know, so a typo ("memory_bandwith_gbps") is an error
// instead of a silently missing figure.
void reject_unknown_keys(const JsonView& v, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : v.members())
    if (std::find(known.begin(), known.end(), key) == known.end())
      v.fail_at(key, "unknown field (expected one of the fields listed in docs/gpus.md)");
}

Fraction read_fraction(const JsonView& v, std::string_view key) {
  const JsonView field = v.at(key);
  const std::string text = field.as_string();
  const auto slash = text.find('/');
  Fraction f;
  auto parse = [&](std::string_view part, std::uint32_t& out) {
    const auto r = std::from_chars(part.data(), part.data() + part.size(), out);
    return r.ec == std::errc() && r.ptr == part.data() + part.size() && out > 0;
  };
  if (slash == std::string::npos || !parse(std::string_view(text).substr(0, slash), f.num) ||
      !parse(std::string_view(text).substr(slash + 1), f.den) || f.num > f.den)
    field.fail("expected a fraction n/d with 0 < n <= d, got '" + text + "'");
  return f;
}

std::optional<ComputeCapability> read_compute_capability(const JsonView& v) {
  const auto text = v.opt_string("compute_capability");
  if (!text) return std::nullopt;
  ComputeCapability cc;
  const auto dot = text->find('.');
  const char* begin = text->data();
  const char* end = begin + text->size();
  bool ok = dot != std::string::npos;
  if (ok) {
    const auto a = std::from_chars(begin, begin + dot, cc.major);
    const auto b = std::from_chars(begin + dot + 1, end, cc.minor);
    ok = a.ec == std::errc() && a.ptr == begin + dot && b.ec == std::errc() && b.ptr == end &&
         cc.major > 0 && cc.minor >= 0;
  }
  if (!ok) v.fail_at("compute_capability", "expected major.minor such as \"9.0\", got '" + *text + "'");
  return cc;
}

std::vector<std::string> read_strings(const JsonView& v) {
  std::vector<std::string> out;
  for (const auto& item : v.items()) {
    std::string s = item.as_string();
    if (s.empty()) item.fail("must not be empty");
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, std::vector<std::string>> read_sources(const JsonView& entry, bool needs_reported) {
  const JsonView sources = entry.at("sources");
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [group, list] : sources.members()) out[group] = read_strings(list);
  if (out["specs"].empty()) sources.fail_at("specs", "at least one source is required");
  if (needs_reported && out["reported_memory"].empty())
    sources.fail_at("reported_memory", "a reported total is given, so its source is required");
  std::erase_if(out, [](const auto& kv) { return kv.second.empty(); });
  return out;
}

PriceQuote read_quote(const JsonView& p) {
  reject_unknown_keys(p, {"provider", "offering", "usd_per_gpu_hour", "pricing", "as_of", "confidence", "source",
                          "gpus_per_lot"});
  PriceQuote q;
  q.provider = p.req_string("provider");
  q.offering = p.req_string("offering");
  q.usd_per_gpu_hour = p.req_positive("usd_per_gpu_hour");
  // The dearest on-demand GPU-hour in data/prices.json is tens of dollars: a figure beyond $10,000
  // is a typo (cents, a monthly price), and would print costs of twenty digits.
  if (q.usd_per_gpu_hour > 10000) p.fail_at("usd_per_gpu_hour", "at most 10000 USD per GPU-hour");
  q.pricing = p.req_string("pricing");
  q.as_of = p.req_string("as_of");
  q.confidence = opt_text(p, "confidence");
  q.source = p.req_string("source");
  if (const auto lot = opt_count(p, "gpus_per_lot", 1024)) q.gpus_per_lot = static_cast<std::uint64_t>(*lot);
  return q;
}

// A card's rental lots: {"lot_sizes": [2, 8], "note": "...", "source": "..."}.
RentalLots read_lots(const JsonView& v) {
  reject_unknown_keys(v, {"lot_sizes", "note", "source"});
  RentalLots lots;
  for (const auto& item : v.at("lot_sizes").items()) {
    const std::uint64_t size = item.as_u64();
    if (size == 0 || size > 1024) item.fail("lot size must be between 1 and 1024, got " + std::to_string(size));
    lots.sizes.push_back(size);
  }
  if (lots.sizes.empty()) v.fail_at("lot_sizes", "at least one lot size is required");
  lots.note = v.req_string("note");
  lots.source = v.req_string("source");
  if (lots.source.empty()) v.fail_at("source", "a lot size needs its source");
  return lots;
}

DenseTflops read_tflops(const JsonView& entry, std::string_view key) {
  const JsonView t = entry.at(key);
  reject_unknown_keys(t, {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"});
  return DenseTflops{opt_positive(t, "fp32"), opt_positive(t, "tf32"), opt_positive(t, "bf16"),
                     opt_positive(t, "fp16"), opt_positive(t, "fp8"),  opt_positive(t, "int8"),
                     opt_positive(t, "fp4")};
}

// Adds " (gpu 'id')" to an input-file error raised while reading one entry.
template <typename Fn>
auto within_entry(std::string_view what, const std::string& id, Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::InputFile || id.empty()) throw;
    throw Error(ErrorKind::InputFile, std::string(e.what()) + " (" + std::string(what) + " '" + id + "')");
  }
}

GpuSpec read_card(const JsonView& v) {
  const std::string id = read_id(v, "id");
  return within_entry("gpu", id, [&] {
    reject_unknown_keys(v, {"id", "name", "vendor", "architecture", "memory", "memory_bandwidth_gbps",
                            "tflops_dense", "mamf_tflops", "fp8_support", "fp4_support", "compute_capability",
                            "gfx_target", "interconnect", "tdp_w", "mig_max_instances", "node_gpus",
                            "confidence", "notes", "sources", "not_plannable"});
    GpuSpec g;
    g.id = id;
    g.kind = GpuKind::Card;
    g.name = v.req_string("name");
    g.vendor = v.req_string("vendor");
    if (g.vendor != "nvidia" && g.vendor != "amd" && g.vendor != "intel")
      v.fail_at("vendor", "expected nvidia, amd or intel, got '" + g.vendor + "'");
    g.architecture = v.req_string("architecture");

    const JsonView mem = v.at("memory");
    reject_unknown_keys(mem, {"marketed_gb", "type", "ecc_carveout", "nvidia_smi_total",
                              "runtime_total", "runtime_total_note"});
    g.marketed_gb = mem.req_positive("marketed_gb");
    g.physical = Bytes::from_gib(g.marketed_gb);
    g.memory_type = mem.req_string("type");
    g.ecc_carveout = mem.req_bool("ecc_carveout");
    g.nvidia_smi_total = opt_size(mem, "nvidia_smi_total");
    const auto runtime = opt_size(mem, "runtime_total");
    for (const auto& [key, size] : {std::pair{"nvidia_smi_total", g.nvidia_smi_total},
                                    std::pair{"runtime_total", runtime}})
      if (size && *size > g.physical)
        mem.fail_at(key, format_mib(*size, 0) + " is more than the card's physical " +
                             format_mib(g.physical, 0) + " (marketed_gb x 2^30)");
    if (runtime) {
      g.reported_total = *runtime;
      g.reported_basis = MemoryBasis::Measured;
      g.reported_note = opt_text(mem, "runtime_total_note");
    } else {
      g.reported_total = estimate_card_runtime_total(g.physical, g.ecc_carveout, g.nvidia_smi_total);
      g.reported_basis = MemoryBasis::Estimated;
      g.reported_note = std::string(estimation_rule_text());
    }

    if (v.has("memory_bandwidth_gbps")) g.bandwidth_gbps = v.req_positive("memory_bandwidth_gbps");
    g.tflops = read_tflops(v, "tflops_dense");
    if (v.has("mamf_tflops")) {
      g.mamf_tflops = read_tflops(v, "mamf_tflops");
      if (!v.at("sources").has("mamf")) v.at("sources").fail_at("mamf", "mamf_tflops is given, so its source is required");
    }
    g.fp8_support = v.req_bool("fp8_support");
    g.fp4_support = v.req_bool("fp4_support");
    g.compute_capability = read_compute_capability(v);
    g.gfx_target = opt_text(v, "gfx_target");

    const JsonView ic = v.at("interconnect");
    reject_unknown_keys(ic, {"nvlink_gbps", "pcie_gen", "host_link", "peer_links", "peer_link_gbps",
                             "nvlink_domain_gpus", "network_gbit"});
    g.interconnect.nvlink_gbps = opt_positive(ic, "nvlink_gbps");
    g.interconnect.peer_links = opt_count(ic, "peer_links", 71);
    g.interconnect.peer_link_gbps = opt_positive(ic, "peer_link_gbps");
    if (g.interconnect.peer_links.has_value() != g.interconnect.peer_link_gbps.has_value())
      ic.fail("peer_links and peer_link_gbps come together (a mesh of links and each link's bandwidth)");
    if (g.interconnect.peer_links && g.interconnect.nvlink_gbps)
      ic.fail("nvlink_gbps and peer_links are two kinds of GPU fabric: give one");
    if (g.interconnect.peer_links && !v.at("sources").has("interconnect"))
      v.at("sources").fail_at("interconnect", "peer_links is given, so its source is required");
    g.interconnect.pcie_gen = opt_count(ic, "pcie_gen", 7);
    g.interconnect.host_link = opt_text(ic, "host_link");
    // 576: the largest NVLink domain NVIDIA specifies (NVLink Switch System, GB200 / GB300).
    if (const auto domain = opt_count(ic, "nvlink_domain_gpus", 576)) {
      if (!g.interconnect.nvlink_gbps) ic.fail_at("nvlink_domain_gpus", "an NVLink domain needs nvlink_gbps");
      g.interconnect.nvlink_domain_gpus = static_cast<std::uint64_t>(*domain);
    }
    g.interconnect.network_gbit = opt_positive(ic, "network_gbit");
    if ((g.interconnect.network_gbit || g.interconnect.nvlink_domain_gpus) && !v.at("sources").has("network"))
      v.at("sources").fail_at("network", "network_gbit or nvlink_domain_gpus is given, so its source is required");

    g.tdp_w = opt_positive(v, "tdp_w");
    g.mig_max_instances = opt_count(v, "mig_max_instances", 7);
    // 72: a GB200 NVL72 rack, the largest NVLink domain sold as one system.
    if (const auto node = opt_count(v, "node_gpus", 72)) g.node_gpus = static_cast<std::uint64_t>(*node);
    g.confidence = opt_text(v, "confidence");
    g.notes = opt_text(v, "notes");
    if (v.has("not_plannable")) {
      g.not_plannable = v.req_string("not_plannable");
      if (g.not_plannable.empty()) v.fail_at("not_plannable", "must give the reason");
    }
    g.sources = read_sources(v, runtime.has_value() || g.nvidia_smi_total.has_value());
    if (g.node_gpus && !g.sources.count("node_gpus"))
      v.at("sources").fail_at("node_gpus", "node_gpus is given, so its source is required");
    return g;
  });
}

// A MIG slice of `parent` (the card its "parent" field names; the loader checked it exists).
GpuSpec read_mig(const JsonView& v, const GpuSpec& parent) {
  const std::string parent_id = read_id(v, "parent");
  const std::string profile = read_id(v, "profile");
  const std::string id = parent_id + "/" + profile;
  return within_entry("MIG profile", id, [&] {
    reject_unknown_keys(v, {"parent", "profile", "nominal_gb", "memory_fraction", "sm_fraction",
                            "max_instances", "reported_memory", "notes", "sources"});

    GpuSpec g = parent;  // a slice shares the card's architecture, cc, dtype support, vendor
    g.id = id;
    g.kind = GpuKind::Mig;
    g.parent_id = parent_id;
    g.name = parent.name + " MIG " + profile;
    const std::uint64_t max_instances = v.req_u64("max_instances");
    if (max_instances == 0 || max_instances > 7)
      v.fail_at("max_instances", "must be between 1 and 7, got " + std::to_string(max_instances));
    g.mig = MigSlice{profile, read_fraction(v, "memory_fraction"), read_fraction(v, "sm_fraction"),
                     static_cast<int>(max_instances), parent.tflops, parent.bandwidth_gbps};
    g.marketed_gb = v.req_positive("nominal_gb");
    const Fraction mf = g.mig->memory_fraction;
    g.physical = Bytes(checked_mul(parent.physical.count(), mf.num, "MIG memory") / mf.den);
    g.nvidia_smi_total.reset();
    g.mig_max_instances.reset();
    g.prices.clear();
    // Memory bandwidth is split with the memory slices; per-slice TFLOPS and NVLink are not
    // sourced (MIG instances have no peer-to-peer), so they are left unset rather than guessed.
    if (parent.bandwidth_gbps) g.bandwidth_gbps = *parent.bandwidth_gbps * mf.value();
    g.tflops = DenseTflops{};
    g.interconnect.nvlink_gbps.reset();
    g.interconnect.peer_links.reset();
    g.interconnect.peer_link_gbps.reset();
    g.tdp_w.reset();

    if (const auto reported = opt_size(v, "reported_memory")) {
      if (*reported > parent.physical)
        v.fail_at("reported_memory", "slice memory " + format_mib(*reported, 0) +
                                         " is larger than its parent's " + format_mib(parent.physical, 0));
      g.reported_total = *reported;
      g.reported_basis = MemoryBasis::Measured;
      g.reported_note = opt_text(v, "notes");
    } else {
      const Bytes parent_base = estimation_base(parent.physical, parent.ecc_carveout);
      g.reported_total = estimate_runtime_total(
          Bytes(checked_mul(parent_base.count(), mf.num, "MIG memory") / mf.den));
      g.reported_basis = MemoryBasis::Estimated;
      g.reported_note = std::string(estimation_rule_text());
    }
    // A slice is planned on no more than its whole card: a slice's size is nvidia-smi mig -lgip's
    // (the CUDA total of the instance), the card's the CUDA runtime's total without MIG, and the
    // full-memory 7g instance can list a little more (H100 SXM 7g.80gb 79.25 GiB, the card 79.19
    // GiB): capped, so the slice never ranks above its card (docs/gpus.md, MIG slices).
    if (g.reported_total > parent.reported_total) {
      g.reported_note = (g.reported_note.empty() ? std::string() : g.reported_note + "; ") + "capped at the card's " +
                        format_mib(parent.reported_total, 0) + " total (" + format_mib(g.reported_total, 0) +
                        " listed for the slice)";
      g.reported_total = parent.reported_total;
    }
    g.notes = opt_text(v, "notes");
    g.confidence.clear();
    g.sources = read_sources(v, v.has("reported_memory"));
    return g;
  });
}

}  // namespace

// An entry's faults found while skimming (bad id, duplicate, unknown parent) are reported like
// the faults found when it is parsed: the entry is parsed to give a JsonView at its pointer.
struct GpuCatalogLoader {
  using Entry = GpuCatalog::Entry;

  static nlohmann::json parse_entry(const GpuCatalog& cat, const Entry& e) { return cat.file_.parse(e.text); }
  static std::string pointer_of(const Entry& e) {
    return std::string(e.kind == GpuKind::Card ? "/gpus/" : "/mig_profiles/") + std::to_string(e.position);
  }

  static void add(GpuCatalog& cat, Entry entry) {
    const auto [it, inserted] = cat.index_.emplace(entry.id, cat.entries_.size());
    if (!inserted) {
      const auto doc = parse_entry(cat, entry);
      JsonView(doc, cat.file_.file(), pointer_of(entry))
          .fail_at(entry.kind == GpuKind::Card ? "id" : "profile",
                   "duplicate id '" + entry.id + "' (already defined by entry " + std::to_string(it->second) +
                       " of the catalogue)");
    }
    cat.entries_.push_back(std::move(entry));
  }

  // The id text of a card ("id") or the parent and profile of a slice, validated as read_id does.
  static std::string skim_id(const GpuCatalog& cat, const Entry& e, std::string_view key, const SkimSource& src) {
    std::string id = skim_string_member(e.text, key, src);
    if (!is_id_text(id)) {
      const auto doc = parse_entry(cat, e);
      const JsonView v(doc, cat.file_.file(), pointer_of(e));
      if (!v.is_object()) v.fail("expected an object");
      id = read_id(v, key);  // throws with the field's own message
    }
    return id;
  }

  static void add_cards(GpuCatalog& cat, std::string_view text, const SkimSource& src) {
    const auto items = skim_array(text, src);
    for (std::size_t k = 0; k < items.size(); ++k) {
      Entry e{"", GpuKind::Card, k, items[k], 0};
      e.id = skim_id(cat, e, "id", src);
      add(cat, std::move(e));
    }
  }

  static void add_slices(GpuCatalog& cat, std::string_view text, const SkimSource& src) {
    const auto items = skim_array(text, src);
    for (std::size_t k = 0; k < items.size(); ++k) {
      Entry e{"", GpuKind::Mig, k, items[k], 0};
      const std::string parent = skim_id(cat, e, "parent", src);
      e.id = parent + "/" + skim_id(cat, e, "profile", src);
      const auto it = cat.index_.find(parent);
      if (it == cat.index_.end() || cat.entries_[it->second].kind != GpuKind::Card) {
        const auto doc = parse_entry(cat, e);
        within_entry("MIG profile", e.id, [&] {
          JsonView(doc, cat.file_.file(), pointer_of(e)).fail_at("parent", "unknown parent GPU '" + parent + "'");
        });
      }
      e.parent = it->second;
      add(cat, std::move(e));
    }
  }

  static void add_aliases(GpuCatalog& cat, std::string_view text) {
    const auto doc = cat.file_.parse(text);
    const JsonView aliases(doc, cat.file_.file(), "/aliases");
    for (const auto& [alias, target] : aliases.members()) {
      const std::string to = target.as_string();
      if (!is_id_text(alias)) aliases.fail_at(alias, "alias must be a lower-case id");
      if (cat.index_.count(alias)) aliases.fail_at(alias, "alias '" + alias + "' is also a GPU id");
      if (!cat.index_.count(to)) target.fail("alias '" + alias + "' points to unknown GPU '" + to + "'");
      cat.aliases_.emplace(alias, to);
    }
  }

  static GpuCatalog load(const std::filesystem::path& path) {
    GpuCatalog cat;
    cat.file_ = SkimmedFile::read(path, "an object with \"gpus\" and \"mig_profiles\"");
    const SkimmedFile& file = cat.file_;
    const SkimSource src = file.source();
    add_cards(cat, file.required("gpus"), src);
    if (const auto migs = file.member("mig_profiles")) add_slices(cat, *migs, src);
    if (const auto aliases = file.member("aliases")) add_aliases(cat, *aliases);
    if (cat.entries_.empty()) throw_input(cat.file_.file(), "/", "the catalogue lists no GPU");
    cat.specs_.resize(cat.entries_.size());
    cat.parsed_.assign(cat.entries_.size(), false);
    return cat;
  }

  static void parse(const GpuCatalog& cat, std::size_t k) {
    const Entry& e = cat.entries_[k];
    const auto doc = parse_entry(cat, e);
    const JsonView v(doc, cat.file_.file(), pointer_of(e));
    if (!v.is_object()) v.fail("expected an object");
    cat.specs_[k] = e.kind == GpuKind::Card ? read_card(v) : read_mig(v, cat.spec(e.parent));
    cat.parsed_[k] = true;
  }
};

GpuCatalog GpuCatalog::load(const std::filesystem::path& gpus_json) { return GpuCatalogLoader::load(gpus_json); }

const GpuSpec& GpuCatalog::spec(std::size_t index) const {
  if (!parsed_[index]) GpuCatalogLoader::parse(*this, index);
  return specs_[index];
}

const std::vector<GpuSpec>& GpuCatalog::all() const {
  for (std::size_t k = 0; k < entries_.size(); ++k) spec(k);
  return specs_;
}

void GpuCatalog::attach_prices(const std::filesystem::path& prices_json) {
  all();  // prices are added to parsed entries
  const auto doc = read_json_file(prices_json);
  const JsonView root(doc, prices_json.string());
  for (const auto& [id, quotes] : root.at("quotes").members()) {
    const auto it = index_.find(id);
    if (it == index_.end()) root.at("quotes").fail_at(id, "unknown GPU id '" + id + "' (ids of data/gpus.json)");
    GpuSpec& g = specs_[it->second];
    if (g.kind != GpuKind::Card) root.at("quotes").fail_at(id, "prices are per card; a MIG slice is priced from its card");
    g.prices.clear();
    for (const auto& q : quotes.items()) g.prices.push_back(read_quote(q));
  }
  if (const auto lots = root.get("lots")) {
    for (const auto& [id, entry] : lots->members()) {
      const auto it = index_.find(id);
      if (it == index_.end()) lots->fail_at(id, "unknown GPU id '" + id + "' (ids of data/gpus.json)");
      GpuSpec& g = specs_[it->second];
      if (g.kind != GpuKind::Card) lots->fail_at(id, "lots are per card; a MIG slice is rented with its card");
      g.lots = read_lots(entry);
    }
  }
}

}  // namespace vramplan
