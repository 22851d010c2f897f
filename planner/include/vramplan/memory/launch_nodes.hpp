// vramplan/memory/launch_nodes.hpp — the node size an engine's own multi-node flags state, so that
// a pasted multi-node command prices its collectives across the hosts it names:
//   SGLang --nnodes N: each node runs tp x pp / N ranks (python/sglang/srt/entrypoints/engine.py
//     _launch_subprocesses: pp_size_per_node = max(pp // nnodes, 1), tp_size_per_node =
//     tp // max(nnodes // pp, 1); read in 0.5.9);
//   vLLM --data-parallel-size-local L: L data-parallel engines of tp x pp GPUs on this node
//     (vllm/engine/arg_utils.py, read in 0.19.1).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

//! GPUs per node that `args` of `engine` state for an instance (one engine) of `instance_gpus`
//! (tp x pp); nullopt when they state none. Throws Error(Usage) for a node count of 0 or one that
//! does not divide the instance's GPUs.
std::optional<std::uint64_t> launch_node_gpus(std::string_view engine, const EngineArgs& args, std::uint64_t instance_gpus);

//! `spec` in the user's cluster (with_cluster): `given` (--node-gpus, --network-gbit), its node
//! size taken from the engine's own multi-node flags where --node-gpus left it unset;
//! Error(Usage) when both state a node size and differ.
GpuSpec in_cluster(GpuSpec spec, ClusterShape given, std::string_view engine, const EngineArgs& args,
                   std::uint64_t instance_gpus);

}  // namespace vramplan::memory
