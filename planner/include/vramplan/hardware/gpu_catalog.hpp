// vramplan/hardware/gpu_catalog.hpp — the GPU catalogue (data/gpus.json): cards and MIG slices,
// their memory as the runtime reports it, bandwidth, dense TFLOPS, and the sources of each figure.
//
// The planner's usable total for a GPU is `reported_total`: what the CUDA/HIP runtime reports as
// the device total (cudaMemGetInfo, torch total_memory, vLLM's "total_gpu_memory"), which is less
// than the marketed size (driver reservation; GDDR with ECC also loses 1/16). When no such figure
// was found, the loader derives it with estimate_runtime_total() and marks it Estimated, so every
// output that uses it can say so. A user-supplied total (custom:SIZE, --gpu-memory) is UserSupplied.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/io/json_skim.hpp"

namespace vramplan {

enum class GpuKind { Card, Mig };
enum class MemoryBasis { Measured, Estimated, UserSupplied };

//! "gpu" / "mig".
std::string_view gpu_kind_name(GpuKind kind);
//! "measured" / "estimated" / "user" — the value of reported_memory_basis in JSON output.
std::string_view memory_basis_name(MemoryBasis basis);

//! A fraction such as the "4/8" of memory or "3/7" of SMs a MIG profile gets.
struct Fraction {
  std::uint32_t num = 1;
  std::uint32_t den = 1;
  double value() const { return static_cast<double>(num) / static_cast<double>(den); }
  std::string str() const { return std::to_string(num) + "/" + std::to_string(den); }
};

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
};

//! Dense (no 2:4 sparsity) tensor throughput per data type; nullopt = not sourced or unsupported.
struct DenseTflops {
  std::optional<double> fp32, tf32, bf16, fp16, fp8, int8, fp4;
};

struct Interconnect {
  std::optional<double> nvlink_gbps;  //!< total NVLink bandwidth per GPU, GB/s
  //! A fully connected mesh of point-to-point GPU links (AMD Infinity Fabric / xGMI): links per
  //! GPU to its peers and each link's peak bandwidth, both directions together, GB/s. Unlike a
  //! switched NVLink domain, a group of k GPUs reaches its peers over only k - 1 of the links.
  std::optional<int> peer_links;
  std::optional<double> peer_link_gbps;
  std::optional<int> pcie_gen;
  std::string host_link;  //!< as the source words it ("PCIe 5.0 x16", "NVLink-C2C to Grace")
  //! GPUs one NVLink domain joins when it reaches beyond a host (a GB200 NVL72 rack: 72 GPUs on
  //! 18 compute trays of 4); absent = the fabric ends at the host (GpuSpec::node_gpus).
  std::optional<std::uint64_t> nvlink_domain_gpus;
  //! Scale-out network per GPU of the card's reference platform (a DGX / HGX system: one
  //! InfiniBand / RoCE NIC per GPU), Gb/s one direction; what collectives between hosts run over
  //! (sources.network). Absent = no reference platform sourced (perf_defaults.json network).
  std::optional<double> network_gbit;
};

//! What a MIG slice is, relative to its parent card.
struct MigSlice {
  std::string profile;         //!< "3g.40gb"
  Fraction memory_fraction;    //!< memory slices (and with them L2 and memory bandwidth)
  Fraction sm_fraction;        //!< compute slices
  int max_instances = 1;       //!< how many of this profile fit on one card
  // The full card's datasheet figures: the performance model scales them by the fractions above
  // (perf/hardware_rates.cpp) and says so; the slice's own TFLOPS stay unset (not published).
  DenseTflops card_tflops;
  std::optional<double> card_bandwidth_gbps;
};

//! An indicative rental price, as quoted by a provider on a date.
struct PriceQuote {
  std::string provider, offering, pricing, as_of, confidence, source;
  double usd_per_gpu_hour = 0;
  std::optional<std::uint64_t> gpus_per_lot;  //!< the offer rents this many GPUs at once (HGX node: 8)
};

//! The lots a card is rented in (data/prices.json "lots"): a sourced fact about the card, used
//! where its quotes do not say otherwise. Empty sizes = any whole number of GPUs.
struct RentalLots {
  std::vector<std::uint64_t> sizes;
  std::string note, source;
};

struct GpuSpec {
  std::string id;  //!< "h100-sxm-80", "h100-sxm-80/3g.40gb", "custom:46068MiB"
  std::string name;
  std::string vendor;  //!< "nvidia", "amd", "unknown" (custom)
  std::string architecture;
  GpuKind kind = GpuKind::Card;
  std::string parent_id;  //!< MIG slices only

  double marketed_gb = 0;  //!< the vendor's "GB" (MIG: the GB in the profile name); 0 when unknown
  Bytes physical;          //!< marketed_gb x 2^30 (HBM/GDDR are built in binary sizes); MIG: its share
  std::string memory_type;
  bool ecc_carveout = false;  //!< GDDR with ECC on: the runtime loses 1/16 of the memory
  std::optional<Bytes> nvidia_smi_total;
  Bytes reported_total;  //!< the planner's usable total (see the file comment)
  MemoryBasis reported_basis = MemoryBasis::Measured;
  std::string reported_note;  //!< where the reported total comes from, or how it was estimated

  std::optional<double> bandwidth_gbps;
  DenseTflops tflops;
  //! Measured matmul ceiling per dtype (maximum achievable matmul FLOPS: the best large GEMM
  //! found on the card, sources.mamf); a MIG slice keeps its card's. Unset where none is
  //! published: the performance model then takes the datasheet x its default efficiency.
  DenseTflops mamf_tflops;
  bool fp8_support = false;
  bool fp4_support = false;
  std::optional<ComputeCapability> compute_capability;  //!< NVIDIA only
  std::string gfx_target;                               //!< AMD only ("gfx942")
  Interconnect interconnect;
  std::optional<double> tdp_w;
  std::optional<int> mig_max_instances;  //!< cards that support MIG
  //! GPUs one host (one node of the card's usual platform: an HGX / DGX board, a GB200 NVL72
  //! compute tray, a PCIe server) holds; an engine instance beyond it is multi-node. Sourced
  //! per card (sources.node_gpus); absent = unknown (custom cards), never a default.
  std::optional<std::uint64_t> node_gpus;
  std::optional<MigSlice> mig;           //!< set for MIG slices

  std::vector<PriceQuote> prices;
  std::optional<RentalLots> lots;  //!< from data/prices.json "lots" (attach_prices)
  //! Why no engine profile of vramplan can plan this card ("" = plannable): listed so that a user
  //! sees it and the reason, refused by plan / check / sweep / train (require_plannable).
  std::string not_plannable;
  std::map<std::string, std::vector<std::string>> sources;  //!< figure group -> URLs
  std::string confidence;
  std::string notes;

  bool reported_estimated() const { return reported_basis == MemoryBasis::Estimated; }
};

//! THE estimation rule for a runtime total nobody has reported (docs/gpus.md § Estimation rule):
//!   base     = physical memory, minus 1/16 for GDDR with ECC on (MIG: memory fraction x parent base)
//!   reserve  = max(1 GiB, 1.5 % of base)        (driver + runtime reservation)
//!   estimate = base - reserve, rounded down to a whole MiB.
//! It is below every measured card total in the catalogue (checked by a test), i.e. conservative.
Bytes estimate_runtime_total(Bytes base);
//! The base the rule starts from for a card: physical, x 15/16 when ecc_carveout.
Bytes estimation_base(Bytes physical, bool ecc_carveout);
//! The rule for a card: estimate_runtime_total(estimation_base(...)), and never more than its
//! nvidia-smi total less 1 GiB when that total is catalogued (a runtime total sits 0.3-0.9 GiB
//! under NVML's on every card with both; B300 exposes 268.6 of its 288 GiB, so the marketed size
//! alone would over-promise 16 GiB).
Bytes estimate_card_runtime_total(Bytes physical, bool ecc_carveout, std::optional<Bytes> nvidia_smi_total);
//! One-line description of the rule, for outputs that show an estimated figure.
std::string_view estimation_rule_text();
//! Throws Error(Usage) naming the GPU and the reason when the catalogue marks it not plannable.
void require_plannable(const GpuSpec& gpu);

// The catalogue is read lazily: load() checks the file's structure, the ids, parents and aliases,
// and each entry is parsed and validated the first time it is looked up (all() parses every
// entry). A command that plans one GPU thus parses one entry out of dozens. Lookups are const but
// fill a cache: a GpuCatalog is not for concurrent use from several threads.
class GpuCatalog {
 public:
  //! Reads data/gpus.json. Every fault is Error(InputFile) naming the file, the JSON pointer and
  //! the entry id — a fault inside an entry when that entry is first used; unreadable file ->
  //! Error(Io).
  static GpuCatalog load(const std::filesystem::path& gpus_json);
  //! Adds the indicative price quotes of data/prices.json to the cards (GpuSpec::prices). Kept
  //! out of load() so that commands that never price anything (check, plan) do not parse them.
  //! Unknown ids and quotes for MIG slices are Error(InputFile) naming the file and entry.
  void attach_prices(const std::filesystem::path& prices_json);

  //! A catalogue id or alias, case-insensitive; MIG slices as "<card or alias>/<profile>".
  //! Throws Error(UnknownName) listing the closest ids.
  const GpuSpec& find(std::string_view id) const;
  //! find(), plus "custom:<size>" (a GPU of which only the memory is known).
  GpuSpec resolve_one(std::string_view id) const;
  //! A comma-separated list "h100-sxm-80,h200,custom:46068MiB" in the given order. Empty -> Usage.
  std::vector<GpuSpec> resolve(std::string_view list) const;

  //! Cards first (file order), then MIG slices (file order); parses every entry.
  const std::vector<GpuSpec>& all() const;
  const std::map<std::string, std::string>& aliases() const { return aliases_; }

 private:
  //! One catalogue entry as found in the file: its text, not yet parsed.
  struct Entry {
    std::string id;
    GpuKind kind = GpuKind::Card;
    std::size_t position = 0;  //!< index in the file's "gpus" / "mig_profiles" array
    std::string_view text;     //!< into file_
    std::size_t parent = 0;    //!< MIG slices: the card's index in entries_
  };
  const GpuSpec& spec(std::size_t index) const;  //!< parses entries_[index] on first use

  SkimmedFile file_;  //!< data/gpus.json's name and text (entries point into it)
  std::vector<Entry> entries_;
  std::map<std::string, std::size_t> index_;  //!< id -> position in entries_ / specs_
  std::map<std::string, std::string> aliases_;
  mutable std::vector<GpuSpec> specs_;  //!< specs_[k] is entries_[k] once parsed_[k]
  mutable std::vector<bool> parsed_;
  friend struct GpuCatalogLoader;
};

//! "custom:46068MiB" -> a GpuSpec with only the reported total known (UserSupplied); every other
//! figure is unset. Throws Error(Usage) on a malformed or zero size.
GpuSpec custom_gpu(std::string_view text);
//! GPUs one GPU fabric joins: the NVLink domain where it reaches beyond a host (GB200 NVL72: 72),
//! else the host's node_gpus; nullopt when the node size is unknown or for a MIG slice (one card).
//! A collective over more GPUs crosses hosts (docs/performance.md "Across hosts").
std::optional<std::uint64_t> fabric_gpus(const GpuSpec& gpu);

//! The same card with a user-given reported total (--gpu-memory 79.22GiB); other figures kept.
//! Throws Error(Usage) when total is zero or more than the card physically has (its marketed
//! size read as GiB, the larger reading: an "80GB" H100 has 80 GiB of HBM).
GpuSpec with_reported_total(GpuSpec spec, Bytes total);
//! The user's own cluster where it differs from the card's reference platform (docs/gpus.md
//! "Your own cluster"): GPUs per host (--node-gpus) and the network per GPU between hosts, Gb/s
//! one direction (--network-gbit). Unset = the catalogue's figures.
struct ClusterShape {
  std::optional<std::uint64_t> node_gpus;
  std::optional<double> network_gbit;
};
//! Where a cluster flag gave the figure: sources.node_gpus / sources.network read this.
inline constexpr const char* kNodeGpusFlag = "--node-gpus";
inline constexpr const char* kNetworkGbitFlag = "--network-gbit";
//! The same card in the user's cluster: node_gpus and interconnect.network_gbit replaced, their
//! sources naming the flag. An NVLink domain beyond a host (GB200 / GB300 NVL72) keeps spanning
//! its GPUs. Throws Error(Usage) for a node of 0 or more than 1,024 GPUs, a network rate outside
//! (0, 100,000] Gb/s, and either on a MIG slice (one card, never across hosts).
GpuSpec with_cluster(GpuSpec spec, const ClusterShape& cluster);
//! A GPU memory size as typed (--gpu-memory, custom:SIZE): parse_bytes, but a bare number below
//! 1 GiB ("custom:80" = 80 bytes) is refused, asking for a unit.
Bytes parse_gpu_memory(std::string_view text, const std::string& what);

}  // namespace vramplan
