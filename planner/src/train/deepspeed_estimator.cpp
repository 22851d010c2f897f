// DeepSpeed's ZeRO estimators; see the header for the formulas and their source files.
#include "vramplan/train/deepspeed_estimator.hpp"

#include <algorithm>
#include <cstdio>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::train {
namespace {

void check_inputs(std::uint64_t total_params, const DeepSpeedCluster& c) {
  if (total_params == 0 || c.gpus_per_node == 0 || c.nodes == 0)
    throw Error(ErrorKind::Usage, "DeepSpeed estimator: parameters, GPUs per node and nodes must be > 0");
}

// Python's int(x) for the non-negative floats the estimators produce.
std::uint64_t py_int(double x) { return static_cast<std::uint64_t>(x); }

// int(k * P / total_gpus): k * P is an exact Python int, the division a true (float) division.
std::uint64_t sharded(std::uint64_t k, std::uint64_t total_params, std::uint64_t total_gpus) {
  return py_int(static_cast<double>(checked_mul(k, total_params, "DeepSpeed estimate")) /
                static_cast<double>(total_gpus));
}

}  // namespace

DeepSpeedEstimate deepspeed_zero2_estimate(std::uint64_t total_params, const DeepSpeedCluster& c, bool cpu_offload,
                                           Zero2Formula formula) {
  check_inputs(total_params, c);
  const std::uint64_t total_gpus = checked_mul(c.nodes, c.gpus_per_node, "GPUs");
  const double p = static_cast<double>(total_params);
  DeepSpeedEstimate e;
  if (cpu_offload) {
    e.gpu_bytes = checked_mul(2, total_params);
    e.cpu_bytes = py_int(p * static_cast<double>(std::max<std::uint64_t>(4 * total_gpus, 16)) *
                         c.additional_buffer_factor);
  } else {
    e.gpu_bytes = formula == Zero2Formula::Current
                      ? checked_add(checked_mul(2, total_params), sharded(18, total_params, total_gpus))
                      : checked_add(checked_mul(4, total_params), sharded(16, total_params, total_gpus));
    e.cpu_bytes = py_int(static_cast<double>(checked_mul(total_params, 4 * c.gpus_per_node)) *
                         c.additional_buffer_factor);
  }
  return e;
}

DeepSpeedEstimate deepspeed_zero3_estimate(std::uint64_t total_params, std::uint64_t largest_layer_params,
                                           const DeepSpeedCluster& c, const Zero3Offload& offload) {
  check_inputs(total_params, c);
  const std::uint64_t total_gpus = checked_mul(c.nodes, c.gpus_per_node, "GPUs");
  const double gpus_factor = 1.0 / static_cast<double>(c.nodes);
  const double p = static_cast<double>(total_params);
  const double gpn4 = static_cast<double>(4 * c.gpus_per_node);
  const std::uint64_t largest_layer_memory = checked_mul(4, largest_layer_params);
  const double buf = c.additional_buffer_factor;
  DeepSpeedEstimate e;
  if (offload.optimizer) {
    if (offload.params) {
      e.gpu_bytes = largest_layer_memory;
      e.cpu_bytes = offload.zero_init ? py_int(static_cast<double>(total_params * 18) * gpus_factor * buf)
                                      : py_int(p * std::max(gpn4, 18 * gpus_factor) * buf);
    } else {
      e.gpu_bytes = checked_add(largest_layer_memory, sharded(2, total_params, total_gpus));
      e.cpu_bytes = offload.zero_init ? py_int(static_cast<double>(total_params * 16) * gpus_factor * buf)
                                      : py_int(p * std::max(gpn4, 16 * gpus_factor) * buf);
    }
  } else {
    e.gpu_bytes = checked_add(largest_layer_memory, sharded(18, total_params, total_gpus));
    e.cpu_bytes = offload.zero_init
                      ? py_int(static_cast<double>(checked_mul(largest_layer_params, 4 * c.gpus_per_node)) * buf)
                      : py_int(static_cast<double>(checked_mul(total_params, 4 * c.gpus_per_node)) * buf);
  }
  return e;
}

std::string deepspeed_gib_text(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return text;
}

}  // namespace vramplan::train
