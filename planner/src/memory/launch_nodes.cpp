#include "vramplan/memory/launch_nodes.hpp"

#include <string>

#include "vramplan/core/error.hpp"

namespace vramplan::memory {

std::optional<std::uint64_t> launch_node_gpus(std::string_view engine, const EngineArgs& args, std::uint64_t instance_gpus) {
  if (engine == "sglang") {
    const auto nnodes = arg_u64(args, "nnodes");
    if (!nnodes) return std::nullopt;
    if (*nnodes == 0 || instance_gpus % *nnodes != 0)
      throw_usage("--nnodes " + std::to_string(*nnodes) + " must divide the server's " + std::to_string(instance_gpus) +
                  " GPUs (--tp-size x --pp-size): each node runs tp x pp / nnodes ranks (entrypoints/engine.py "
                  "_launch_subprocesses)");
    return instance_gpus / *nnodes;
  }
  if (engine == "vllm") {
    const auto local = arg_u64(args, "data-parallel-size-local");
    if (!local) return std::nullopt;
    if (*local == 0) throw_usage("--data-parallel-size-local must be >= 1");
    const std::uint64_t dp = arg_u64(args, "data-parallel-size").value_or(1);
    if (*local > dp)
      throw_usage("--data-parallel-size-local " + std::to_string(*local) + " exceeds --data-parallel-size " + std::to_string(dp));
    return *local * instance_gpus;
  }
  return std::nullopt;
}

GpuSpec in_cluster(GpuSpec spec, ClusterShape given, std::string_view engine, const EngineArgs& args,
                   std::uint64_t instance_gpus) {
  if (const std::optional<std::uint64_t> stated = launch_node_gpus(engine, args, instance_gpus)) {
    if (given.node_gpus && *given.node_gpus != *stated)
      throw_usage("--node-gpus " + std::to_string(*given.node_gpus) + " disagrees with the " + std::to_string(*stated) +
                  " GPUs a node runs by the engine's own multi-node flags: give one of them");
    given.node_gpus = stated;
  }
  return with_cluster(std::move(spec), given);
}

}  // namespace vramplan::memory
