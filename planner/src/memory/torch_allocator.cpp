#include "vramplan/memory/torch_allocator.hpp"

#include <algorithm>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::memory {

using C = TorchAllocatorConstants;

std::uint64_t TorchCachingAllocator::round_size(std::uint64_t bytes) {
  return bytes < C::kMinBlockSize ? C::kMinBlockSize : round_up(bytes, C::kMinBlockSize);
}

std::uint64_t TorchCachingAllocator::segment_size(std::uint64_t rounded) {
  if (rounded <= C::kSmallSize) return C::kSmallBuffer;
  if (rounded < C::kMinLargeAlloc) return C::kLargeBuffer;
  return round_up(rounded, C::kRoundLarge);
}

TorchCachingAllocator::Handle TorchCachingAllocator::malloc(std::uint64_t bytes) {
  if (bytes == 0) throw_internal("TorchCachingAllocator::malloc: 0 bytes (empty tensors get no block)");
  const std::uint64_t size = round_size(bytes);
  const bool small = size <= C::kSmallSize;
  auto& free_blocks = pool(small);
  std::size_t b = 0;
  if (const auto it = free_blocks.lower_bound({size, 0, 0, 0}); it != free_blocks.end()) {
    b = std::get<3>(*it);
    free_blocks.erase(it);
  } else {  // no cached block fits: a new segment (cudaMalloc)
    const std::uint64_t seg = segment_size(size);
    reserved_ = checked_add(reserved_, seg);
    b = blocks_.size();
    blocks_.push_back({segments_++, 0, seg, 0, small, false, true, std::nullopt, std::nullopt});
  }
  const std::uint64_t remaining = blocks_[b].size - size;
  if (small ? remaining >= C::kMinBlockSize : remaining > C::kSmallSize) {  // should_split()
    const std::size_t r = blocks_.size();
    Block rest{blocks_[b].segment, blocks_[b].offset + size, remaining, 0, small, false, true, b, blocks_[b].next};
    blocks_.push_back(rest);
    if (rest.next) blocks_[*rest.next].prev = r;
    blocks_[b].next = r;
    blocks_[b].size = size;
    free_blocks.insert(key(r));
  }
  Block& blk = blocks_[b];
  blk.allocated = true;
  blk.requested = bytes;
  allocated_ = checked_add(allocated_, blk.size);
  requested_ = checked_add(requested_, bytes);
  peak_ = std::max(peak_, allocated_);
  return b;
}

void TorchCachingAllocator::absorb(std::size_t into, std::size_t from) {
  Block& a = blocks_[into];
  Block& f = blocks_[from];
  pool(f.small).erase(key(from));
  if (f.offset < a.offset) {  // `from` precedes `into`
    a.offset = f.offset;
    a.prev = f.prev;
    if (a.prev) blocks_[*a.prev].next = into;
  } else {
    a.next = f.next;
    if (a.next) blocks_[*a.next].prev = into;
  }
  a.size += f.size;
  f.live = false;
}

void TorchCachingAllocator::free(Handle h) {
  if (h >= blocks_.size() || !blocks_[h].live || !blocks_[h].allocated)
    throw_internal("TorchCachingAllocator::free: not an allocated block");
  Block& blk = blocks_[h];
  blk.allocated = false;
  allocated_ -= blk.size;
  requested_ -= blk.requested;
  blk.requested = 0;
  // free_block(): merge with free neighbours of the same segment, then cache the block.
  if (const auto p = blk.prev; p && !blocks_[*p].allocated) absorb(h, *p);
  if (const auto n = blocks_[h].next; n && !blocks_[*n].allocated) absorb(h, *n);
  pool(blocks_[h].small).insert(key(h));
}

std::uint64_t TorchCachingAllocator::block_size(Handle h) const {
  if (h >= blocks_.size() || !blocks_[h].live || !blocks_[h].allocated)
    throw_internal("TorchCachingAllocator::block_size: not an allocated block");
  return blocks_[h].size;
}

}  // namespace vramplan::memory
