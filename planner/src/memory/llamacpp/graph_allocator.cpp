// ggml-alloc's graph allocator, replayed: ggml_gallocr_alloc_graph_impl over a ggml_dyn_tallocr
// (ggml/src/ggml-alloc.c). Only the rules that decide the reserved size are kept: leafs first,
// best-fit over the free blocks but the last, the last block grows the buffer, merging on free,
// in-place reuse, and freeing a tensor (or a view's source) after its last consumer.
#include <limits>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/llamacpp.hpp"

namespace vramplan::llamacpp {

int ComputeGraph::add(GraphTensor t, bool leaf) {
  for (int s : t.src)
    if (s < 0 || static_cast<std::size_t>(s) >= tensors_.size()) throw_internal("graph source out of range: " + t.name);
  tensors_.push_back(std::move(t));
  const int id = static_cast<int>(tensors_.size() - 1);
  (leaf ? leafs_ : nodes_).push_back(id);
  return id;
}

int ComputeGraph::external(std::string name) {
  GraphTensor t;
  t.name = std::move(name);
  t.external = true;
  return add(std::move(t), true);
}

int ComputeGraph::input(std::string name, std::uint64_t bytes) {
  GraphTensor t;
  t.name = std::move(name);
  t.bytes = bytes;
  t.input = true;
  return add(std::move(t), true);
}

int ComputeGraph::leaf(std::string name, std::uint64_t bytes) {
  GraphTensor t;
  t.name = std::move(name);
  t.bytes = bytes;
  return add(std::move(t), true);
}

int ComputeGraph::op(std::string name, std::uint64_t bytes, std::vector<int> src, bool can_inplace) {
  GraphTensor t;
  t.name = std::move(name);
  t.bytes = bytes;
  t.src = std::move(src);
  t.can_inplace = can_inplace;
  return add(std::move(t), false);
}

int ComputeGraph::store(std::string name, std::vector<int> src) {
  GraphTensor t;
  t.name = std::move(name);
  t.src = std::move(src);
  t.external = true;
  return add(std::move(t), false);
}

int ComputeGraph::view(std::string name, int of, bool contiguous, std::optional<std::uint64_t> bytes) {
  GraphTensor t;
  t.name = std::move(name);
  t.src = {of};
  t.bytes = bytes.value_or(tensors_.at(static_cast<std::size_t>(of)).bytes);
  // A view of a view shares the root's memory (ggml: view_src is always the owning tensor).
  int root = of;
  while (tensors_.at(static_cast<std::size_t>(root)).view_of >= 0) root = tensors_[static_cast<std::size_t>(root)].view_of;
  t.view_of = root;
  t.contiguous = contiguous;
  return add(std::move(t), false);
}

int ComputeGraph::write_into(std::string name, int into, std::vector<int> src) {
  const int v = view(std::move(name), into);
  for (int s : src)
    if (s < 0 || s >= v) throw_internal("graph source out of range: " + tensors_[static_cast<std::size_t>(v)].name);
  tensors_[static_cast<std::size_t>(v)].src = std::move(src);
  return v;
}

namespace {

// ggml_dyn_tallocr with one chunk (the CPU and CUDA buffer types have no practical size limit).
class DynAllocator {
 public:
  explicit DynAllocator(std::uint64_t alignment) : align_(alignment) {
    blocks_.push_back({0, std::numeric_limits<std::uint64_t>::max() / 2});
  }

  std::uint64_t alloc(std::uint64_t bytes) {
    const std::uint64_t size = round_up(bytes, align_);
    // Best fit among every block but the last; ties go to the later block (<=), as in ggml.
    std::size_t best = blocks_.size();
    std::uint64_t best_size = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i + 1 < blocks_.size(); ++i)
      if (blocks_[i].size >= size && blocks_[i].size <= best_size) {
        best = i;
        best_size = blocks_[i].size;
      }
    if (best == blocks_.size()) best = blocks_.size() - 1;  // the last block grows the buffer
    Block& b = blocks_[best];
    const std::uint64_t offset = b.offset;
    b.offset += size;
    b.size -= size;
    if (b.size == 0) blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
    peak_ = std::max(peak_, offset + size);
    return offset;
  }

  void free(std::uint64_t offset, std::uint64_t bytes) {
    const std::uint64_t size = round_up(bytes, align_);
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      Block& b = blocks_[i];
      if (b.offset + b.size == offset) {  // the freed range follows this block
        b.size += size;
        if (i + 1 < blocks_.size() && b.offset + b.size == blocks_[i + 1].offset) {
          b.size += blocks_[i + 1].size;
          blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i + 1));
        }
        return;
      }
      if (offset + size == b.offset) {  // the freed range precedes this block
        b.offset = offset;
        b.size += size;
        if (i > 0 && blocks_[i - 1].offset + blocks_[i - 1].size == b.offset) {
          blocks_[i - 1].size += b.size;
          blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        }
        return;
      }
    }
    std::size_t at = 0;
    while (at < blocks_.size() && blocks_[at].offset < offset) ++at;
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(at), {offset, size});
  }

  std::uint64_t peak() const { return peak_; }

 private:
  struct Block {
    std::uint64_t offset, size;
  };
  std::uint64_t align_;
  std::vector<Block> blocks_;
  std::uint64_t peak_ = 0;
};

struct HashNode {
  int n_children = 0;
  int n_views = 0;
  bool allocated = false;
  std::uint64_t offset = 0;
};

class Replay {
 public:
  Replay(const ComputeGraph& g, std::uint64_t alignment)
      : g_(g), alloc_(alignment), h_(g.tensors().size()) {}

  std::uint64_t run() {
    for (int leaf : g_.leafs()) allocate(leaf);
    for (int n : g_.nodes()) {
      const GraphTensor& t = at(n);
      if (t.view_of >= 0) ++h_[idx(t.view_of)].n_views;
      for (int s : t.src) {
        ++h_[idx(s)].n_children;
        if (at(s).input) allocate(s);
      }
    }
    for (int n : g_.nodes()) {
      for (int s : at(n).src) allocate(s);
      allocate(n);
      for (int s : at(n).src) release_parent(s);
    }
    return alloc_.peak();
  }

 private:
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  const GraphTensor& at(int i) const { return g_.tensors()[idx(i)]; }

  // ggml_gallocr_allocate_node
  void allocate(int n) {
    const GraphTensor& t = at(n);
    HashNode& hn = h_[idx(n)];
    if (t.external || hn.allocated || t.view_of >= 0) return;
    hn.allocated = true;
    if (t.can_inplace) {
      for (int p : t.src) {
        const GraphTensor& parent = at(p);
        HashNode& ph = h_[idx(p)];
        // Only a tensor this allocator owns (never a view: views are not "allocated"), not an
        // output, with the same layout, whose only consumer is this node.
        if (!ph.allocated || parent.output || parent.bytes != t.bytes || !parent.contiguous) continue;
        if (ph.n_children == 1 && ph.n_views == 0) {
          hn.offset = ph.offset;
          ph.allocated = false;
          return;
        }
      }
    }
    hn.offset = alloc_.alloc(t.bytes);
  }

  // The "update parents" step after a node is computed.
  void release_parent(int p) {
    HashNode& ph = h_[idx(p)];
    --ph.n_children;
    if (ph.n_children != 0 || ph.n_views != 0) return;
    const GraphTensor& parent = at(p);
    if (parent.view_of >= 0) {
      HashNode& vh = h_[idx(parent.view_of)];
      --vh.n_views;
      if (vh.n_views == 0 && vh.n_children == 0 && vh.allocated) free_tensor(parent.view_of);
    } else if (ph.allocated) {
      free_tensor(p);
    }
  }

  void free_tensor(int n) {
    if (at(n).output) return;  // graph outputs are never freed
    alloc_.free(h_[idx(n)].offset, at(n).bytes);
    h_[idx(n)].allocated = false;
  }

  const ComputeGraph& g_;
  DynAllocator alloc_;
  std::vector<HashNode> h_;
};

}  // namespace

std::uint64_t gallocr_peak(const ComputeGraph& graph, std::uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) throw_internal("buffer alignment must be a power of 2");
  return Replay(graph, alignment).run();
}

}  // namespace vramplan::llamacpp
