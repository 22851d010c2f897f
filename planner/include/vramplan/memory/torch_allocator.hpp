// vramplan/memory/torch_allocator.hpp — PyTorch's CUDA caching allocator, simulated exactly
// for one stream, default configuration (no expandable segments, no max_split_size, no
// roundup_power2_divisions), so that "how much does torch.cuda.memory_allocated() grow" can be
// answered for a sequence of tensor allocations.
//
// memory_allocated() counts whole allocator BLOCKS, not the bytes asked for: every request is
// rounded to 512 B, and a block carved from a segment keeps the segment's tail when that tail is
// too small to split off. vLLM's "Model loading took X GiB" is such a difference
// (vllm/utils/mem_utils.py DeviceMemoryProfiler), so the rounding is part of what it reports.
//
// Rules and constants: c10/cuda/CUDACachingAllocator.cpp (pytorch/pytorch commit
// 001074d25084fdb87a799823e395a50f5ec044d3; PYTORCH_CUDA_ALLOC_CONF unset):
//   round_size():          < kMinBlockSize -> kMinBlockSize, else a multiple of kMinBlockSize
//   get_pool():            size <= kSmallSize -> small pool, else large pool
//   get_allocation_size(): <= kSmallSize -> kSmallBuffer; < kMinLargeAlloc -> kLargeBuffer;
//                          else rounded up to kRoundLarge (a new segment of that size)
//   should_split():        small pool: remainder >= kMinBlockSize; large: remainder > kSmallSize
//   get_free_block():      best fit — the smallest free block of the pool that fits, then the
//                          lowest address (BlockComparatorSize: stream, size, ptr)
//   free_block():          merges with free neighbours of the same segment (try_merge_blocks);
//                          segments stay cached (never returned to the driver here)
//   allocated_bytes stat:  += block->size in alloc_found_block, -= block->size on free
// Addresses are not known: segments are ordered by creation (a stand-in for cudaMalloc's
// addresses, which only matters when two free blocks of equal size tie).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

namespace vramplan::memory {

//! The allocator's size constants (CUDACachingAllocator.cpp, see the file comment).
struct TorchAllocatorConstants {
  static constexpr std::uint64_t kMinBlockSize = 512;          //!< all sizes rounded to >= 512 B
  static constexpr std::uint64_t kSmallSize = 1048576;         //!< largest "small" request: 1 MiB
  static constexpr std::uint64_t kSmallBuffer = 2097152;       //!< small segments: 2 MiB
  static constexpr std::uint64_t kLargeBuffer = 20971520;      //!< segment for 1-10 MiB requests: 20 MiB
  static constexpr std::uint64_t kMinLargeAlloc = 10485760;    //!< from 10 MiB a request gets its own segment
  static constexpr std::uint64_t kRoundLarge = 2097152;        //!< ... rounded up to 2 MiB
};

class TorchCachingAllocator {
 public:
  using Handle = std::size_t;  //!< an allocated block, as returned by malloc()

  //! round_size(): what a request of `bytes` is rounded to before any block is chosen.
  static std::uint64_t round_size(std::uint64_t bytes);
  //! get_allocation_size(): the segment cudaMalloc'd for a rounded request no free block fits.
  static std::uint64_t segment_size(std::uint64_t rounded);

  //! Allocates `bytes` (> 0: PyTorch hands empty tensors no block; Error(Internal) for 0).
  Handle malloc(std::uint64_t bytes);
  //! Frees a block returned by malloc(). Throws Error(Internal) for a handle not allocated.
  void free(Handle h);

  std::uint64_t block_size(Handle h) const;      //!< bytes the block occupies (what "allocated" counts)
  std::uint64_t allocated() const { return allocated_; }        //!< memory_allocated()
  std::uint64_t peak_allocated() const { return peak_; }        //!< max_memory_allocated()
  std::uint64_t reserved() const { return reserved_; }          //!< memory_reserved()
  std::uint64_t requested() const { return requested_; }       //!< bytes asked for, live blocks
  std::size_t segments() const { return segments_; }

 private:
  struct Block {
    std::size_t segment = 0;
    std::uint64_t offset = 0, size = 0, requested = 0;
    bool small = false, allocated = false, live = true;  // live: not merged into a neighbour
    std::optional<std::size_t> prev, next;               // neighbours in the same segment
  };
  // Free blocks of one pool in best-fit order: size, then segment and offset (the address).
  using FreeKey = std::tuple<std::uint64_t, std::size_t, std::uint64_t, std::size_t>;
  std::set<FreeKey>& pool(bool small) { return small ? small_free_ : large_free_; }
  FreeKey key(std::size_t i) const { return {blocks_[i].size, blocks_[i].segment, blocks_[i].offset, i}; }
  void absorb(std::size_t into, std::size_t from);

  std::vector<Block> blocks_;
  std::set<FreeKey> small_free_, large_free_;
  std::uint64_t allocated_ = 0, peak_ = 0, reserved_ = 0, requested_ = 0;
  std::size_t segments_ = 0;
};

}  // namespace vramplan::memory
