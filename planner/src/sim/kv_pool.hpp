// The paged KV pool as the simulator counts it: blocks held privately by requests, blocks of
// shared prompt prefixes (referenced, or cached for reuse after their last reference is gone),
// and free blocks. Counts only — no per-block objects — so that a step costs O(1).
//
// Prefix caching follows vLLM V1's block pool (vllm/v1/core/block_pool.py, kv_cache_manager.py
// get_computed_blocks): only full blocks are shared; a block whose last reference is dropped
// stays cached and is evicted least-recently-freed first when a new block is needed. Here a
// shared prefix is one unit (all its blocks cached or evicted together): requests only share
// the prefix their workload declares (prefix_id), never an accidental match.
//
// A preempted request's own blocks are a unit too, one only it can hit, taken back, what
// survives of it, when the request is readmitted. vLLM V1 keeps every full block, outputs
// included (kv_cache_manager.py cache_blocks), evicted a block at a time from its tail
// (single_type_kv_cache_manager.py free() returns a request's blocks tail first, so they leave
// the free queue first; get_computed_blocks finds the longest surviving prefix); SGLang keeps
// the prompt its radix tree holds, a leaf evicted whole (SchedulerRules PreemptedCache).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

namespace vramplan::sim::detail {

class KvPool {
 public:
  explicit KvPool(std::uint64_t blocks) : total_(blocks) {}

  std::uint64_t total() const { return total_; }
  std::uint64_t used() const { return private_ + shared_; }  //!< referenced by requests
  std::uint64_t cached() const { return cached_; }
  std::uint64_t free_now() const { return total_ - private_ - shared_ - cached_; }

  //! Makes `n` blocks free, evicting cached prefixes oldest-first but never prefix `keep` (the
  //! one the request being admitted is about to reuse; 0 = none); false when even that would
  //! not give `n`.
  bool make_free(std::uint64_t n, std::uint64_t keep = 0) {
    if (!can_free(n, keep)) return false;
    while (free_now() < n) evict_oldest(keep, n - free_now());
    return true;
  }

  //! Request `slot` was preempted: `blocks` of its private blocks (past its shared prefix) stay
  //! cached for its own readmission, newest in the LRU order; evicted a block at a time from the
  //! tail, or, `whole`, all at once.
  void cache_own(std::uint32_t slot, std::uint64_t blocks, double now, bool whole) {
    if (blocks == 0) return;
    private_ -= blocks;
    cached_ += blocks;
    Prefix& p = own_[slot];
    p = Prefix{blocks, 0, {now, ++lru_seq_}};
    lru_.emplace(p.lru_key, Unit{true, whole, slot});
  }
  //! Blocks of `slot`'s own cached unit that survive; 0 when none.
  std::uint64_t own_cached(std::uint32_t slot) const {
    auto it = own_.find(slot);
    return it == own_.end() ? 0 : it->second.blocks;
  }
  //! Readmission: the first `use` blocks of `slot`'s own unit become its private blocks again
  //! (use <= own_cached(slot)); the rest of the unit is freed.
  void reclaim_own(std::uint32_t slot, std::uint64_t use) {
    auto it = own_.find(slot);
    if (it == own_.end()) return;
    lru_.erase(it->second.lru_key);
    cached_ -= it->second.blocks;
    private_ += use;
    own_.erase(it);
  }
  //! Whether make_free(n, keep) would succeed, evicting nothing.
  bool can_free(std::uint64_t n, std::uint64_t keep = 0) const {
    const std::uint64_t kept = keep && prefixes_.count(keep) && prefixes_.at(keep).refs == 0 ? prefixes_.at(keep).blocks : 0;
    return n <= total_ - private_ - shared_ - kept;
  }
  void take_private(std::uint64_t n) { private_ += n; }
  void drop_private(std::uint64_t n) { private_ -= n; }
  std::uint64_t private_blocks() const { return private_; }

  //! Blocks of prefix `id` ready for reuse (referenced or cached); 0 when absent.
  std::uint64_t cached_prefix(std::uint64_t id) const {
    auto it = prefixes_.find(id);
    return it == prefixes_.end() ? 0 : it->second.blocks;
  }
  //! A request starts using prefix `id`'s blocks (present: cached_prefix(id) > 0).
  void acquire(std::uint64_t id) {
    Prefix& p = prefixes_.at(id);
    if (p.refs++ == 0) {
      lru_.erase(p.lru_key);
      cached_ -= p.blocks;
      shared_ += p.blocks;
    }
  }
  //! A request that computed `blocks` full blocks of prefix `id` itself publishes them: they
  //! move from its private blocks to the shared prefix, with the request as first reference.
  //! Returns false (nothing moves) when the prefix is already present.
  bool publish(std::uint64_t id, std::uint64_t blocks) {
    if (blocks == 0 || prefixes_.count(id)) return false;
    prefixes_.emplace(id, Prefix{blocks, 1, {}});
    private_ -= blocks;
    shared_ += blocks;
    return true;
  }
  //! Before the first request: a prefix the server already holds (SimOptions::warm_prefixes),
  //! more recently used than those seeded before it. One already present, or one the free blocks
  //! cannot hold, is skipped.
  void seed(std::uint64_t id, std::uint64_t blocks) {
    if (blocks == 0 || blocks > free_now() || prefixes_.count(id)) return;
    const Prefix p{blocks, 0, {-1.0, ++lru_seq_}};
    prefixes_.emplace(id, p);
    lru_.emplace(p.lru_key, Unit{false, true, id});
    cached_ += blocks;
  }
  //! A request stops using prefix `id`; at zero references its blocks become cached.
  void release(std::uint64_t id, double now) {
    Prefix& p = prefixes_.at(id);
    if (--p.refs > 0) return;
    shared_ -= p.blocks;
    cached_ += p.blocks;
    p.lru_key = {now, ++lru_seq_};
    lru_.emplace(p.lru_key, Unit{false, true, id});
  }

 private:
  struct Prefix {
    std::uint64_t blocks = 0;
    std::uint64_t refs = 0;
    std::pair<double, std::uint64_t> lru_key;  // (time freed, sequence) while cached
  };
  struct Unit {
    bool own;          // a preempted request's own blocks (own_, keyed by slot) or a declared prefix
    bool whole;        // evicted all at once (else a block at a time from its tail)
    std::uint64_t id;  // the slot or the prefix id
  };
  // Evicts the least recently freed unit but `keep` (a declared prefix): whole, or only the
  // `want` blocks still wanted, from its tail.
  void evict_oldest(std::uint64_t keep, std::uint64_t want) {
    auto it = lru_.begin();
    if (!it->second.own && it->second.id == keep) ++it;
    if (it->second.own) {
      Prefix& p = own_.at(static_cast<std::uint32_t>(it->second.id));
      const std::uint64_t k = it->second.whole ? p.blocks : std::min(want, p.blocks);
      p.blocks -= k;
      cached_ -= k;
      if (p.blocks > 0) return;
      own_.erase(static_cast<std::uint32_t>(it->second.id));
      lru_.erase(it);
      return;
    }
    const std::uint64_t id = it->second.id;
    cached_ -= prefixes_.at(id).blocks;
    prefixes_.erase(id);
    lru_.erase(it);
  }

  std::uint64_t total_;
  std::uint64_t private_ = 0, shared_ = 0, cached_ = 0;
  std::unordered_map<std::uint64_t, Prefix> prefixes_;
  std::unordered_map<std::uint32_t, Prefix> own_;  // preempted requests' own blocks, by slot
  std::map<std::pair<double, std::uint64_t>, Unit> lru_;  // oldest first
  std::uint64_t lru_seq_ = 0;
};

}  // namespace vramplan::sim::detail
