// Peak reserved memory of a training step (train/reserved.hpp has the allocator rules).
#include "vramplan/train/reserved.hpp"

#include <algorithm>

#include "vramplan/memory/component.hpp"

namespace vramplan::train {

ReservedView reserved_view(const ReservedInput& in) {
  // Step tensors are counted from the phase total: the per-tensor list only decides which part
  // is too large for any freed forward / backward block.
  std::uint64_t too_large = 0;
  for (const std::uint64_t t : in.step_tensors)
    if (t > in.largest_forward_block) too_large += t;
  too_large = std::min(too_large, in.optimizer_step.count());
  const std::uint64_t fitting = in.optimizer_step.count() - too_large;
  const std::uint64_t fb = in.forward_backward.count();
  const std::uint64_t above = (fitting > fb ? fitting - fb : 0) + too_large;
  ReservedView v;
  v.step_not_reused = Bytes(too_large);
  const Bytes uncapped = in.resident + in.forward_backward + Bytes(above);
  v.peak_reserved = std::min(uncapped, std::max(in.capacity, in.resident + std::max(in.forward_backward, in.optimizer_step)));
  v.explain = "resident + forward/backward + step tensors that fit no freed forward/backward block (" +
              memory::grouped(too_large) + " B larger than the largest, " + memory::grouped(in.largest_forward_block) +
              " B) + step bytes beyond forward/backward (" + memory::grouped(fitting > fb ? fitting - fb : 0) + " B)";
  if (uncapped > v.peak_reserved) v.explain += "; capped at the GPU (cudaMalloc failure frees cached segments)";
  return v;
}

}  // namespace vramplan::train
