// vramplan/train/reserved.hpp — the allocator view of a training step: PyTorch's peak
// *reserved* memory (torch.cuda.max_memory_reserved(), what torchtitan, ms-swift and the
// torchtune tutorials print) from the phases of the allocated peak (train_plan.hpp).
//
// The caching allocator (c10/cuda/CUDACachingAllocator.cpp, the rules memory/torch_allocator.hpp
// replays for engine weights) never returns a segment to the driver during a training loop (only
// empty_cache() or a failed cudaMalloc does: alloc_block -> release_cached_blocks), and a freed
// block serves a later request only when it is at least as large (get_free_block: best fit; a large
// block is split, should_split). Freed blocks of one segment merge (try_merge_blocks), but every
// tensor of 10 MiB or more gets a segment of its own (get_allocation_size), so two freed
// activations do not merge into one block for a larger tensor. Hence the optimizer step's tensors
// (gradients, the step's temporaries) reuse what forward / backward freed only when each fits in
// one freed forward / backward block:
//   reserved = resident + forward_backward + max(0, step_fitting - forward_backward) + step_too_large
// where step_too_large is the step tensors larger than the largest forward / backward block, and
// reserved = allocated when nothing is too large and the step is the smaller phase. Capped at the
// GPU's capacity (a failed cudaMalloc frees the cached segments and retries). Not modelled: the
// rounding of each request (512 B, 2 MiB segments: < 0.1 % of these sizes) and the fragmentation
// inside forward / backward (activations of different sizes freed and reallocated out of order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/core/bytes.hpp"

namespace vramplan::train {

struct ReservedInput {
  Bytes resident, forward_backward, optimizer_step, capacity;
  //! Sizes of the step's tensors (per-tensor gradients and temporaries) on this GPU, in bytes.
  std::vector<std::uint64_t> step_tensors;
  //! The largest single block forward / backward frees (an activation or the logits).
  std::uint64_t largest_forward_block = 0;
};

struct ReservedView {
  Bytes peak_reserved;
  Bytes step_not_reused;  //!< step bytes that needed new segments on top of forward / backward
  std::string explain;
};

ReservedView reserved_view(const ReservedInput& in);

}  // namespace vramplan::train
