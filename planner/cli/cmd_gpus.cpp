// `vramplan gpus` — lists the GPU catalogue (cards by default, MIG slices with --mig or --all),
// as a table or as JSON (schema vramplan.gpus/1, docs/schemas/gpus.schema.json).
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::cli {
namespace {

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json optional_bytes(const std::optional<Bytes>& v) {
  return v ? nlohmann::json(v->count()) : nlohmann::json(nullptr);
}

// Every dtype key, null where the figure is not sourced.
nlohmann::json tflops_json(const DenseTflops& t) {
  return {{"fp32", optional_number(t.fp32)}, {"tf32", optional_number(t.tf32)}, {"bf16", optional_number(t.bf16)},
          {"fp16", optional_number(t.fp16)}, {"fp8", optional_number(t.fp8)},   {"int8", optional_number(t.int8)},
          {"fp4", optional_number(t.fp4)}};
}

nlohmann::json gpu_json(const GpuSpec& g) {
  nlohmann::json mig = nullptr;
  if (g.mig) {
    mig = {{"profile", g.mig->profile},
           {"memory_fraction", g.mig->memory_fraction.str()},
           {"sm_fraction", g.mig->sm_fraction.str()},
           {"bandwidth_share", g.mig->memory_fraction.value()},
           {"max_instances", g.mig->max_instances}};
  } else if (g.mig_max_instances) {
    mig = {{"max_instances", *g.mig_max_instances}};
  }
  nlohmann::json prices = nlohmann::json::array();
  for (const auto& p : g.prices)
    prices.push_back({{"provider", p.provider}, {"offering", p.offering},
                      {"usd_per_gpu_hour", p.usd_per_gpu_hour}, {"pricing", p.pricing},
                      {"as_of", p.as_of}, {"confidence", p.confidence}, {"source", p.source},
                      {"gpus_per_lot", p.gpus_per_lot ? nlohmann::json(*p.gpus_per_lot) : nlohmann::json(nullptr)}});
  nlohmann::json lots = nullptr;
  if (g.lots) lots = {{"lot_sizes", g.lots->sizes}, {"note", g.lots->note}, {"source", g.lots->source}};
  return {
      {"id", g.id},
      {"name", g.name},
      {"kind", std::string(gpu_kind_name(g.kind))},
      {"parent", g.parent_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.parent_id)},
      {"vendor", g.vendor},
      {"architecture", g.architecture},
      {"memory",
       {{"marketed_gb", g.marketed_gb},
        {"physical_bytes", g.physical.count()},
        {"type", g.memory_type},
        {"ecc_carveout", g.ecc_carveout},
        {"nvidia_smi_total_bytes", optional_bytes(g.nvidia_smi_total)},
        {"reported_total_bytes", g.reported_total.count()},
        {"reported_total_gib", g.reported_total.gib()},
        {"reported_memory_basis", std::string(memory_basis_name(g.reported_basis))},
        {"reported_memory_note", g.reported_note}}},
      {"memory_bandwidth_gbps", optional_number(g.bandwidth_gbps)},
      {"tflops_dense", tflops_json(g.tflops)},
      // The measured matmul ceiling the performance model takes instead of the datasheet (a MIG
      // slice: its card's; docs/performance.md section 4).
      {"mamf_tflops", tflops_json(g.mamf_tflops)},
      {"fp8_support", g.fp8_support},
      {"fp4_support", g.fp4_support},
      {"compute_capability",
       g.compute_capability ? nlohmann::json(g.compute_capability->str()) : nlohmann::json(nullptr)},
      {"gfx_target", g.gfx_target.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.gfx_target)},
      {"interconnect",
       {{"nvlink_gbps", optional_number(g.interconnect.nvlink_gbps)},
        {"pcie_gen", g.interconnect.pcie_gen ? nlohmann::json(*g.interconnect.pcie_gen) : nlohmann::json(nullptr)},
        {"host_link", g.interconnect.host_link},
        {"peer_links", g.interconnect.peer_links ? nlohmann::json(*g.interconnect.peer_links) : nlohmann::json(nullptr)},
        {"peer_link_gbps", optional_number(g.interconnect.peer_link_gbps)}}},
      {"tdp_w", optional_number(g.tdp_w)},
      {"node_gpus", g.node_gpus ? nlohmann::json(*g.node_gpus) : nlohmann::json(nullptr)},
      {"mig", mig},
      {"prices", prices},
      {"lots", lots},
      {"not_plannable", g.not_plannable.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.not_plannable)},
      {"sources", g.sources},
      {"confidence", g.confidence},
      {"notes", g.notes},
  };
}

std::string number_or_dash(const std::optional<double>& v, int decimals) {
  return v ? fixed(*v, decimals) : "-";
}

// 16-bit tensor rate: BF16 where the card has it, else FP16 (Volta, Turing) marked as such.
std::string half_precision_cell(const DenseTflops& t) {
  if (t.bf16) return fixed(*t.bf16, 1);
  if (t.fp16) return fixed(*t.fp16, 1) + " (fp16)";
  return "-";
}

std::string mig_cell(const GpuSpec& g) {
  // Appended piece by piece: g++ 12 gives a false -Wrestrict on literal + std::string chains.
  std::string cell;
  if (g.mig) {
    cell = "x";
    cell += std::to_string(g.mig->max_instances);
    cell += ", ";
    cell += g.mig->sm_fraction.str();
    cell += " SM";
  } else if (g.mig_max_instances) {
    cell = "up to ";
    cell += std::to_string(*g.mig_max_instances);
  } else {
    cell = "-";
  }
  return cell;
}

std::string render_table(const std::vector<GpuSpec>& gpus) {
  Table table({{"id", Align::Left},
               {"name", Align::Left},
               {"marketed GB", Align::Right},
               {"reported GiB", Align::Right},
               {"BW GB/s", Align::Right},
               {"bf16 TFLOPS", Align::Right},
               {"fp8 TFLOPS", Align::Right},
               {"cc", Align::Left},
               {"MIG", Align::Left}});
  bool any_estimated = false;
  std::string unplannable;
  for (const auto& g : gpus) {
    if (!g.not_plannable.empty() && g.kind == GpuKind::Card)
      unplannable += "  " + g.id + ": " + g.not_plannable + "\n";
    std::string reported = fixed(g.reported_total.gib(), 2);
    if (g.reported_estimated()) {
      reported += " est.";
      any_estimated = true;
    } else if (g.reported_basis == MemoryBasis::UserSupplied) {
      reported += " user";
    }
    const std::string cc = g.compute_capability ? g.compute_capability->str()
                                                : (g.gfx_target.empty() ? "-" : g.gfx_target);
    table.add_row({g.id, g.name, g.marketed_gb > 0 ? fixed(g.marketed_gb, 0) : "-", reported,
                   number_or_dash(g.bandwidth_gbps, 0), half_precision_cell(g.tflops),
                   number_or_dash(g.tflops.fp8, 1), cc, mig_cell(g)});
  }
  std::string text = table.render_text();
  text += "\nreported GiB = total the CUDA/HIP runtime reports (vLLM's total_gpu_memory); TFLOPS dense.\n";
  if (any_estimated) text += "est. = no measured total found; " + std::string(estimation_rule_text()) + ".\n";
  if (!unplannable.empty()) text += "listed but not plannable (plan, check, sweep and train refuse them):\n" + unplannable;
  if (gpus.empty()) text += "no GPU matches these filters.\n";
  return text;
}

bool keep(const GpuSpec& g, const std::string& vendor, const std::optional<Bytes>& min_memory) {
  if (!vendor.empty() && g.vendor != vendor) return false;
  if (min_memory && g.reported_total < *min_memory) return false;
  return true;
}

}  // namespace

int run_gpus(const std::vector<std::string>& args) {
  po::options_description desc("Options");
  desc.add_options()
      ("gpu", po::value<std::string>(), "only these ids, comma-separated (aliases, MIG card/profile, custom:SIZE)")
      ("mig", po::bool_switch(), "list MIG slices only")
      ("all", po::bool_switch(), "list cards and MIG slices")
      ("vendor", po::value<std::string>(), "only this vendor: nvidia, amd or intel")
      ("min-memory", po::value<std::string>(), "only GPUs whose reported total is at least SIZE (e.g. 40GiB)");
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("gpus", "[--all | --mig] [--vendor nvidia|amd|intel] [--min-memory SIZE] [--gpu ID[,ID]] [--json]",
                  desc, args, vm))
    return 0;
  const auto opts = read_common_options(vm);
  const bool only_mig = vm["mig"].as<bool>();
  const bool all = vm["all"].as<bool>();
  if (only_mig && all) throw_usage("--mig and --all cannot be combined (--all already includes MIG slices)");
  std::string vendor;
  if (vm.count("vendor")) {
    vendor = vm["vendor"].as<std::string>();
    if (vendor != "nvidia" && vendor != "amd" && vendor != "intel")
      throw_usage("--vendor: expected nvidia, amd or intel, got '" + vendor + "'");
  }
  std::optional<Bytes> min_memory;
  if (vm.count("min-memory")) min_memory = parse_gpu_memory(vm["min-memory"].as<std::string>(), "--min-memory");

  auto catalog = GpuCatalog::load(data_root().data_file("gpus.json"));
  catalog.attach_prices(data_root().data_file("prices.json"));
  std::vector<GpuSpec> candidates;
  if (vm.count("gpu")) {
    // With --mig / --all the named cards' slices are listed (--mig: the slices only).
    for (auto& g : catalog.resolve(vm["gpu"].as<std::string>())) {
      if (!only_mig || g.kind == GpuKind::Mig) candidates.push_back(g);
      if ((only_mig || all) && g.kind == GpuKind::Card)
        for (const auto& slice : catalog.all())
          if (slice.kind == GpuKind::Mig && slice.parent_id == g.id) candidates.push_back(slice);
    }
    if (only_mig && candidates.empty()) throw_usage("--mig: " + vm["gpu"].as<std::string>() + " has no MIG slices in the catalogue");
  } else {
    for (const auto& g : catalog.all()) {
      const bool is_mig = g.kind == GpuKind::Mig;
      if (all || is_mig == only_mig) candidates.push_back(g);
    }
  }
  std::vector<GpuSpec> selected;
  for (auto& g : candidates)
    if (keep(g, vendor, min_memory)) selected.push_back(std::move(g));

  nlohmann::json list = nlohmann::json::array();
  for (const auto& g : selected) list.push_back(gpu_json(g));
  const nlohmann::json j = {{"schema", "vramplan.gpus/1"},
                            {"estimation_rule", std::string(estimation_rule_text())},
                            {"gpus", list}};
  emit(opts, j, render_table(selected));
  return 0;
}

}  // namespace vramplan::cli
