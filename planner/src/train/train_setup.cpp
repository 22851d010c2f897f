// Names of the training settings and the parallel-layout arithmetic (train/train_setup.hpp).
#include "vramplan/train/train_setup.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "vramplan/core/error.hpp"

namespace vramplan::train {
namespace {

template <typename E, std::size_t N>
E from_name(std::string_view name, const std::array<std::pair<std::string_view, E>, N>& table, std::string_view what) {
  std::string known;
  for (const auto& [n, e] : table) {
    if (n == name) return e;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw Error(ErrorKind::Usage, "unknown " + std::string(what) + " '" + std::string(name) + "' (known: " + known + ")");
}

template <typename E, std::size_t N>
std::string_view to_name(E value, const std::array<std::pair<std::string_view, E>, N>& table) {
  for (const auto& [n, e] : table)
    if (e == value) return n;
  throw Error(ErrorKind::Internal, "training setting without a name");
}

// The first spelling of each value is the canonical one (what outputs print).
constexpr std::array<std::pair<std::string_view, Method>, 5> kMethods{{
    {"full", Method::Full}, {"lora", Method::Lora}, {"dora", Method::Dora}, {"qlora", Method::Qlora},
    {"pretraining", Method::Full}}};
constexpr std::array<std::pair<std::string_view, PrecisionRecipe>, 4> kPrecisions{{
    {"bf16", PrecisionRecipe::PureBf16}, {"amp", PrecisionRecipe::AmpFp32Params},
    {"mixed", PrecisionRecipe::Bf16WithFp32Master}, {"fp32", PrecisionRecipe::Fp32}}};
constexpr std::array<std::pair<std::string_view, Optimizer>, 9> kOptimizers{{
    {"adamw", Optimizer::AdamW}, {"adamw-8bit", Optimizer::AdamW8bit}, {"paged-adamw", Optimizer::PagedAdamW},
    {"paged-adamw-8bit", Optimizer::PagedAdamW8bit}, {"adafactor", Optimizer::Adafactor},
    {"sgd", Optimizer::SgdMomentum}, {"lion", Optimizer::Lion}, {"adam", Optimizer::AdamW},
    {"adam-8bit", Optimizer::AdamW8bit}}};
constexpr std::array<std::pair<std::string_view, Sharding>, 9> kShardings{{
    {"none", Sharding::None}, {"zero1", Sharding::Zero1}, {"zero2", Sharding::Zero2}, {"zero3", Sharding::Zero3},
    {"hsdp", Sharding::HybridShard}, {"ddp", Sharding::None}, {"fsdp", Sharding::Zero3},
    {"fsdp-grad-op", Sharding::Zero2}, {"fsdp2", Sharding::Zero3}}};

}  // namespace

std::uint64_t Parallelism::dp() const {
  const std::uint64_t model_parallel = tp * pp * cp;
  if (gpus == 0 || model_parallel == 0 || gpus % model_parallel != 0)
    throw Error(ErrorKind::Usage, std::to_string(gpus) + " GPUs cannot be split into TP " + std::to_string(tp) +
                                      " x PP " + std::to_string(pp) + " x CP " + std::to_string(cp) + " groups");
  return gpus / model_parallel;
}

std::uint64_t Parallelism::shard_degree(Sharding sharding) const {
  const std::uint64_t over = dp() * cp;
  if (sharding == Sharding::None) return 1;
  if (sharding != Sharding::HybridShard) return over;
  // HSDP shards inside a node and replicates across nodes (torch FSDP HYBRID_SHARD's 2-D mesh,
  // (replicate, shard) = (nodes, GPUs per node)): the run must be whole nodes, or fit in one.
  if (gpus_per_node == 0) throw Error(ErrorKind::Usage, "--gpus-per-node must be >= 1");
  if (gpus > gpus_per_node && gpus % gpus_per_node != 0)
    throw Error(ErrorKind::Usage, "--sharding hsdp: " + std::to_string(gpus) + " GPUs are not whole nodes of --gpus-per-node " +
                                      std::to_string(gpus_per_node));
  const std::uint64_t node_ranks = gpus_per_node / (tp * cp);
  return node_ranks == 0 ? 1 : std::min(over, node_ranks);
}

Method method_from_name(std::string_view n) { return from_name(n, kMethods, "training method"); }
PrecisionRecipe precision_from_name(std::string_view n) { return from_name(n, kPrecisions, "precision recipe"); }
Optimizer optimizer_from_name(std::string_view n) { return from_name(n, kOptimizers, "optimizer"); }
Sharding sharding_from_name(std::string_view n) { return from_name(n, kShardings, "sharding"); }
std::string_view method_name(Method m) { return to_name(m, kMethods); }
std::string_view precision_name(PrecisionRecipe p) { return to_name(p, kPrecisions); }
std::string_view optimizer_name(Optimizer o) { return to_name(o, kOptimizers); }
std::string_view sharding_name(Sharding s) { return to_name(s, kShardings); }

}  // namespace vramplan::train
