// The serving simulator's step loop. How each engine rule maps to code, with the engine source
// it comes from, is in docs/simulator.md; the comments here say how the loop stays O(1) per step.
//
// Decoding requests are never visited one by one in a step. Every decoding request advances by
// the same number of tokens a in a decode step (one; with speculative decoding the step's share of
// the accept length, SchedulerRules::accept_length), so a request's cached tokens are
// k0 + (g - g0), where g counts the tokens decode steps have kept; it needs a new KV block exactly
// when its next token's position is a multiple of the block size, i.e. when
// (k0 - g0 + g) mod block = 0. Requests are therefore counted per residue class (k0 - g0) mod block,
// and the blocks a decode step needs are the counts of the a classes its tokens pass. Completions
// come from a heap keyed by the count g at which a request has produced its last token (a
// speculative step may pass it: the surplus tokens are computed and dropped, as the engines drop
// them). A request is materialised (its counters brought up to date) only at an event: completion,
// preemption.
#include "vramplan/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "client.hpp"
#include "kv_pool.hpp"
#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan::sim {
namespace {

constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kProgressEvery = 4096;  // steps between progress calls / debug checks

enum class Phase : std::uint8_t { Free, Waiting, Prefill, Decode };

struct Slot {
  Request req;
  Phase phase = Phase::Free;
  std::uint32_t target = 0;      // output tokens this request will produce (<= req.output_tokens)
  std::uint32_t generated = 0;   // output tokens so far (Decode: at anchor g0)
  std::uint64_t computed = 0;    // tokens in the KV cache (Decode: at anchor g0)
  std::uint64_t g0 = 0;          // decode-step counter the Decode counters are anchored at
  std::uint64_t shared = 0;      // prefix blocks referenced through the pool (not private)
  std::uint64_t own_from = 0;    // preempted: the block its own cached unit starts at (its shared blocks then)
  // Order in the running list (vLLM: self.running); unique per admission, so it also tells a
  // stale completion or decode-order entry (the request was preempted, or the slot reused) from
  // a live one.
  std::uint64_t admit_seq = 0;
  std::uint64_t reserved = 0;    // FullLength: blocks reserved for the whole request
  std::uint64_t reserve_now = 0; // ExpectedOutput, prompt phase: its min(remaining output, clip)
  bool clipped = false;          // ExpectedOutput, decoding: remaining output still above the clip
  double sent_s = 0;             // when the client sent it (latencies start here)
  double admitted_s = -1;        // first admission (queue wait ends)
  double first_token_s = -1;
  double last_token_s = -1;      // its latest output token (not kept up to date while decoding)
};

struct Completion {
  std::uint64_t g_done;
  std::uint64_t admit_seq;
  std::uint32_t slot;
  bool operator>(const Completion& o) const {
    return g_done != o.g_done ? g_done > o.g_done : admit_seq > o.admit_seq;
  }
};

// Requests in the system and completions over time, at most kCapacity points: when full, the
// spacing doubles and the points closer than it to the last one kept go, so a run of any length
// keeps a fixed-size record at about 1/kCapacity of its length everywhere (the verdict reads it).
// Thinning by time matters: points taken one a step early in a run (spacing below the step) and
// halved by index at every doubling kept a few of a long run's first minutes, so the middle of an
// overload's arrival window read as its start (2026-12-07).
class QueueTrace {
 public:
  struct Point {
    double t = 0;
    std::uint64_t in_system = 0, completed = 0;
    double last_drained = 0;     // last time the waiting queue was empty after a step, up to t
    double last_completion = 0;  // when the latest of those `completed` finished
  };
  void record(double t, std::uint64_t in_system, std::uint64_t completed, double last_drained, double last_completion) {
    if (!points_.empty() && t < points_.back().t + spacing_) return;
    if (points_.size() == kCapacity) thin();
    points_.push_back({t, in_system, completed, last_drained, last_completion});
  }
  //! The last point at or before t (the first point when none is).
  Point at(double t) const {
    if (points_.empty()) return {};
    auto it = std::upper_bound(points_.begin(), points_.end(), t, [](double x, const Point& p) { return x < p.t; });
    return it == points_.begin() ? points_.front() : *std::prev(it);
  }

 private:
  // Doubles the spacing and keeps the first point and each one at least the spacing after the
  // last kept, until at most half the capacity is used.
  void thin() {
    do {
      spacing_ *= 2;
      std::size_t kept = 1;
      for (std::size_t i = 1; i < points_.size(); ++i)
        if (points_[i].t >= points_[kept - 1].t + spacing_) points_[kept++] = points_[i];
      points_.resize(kept);
    } while (points_.size() > kCapacity / 2);
  }

  static constexpr std::size_t kCapacity = 4096;
  double spacing_ = 1e-3;
  std::vector<Point> points_;
};

// The per-request latency figures, which the ranks of one DP-attention server share, and those of
// the requests since the last timeline sample (kept when sampling, or when `windows` is set).
struct RequestStats {
  LogHistogram ttft, tpot, itl, e2e, queue;
  LogHistogram window_ttft, window_tpot;
  bool windows = false;
};

// Emits the timeline samples due by `now` (every sampling time from `next` on), each with `state`,
// the engine's or server's state after the step that just ended; the window's latencies go with
// the first of them (later samples of one long step had none). A bound on what a run writes: a
// million samples are about 50 MB of CSV.
// With `before` set, only the samples due strictly before `now`: an idle engine's state up to the
// moment it next has work (a sample at that very moment waits for the step that starts then).
void emit_samples(const SimOptions& opt, RequestStats& stats, double now, const TimelineSample& state, double& next,
                  std::uint64_t& samples, bool before = false) {
  while (before ? next < now : next <= now) {
    TimelineSample t = state;
    t.t_s = next;
    t.ttft_window = stats.window_ttft.summary();
    t.tpot_window = stats.window_tpot.summary();
    stats.window_ttft = LogHistogram();
    stats.window_tpot = LogHistogram();
    opt.on_sample(t);
    if (++samples > 1'000'000)
      throw_usage("--sample-every: the run would write more than 1000000 timeline samples; sample less often");
    next += opt.sample_every_s;
  }
}

class Simulation {
 public:
  Simulation(const SchedulerRules& rules, const StepClock& clock, RequestSource& source, const SimOptions& options,
             RequestStats* shared_stats = nullptr)
      : r_(rules), clock_(clock), client_(source, options, rules.static_batch > 0), opt_(options), pool_(rules.kv_blocks),
        bs_(rules.block_tokens), class_count_(rules.block_tokens, 0), req_(shared_stats ? *shared_stats : own_stats_), kv_usage_(1e-6), running_h_(0.5),
        waiting_h_(0.5) {
    if (r_.kv_blocks == 0) throw_usage("simulate: the engine's KV pool has no blocks");
    if (r_.block_tokens == 0) throw_usage("simulate: block size must be at least one token");
    if (r_.max_seqs == 0) throw_usage("simulate: the engine admits no request (max running requests 0)");
    if (opt_.concurrency && *opt_.concurrency == 0) throw_usage("--concurrency must be at least 1");
    if (r_.decode_round_steps == 0) throw_usage("simulate: a multi-step round needs at least one step");
    if (r_.decode_round_steps > 1 && (r_.chunked_prefill || r_.decode_query_tokens != 1 || r_.overlap_schedule ||
                                      r_.static_batch || r_.out_of_blocks != OutOfBlocks::PreemptNewest))
      throw_internal("simulate: multi-step rounds are modelled for vLLM V0's schedulers without prompt chunks only");
    budget_full_ = r_.step_tokens == 0 ? std::numeric_limits<std::uint64_t>::max() : r_.step_tokens;
    clip_ = r_.reserve_clip_tokens ? r_.reserve_clip_tokens : std::numeric_limits<std::uint64_t>::max();
    ratio_ = r_.reserve_ratio;
  }

  SimResult run() {
    seed_warm_prefixes();
    res_.first_arrival_s = client_.start();
    while (true) {
      admit_arrivals();
      // Finished requests riding in the overlap scheduler's next step keep the engine busy for
      // it; once nothing is left to arrive that step changes nothing measured.
      if (running() == 0 && waiting_.empty() && (riders_ == 0 || !client_.more())) {
        // Idle: jump to the next request the front end hands over, else the next arrival (or the
        // next free user slot, which needs a completion: with nothing running that cannot be, so
        // the next arrival decides).
        const std::optional<double> t = client_.next_event();
        if (!t) break;
        idle_until(*t);
        continue;
      }
      step();
    }
    finish_run();
    return std::move(res_);
  }

  // ---- lockstep driving: several replicas behind one router (simulate_replicas) ----------------
  //! Runs the steps that start before `t`; an idle engine waits until `t`.
  void advance_to(double t) {
    while (busy(true) && now_ < t) step();
    idle_until(t);
  }
  //! A request routed here at its arrival time.
  void offer(const Request& q) {
    if (res_.arrived == 0) res_.first_arrival_s = q.arrival_s;
    last_source_arrival_s_ = q.arrival_s;
    arrive(q, q.arrival_s);
  }
  std::uint64_t in_flight() const { return outstanding(); }
  //! When this engine's next step starts (or, idle, since when it has waited).
  double now() const { return now_; }
  //! An idle engine waits until `t` (a request for it arrives then).
  void wait_until(double t) { idle_until(t); }
  SimResult drain() {
    while (running() > 0 || !waiting_.empty()) step();
    finish_run();
    return std::move(res_);
  }

  // ---- lockstep driving: the ranks of one SGLang DP-attention server (simulate_dp_attention) ---
  //! The prefixes the server held before the first request (SimOptions::warm_prefixes).
  void seed_warm_prefixes() {
    if (r_.prefix_caching)
      for (const CachedPrefix& p : opt_.warm_prefixes)
        if (p.prefix_id) pool_.seed(p.prefix_id, p.tokens / bs_);
  }
  //! A request the server's controller dealt to this rank, sent by the client at `sent`.
  void deal(const Request& q, double sent) {
    if (res_.arrived == 0) res_.first_arrival_s = sent;
    last_source_arrival_s_ = sent;
    arrive(q, sent);
  }
  //! Joins the server's step at `t` and forms this rank's batch; false when it has none (it runs
  //! an idle batch). Requests that finished in the last step ride only while more are to come.
  //! With `decode` false only a prompt batch: nothing is formed when there is none, and the
  //! decodes are left as they are (SchedulerRules::dp_prompt_steps_alone).
  bool form_at(double t, bool more_to_come, bool decode = true) {
    now_ = std::max(now_, t);
    return busy(more_to_come) && form_step(decode);
  }
  const perf::MixedStep& formed() const { return formed_; }
  void run_formed(double dt) { apply_step(dt); }
  bool busy(bool more_to_come) const { return running() > 0 || !waiting_.empty() || (riders_ > 0 && more_to_come); }
  std::uint64_t kv_total() const { return pool_.total(); }
  std::uint64_t finished() const { return res_.completed + res_.rejected; }
  TimelineSample state() const { return sample(); }
  //! Ends this rank's run at the server's time `t`; the area under its number in the system
  //! (for the server's mean) and its rejections by reason come with the result.
  SimResult finish_at(double t, double& in_system_area) {
    now_ = std::max(now_, t);
    finish_run();
    in_system_area = in_system_area_;
    return std::move(res_);
  }

 private:
  // ---- arrivals ------------------------------------------------------------------------------
  std::uint64_t outstanding() const { return running() + waiting_.size() + client_.in_front_end(); }

  // Requests sent by now enter the waiting queue (vLLM adds them between steps: a request that
  // arrives during a step is scheduled from the next step on).
  void admit_arrivals() {
    client_.send(
        now_, [this] { return running() + waiting_.size(); },
        [this](const Request& q, double sent) {
          last_source_arrival_s_ = q.arrival_s;
          note_send(q.arrival_s, sent);
          arrive(q, sent);
        });
  }

  // A request due at `due` that the client sent at `sent`: later when --concurrency users were
  // all busy (the verdict says when that bound the run).
  void note_send(double due, double sent) {
    if (first_sent_s_ < 0) first_sent_s_ = sent;
    last_sent_s_ = sent;
    if (sent > due) {
      ++client_held_;
      client_held_max_s_ = std::max(client_held_max_s_, sent - due);
    }
  }

  void arrive(const Request& q, double sent) {
    ++res_.arrived;
    drain_after_arrival_s_ = -1;
    track_in_system(sent, +1);
    const std::uint64_t total = static_cast<std::uint64_t>(q.input_tokens) + q.output_tokens;
    if (r_.max_model_len && total > r_.max_model_len)
      return reject("prompt + output tokens exceed max_model_len " + std::to_string(r_.max_model_len), sent);
    std::uint32_t target = q.output_tokens;
    if (r_.slot_tokens) {
      if (q.input_tokens >= r_.slot_tokens)
        return reject("prompt does not fit the slot's " + std::to_string(r_.slot_tokens) + " tokens", sent);
      if (total > r_.slot_tokens) {
        if (!r_.truncate_at_slot)
          return reject("prompt + output outgrow the slot's " + std::to_string(r_.slot_tokens) + " tokens", sent);
        target = static_cast<std::uint32_t>(r_.slot_tokens - q.input_tokens);  // stops with finish_reason "length"
      }
    }
    if (r_.refuses_prompt_over_step && r_.step_tokens && q.input_tokens > r_.step_tokens)
      return reject("prompt longer than the " + std::to_string(r_.step_tokens) + " tokens of a step, unchunked", sent);
    // A watermark that applies only beside running requests never refuses one outright.
    const std::uint64_t never_wm = r_.watermark_beside_running_only ? 0 : r_.admission_watermark_blocks;
    if (ceil_div(static_cast<std::uint64_t>(q.input_tokens) + target, bs_) + r_.state_blocks + never_wm > r_.kv_blocks)
      return reject(never_wm ? "needs more KV blocks than the pool holds above its admission watermark"
                             : "needs more KV blocks than the whole pool holds",
                    sent);
    const std::uint32_t s = alloc_slot();
    Slot& slot = slots_[s];
    slot = Slot{};
    slot.req = q;
    slot.phase = Phase::Waiting;
    slot.target = target;
    slot.sent_s = sent;
    if (target < q.output_tokens) ++res_.truncated;
    waiting_.push_back(s);
  }

  void reject(const std::string& reason, double when) {
    ++res_.rejected;
    ++rejections_[reason];
    leave_system(when);
  }

  // A request leaves (completed or rejected): a user of a full closed loop becomes free.
  void leave_system(double when) {
    if (opt_.concurrency && outstanding() + 1 >= *opt_.concurrency) client_.user_free(when);
    track_in_system(when, -1);
  }

  std::uint32_t alloc_slot() {
    if (!free_slots_.empty()) {
      const std::uint32_t s = free_slots_.back();
      free_slots_.pop_back();
      return s;
    }
    slots_.emplace_back();
    return static_cast<std::uint32_t>(slots_.size() - 1);
  }

  // ---- counters of one request ---------------------------------------------------------------
  std::uint64_t tokens_total(const Slot& s) const { return s.req.input_tokens + static_cast<std::uint64_t>(s.generated); }
  std::uint64_t computed_now(const Slot& s) const { return s.phase == Phase::Decode ? s.computed + (g_ - s.g0) : s.computed; }
  std::uint64_t generated_now(const Slot& s) const {
    return s.phase == Phase::Decode ? s.generated + (g_ - s.g0) : s.generated;
  }
  // Inside a multi-step round a running request also holds the blocks of the round's tokens still
  // to come, taken at the round's start (round_left_ is 0 at every boundary; a prompt of a mixed
  // round is whole, so it leaves the prompt phase in the round's first step).
  std::uint64_t private_blocks(const Slot& s) const {
    const bool running = s.phase == Phase::Decode || s.phase == Phase::Prefill;
    const std::uint64_t ahead = running ? round_left_ : 0;
    return ceil_div(computed_now(s) + ahead, bs_) - s.shared + (running ? r_.state_blocks : 0);
  }
  std::uint64_t residue(const Slot& s) const { return ((s.computed % bs_) + bs_ - (s.g0 % bs_)) % bs_; }
  std::uint64_t running() const { return decoding_ + prefill_.size(); }
  // ExpectedOutput: sum over running requests of min(output still to come, clip).
  std::uint64_t reserved_output() const {
    const std::uint64_t clipped_part = clipped_ == 0 ? 0 : clipped_ * clip_;
    return clipped_part + unclipped_rem_ + prompt_reserve_;
  }

  // ---- decode set ------------------------------------------------------------------------------
  void enter_decode(std::uint32_t id) {
    Slot& s = slots_[id];
    s.phase = Phase::Decode;
    s.g0 = g_;
    ++class_count_[residue(s)];
    ++decoding_;
    cached_sum_ += s.computed;
    decode_order_.push_back({id, s.admit_seq});
    // In a multi-step round a request that is done before the round's end keeps computing to it
    // (the batch is frozen; vllm 0.6.0 engine/output_processor/multi_step.py drops the surplus
    // tokens), and it leaves then: at a round boundary (after a prompt round) round_left_ is 0;
    // after a mixed round's first step it is N - 1.
    const std::uint64_t left = s.target - s.generated;
    const std::uint64_t n = r_.decode_round_steps;
    const std::uint64_t steps = n == 1 ? left : round_left_ + ceil_div(left - std::min(left, round_left_), n) * n;
    completions_.push({g_ + steps, s.admit_seq, id});
    // Streaming each step, the client hears nothing from it after its last real token.
    if (steps > left && !r_.stream_per_round) real_done_.push({g_ + left, s.admit_seq, id});
    if (!r_.mix_prefill_decode) {
      if (!fresh_.empty() && fresh_.back().first == now_) ++fresh_.back().second;
      else fresh_.push_back({now_, 1});
    }
    if (r_.admission == Admission::ExpectedOutput) {
      prompt_reserve_ -= s.reserve_now;
      s.reserve_now = 0;
      const std::uint64_t rem = s.target - s.generated;
      s.clipped = rem > clip_;
      if (s.clipped) {
        ++clipped_;
        crossings_.push({g_ + (rem - clip_), s.admit_seq, id});
      } else {
        ++unclipped_;
        unclipped_rem_ += rem;
      }
    }
  }
  // Brings a decoding request's counters up to date and takes it out of the decode set.
  void leave_decode(Slot& s) {
    --class_count_[residue(s)];
    --decoding_;
    if (r_.admission == Admission::ExpectedOutput) {
      if (s.clipped) --clipped_;
      else {
        --unclipped_;
        // Past its target by a speculative step's surplus, the difference is negative; the
        // per-step decrements already took it below zero, and unsigned arithmetic (mod 2^64)
        // brings the sum back exactly.
        unclipped_rem_ -= s.target - generated_now(s);
      }
    }
    const std::uint64_t k = computed_now(s);
    cached_sum_ -= k;
    // A speculative step may keep more tokens than the request asked for: they are dropped.
    s.generated = static_cast<std::uint32_t>(std::min<std::uint64_t>(generated_now(s), s.target));
    s.computed = k;
    s.phase = Phase::Waiting;  // caller sets the real phase
    ++dead_in_order_;
  }
  struct OrderEntry {
    std::uint32_t slot;
    std::uint64_t admit_seq;
  };
  bool alive(const OrderEntry& e) const {
    return slots_[e.slot].phase == Phase::Decode && slots_[e.slot].admit_seq == e.admit_seq;
  }

  // ---- releasing memory --------------------------------------------------------------------
  void release_kv(Slot& s, std::uint64_t private_blocks_held) {
    pool_.drop_private(private_blocks_held);
    if (s.shared) pool_.release(s.req.prefix_id, now_);
    if (r_.admission == Admission::FullLength) reserved_ -= s.reserved;
    s.shared = 0;
    s.reserved = 0;
    if (r_.admission == Admission::ExpectedOutput) {
      prompt_reserve_ -= s.reserve_now;
      s.reserve_now = 0;
    }
  }

  // The newest running request (vLLM V1: self.running.pop(), FCFS policy).
  std::uint32_t newest_running() {
    if (!prefill_.empty()) return prefill_.back();
    while (!decode_order_.empty() && !alive(decode_order_.back())) {
      decode_order_.pop_back();
      --dead_in_order_;
    }
    return decode_order_.empty() ? kNoSlot : decode_order_.back().slot;
  }

  // Preemption by recompute: free every block, back to the head of the waiting queue with the
  // tokens generated so far (vLLM V1 Scheduler._preempt_request: num_computed_tokens = 0,
  // waiting.prepend_request).
  void preempt(std::uint32_t id, bool to_front = true) {
    Slot& s = slots_[id];
    const std::uint64_t held = private_blocks(s);
    if (s.phase == Phase::Decode) {
      if (g_ > s.g0) s.last_token_s = std::max(s.last_token_s, last_decode_end_);  // it decoded since its prompt
      leave_decode(s);
    } else {
      prefill_.erase(std::find(prefill_.begin(), prefill_.end(), id));
    }
    // What stays cached for its readmission, past its shared prefix: every full block (vLLM V1),
    // or the prompt the radix tree holds (SGLang).
    const std::uint64_t kept_tokens = r_.preempted_cache == PreemptedCache::AllBlocks ? s.computed
                                      : r_.preempted_cache == PreemptedCache::Prompt
                                          ? std::min<std::uint64_t>(s.computed, s.req.input_tokens)
                                          : 0;
    const std::uint64_t own = kept_tokens / bs_ > s.shared ? kept_tokens / bs_ - s.shared : 0;
    pool_.cache_own(id, own, now_, r_.preempted_cache == PreemptedCache::Prompt);
    s.own_from = s.shared;
    release_kv(s, held - own);
    s.computed = 0;
    s.phase = Phase::Waiting;
    if (to_front) waiting_.push_front(id);
    ++res_.preemptions;
    preempted_this_step_ = true;
  }

  // Frees blocks for `need` more of request `id`'s tokens, preempting newer requests as the
  // engine does; false when `id` itself had to go.
  bool allocate_or_preempt(std::uint32_t id, std::uint64_t need) {
    while (!pool_.make_free(need)) {
      const std::uint32_t victim = newest_running();
      if (victim == kNoSlot) return false;
      if (r_.out_of_blocks == OutOfBlocks::Fail)
        throw_internal("simulate: the KV pool ran out under an engine that reserves every request's blocks");
      preempt(victim);
      if (victim == id) return false;
    }
    pool_.take_private(need);
    return true;
  }

  // ---- one step --------------------------------------------------------------------------------
  void step() {
    if (form_step()) apply_step(clock_(formed_));
  }

  // Forms the step that starts at now_: admissions, prompt chunks, the decode batch (formed_).
  // false when nothing runs: everything running was preempted to make room, and the next step
  // readmits from the queue.
  bool form_step(bool decode_allowed = true) {
    if (!decode_allowed && r_.mix_prefill_decode) throw_internal("simulate: a prompt-only step of a mixing engine");
    step_start_ = now_;
    chunks_.clear();
    chunk_slots_.clear();
    preempted_this_step_ = false;
    held_.reset();
    std::uint64_t budget = budget_full_;
    // When this step's batch was formed, and so which waiting requests it can take (eligible()):
    // at this step's start, or, with SGLang's overlap scheduler or vLLM's async scheduling on a
    // busy engine, at the previous step's start (this batch was formed while that one ran). An
    // idle engine forms it at once. With SGLang's overlap scheduler the requests that finished in
    // the previous step ride in this one (below), so the engine is busy even when they were the
    // last ones running.
    const bool follows = last_step_end_ == now_;
    const std::uint64_t riders = follows ? riders_ : 0;
    const double riders_cached = follows ? riders_cached_ : 0.0;
    riders_ = 0;
    riders_cached_ = 0;
    const bool busy = (running() > 0 || riders > 0) && follows;
    formed_at_ = busy && r_.overlap_schedule ? last_step_start_ : now_;
    // Finished and preempted requests leave tombstones in the decode order; sweep them when they
    // are half of it, so that memory stays O(requests running) at O(1) amortised per step.
    if (dead_in_order_ > 64 && 2 * dead_in_order_ > decode_order_.size()) compact_decode_order();
    if (running() == 0) ratio_ = r_.reserve_ratio;  // SGLang resets new_token_ratio when idle
    // A round whose requests all finished with its prompt step ends there.
    if (round_left_ > 0 && decoding_ > 0) return form_round_step();
    round_left_ = 0;

    // SGLang runs a prompt batch when it can form one and decodes otherwise; vLLM, TensorRT-LLM
    // and llama.cpp put prompt chunks and decode tokens in one step.
    bool decode_now = decoding_ > 0;
    advance_ = tokens_kept(decode_steps_);
    if (!r_.mix_prefill_decode) {
      schedule_prompts(budget);
      decode_now = decode_allowed && chunks_.empty() && decoding_ > 0;
      // A multi-step decode round takes the blocks of all its tokens at its start
      // (vllm 0.6.0 core/scheduler.py _append_slots with num_lookahead_slots N - 1).
      if (decode_now) allocate_decode_blocks(advance_ * r_.decode_round_steps);
      decode_now = decode_now && decoding_ > 0;
      if (decode_now && r_.decode_round_steps > 1) round_left_ = r_.decode_round_steps;
    } else {
      if (decode_now) {
        // A mixed multi-step round (vLLM 0.6.3+ with chunked prefill) takes its decodes' blocks
        // for all N steps too.
        allocate_decode_blocks(advance_ * r_.decode_round_steps);
        // Every decode runs; prompts get what is left (vLLM keeps max_num_batched_tokens >=
        // max_num_seqs; SGLang's mixed chunk may not). A speculative decode takes 1 + k tokens.
        const std::uint64_t decode_tokens =
            r_.decode_query_tokens == 1 ? decoding_ : checked_mul(decoding_, r_.decode_query_tokens, "decode tokens");
        budget = decode_tokens >= budget ? 0 : budget - decode_tokens;
      }
      schedule_prompts(budget);
      // vLLM 0.6.3+ multi-step with chunked prefill: every round is N steps, prompts (whole) and
      // decodes in its first, the prompts decoding in the others (sequence.py
      // init_multi_step_from_lookahead_slots; core/scheduler.py _get_num_lookahead_slots).
      if (r_.decode_round_steps > 1 && (decoding_ > 0 || !chunks_.empty())) round_left_ = r_.decode_round_steps;
    }
    if (waiting_.empty() || !eligible(waiting_.front())) note_drained(waiting_.empty());
    const std::uint64_t decoders = decode_now ? decoding_ : 0;
    // SGLang's overlap scheduler formed this step's decode batch before it processed the previous
    // step's result, so the requests that finished there decode once more, their token discarded
    // (scheduler.py event_loop_overlap: get_next_batch_to_run and run_batch come before
    // pop_and_process, and update_running_batch filters finished requests out of the running batch
    // only at the next one). They ride only in a decode batch: a prompt batch runs alone unless
    // prompts and decodes mix, and the decode batch after it is formed once the result is known.
    const bool ride = riders > 0 && (r_.mix_prefill_decode || chunks_.empty());
    // Static batches (HF generate) keep computing finished sequences as padding.
    const std::uint64_t seqs = decoders + (decode_now ? padding_seqs_ : 0) + (ride ? riders : 0);
    const double attended =
        (decode_now ? static_cast<double>(cached_sum_ + decoding_ + padding_cached_ + padding_seqs_) : 0.0) +
        (ride ? riders_cached + static_cast<double>(riders) : 0.0);
    if (seqs == 0 && chunks_.empty()) {
      // Everything running was preempted to make room: the next step readmits from the queue.
      // A prompt-only pass that found no prompt batch forms nothing.
      if (preempted_this_step_ || !decode_allowed) return false;
      // Nothing could run and nothing holds memory: arrive() rejects what can never fit, so
      // only a simulator bug gets here.
      throw_internal("simulate: no request can be scheduled and none is running");
    }
    decode_now_ = decode_now;
    formed_ = perf::MixedStep{seqs, attended, chunks_, r_.decode_query_tokens};
    return true;
  }

  // A step inside a multi-step round (some request still decoding): the batch formed at the
  // round's start, nobody admitted or preempted, the blocks taken then (vllm 0.6.0
  // engine/async_llm_engine.py step_async reuses the cached batch while it has steps left; the
  // worker only advances it).
  bool form_round_step() {
    if (waiting_.empty()) note_drained(true);
    held_.reset();  // admissions wait for the round's end: a rule of the round, not a limit
    decode_now_ = true;
    formed_ = perf::MixedStep{decoding_, static_cast<double>(cached_sum_ + decoding_), chunks_, 1, /*host_step=*/false};
    return true;
  }

  // Runs the formed step for `dt` seconds: time, statistics, finished tokens and requests.
  void apply_step(double dt) {
    if (!(dt > 0) || !std::isfinite(dt)) throw_internal("simulate: a step took " + std::to_string(dt) + " s");
    const double start = step_start_;
    const bool decode_now = decode_now_;

    // Time-weighted state over the step.
    kv_usage_.add(static_cast<double>(pool_.used()) / static_cast<double>(pool_.total()), dt);
    running_h_.add(static_cast<double>(running()), dt);
    waiting_h_.add(static_cast<double>(waiting_.size()), dt);
    if (held_) res_.held_back[*held_] += dt;
    observe_peak();
    last_step_start_ = now_;
    now_ += dt;
    last_step_end_ = now_;
    ++res_.steps;
    // A multi-step round streams its tokens to the client once, at its end (vllm 0.6.0
    // engine/llm_engine.py _process_model_outputs creates a request's output only on the round's
    // last step): one chunk of N tokens, which a client that times each chunk (benchmark_serving's
    // streaming clients) counts as one ITL sample.
    const bool chunk_out = round_left_ <= 1 || !r_.stream_per_round;
    if (round_left_ > 0) --round_left_;
    if (decode_now) finish_decode_step(start, chunk_out);
    finish_prompt_chunks();
    if (round_left_ == 0) padding_now_ = 0;  // the padding requests left with the round's end
    if (r_.static_batch && running() == 0) padding_seqs_ = padding_cached_ = 0;
    sample_timeline();
    trace_.record(now_, outstanding(), res_.completed, last_drained_s_, res_.last_completion_s);
    if (res_.steps % kProgressEvery == 0) {
      if (opt_.on_progress) opt_.on_progress(res_.completed + res_.rejected);
#ifndef NDEBUG
      check_invariants();
#endif
    }
    if (opt_.check_invariants) check_invariants();
    if (opt_.timeout_s > 0 && !res_.verdict.first_timeout_s) watch_timeouts();
  }

  // Tokens every decoding request keeps in decode step n: floor((n + 1) L) - floor(n L), 1 without
  // speculative decoding.
  std::uint64_t tokens_kept(std::uint64_t n) const {
    if (r_.accept_length == 1) return 1;
    const double l = r_.accept_length;
    return static_cast<std::uint64_t>(std::floor(static_cast<double>(n + 1) * l) - std::floor(static_cast<double>(n) * l));
  }
  // Blocks the next `tokens` tokens of every decoding request take: the token at g + j opens a
  // block for residue class (block - (g + j) mod block) mod block.
  std::uint64_t decode_blocks_needed(std::uint64_t tokens) const {
    if (tokens == 1) return class_count_[(bs_ - g_ % bs_) % bs_];  // the hot path: one class
    std::uint64_t need = 0;
    for (std::uint64_t j = 0; j < tokens; ++j) need += class_count_[(bs_ - (g_ + j) % bs_) % bs_];
    return need;
  }
  // Blocks for the next `tokens` tokens of every decoding request (advance_, one step's; a
  // multi-step round's, all of its steps').
  void allocate_decode_blocks(std::uint64_t tokens) {
    const std::uint64_t need = decode_blocks_needed(tokens);
    if (need == 0) return;
    if (pool_.make_free(need)) {
      pool_.take_private(need);
      return;
    }
    if (r_.out_of_blocks == OutOfBlocks::Retract) return retract(need);
    // Not enough for all: go through the running list in order as the engine does, preempting
    // from the newest end (vLLM V1 Scheduler.schedule, the RUNNING loop). Rare: materialise.
    compact_decode_order();
    for (std::size_t i = 0; i < decode_order_.size(); ++i) {
      if (!alive(decode_order_[i])) continue;
      const std::uint32_t id = decode_order_[i].slot;
      const std::uint64_t c = computed_now(slots_[id]);
      const std::uint64_t blocks = ceil_div(c + tokens, bs_) - ceil_div(c, bs_);
      if (blocks == 0) continue;
      if (!allocate_or_preempt(id, blocks)) break;  // it preempted itself: nothing newer is left
    }
  }

  // SGLang retract_decode: decoding requests sorted by (output tokens, -prompt tokens) are
  // retracted from the end — fewest outputs, then longest prompt, first — until the free blocks
  // cover retract_decode_steps more decode steps of every request left; then the reservation
  // ratio is set from what the survivors have decoded. Rare: materialises the decoders.
  void retract(std::uint64_t need_now) {
    compact_decode_order();
    std::vector<OrderEntry> order = decode_order_;
    std::sort(order.begin(), order.end(), [&](const OrderEntry& a, const OrderEntry& b) {
      const Slot &x = slots_[a.slot], &y = slots_[b.slot];
      const std::uint64_t gx = generated_now(x), gy = generated_now(y);
      if (gx != gy) return gx > gy;  // the end of the order holds the fewest outputs
      return x.req.input_tokens < y.req.input_tokens;
    });
    auto enough = [&] {
      const std::uint64_t steps = std::max<std::uint64_t>(1, r_.retract_decode_steps);
      const std::uint64_t want = std::max(need_now, ceil_div(steps * advance_ * decoding_, bs_));
      return decoding_ == 0 || pool_.make_free(want);
    };
    std::vector<std::uint32_t> retracted;
    while (!order.empty() && !enough()) {
      const std::uint32_t id = order.back().slot;
      order.pop_back();
      preempt(id, /*to_front=*/false);
      retracted.push_back(id);
    }
    // Back to the waiting queue in arrival order, ahead of requests that never ran.
    std::sort(retracted.begin(), retracted.end(), [&](std::uint32_t a, std::uint32_t b) {
      return slots_[a].req.id > slots_[b].req.id;
    });
    for (std::uint32_t id : retracted) waiting_.push_front(id);
    if (decoding_ == 0) return;
    std::uint64_t decoded = 0, max_new = 0;
    for (const OrderEntry& e : order) {
      decoded += generated_now(slots_[e.slot]);
      max_new += slots_[e.slot].target;
    }
    const double steps = static_cast<double>(r_.retract_decode_steps);
    ratio_ = std::min(1.0, (static_cast<double>(decoded) + steps * static_cast<double>(decoding_)) /
                               static_cast<double>(max_new + 1));
    // The survivors' blocks for this step.
    const std::uint64_t need = decode_blocks_needed(advance_);
    if (!pool_.make_free(need)) throw_internal("simulate: retraction left too few blocks for one decode step");
    pool_.take_private(need);
  }

  void compact_decode_order() {
    if (dead_in_order_ == 0) return;
    std::erase_if(decode_order_, [&](const OrderEntry& e) { return !alive(e); });
    dead_in_order_ = 0;
  }

  // Prompt chunks of requests already running, then admissions from the waiting queue (vLLM V1
  // Scheduler.schedule: RUNNING first, WAITING only when nothing was preempted).
  void schedule_prompts(std::uint64_t& budget) {
    for (std::size_t i = 0; i < prefill_.size() && budget > 0; ++i) {
      const std::uint32_t id = prefill_[i];
      Slot& s = slots_[id];
      const std::uint64_t chunk = std::min(tokens_total(s) - s.computed, budget);
      const std::uint64_t need = ceil_div(s.computed + chunk, bs_) - ceil_div(s.computed, bs_);
      if (!allocate_or_preempt(id, need)) break;
      add_chunk(id, chunk);
      budget -= chunk;
    }
    if (preempted_this_step_) return hold(HeldLimit::KvPool);
    if (r_.static_batch && running() > 0) return hold(HeldLimit::RunningLimit);  // a static batch runs to its end
    const std::uint64_t limit = r_.static_batch ? std::min(r_.static_batch, r_.max_seqs) : r_.max_seqs;
    while (!waiting_.empty() && budget > 0 && running() < limit) {
      if (!eligible(waiting_.front())) return;
      if (!try_admit(waiting_.front(), budget)) return hold(refused_);
      waiting_.pop_front();
    }
    hold(budget == 0 ? HeldLimit::TokenBudget : HeldLimit::RunningLimit);
  }

  // What kept the waiting queue's head out of the step being formed, when it could have joined it
  // (SimResult::held_back; apply_step adds the step's time to it).
  void hold(HeldLimit why) {
    if (!waiting_.empty() && eligible(waiting_.front())) held_ = why;
  }

  // Whether the batch of the step being formed can take waiting request `id`: one sent by the
  // time the batch was formed (the client's round trip to the scheduler is not modelled). With
  // vLLM's async scheduling (v1/engine/core.py step_with_batch_queue: with one batch in flight it
  // schedules and submits the next, then blocks on the older one's result) and with
  // SGLang's overlap scheduler that is the previous step's start (scheduler.py
  // event_loop_overlap: recv_requests, get_next_batch_to_run and run_batch come before the wait
  // for the previous batch's result, so the batch formed then runs after the one already on the
  // GPU). The waiting queue is in sending order (requests put back by a preemption or a
  // retraction, at its head, were sent earlier), so the first ineligible request ends admission.
  bool eligible(std::uint32_t id) const { return slots_[id].sent_s <= formed_at_; }

  bool try_admit(std::uint32_t id, std::uint64_t& budget) {
    Slot& s = slots_[id];
    const std::uint64_t total = tokens_total(s);
    // Prefix-cache hit: full blocks only, and at least the last token is computed
    // (kv_cache_manager.get_computed_blocks: max_cache_hit_length = num_tokens - 1).
    std::uint64_t hit = 0;
    if (r_.prefix_caching && s.req.prefix_id) {
      hit = std::min(pool_.cached_prefix(s.req.prefix_id), (total - 1) / bs_);
      hit = std::min<std::uint64_t>(hit, s.req.prefix_tokens / bs_);
    }
    const std::uint64_t keep = hit ? s.req.prefix_id : 0;  // the prefix it reuses is not evicted for it
    // A preempted request's own cached blocks follow its shared prefix, if that is still whole.
    const std::uint64_t own_left = pool_.own_cached(id);
    const std::uint64_t own = own_left && hit == s.own_from ? std::min(own_left, (total - 1) / bs_ - hit) : 0;
    const std::uint64_t start = (hit + own) * bs_;
    const std::uint64_t remaining = total - start;
    const bool oversized = !r_.chunked_prefill && remaining > budget;
    refused_ = HeldLimit::TokenBudget;
    if (oversized && !(r_.runs_oversized_prompt_alone && budget == budget_full_ && chunks_.empty())) return false;
    refused_ = HeldLimit::KvPool;
    const std::uint64_t chunk = oversized ? remaining : std::min(remaining, budget);
    // A prompt of a mixed multi-step round decodes in the round's other N - 1 steps: their blocks
    // are taken with it (lookahead slots for prefills, core/scheduler.py _get_num_lookahead_slots).
    const std::uint64_t round_ahead = r_.decode_round_steps > 1 && r_.mix_prefill_decode ? r_.decode_round_steps - 1 : 0;
    const std::uint64_t need = ceil_div(start + chunk + round_ahead, bs_) - hit - own + r_.state_blocks;
    // Blocks to make free besides the `own` it takes back, which count against the free ones as
    // an evictable hit does (vLLM single_type_kv_cache_manager.py get_num_blocks_to_allocate;
    // SGLang locks the matched radix node, taking it out of the evictable size).
    std::uint64_t make = need;
    std::uint64_t whole = 0, expected_own = 0;
    switch (r_.admission) {
      case Admission::OnDemand: {
        const std::uint64_t wm = r_.watermark_beside_running_only && running() == 0 ? 0 : r_.admission_watermark_blocks;
        make += wm;
        if (r_.full_sequence_admission) {  // every block past the shared prefix, the ones taken back too
          const std::uint64_t len = r_.max_model_len ? std::min(total, r_.max_model_len) : total;
          if (!pool_.can_free(ceil_div(len, bs_) - hit + r_.state_blocks + wm, keep)) return false;
        }
        break;
      }
      case Admission::FullLength: {
        // GUARANTEED_NO_EVICT: the request's whole length must fit beside what running requests
        // will still grow into.
        whole = ceil_div(static_cast<std::uint64_t>(s.req.input_tokens) + s.target, bs_) - hit + r_.state_blocks;
        const std::uint64_t held = pool_.private_blocks();
        const std::uint64_t growth = reserved_ > held ? reserved_ - held : 0;
        make = growth + whole - own;
        break;
      }
      case Admission::ExpectedOutput: {
        // The prompt plus ratio x min(output still to come, clip) of every running request and
        // of this one must fit the free and evictable tokens (SGLang PrefillAdder).
        expected_own = std::min<std::uint64_t>(s.target - s.generated, clip_);
        const double future = ratio_ * static_cast<double>(reserved_output() + expected_own);
        make += static_cast<std::uint64_t>(std::ceil(future / static_cast<double>(bs_)));
        break;
      }
    }
    if (!pool_.can_free(make + own, keep)) return false;
    pool_.reclaim_own(id, own);
    pool_.make_free(make, keep);
    if (r_.admission == Admission::FullLength) {
      s.reserved = whole;
      reserved_ += whole;
    }
    if (r_.admission == Admission::ExpectedOutput) {
      s.reserve_now = expected_own;
      prompt_reserve_ += expected_own;
    }
    pool_.take_private(need);
    if (hit) {
      pool_.acquire(s.req.prefix_id);
      s.shared = hit;
      ++res_.prefix_hits;
    }
    s.computed = start;
    s.phase = Phase::Prefill;
    s.admit_seq = ++admit_seq_;
    if (s.admitted_s < 0) {
      s.admitted_s = now_;
      req_.queue.add(now_ - s.sent_s);
    }
    prefill_.push_back(id);
    add_chunk(id, chunk);
    budget -= std::min(chunk, budget);
    return true;
  }

  void add_chunk(std::uint32_t id, std::uint64_t chunk) {
    chunks_.push_back({slots_[id].computed, slots_[id].computed + chunk});
    chunk_slots_.push_back(id);
  }

  // ---- after the step ---------------------------------------------------------------------------
  void finish_decode_step(double step_start, bool chunk_out) {
    const std::uint64_t advanced = decoding_;
    const std::uint64_t a = advance_;
    // Each of a tokens kept together gets gap / a (only divided when a > 1: this is the hot path).
    const auto split = [a](double gap) { return a == 1 ? gap : gap / static_cast<double>(a); };
    // Every decoding request produced `a` tokens. The gap since its previous token is this step
    // when prompts and decodes share steps. Otherwise it is everything since the last decode
    // step, except for requests whose previous token came from a prompt step after it: theirs
    // is counted from that token. Several tokens that arrive together split the gap evenly, as
    // SGLang's bench_serving counts a chunk of n tokens (n samples of gap / n). `chunk_out`: the
    // step streams its tokens (false inside a multi-step round that streams once, at its end).
    if (chunk_out) {
      // Requests whose last token came before this step of a multi-step round only pad it.
      while (!real_done_.empty() && real_done_.top().g_done <= g_) {
        const Completion c = real_done_.top();
        real_done_.pop();
        if (slots_[c.slot].phase == Phase::Decode && slots_[c.slot].admit_seq == c.admit_seq) ++padding_now_;
      }
      std::uint64_t counted = 0;
      if (!r_.mix_prefill_decode) {
        for (const auto& [t, n] : fresh_) {
          const std::uint64_t k = std::min(n, advanced - counted);
          req_.itl.add_samples(split(now_ - t), k * a);
          counted += k;
        }
      }
      fresh_.clear();
      const double gap = r_.mix_prefill_decode || last_decode_end_ <= 0 ? now_ - step_start : now_ - last_decode_end_;
      req_.itl.add_samples(split(gap), (advanced - counted - padding_now_) * a);
      last_decode_end_ = now_;
    }
    cached_sum_ += advanced * a;
    padding_cached_ += padding_seqs_;
    g_ += a;
    ++decode_steps_;
    if (r_.admission == Admission::ExpectedOutput) {
      unclipped_rem_ -= unclipped_ * a;
      ratio_ = std::max(r_.reserve_ratio_min, ratio_ - r_.reserve_ratio_decay);
      while (!crossings_.empty() && crossings_.top().g_done <= g_) {
        const Completion c = crossings_.top();
        crossings_.pop();
        Slot& s = slots_[c.slot];
        if (s.phase != Phase::Decode || s.admit_seq != c.admit_seq || !s.clipped) continue;
        s.clipped = false;
        --clipped_;
        ++unclipped_;
        unclipped_rem_ += clip_ - (g_ - c.g_done);  // a speculative step may have passed the crossing
      }
    }
    while (!completions_.empty() && completions_.top().g_done <= g_) {
      const Completion c = completions_.top();
      completions_.pop();
      Slot& s = slots_[c.slot];
      if (s.phase != Phase::Decode || s.admit_seq != c.admit_seq) continue;  // preempted since
      const std::uint64_t held = private_blocks(s);
      leave_decode(s);
      if (r_.static_batch) {
        ++padding_seqs_;
        padding_cached_ += s.computed;
      }
      complete(c.slot, held);
    }
  }

  void finish_prompt_chunks() {
    for (std::size_t i = 0; i < chunk_slots_.size(); ++i) {
      const std::uint32_t id = chunk_slots_[i];
      Slot& s = slots_[id];
      if (s.phase != Phase::Prefill) continue;  // preempted later in the same step
      s.computed = chunks_[i].end;
      if (s.computed < tokens_total(s)) continue;  // more chunks to come
      // The prompt (or the recomputed prompt + output) is in the cache: this forward samples
      // the next token.
      if (s.first_token_s < 0) {
        s.first_token_s = now_;
        req_.ttft.add(now_ - s.sent_s);
        if (windows()) req_.window_ttft.add(now_ - s.sent_s);
      } else {
        // A preempted request's next token after its recompute: the whole stall is one gap, as
        // a streaming client sees it.
        req_.itl.add(now_ - s.last_token_s);
      }
      s.last_token_s = now_;
      ++s.generated;
      publish_prefix(s);
      prefill_.erase(std::find(prefill_.begin(), prefill_.end(), id));
      if (s.generated >= s.target) {
        complete(id, private_blocks(s));
      } else {
        enter_decode(id);
      }
    }
  }

  // The first request to compute a declared prefix makes its full blocks reusable.
  void publish_prefix(Slot& s) {
    if (!r_.prefix_caching || !s.req.prefix_id || s.shared) return;
    const std::uint64_t blocks = std::min<std::uint64_t>(s.req.prefix_tokens / bs_, (tokens_total(s) - 1) / bs_);
    if (pool_.publish(s.req.prefix_id, blocks)) s.shared = blocks;
  }

  void complete(std::uint32_t id, std::uint64_t held) {
    Slot& s = slots_[id];
    release_kv(s, held);
    const double e2e = now_ - s.sent_s;
    req_.e2e.add(e2e);
    if (s.target >= 2) req_.tpot.add((now_ - s.first_token_s) / (s.target - 1));
    if (s.target >= 2 && windows()) req_.window_tpot.add((now_ - s.first_token_s) / (s.target - 1));
    if (opt_.timeout_s > 0 && e2e > opt_.timeout_s) note_timeout(s.sent_s + opt_.timeout_s);
    ++res_.completed;
    res_.input_tokens += s.req.input_tokens;
    res_.output_tokens += s.target;
    res_.last_completion_s = now_;
    if (r_.finished_rides_next_step && !r_.static_batch) {  // it rides in the next step (step())
      ++riders_;
      riders_cached_ += static_cast<double>(s.req.input_tokens) + static_cast<double>(s.target) - 1;
    }
    s.phase = Phase::Free;
    free_slots_.push_back(id);
    leave_system(now_);
  }

  // ---- statistics ---------------------------------------------------------------------------------
  // The number in the system changes at arrivals and completions; its integral is kept exactly.
  // An arrival during a step is noted at the step's end, after `t`: its share of the area from
  // t on is added directly.
  void track_in_system(double t, int delta) {
    if (t >= in_system_t_) {
      in_system_area_ += static_cast<double>(in_system_) * (t - in_system_t_);
      in_system_t_ = t;
    } else {
      in_system_area_ += static_cast<double>(delta) * (in_system_t_ - t);
    }
    in_system_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(in_system_) + delta);
  }

  // The engine has nothing running or waiting from now_ until `t`: the time-weighted figures take
  // the gap at that idle state (from the first arrival on: a mean over time counts the time the
  // engine waited for work, as Little's law does), and the timeline samples due inside it show it.
  void idle_until(double t) {
    if (!(t > now_)) return;
    const double from = std::max(now_, res_.first_arrival_s);
    if (res_.arrived > 0 && t > from) {
      const double dt = t - from;
      kv_usage_.add(static_cast<double>(pool_.used()) / static_cast<double>(pool_.total()), dt);
      running_h_.add(static_cast<double>(running()), dt);
      waiting_h_.add(static_cast<double>(waiting_.size()), dt);
    }
    if (sampling() && next_sample_s_ < t) emit_samples(opt_, req_, t, sample(), next_sample_s_, samples_, /*before=*/true);
    now_ = t;
  }

  // Every request the engine could have taken was admitted: it is keeping up at this moment. The
  // first moment after the latest arrival when nothing at all waits (`empty`; the head of a queue
  // formed a step early may only be too recent for this step) ends the backlog the verdict
  // measures service over.
  void note_drained(bool empty) {
    last_drained_s_ = now_;
    if (empty && drain_after_arrival_s_ < 0) {
      drain_after_arrival_s_ = now_;
      completed_at_drain_ = res_.completed;
      completion_at_drain_s_ = res_.last_completion_s;
    }
  }

  void observe_peak() {
    const std::uint64_t blocks = pool_.used() + pool_.cached();
    res_.kv_blocks_peak = std::max(res_.kv_blocks_peak, blocks);
  }

  TimelineSample sample() const {
    TimelineSample t;
    t.t_s = now_;
    t.running = running();
    t.waiting = waiting_.size();
    t.completed = res_.completed;
    t.preemptions = res_.preemptions;
    t.kv_blocks_used = pool_.used();
    t.kv_blocks_cached = pool_.cached();
    t.kv_usage = static_cast<double>(pool_.used()) / static_cast<double>(pool_.total());
    t.memory_bytes = static_cast<double>(r_.non_kv_bytes) +
                     static_cast<double>((pool_.used() + pool_.cached()) * r_.kv_block_bytes);
    t.held_back = res_.held_back;
    return t;
  }

  bool sampling() const { return opt_.sample_every_s > 0 && opt_.on_sample; }
  // Latency windows are kept for this engine's timeline, or for the DP-attention server's.
  bool windows() const { return sampling() || req_.windows; }

  void sample_timeline() {
    if (sampling() && next_sample_s_ <= now_) emit_samples(opt_, req_, now_, sample(), next_sample_s_, samples_);
  }

  void note_timeout(double t) {
    if (!res_.verdict.first_timeout_s || t < *res_.verdict.first_timeout_s) res_.verdict.first_timeout_s = t;
  }
  // The oldest request in the system (head of the waiting queue, or any running one) decides.
  void watch_timeouts() {
    if (!waiting_.empty() && now_ - slots_[waiting_.front()].sent_s > opt_.timeout_s)
      note_timeout(slots_[waiting_.front()].sent_s + opt_.timeout_s);
  }

  void check_invariants() const {
    std::uint64_t priv = 0, decoders = 0, cached = 0;
    std::vector<std::uint64_t> classes(bs_, 0);
    for (const Slot& s : slots_) {
      if (s.phase == Phase::Decode || s.phase == Phase::Prefill) priv += private_blocks(s);
      if (s.phase == Phase::Decode) {
        ++decoders;
        cached += computed_now(s);
        ++classes[residue(s)];
      }
    }
    if (priv != pool_.private_blocks() || decoders != decoding_ || cached != cached_sum_ || classes != class_count_)
      throw_internal("simulate: block accounting broke (private " + std::to_string(priv) + " vs " +
                     std::to_string(pool_.private_blocks()) + ", decoders " + std::to_string(decoders) + " vs " +
                     std::to_string(decoding_) + ")");
    if (r_.admission == Admission::ExpectedOutput) {
      // The lazy reservation sums (clipped / unclipped decoders, prompts' reserve) against a recount.
      std::uint64_t decode_reserve = 0, prompt_reserve = 0;
      for (const Slot& s : slots_) {
        if (s.phase == Phase::Decode) decode_reserve += std::min<std::uint64_t>(s.target - generated_now(s), clip_);
        if (s.phase == Phase::Prefill) prompt_reserve += s.reserve_now;
      }
      if (decode_reserve != clipped_ * clip_ + unclipped_rem_ || prompt_reserve != prompt_reserve_)
        throw_internal("simulate: the reservation of running requests' output broke (" + std::to_string(decode_reserve) +
                       " vs " + std::to_string(clipped_ * clip_ + unclipped_rem_) + ")");
    }
    if (pool_.used() + pool_.cached() > pool_.total()) throw_internal("simulate: more KV blocks in use than the pool has");
    if (res_.arrived != res_.completed + res_.rejected + running() + waiting_.size())
      throw_internal("simulate: a request was lost (arrived " + std::to_string(res_.arrived) + ")");
  }

  void finish_run() {
    track_in_system(now_, 0);
    res_.end_s = now_;
    res_.in_system = outstanding();
    res_.duration_s = std::max(0.0, res_.last_completion_s - res_.first_arrival_s);
    res_.ttft = req_.ttft.summary();
    res_.tpot = req_.tpot.summary();
    res_.itl = req_.itl.summary();
    res_.e2e = req_.e2e.summary();
    res_.queue = req_.queue.summary();
    res_.kv_usage = kv_usage_.summary();
    res_.running = running_h_.summary();
    res_.waiting = waiting_h_.summary();
    const double span = now_ - res_.first_arrival_s;
    res_.mean_in_system = span > 0 ? in_system_area_ / span : 0;
    res_.memory_peak_bytes = static_cast<double>(r_.non_kv_bytes) + static_cast<double>(res_.kv_blocks_peak * r_.kv_block_bytes);
    for (const auto& [reason, n] : rejections_) res_.rejections.push_back({reason, n});
    res_.verdict = verdict();
    check_invariants();
  }

  // Completions per second between two completions, `since` (a trace point) and the last one by
  // the first drain after the latest arrival (or the run's end): the number completed over the
  // time between them, exact for a steady stream. From the point's time when nothing had
  // completed by then. 0 when no completion falls between.
  double served_since(const QueueTrace::Point& since) const {
    const bool drained = drain_after_arrival_s_ >= 0;
    const std::uint64_t done = drained ? completed_at_drain_ : res_.completed;
    const double t1 = drained ? completion_at_drain_s_ : res_.last_completion_s;
    const double t0 = since.completed > 0 ? since.last_completion : since.t;
    if (done <= since.completed || !(t1 > t0)) return 0;
    return static_cast<double>(done - since.completed) / (t1 - t0);
  }
  // An offline batch's throughput while requests still waited: over the second half of the
  // stretch from `from` (its start) to the last admission, so neither the batch filling up at the
  // start nor the finishing tail, when the batch empties, counts.
  double backlog_throughput(double from) const {
    const double until = drain_after_arrival_s_ >= 0 ? drain_after_arrival_s_ : now_;
    return served_since(trace_.at(from + (until - from) / 2));
  }

  // An open loop is judged on its arrival window [first, last] (docs/simulator.md#outputs).
  //  * Backlogged: the waiting queue never drained over the second half of it (a stable queue, even
  //    at 95 % load, empties between busy periods). The engine ran full from the window's middle
  //    until the queue next drained after the last arrival (or the run's end), so its service rate
  //    is measured over that whole backlog, however short the arrival window: 2,000 requests at
  //    1e6/s arrive within 2 ms, less than a step, and a window of the arrivals alone held no
  //    completion. Overloaded when the arrivals outpaced that rate; the growth is the difference.
  //    Backlogged too: a queue that emptied only longer after the last arrival than the arrivals
  //    lasted (with a batch formed a step early, a window shorter than a step can see the queue
  //    "drain" at a step start only because every request in it came too late for that step).
  //  * Otherwise the number in the system over the second half: a rise of more than 2 % of the
  //    arrival rate that is also beyond the count's own noise (twice sqrt(N_mid + N_last), the
  //    spread of the difference of two counts of a queue in equilibrium, whose count is about
  //    Poisson) is the running batch still filling up: too early to tell ("inconclusive"). A light
  //    load of a few requests in the system moves by a few between two instants by chance alone.
  //  * Fewer than kMinJudged requests tell nothing either way ("inconclusive").
  static constexpr std::uint64_t kMinJudged = 10;
  Verdict verdict() const {
    Verdict v = res_.verdict;  // keeps first_timeout_s
    if (res_.arrived > 0 && res_.rejected == res_.arrived) {
      v.state = "rejected";
      v.explanation = "every request was rejected (" + (rejections_.empty() ? std::string("see the rejections")
                                                                              : rejections_.begin()->first) + ")";
      return v;
    }
    const double first = res_.first_arrival_s, last = last_source_arrival_s_;
    if (res_.arrived == 1 && !opt_.concurrency) {
      v.state = "inconclusive";
      v.explanation = "one request: nothing queued beside it, so it cannot tell stable from overloaded (its latency "
                      "is the engine's alone; simulate more requests)";
      return v;
    }
    if (res_.arrived <= 1 || !(last > first)) {
      v.state = opt_.concurrency ? "closed-loop" : "offline";
      v.explanation = opt_.concurrency
                          ? "every request was ready at t = 0 and at most " + std::to_string(*opt_.concurrency) +
                                " were outstanding: a closed loop, whose queue cannot grow"
                          : "every request was queued at t = 0: an offline batch, judged by its makespan";
      if (!opt_.concurrency) {
        v.served_per_s = backlog_throughput(first);
        if (v.served_per_s > 0)
          v.explanation += " (while requests still waited it completed " + format_number("%.4g", v.served_per_s) +
                           "/s, the second half of that backlog: the finishing tail left out)";
      }
      return v;
    }
    // A finite rate behind a concurrency limit whose users were busy when requests were due: the
    // client, not the engine, set the pace (benchmark_serving's --request-rate with
    // --max-concurrency), and the engine's queue cannot grow beyond the limit. At least half of the
    // requests held at the client says so at once; fewer, when the queue still grew (below), too:
    // what grew was the client's queue behind the limit, which "overloaded" would blame on the
    // engine (10 requests at 5/s behind 4 users, 5 held: the engine ran 4 at 1 % of its KV).
    const bool client_bound = opt_.concurrency && client_held_ > 0 && last_sent_s_ > first_sent_s_;
    auto closed_loop = [&] {
      v.state = "closed-loop";
      char line[360];
      std::snprintf(line, sizeof line,
                    "at most %llu outstanding bound the client: %llu of %llu requests waited for a free user (up to "
                    "%.4g s), so requests due at %.4g/s were sent at %.4g/s: a closed loop, whose queue cannot grow",
                    static_cast<unsigned long long>(*opt_.concurrency), static_cast<unsigned long long>(client_held_),
                    static_cast<unsigned long long>(res_.arrived), client_held_max_s_,
                    static_cast<double>(res_.arrived) / (last - first),
                    static_cast<double>(res_.arrived) / (last_sent_s_ - first_sent_s_));
      v.explanation = line;
      return v;
    };
    if (client_bound && 2 * client_held_ >= res_.arrived) return closed_loop();
    if (res_.arrived < kMinJudged) {
      v.state = "inconclusive";
      v.explanation = "only " + std::to_string(res_.arrived) +
                      " requests arrived: too few to tell stable from overloaded (simulate more requests)";
      return v;
    }
    const double mid = (first + last) / 2;
    const auto a = trace_.at(mid), b = trace_.at(last);
    const double rate = static_cast<double>(res_.arrived) / (last - first);
    // The queue left behind by the arrivals emptied (nothing waiting at all) only this long after
    // the last one: longer than the arrivals lasted, the engine took them in more slowly than they
    // came, though it may have formed a batch while the latest were too recent for it (a queue
    // "drained" so at one step start within a window shorter than a step: 2,000 requests at 1e5/s).
    const double cleared = drain_after_arrival_s_ >= 0 ? drain_after_arrival_s_ : now_;
    const bool never_drained = b.last_drained < a.t;
    char line[480];
    if (never_drained || cleared - last > last - first) {
      // Rejected requests leave on arrival: only the accepted ones can queue.
      const double accepted = static_cast<double>(res_.arrived - res_.rejected) / (last - first);
      v.served_per_s = served_since(a);
      v.queue_growth_per_s = accepted - v.served_per_s;
      v.state = v.queue_growth_per_s > 0 ? "overloaded" : "stable";
      if (v.state == "overloaded" && client_bound) {
        v.served_per_s = 0;
        v.queue_growth_per_s = 0;
        return closed_loop();
      }
      char queue[160];
      if (never_drained) {
        char next[64] = "and never after it";
        if (drain_after_arrival_s_ >= 0) std::snprintf(next, sizeof next, "and next drained at %.4g s", drain_after_arrival_s_);
        std::snprintf(queue, sizeof queue, "the waiting queue never drained from the middle of the arrivals (%.4g s) to the last (%.4g s) %s",
                      mid, last, next);
      } else {
        std::snprintf(queue, sizeof queue,
                      "requests waited until %.4g s, longer after the last arrival (%.4g s) than the arrivals lasted (%.4g s)",
                      cleared, last, last - first);
      }
      char accepted_text[48] = "";
      if (res_.rejected) std::snprintf(accepted_text, sizeof accepted_text, " (%.4g/s not rejected)", accepted);
      std::snprintf(line, sizeof line,
                    "%s: %s; requests arrived at %.4g/s%s and, while it was backed up, completed at %.4g/s, so the number "
                    "in the system changed by %+.4g/s",
                    v.state.c_str(), queue, rate, accepted_text, v.served_per_s, v.queue_growth_per_s);
      v.explanation = line;
      return v;
    }
    const double span = b.t - a.t;
    const double rise = static_cast<double>(b.in_system) - static_cast<double>(a.in_system);
    if (span > 0) {
      v.queue_growth_per_s = rise / span;
      v.served_per_s = static_cast<double>(b.completed - a.completed) / span;
    }
    const bool filling = v.queue_growth_per_s > 0.02 * rate &&
                         rise > 2 * std::sqrt(static_cast<double>(a.in_system + b.in_system));
    v.state = filling ? "inconclusive" : "stable";
    std::snprintf(line, sizeof line,
                  "%s: over the second half of the arrivals (%.4g s) requests arrived at %.4g/s and completed at %.4g/s; "
                  "the number in the system changed by %+.4g/s and the waiting queue drained at times",
                  v.state.c_str(), span, rate, v.served_per_s, v.queue_growth_per_s);
    v.explanation = line;
    if (filling)
      v.explanation += " while the running batch was still filling: too short to tell stable from overloaded "
                       "(simulate more requests)";
    return v;
  }

  const SchedulerRules& r_;
  const StepClock& clock_;
  Client client_;
  const SimOptions& opt_;
  detail::KvPool pool_;
  const std::uint64_t bs_;
  std::uint64_t budget_full_ = 0;

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::deque<std::uint32_t> waiting_;
  std::deque<std::uint32_t> prefill_;        // running, prompt not done, in admission order
  std::vector<OrderEntry> decode_order_;  // running, decoding, in admission order (tombstones)
  std::uint64_t dead_in_order_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  std::vector<std::uint64_t> class_count_;
  std::uint64_t decoding_ = 0;
  std::uint64_t cached_sum_ = 0;     // tokens cached by decoding requests
  // ExpectedOutput (SGLang): the reservation ratio and sum over running requests of
  // min(output to come, clip), kept lazily: decoding requests above the clip count `clip_` each
  // until a heap entry says they crossed it; those below count their exact remainder, which
  // falls by one per decode step each.
  double ratio_ = 0;
  std::uint64_t clip_ = 0;
  std::uint64_t clipped_ = 0, unclipped_ = 0, unclipped_rem_ = 0, prompt_reserve_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> crossings_;
  // Multi-step rounds streamed each step: when each padding request produced its last real token,
  // and how many of the round's decoders are past theirs (all of them leave at the round's end).
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> real_done_;
  std::uint64_t padding_now_ = 0;
  std::uint64_t reserved_ = 0;       // FullLength: blocks reserved by running requests
  std::uint64_t padding_seqs_ = 0, padding_cached_ = 0;  // static batch: finished sequences still computed
  std::uint64_t g_ = 0;              // tokens decode steps have kept per request so far
  std::uint64_t decode_steps_ = 0;   // decode steps so far
  std::uint64_t advance_ = 1;        // tokens the current step's decodes keep (tokens_kept)
  std::uint64_t round_left_ = 0;     // steps left in the multi-step decode round (0: at a boundary)
  std::uint64_t admit_seq_ = 0;
  double now_ = 0;
  double last_decode_end_ = 0;
  double last_step_start_ = -1, last_step_end_ = -1;  // the last step run
  // Requests that finished in the last step, and their cached tokens: with the overlap scheduler
  // they are in the next step's decode batch.
  std::uint64_t riders_ = 0;
  double riders_cached_ = 0;
  double formed_at_ = 0;     // when this step's batch was formed (eligible())
  // Prompt-only steps (no mixing): when requests got their first token since the last decode
  // step, and how many, so that their first decode gap starts there.
  std::vector<std::pair<double, std::uint64_t>> fresh_;
  double next_sample_s_ = 0;
  std::uint64_t samples_ = 0;
  bool preempted_this_step_ = false;
  // What held the waiting queue's head out of the step formed (hold()), and why try_admit last
  // refused a request.
  std::optional<HeldLimit> held_;
  HeldLimit refused_ = HeldLimit::KvPool;
  std::vector<perf::PrefillChunk> chunks_;
  std::vector<std::uint32_t> chunk_slots_;
  // The step form_step made and apply_step runs.
  perf::MixedStep formed_;
  double step_start_ = 0;
  bool decode_now_ = false;

  std::uint64_t in_system_ = 0;
  double in_system_t_ = 0, in_system_area_ = 0;
  double last_drained_s_ = 0;       // last step after which no admitted-able request waited
  // The first such step since the latest arrival (-1: none yet), and the completions by then.
  double drain_after_arrival_s_ = -1;
  std::uint64_t completed_at_drain_ = 0;
  double completion_at_drain_s_ = 0;  // the latest of those completions
  double last_source_arrival_s_ = 0;
  // The client's sends (note_send): how many requests waited for a free user, the longest wait.
  std::uint64_t client_held_ = 0;
  double client_held_max_s_ = 0, first_sent_s_ = -1, last_sent_s_ = 0;
  QueueTrace trace_;

  RequestStats own_stats_;
  RequestStats& req_;  // own_stats_, or the one a DP-attention server's ranks share
  LogHistogram kv_usage_, running_h_, waiting_h_;
  std::map<std::string, std::uint64_t> rejections_;
  SimResult res_;
};

}  // namespace

SimResult simulate(const SchedulerRules& rules, const StepClock& clock, RequestSource& source,
                   const SimOptions& options) {
  return Simulation(rules, clock, source, options).run();
}

std::vector<SimResult> simulate_replicas(const SchedulerRules& rules, const StepClock& clock, RequestSource& source,
                                         std::uint64_t replicas, Router router, const SimOptions& options) {
  if (replicas == 0) throw_usage("simulate: at least one replica");
  if (options.concurrency) throw_usage("simulate: a concurrency limit applies to one replica, not behind a router");
  class Nothing : public RequestSource {
   public:
    std::optional<Request> next() override { return std::nullopt; }
  } nothing;
  std::vector<std::unique_ptr<Simulation>> engines;
  for (std::uint64_t i = 0; i < replicas; ++i)
    engines.push_back(std::make_unique<Simulation>(rules, clock, nothing, options));
  std::uint64_t n = 0;
  while (const std::optional<Request> q = source.next()) {
    if (!(q->arrival_s < std::numeric_limits<double>::infinity())) throw_internal("simulate: a request arrived at t = inf");
    // Every replica catches up to the arrival, so the router sees its state at that moment.
    for (auto& e : engines) e->advance_to(q->arrival_s);
    std::size_t pick = n % replicas;
    if (router == Router::LeastOutstanding) {
      pick = 0;
      for (std::size_t i = 1; i < engines.size(); ++i)
        if (engines[i]->in_flight() < engines[pick]->in_flight()) pick = i;
    }
    engines[pick]->offer(*q);
    ++n;
  }
  std::vector<SimResult> out;
  for (auto& e : engines) out.push_back(e->drain());
  return out;
}

namespace {

// A server of D ranks in lockstep, each running a scheduler of its own (pool, prefix cache,
// limits), every forward gathering all ranks' tokens for the MoE: SGLang DP attention
// (docs/simulator.md#dp-attention) and vLLM's data-parallel engines of a MoE model
// (docs/simulator.md#vllm-data-parallelism). SGLang's data-parallel controller deals requests out
// round-robin (managers/data_parallel_controller.py round_robin_scheduler; 0.5.9's default
// load_balance_method "auto" resolves to it), whatever the ranks' load; vLLM's API server picks the
// engine whose waiting / running counts score lowest (v1/engine/core_client.py
// DPLBAsyncMPClient.get_core_engine_for_request) in a view the DP coordinator refreshes at most
// every 100 ms and the client bumps per request it sends (its waiting count + 1). vLLM's engines
// all run a forward while any has work, an idle one a one-token dummy (DPEngineCoreProc
// run_busy_loop), and stop only at a step count their all-reduce checks (every 32 or 16 steps).
// The client in front (its concurrency limit, its send times, the front end's one-at-a-time
// hand-over) is the one simulate() has.
class DataParallelServer {
 public:
  //! `clock` times the ranks' lockstep steps; with `independent_clock` set the ranks step on their
  //! own instead, each step timed alone (vLLM's dense engines from 0.14).
  DataParallelServer(const SchedulerRules& rules, const LockstepClock& clock, RequestSource& source,
                     std::uint64_t ranks, const SimOptions& options, const StepClock* independent_clock = nullptr)
      : rules_(rules), clock_(clock), single_(independent_clock), client_(source, options, false), opt_(options),
        kv_usage_(1e-6), running_h_(0.5), waiting_h_(0.5) {
    if (ranks < 2) throw_usage("simulate: a data-parallel server needs at least 2 ranks");
    if (opt_.concurrency && *opt_.concurrency == 0) throw_usage("--concurrency must be at least 1");
    stats_.windows = opt_.sample_every_s > 0 && opt_.on_sample;
    // Warm-up requests were dealt like any other: the i-th to rank i mod D, and the run's first
    // request to the rank after the last of them.
    rank_options_.assign(ranks, options);
    for (SimOptions& o : rank_options_) {
      o.concurrency.reset();
      o.sample_every_s = 0;  // the server samples all ranks at once (sample_timeline)
      o.on_sample = nullptr;
      o.send_until_s = 0;
      o.on_progress = nullptr;
      o.warm_prefixes.clear();
    }
    for (std::size_t i = 0; i < options.warm_prefixes.size(); ++i)
      rank_options_[i % ranks].warm_prefixes.push_back(options.warm_prefixes[i]);
    next_rank_ = options.warm_prefixes.size() % ranks;
    for (std::uint64_t d = 0; d < ranks; ++d) {
      ranks_.push_back(std::make_unique<Simulation>(rules, no_clock_, nothing_, rank_options_[d], &stats_));
      ranks_.back()->seed_warm_prefixes();
    }
    steps_.resize(ranks);
    formed_.resize(ranks);
  }

  SimResult run() {
    first_arrival_s_ = client_.start();
    if (single_) return run_independent();
    while (true) {
      send_ready();
      const bool more = client_.more();
      bool busy = false;
      for (const auto& r : ranks_) busy = busy || r->busy(more);
      if (!busy) {
        // vLLM: the wave's dummy forwards go on until a step whose all-reduce finds every engine
        // empty (DPEngineCoreProc._has_global_unfinished_reqs); a request arriving meanwhile joins.
        const std::optional<double> t = client_.next_event();
        const bool wave_open =
            wave_steps_ > 0 && rules_.dp_wave_sync_steps > 0 && wave_steps_ % rules_.dp_wave_sync_steps != 0;
        if (wave_open && (!t || *t > now_)) {
          step(more);
          continue;
        }
        if (!wave_open) wave_steps_ = 0;
        if (!t) break;
        idle_until(*t);
        continue;
      }
      step(more);
    }
    return finish();
  }

 private:
  std::uint64_t held() const {
    std::uint64_t n = 0;
    for (const auto& r : ranks_) n += r->in_flight();
    return n;
  }
  std::uint64_t in_flight() const { return client_.in_front_end() + held(); }

  // The client sends what is due (as for one engine), and the front end hands each request to
  // the controller when it is ready, which deals it to the next rank.
  void send_ready() {
    client_.send(now_, [this] { return held(); }, [this](const Request& q, double sent) {
      Simulation& rank = *ranks_[pick_rank(sent)];
      if (single_ && !rank.busy(true)) rank.wait_until(sent);  // an idle engine starts with it
      const std::uint64_t finished = rank.finished();
      rank.deal(q, sent);
      // Rejected on arrival: its user is free again at once.
      if (rank.finished() != finished && opt_.concurrency) client_.user_free(sent);
    });
  }

  // Independent engines behind one router: events in time order, the client's sends and each
  // engine's next step (the engine whose next step starts first goes next), so a request the
  // router deals at t finds every engine as it is at t, and one mid-step at t takes it at its next.
  SimResult run_independent() {
    while (true) {
      const bool more = client_.more();
      std::optional<std::size_t> next;
      for (std::size_t d = 0; d < ranks_.size(); ++d)
        if (ranks_[d]->busy(more) && (!next || ranks_[d]->now() < ranks_[*next]->now())) next = d;
      const std::optional<double> t = client_.next_action(held());
      if (t && (!next || *t <= ranks_[*next]->now())) {
        account_until(std::max(now_, *t));
        send_ready();
        continue;
      }
      if (!next) break;
      Simulation& rank = *ranks_[*next];
      account_until(rank.now());
      const std::uint64_t before = in_flight();
      if (rank.form_at(now_, more)) rank.run_formed((*single_)(rank.formed()));
      end_s_ = std::max(end_s_, rank.now());
      after_step(before, rank.now());
    }
    now_ = std::max(now_, end_s_);
    return finish();
  }

  // Independent engines: the server's time-weighted state (KV usage over all pools, running and
  // waiting summed) from the last event to `t`, then its timeline sample at `t`.
  void account_until(double t) {
    if (t > now_) {
      add_server_state(t - now_);
      now_ = t;
    }
    sample_timeline();
  }

  // The ranks' present state, summed (KV usage as the share of all their pools), held for `dt`.
  void add_server_state(double dt) {
    std::uint64_t used = 0, total = 0, running = 0, waiting = 0;
    for (const auto& r : ranks_) {
      const TimelineSample x = r->state();
      used += x.kv_blocks_used;
      total += r->kv_total();
      running += x.running;
      waiting += x.waiting;
    }
    kv_usage_.add(static_cast<double>(used) / static_cast<double>(total), dt);
    running_h_.add(static_cast<double>(running), dt);
    waiting_h_.add(static_cast<double>(waiting), dt);
  }

  // The rank for the next request (SchedulerRules::dp_dispatch). vLLM's router scores a view of
  // the engines' counts that the coordinator refreshes at most every dp_stats_refresh_s; between
  // refreshes the client adds each request it sends to its engine's waiting count.
  std::size_t pick_rank(double t) {
    const std::size_t d = ranks_.size();
    if (rules_.dp_dispatch == RankDispatch::RoundRobin) {
      const std::size_t pick = next_rank_;
      next_rank_ = (next_rank_ + 1) % d;
      return pick;
    }
    if (view_.empty() || t >= next_refresh_s_) {
      view_.resize(d);
      for (std::size_t i = 0; i < d; ++i) {
        const TimelineSample x = ranks_[i]->state();
        view_[i] = {static_cast<double>(x.waiting), static_cast<double>(x.running), x.kv_usage};
      }
      next_refresh_s_ = t + rules_.dp_stats_refresh_s;
    }
    // 0.28+: the scan starts one engine later each time (eng_start_index), so ties rotate.
    const std::size_t start = rules_.dp_dispatch == RankDispatch::InflightKvPressure ? next_rank_ : 0;
    std::size_t pick = start;
    double best_first = 0, best_second = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const std::size_t i = (start + k) % d;
      const RankView& v = view_[i];
      double first = 0, second = 0;
      switch (rules_.dp_dispatch) {
        case RankDispatch::WaitingThenRunning: first = v.waiting; second = v.running; break;
        case RankDispatch::WeightedQueue: first = 4 * v.waiting + v.running; break;
        case RankDispatch::InflightKvPressure:
          first = std::max(static_cast<double>(ranks_[i]->in_flight()), v.waiting + v.running) +
                  (v.waiting > 0 ? v.waiting * 6.0 * std::max(0.0, v.kv_usage - 0.5) : 0.0);
          break;
        case RankDispatch::RoundRobin: break;
      }
      if (k == 0 || first < best_first || (first == best_first && second < best_second)) {
        pick = i;
        best_first = first;
        best_second = second;
      }
    }
    view_[pick].waiting += 1;  // the client's own bump (client_count 1: one API server)
    if (rules_.dp_dispatch == RankDispatch::InflightKvPressure) next_rank_ = (next_rank_ + 1) % d;
    return pick;
  }

  void step(bool more) {
    ++wave_steps_;
    bool any = false;
    std::uint64_t used = 0, total = 0, running = 0, waiting = 0;
    // dp_prompt_steps_alone: the ranks' prompt batches first; only when none has one do they
    // form their decode batches.
    bool prompts = false;
    if (rules_.dp_prompt_steps_alone)
      for (std::size_t d = 0; d < ranks_.size(); ++d) {
        formed_[d] = ranks_[d]->form_at(now_, more, false);
        prompts = prompts || formed_[d];
      }
    for (std::size_t d = 0; d < ranks_.size(); ++d) {
      if (!prompts) formed_[d] = ranks_[d]->form_at(now_, more);
      // An idle rank's batch: empty, with the tokens a decode runs a sequence (vLLM's dummy runs them).
      steps_[d] = formed_[d] ? ranks_[d]->formed() : perf::MixedStep{0, 0, {}, rules_.decode_query_tokens};
      any = any || formed_[d];
      const TimelineSample x = ranks_[d]->state();
      used += x.kv_blocks_used;
      total += ranks_[d]->kv_total();
      running += x.running;
      waiting += x.waiting;
    }
    // Everything running was preempted: the next step readmits. vLLM's idle engines (a wave's
    // tail) run their dummy forwards.
    if (!any && rules_.dp_wave_sync_steps == 0) return;
    const double dt = clock_(steps_);
    kv_usage_.add(static_cast<double>(used) / static_cast<double>(total), dt);
    running_h_.add(static_cast<double>(running), dt);
    waiting_h_.add(static_cast<double>(waiting), dt);
    const std::uint64_t before = in_flight();
    for (std::size_t d = 0; d < ranks_.size(); ++d)
      if (formed_[d]) ranks_[d]->run_formed(dt);
    now_ += dt;
    sample_timeline();
    after_step(before, now_);
  }

  // A step that ended at `end` with `before` requests in flight at its start: a completion in a
  // full closed loop frees a user then; progress every kProgressEvery steps.
  void after_step(std::uint64_t before, double end) {
    if (opt_.concurrency && before >= *opt_.concurrency && in_flight() < before) client_.user_free(end);
    if (++server_steps_ % kProgressEvery == 0 && opt_.on_progress) {
      std::uint64_t finished = 0;
      for (const auto& r : ranks_) finished += r->finished();
      opt_.on_progress(finished);
    }
  }

  // Every rank idle from now_ until `t`: the server's time-weighted figures take the gap at that
  // state (from the first arrival on), and the timeline samples due inside it show it.
  void idle_until(double t) {
    if (!(t > now_)) return;
    const double from = std::max(now_, first_arrival_s_);
    if (t > from) add_server_state(t - from);
    sample_timeline(t, /*before=*/true);
    now_ = t;
  }

  // The server's state every sample_every_s: counts summed over the ranks, KV usage as the share of
  // all their pools, memory of the fullest rank (per GPU), latencies of every rank's requests. Up
  // to now_, or, with `before`, the samples due strictly before `until` (an idle gap).
  void sample_timeline(double until = -1, bool before = false) {
    if (until < 0) until = now_;
    if (!stats_.windows || (before ? next_sample_s_ >= until : next_sample_s_ > until)) return;
    TimelineSample t;
    std::uint64_t total = 0;
    for (const auto& r : ranks_) {
      const TimelineSample x = r->state();
      t.running += x.running;
      t.waiting += x.waiting;
      t.completed += x.completed;
      t.preemptions += x.preemptions;
      t.kv_blocks_used += x.kv_blocks_used;
      t.kv_blocks_cached += x.kv_blocks_cached;
      t.memory_bytes = std::max(t.memory_bytes, x.memory_bytes);
      t.held_back += x.held_back;
      total += r->kv_total();
    }
    t.kv_usage = static_cast<double>(t.kv_blocks_used) / static_cast<double>(total);
    emit_samples(opt_, stats_, until, t, next_sample_s_, samples_, before);
  }

  SimResult finish() {
    SimResult out;
    std::map<std::string, std::uint64_t> rejections;
    double area = 0;
    std::vector<SimResult> parts;
    for (auto& r : ranks_) {
      double a = 0;
      parts.push_back(r->finish_at(now_, a));
      area += a;
    }
    for (const SimResult& p : parts) {
      out.arrived += p.arrived;
      out.completed += p.completed;
      out.rejected += p.rejected;
      out.in_system += p.in_system;
      out.truncated += p.truncated;
      out.preemptions += p.preemptions;
      out.prefix_hits += p.prefix_hits;
      out.held_back += p.held_back;
      out.last_completion_s = std::max(out.last_completion_s, p.last_completion_s);
      out.input_tokens += p.input_tokens;
      out.output_tokens += p.output_tokens;
      out.kv_blocks_peak = std::max(out.kv_blocks_peak, p.kv_blocks_peak);   // one rank's pool per GPU
      out.memory_peak_bytes = std::max(out.memory_peak_bytes, p.memory_peak_bytes);
      for (const RejectionCount& x : p.rejections) rejections[x.reason] += x.count;
      if (p.verdict.first_timeout_s)
        out.verdict.first_timeout_s = std::min(out.verdict.first_timeout_s.value_or(p.verdict.first_timeout_s.value()),
                                               p.verdict.first_timeout_s.value());
    }
    for (const auto& [reason, n] : rejections) out.rejections.push_back({reason, n});
    out.steps = server_steps_;
    out.first_arrival_s = first_arrival_s_;
    out.end_s = now_;
    out.duration_s = std::max(0.0, out.last_completion_s - first_arrival_s_);
    // The ranks share the per-request figures (stats_), so every part carries the server's.
    out.ttft = parts.front().ttft;
    out.tpot = parts.front().tpot;
    out.itl = parts.front().itl;
    out.e2e = parts.front().e2e;
    out.queue = parts.front().queue;
    out.kv_usage = kv_usage_.summary();
    out.running = running_h_.summary();
    out.waiting = waiting_h_.summary();
    const double span = now_ - first_arrival_s_;
    out.mean_in_system = span > 0 ? area / span : 0;
    out.verdict = verdict(out, parts);
    return out;
  }

  Verdict verdict(const SimResult& out, const std::vector<SimResult>& parts) const {
    const std::string dealt = std::to_string(parts.size()) + " " + (rules_.dp_name.empty() ? "DP-attention ranks" : rules_.dp_name) +
                              (rules_.dp_dispatch == RankDispatch::RoundRobin ? ", requests dealt round-robin"
                                                                                : ", requests routed to the least loaded");
    Verdict v;
    v.first_timeout_s = out.verdict.first_timeout_s;
    if (out.arrived > 0 && out.rejected == out.arrived) {
      v.state = "rejected";
      v.explanation = "every request was rejected (" + (out.rejections.empty() ? std::string("see the rejections") : out.rejections.front().reason) + ")";
      return v;
    }
    if (opt_.concurrency) {
      // A finite rate behind the limit is paced by it too (the server's queue cannot grow past it).
      const bool ready_at_once = !(client_.last_arrival_s() > first_arrival_s_);
      v.state = "closed-loop";
      v.explanation = std::string(ready_at_once ? "every request was ready at t = 0 and at most " : "at most ") +
                      std::to_string(*opt_.concurrency) + " were outstanding over " + dealt +
                      ": a closed loop, whose queue cannot grow";
      return v;
    }
    if (out.arrived == 1) {
      v.state = "inconclusive";
      v.explanation = "one request (" + dealt + "): nothing queued beside it, so it cannot tell stable from overloaded "
                      "(its latency is the server's alone; simulate more requests)";
      return v;
    }
    if (!(client_.last_arrival_s() > first_arrival_s_)) {
      v.state = "offline";
      v.explanation = "every request was queued at t = 0 (" + dealt + "): an offline batch, judged by its makespan";
      // Each rank's completions while its requests still waited, the finishing tail left out.
      for (const SimResult& p : parts) v.served_per_s += p.verdict.served_per_s;
      return v;
    }
    // Open loop: each rank judged on its own stream; the server is as bad as its worst rank.
    auto rank_of = [](const std::string& state) { return state == "overloaded" ? 2 : state == "inconclusive" ? 1 : 0; };
    std::size_t worst = 0;
    for (std::size_t d = 1; d < parts.size(); ++d)
      if (rank_of(parts[d].verdict.state) > rank_of(parts[worst].verdict.state)) worst = d;
    v.state = parts[worst].verdict.state;
    for (const SimResult& p : parts) {
      v.queue_growth_per_s += p.verdict.queue_growth_per_s;
      v.served_per_s += p.verdict.served_per_s;
    }
    char sums[160];
    std::snprintf(sums, sizeof sums, "; over all ranks the number in the system changed by %+.4g/s, completions %.4g/s",
                  v.queue_growth_per_s, v.served_per_s);
    v.explanation = "the worst of " + dealt + " (each takes 1/" + std::to_string(parts.size()) + " of the arrivals), rank " +
                    std::to_string(worst) + ": " + parts[worst].verdict.explanation + sums;
    return v;
  }

  class Nothing : public RequestSource {
   public:
    std::optional<Request> next() override { return std::nullopt; }
  } nothing_;
  const StepClock no_clock_ = [](const perf::MixedStep&) -> double {
    throw_internal("simulate: a data-parallel rank timed a step alone");
  };
  // The router's view of one engine (vLLM): its counts at the last refresh plus the requests sent
  // to it since.
  struct RankView {
    double waiting = 0, running = 0, kv_usage = 0;
  };
  const SchedulerRules& rules_;
  const LockstepClock& clock_;
  const StepClock* single_;  // independent engines: each step timed alone
  double end_s_ = 0;
  Client client_;
  const SimOptions& opt_;
  std::vector<SimOptions> rank_options_;  // sized once: the ranks hold references
  RequestStats stats_;
  std::vector<std::unique_ptr<Simulation>> ranks_;
  std::vector<perf::MixedStep> steps_;
  std::vector<bool> formed_;
  std::size_t next_rank_ = 0;
  std::vector<RankView> view_;
  double next_refresh_s_ = 0;
  std::uint64_t wave_steps_ = 0;  // forwards since the engines last went idle together
  double now_ = 0, first_arrival_s_ = 0;
  std::uint64_t server_steps_ = 0;
  double next_sample_s_ = 0;
  std::uint64_t samples_ = 0;
  LogHistogram kv_usage_, running_h_, waiting_h_;
};

}  // namespace

SimResult simulate_dp_attention(const SchedulerRules& rules, const LockstepClock& clock, RequestSource& source,
                                std::uint64_t ranks, const SimOptions& options) {
  return DataParallelServer(rules, clock, source, ranks, options).run();
}

SimResult simulate_independent_engines(const SchedulerRules& rules, const StepClock& clock, RequestSource& source,
                                       std::uint64_t engines, const SimOptions& options) {
  const LockstepClock none = [](std::span<const perf::MixedStep>) -> double {
    throw_internal("simulate: independent engines timed in lockstep");
  };
  return DataParallelServer(rules, none, source, engines, options, &clock).run();
}

HeldShares held_shares(const SimResult& r, std::uint64_t engines) {
  HeldShares h;
  const double span = (r.end_s - r.first_arrival_s) * static_cast<double>(std::max<std::uint64_t>(engines, 1));
  if (!(span > 0) || !(r.held_back.total() > 0)) return h;
  for (int i = 0; i < kHeldLimits; ++i) {
    const auto l = static_cast<HeldLimit>(i);
    h.share[i] = r.held_back[l] / span;
    if (!h.most || r.held_back[l] > r.held_back[*h.most]) h.most = l;
  }
  return h;
}

std::string held_shares_text(const HeldShares& h) {
  if (!h.most) return "";
  std::string s;
  for (int i = 0; i < kHeldLimits; ++i)
    s += std::string(i ? ", " : "") + kHeldLimitWords[i] + " " + format_number("%.1f", h.share[i] * 100) + " %";
  return s + "; most by the " + held_limit_words(*h.most);
}

}  // namespace vramplan::sim
