// Variable-length training steps replayed through the caching allocator (train/step_replay.hpp has
// the program and its sources).
#include "vramplan/train/step_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/component.hpp"
#include "vramplan/memory/torch_allocator.hpp"

namespace vramplan::train {
namespace {

using Handle = memory::TorchCachingAllocator::Handle;

// splitmix64: a stated generator, so that a seed gives the same lengths on every platform.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }  // (0, 1)
  double normal() {  // Box-Muller, one value per call
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

class Replay {
 public:
  explicit Replay(const ReplayInput& in) : in_(in) {}

  Handle a(std::uint64_t bytes) { return al_.malloc(std::max<std::uint64_t>(bytes, 1)); }
  void f(Handle h) { al_.free(h); }
  void f(std::vector<Handle>& hs) {
    for (auto it = hs.rbegin(); it != hs.rend(); ++it) f(*it);
    hs.clear();
  }

  void weights() {
    const auto& m = in_.arch;
    const std::uint64_t h = m.hidden_size, q = m.num_heads * m.head_dim, kv = m.num_kv_heads * m.head_dim;
    a(2 * m.vocab_size * h);
    for (std::uint64_t l = 0; l < m.num_layers; ++l)
      for (const std::uint64_t t : {h * q, h * kv, h * kv, q * h, h * m.intermediate_size, h * m.intermediate_size,
                                    m.intermediate_size * h, h, h})
        a(2 * t);
    a(2 * h);
    a(2 * m.vocab_size * h);
  }

  // RMSNorm (torchtune RMSNorm.forward / HF LlamaRMSNorm): x.float(), pow, mean, + eps, rsqrt,
  // x * rstd in fp32, cast back, x weight. Backward keeps the fp32 input and rstd.
  Handle rmsnorm(std::uint64_t T, std::vector<Handle>* keep) {
    const std::uint64_t h = in_.arch.hidden_size;
    const Handle xf = a(4 * T * h), p = a(4 * T * h), m = a(4 * T);
    f(p);
    const Handle e = a(4 * T);
    f(m);
    const Handle r = a(4 * T);
    f(e);
    const Handle y = a(4 * T * h), yb = a(2 * T * h);
    f(y);
    const Handle out = a(2 * T * h);
    f(yb);
    if (keep) {
      keep->push_back(xf);
      keep->push_back(r);
    } else {
      f(xf);
      f(r);
    }
    return out;
  }

  // A linear layer's output, with LoRA's branch (dropout output and mask, A out, B out, scale, sum).
  Handle linear(std::uint64_t T, std::uint64_t nin, std::uint64_t nout, bool lora, std::vector<Handle>* keep) {
    Handle o = a(2 * T * nout);
    if (!lora) return o;
    const Handle d = a(2 * T * nin), mask = a(T * nin), la = a(2 * T * in_.rank), lb = a(2 * T * nout), sc = a(2 * T * nout);
    f(lb);
    const Handle sum = a(2 * T * nout);
    f(o);
    f(sc);
    if (keep) {
      keep->insert(keep->end(), {d, mask, la});
    } else {
      f(d);
      f(mask);
      f(la);
    }
    return sum;
  }

  // One block's forward; with `attn` / `mlp` the saved tensors are kept (recomputation in backward).
  Handle block(std::uint64_t T, std::vector<Handle>* attn, std::vector<Handle>* mlp) {
    const auto& m = in_.arch;
    const std::uint64_t h = m.hidden_size, q = m.num_heads * m.head_dim, kv = m.num_kv_heads * m.head_dim;
    const std::uint64_t I = m.intermediate_size;
    const bool keep = attn != nullptr;
    auto drop = [&](std::vector<Handle>* list, Handle t) {
      if (keep) list->push_back(t);
      else f(t);
    };
    const Handle n = rmsnorm(T, attn);
    Handle Q = linear(T, h, q, in_.lora_q, attn), K = linear(T, h, kv, in_.lora_k, attn);
    const Handle V = linear(T, h, kv, in_.lora_v, attn);
    drop(attn, n);
    auto rope = [&](Handle x, std::uint64_t w) {  // x.float(), stack of the rotated halves, type_as
      const Handle fl = a(4 * T * w), st = a(4 * T * w);
      f(fl);
      const Handle o = a(2 * T * w);
      f(st);
      f(x);
      return o;
    };
    Q = rope(Q, q);
    K = rope(K, kv);
    const Handle att = a(2 * T * q), lse = a(4 * T * m.num_heads);
    drop(attn, Q);
    drop(attn, K);
    drop(attn, V);
    drop(attn, lse);
    const Handle c = a(2 * T * q);  // transpose(1, 2).contiguous()
    drop(attn, att);
    const Handle O = linear(T, q, h, in_.lora_o, attn);
    drop(attn, c);
    const Handle h1 = a(2 * T * h);
    f(O);
    const Handle n2 = rmsnorm(T, mlp);
    const Handle g = linear(T, h, I, in_.lora_mlp, mlp), u = linear(T, h, I, in_.lora_mlp, mlp);
    drop(mlp, n2);
    const Handle act = a(2 * T * I), prod = a(2 * T * I);
    drop(mlp, g);
    drop(mlp, u);
    drop(mlp, act);
    const Handle D = linear(T, I, h, in_.lora_mlp, mlp);
    drop(mlp, prod);
    const Handle out = a(2 * T * h);
    f(D);
    drop(mlp, h1);
    return out;
  }

  // Backward of one recomputed block: the gradients of each op's inputs while its saved tensors go.
  Handle block_backward(std::uint64_t T, std::vector<Handle>& attn, std::vector<Handle>& mlp, Handle grad) {
    const auto& m = in_.arch;
    const std::uint64_t h = m.hidden_size, q = m.num_heads * m.head_dim, kv = m.num_kv_heads * m.head_dim;
    const std::uint64_t I = m.intermediate_size;
    const Handle dprod = a(2 * T * I), dact = a(2 * T * I), du = a(2 * T * I);
    f(dprod);
    const Handle dg = a(2 * T * I);
    f(dact);
    const Handle dn2a = a(2 * T * h);
    f(du);
    const Handle dn2b = a(2 * T * h);
    f(dg);
    const Handle dn2 = a(2 * T * h);
    f(dn2a);
    f(dn2b);
    f(mlp);
    Handle t1 = a(4 * T * h), t2 = a(4 * T * h);
    const Handle dh1 = a(2 * T * h);
    f(t1);
    f(t2);
    f(dn2);
    const Handle dh = a(2 * T * h);  // residual: the MLP branch's gradient + the skip's
    f(dh1);
    const Handle dc = a(2 * T * q), dq = a(2 * T * q), dk = a(2 * T * kv), dv = a(2 * T * kv);
    f(dc);
    for (const std::uint64_t w : {q, kv}) f(a(4 * T * w));  // RoPE backward in fp32
    const Handle dn = a(2 * T * h), sum = a(2 * T * h);
    f(dq);
    f(dk);
    f(dv);
    f(sum);
    f(attn);
    t1 = a(4 * T * h);
    t2 = a(4 * T * h);
    const Handle dx = a(2 * T * h);
    f(t1);
    f(t2);
    f(dn);
    const Handle dx2 = a(2 * T * h);
    f(dx);
    f(dh);
    f(grad);
    return dx2;
  }

  void step(std::uint64_t len) {
    const auto& m = in_.arch;
    const std::uint64_t b = in_.micro_batch, T = b * len, Ts = b * (len > 1 ? len - 1 : 1);
    const std::uint64_t h = m.hidden_size, V = m.vocab_size;
    const Handle ids = a(8 * T), labels = a(8 * T);
    std::vector<Handle> inputs{a(2 * T * h)};
    for (std::uint64_t l = 0; l < m.num_layers; ++l) inputs.push_back(block(T, nullptr, nullptr));
    std::vector<Handle> norm_saved;
    const Handle n = rmsnorm(T, &norm_saved);
    std::vector<Handle> head_saved;
    const Handle lb = linear(T, h, V, in_.lora_output, &head_saved), lf = a(4 * T * V);  // output(h), .float()
    f(lb);
    if (previous_logits_) f(*previous_logits_);  // the loop rebinds `logits` once forward returns
    const Handle shifted = a(4 * Ts * V);          // logits[..., :-1, :].contiguous()
    f(lf);
    const Handle logsm = a(4 * Ts * V);
    // backward: nll grad, log_softmax grad, the slice's zero-padded gradient, its bf16 cast.
    const Handle gn = a(4 * Ts * V), gl = a(4 * Ts * V);
    f(gn);
    f(logsm);
    const Handle gs = a(4 * T * V);
    f(gl);
    const Handle gb = a(2 * T * V);
    f(gs);
    const Handle gx = a(2 * T * h);
    f(gb);
    f(head_saved);
    f(n);
    f(norm_saved);
    const Handle t1 = a(4 * T * h);
    Handle grad = a(2 * T * h);
    f(t1);
    f(gx);
    for (std::uint64_t l = m.num_layers; l-- > 0;) {
      std::vector<Handle> attn, mlp;
      f(block(T, &attn, &mlp));
      grad = block_backward(T, attn, mlp, grad);
      f(inputs[l + 1]);
    }
    f(grad);
    f(inputs[0]);
    f(ids);
    f(labels);
    if (in_.keeps_previous_logits) previous_logits_ = shifted;
    else f(shifted);
  }

  const memory::TorchCachingAllocator& allocator() const { return al_; }

 private:
  const ReplayInput& in_;
  memory::TorchCachingAllocator al_;
  std::optional<Handle> previous_logits_;
};

std::uint64_t batch_length(Rng& rng, const ReplayInput& in) {
  std::uint64_t longest = 1;
  for (std::uint64_t i = 0; i < in.micro_batch; ++i) {
    const double x = in.lengths.median_tokens * std::exp(in.lengths.sigma * rng.normal());
    const auto len = static_cast<std::uint64_t>(std::clamp(std::round(x), 1.0, static_cast<double>(in.max_len)));
    longest = std::max(longest, len);
  }
  return longest;
}

std::string sigma_text(double sigma) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", sigma);
  return buf;
}

}  // namespace

ReplayResult replay_variable_length_steps(const ReplayInput& in) {
  if (in.micro_batch == 0 || in.max_len == 0 || in.lengths.steps == 0 || !(in.lengths.median_tokens > 0) ||
      !(in.lengths.sigma >= 0))
    throw Error(ErrorKind::Usage, "length schedule: micro-batch, max length, steps and median must be > 0");
  // Five fixed seeds: the figure depends on the order of lengths, and the median of five runs is
  // what a run of this setup typically reserves (the spread is in explain).
  constexpr std::uint64_t kSeeds[] = {1, 2, 3, 4, 5};
  std::vector<std::uint64_t> frag;
  ReplayResult out;
  for (const std::uint64_t seed : kSeeds) {
    Rng rng{seed};
    Replay r(in);
    r.weights();
    for (std::uint64_t s = 0; s < in.lengths.steps; ++s) r.step(batch_length(rng, in));
    const auto& al = r.allocator();
    frag.push_back(al.reserved() - al.peak_allocated());  // segments are never released: reserved is its peak
    out.peak_allocated = std::max(out.peak_allocated, al.peak_allocated());
    out.peak_reserved = std::max(out.peak_reserved, al.reserved());
  }
  std::vector<std::uint64_t> sorted = frag;
  std::sort(sorted.begin(), sorted.end());
  out.fragmentation = sorted[sorted.size() / 2];
  out.explain = "caching-allocator replay of " + std::to_string(in.lengths.steps) + " steps x 5 seeds, batch lengths " +
                "log-normal (median " + memory::grouped(static_cast<std::uint64_t>(in.lengths.median_tokens)) +
                " tokens, sigma " + sigma_text(in.lengths.sigma) + ", truncated at " +
                memory::grouped(in.max_len) + "): reserved - allocated " + memory::grouped(sorted.front()) + " .. " +
                memory::grouped(sorted.back()) + " B, median " + memory::grouped(out.fragmentation) + " B";
  return out;
}

}  // namespace vramplan::train
