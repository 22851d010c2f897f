#include "vramplan/memory/launch_nodes.hpp"

#include <string>

#include "vramplan/core/error.hpp"

namespace vramplan::memory {

std::optional<std::uint64_t> launch_node_gpus(std::string_view engine, const EngineArgs& args) {
  if (engine == "sglang") {
    const auto nnodes = arg_u64(args, "nnodes");
    if (!nnodes) return std::nullopt;
    const std::uint64_t gpus = arg_u64(args, "tp-size").value_or(1) * arg_u64(args, "pp-size").value_or(1);
    if (*nnodes == 0 || gpus % *nnodes != 0)
      throw_usage("--nnodes " + std::to_string(*nnodes) + " must divide the server's " + std::to_string(gpus) +
                  " GPUs (--tp-size x --pp-size): each node runs tp x pp / nnodes ranks (entrypoints/engine.py "
                  "_launch_subprocesses)");
    return gpus / *nnodes;
  }
  if (engine == "vllm") {
    const auto local = arg_u64(args, "data-parallel-size-local");
    if (!local) return std::nullopt;
    if (*local == 0) throw_usage("--data-parallel-size-local must be >= 1");
    const std::uint64_t dp = arg_u64(args, "data-parallel-size").value_or(1);
    if (*local > dp)
      throw_usage("--data-parallel-size-local " + std::to_string(*local) + " exceeds --data-parallel-size " + std::to_string(dp));
    return *local * arg_u64(args, "tensor-parallel-size").value_or(1) * arg_u64(args, "pipeline-parallel-size").value_or(1);
  }
  return std::nullopt;
}

ClusterShape cluster_with_launch(ClusterShape given, std::string_view engine, const EngineArgs& args) {
  const std::optional<std::uint64_t> stated = launch_node_gpus(engine, args);
  if (!stated) return given;
  if (given.node_gpus && *given.node_gpus != *stated)
    throw_usage("--node-gpus " + std::to_string(*given.node_gpus) + " disagrees with the " + std::to_string(*stated) +
                " GPUs a node runs by the engine's own multi-node flags: give one of them");
  given.node_gpus = stated;
  return given;
}

}  // namespace vramplan::memory
