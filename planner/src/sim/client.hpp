// client.hpp — the load generator and the server's front end in front of a scheduler, for the
// simulator's single engine and its DP-attention server alike (simulator.cpp): when each request
// is sent, and when it reaches the scheduler. Internal to the sim layer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>

#include "vramplan/core/error.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::sim {

class Client {
 public:
  //! `hands_over_together`: every request reaches the scheduler when it is sent, none behind
  //! another (HF generate's static batches, built from whatever is queued).
  Client(RequestSource& source, const SimOptions& options, bool hands_over_together)
      : source_(source), opt_(options), together_(hands_over_together) {}

  //! Takes the first request; its arrival is the run's start (0 for an empty workload).
  double start() {
    pull_next();
    first_arrival_s_ = next_ ? next_->arrival_s : 0;
    return first_arrival_s_;
  }

  //! Sends every request due by `now` while fewer than --concurrency are outstanding (`held()`:
  //! those the server holds, besides the front end's), and hands each to `to_server(request,
  //! sent_s)` once the front end has it ready. A rejection in to_server frees its user at once
  //! (user_free), so the loop may send again.
  template <class Held, class ToServer>
  void send(double now, Held&& held, ToServer&& to_server) {
    while (next_ && next_->arrival_s <= now && (!opt_.concurrency || held() + front_.size() < *opt_.concurrency)) {
      // With a concurrency limit the client sends when a user is free: latency starts then
      // (benchmark_serving takes its semaphore before it starts the request's clock).
      const double sent = std::max(next_->arrival_s, user_free_since_);
      if (opt_.send_until_s > 0 && sent >= opt_.send_until_s) {
        next_.reset();  // the client stops sending: nothing more arrives
        break;
      }
      const Request q = *next_;
      pull_next();
      last_arrival_s_ = q.arrival_s;
      // An offline job (no concurrency limit, queued at the run's first instant) and static
      // batches hand their requests to the engine together.
      const bool queued = together_ || (!opt_.concurrency && sent <= first_arrival_s_);
      const double ready = queued || sent > last_ready_s_ ? sent : last_ready_s_ + kBurstSpacing_s;
      last_ready_s_ = ready;
      front_.push_back({q, sent, ready});
      hand_over(now, to_server);
    }
    hand_over(now, to_server);
  }

  //! With the server idle: when the client next does something (the front end hands over a
  //! request, else the next arrival); nullopt once it has nothing more to send.
  std::optional<double> next_event() const {
    if (!front_.empty()) return front_.front().ready_s;
    if (next_) return next_->arrival_s;
    return std::nullopt;
  }
  //! With `held` requests outstanding at the server: when the client next sends or hands over
  //! one, whether or not the server is idle; nullopt while every user of a full closed loop
  //! waits for a completion, or once nothing is left (independent engines, simulator.cpp).
  std::optional<double> next_action(std::uint64_t held) const {
    if (!front_.empty()) return front_.front().ready_s;
    if (!next_ || (opt_.concurrency && held + front_.size() >= *opt_.concurrency)) return std::nullopt;
    return std::max(next_->arrival_s, user_free_since_);
  }
  //! Requests still to be sent or handed over.
  bool more() const { return next_.has_value() || !front_.empty(); }
  std::uint64_t in_front_end() const { return front_.size(); }
  //! A user of a full closed loop is free from `when` (its request completed or was rejected).
  void user_free(double when) { user_free_since_ = std::max(user_free_since_, when); }
  //! The arrival time of the latest request sent (the verdict's end of the arrival stream).
  double last_arrival_s() const { return last_arrival_s_; }

 private:
  struct Sent {
    Request req;
    double sent_s, ready_s;
  };

  void pull_next() {
    next_ = source_.next();
    if (next_ && next_->output_tokens == 0) throw_usage("simulate: request " + std::to_string(next_->id) + " asks for 0 output tokens");
    if (next_ && std::isinf(next_->arrival_s)) throw_internal("simulate: a request arrived at t = inf");
  }

  template <class ToServer>
  void hand_over(double now, ToServer& to_server) {
    while (!front_.empty() && front_.front().ready_s <= now) {
      const Sent s = front_.front();
      front_.pop_front();
      to_server(s.req, s.sent_s);
    }
  }

  // A burst of sends (a closed loop's first wave, or the users one step freed) reaches the
  // scheduler one request at a time: each is its own HTTP request that the server's front end
  // parses, tokenizes and forwards alone (SGLang tokenizer_manager.py _send_one_request; vLLM's
  // API server into EngineCore's input queue), and the scheduler does not wait for more before it
  // starts (SGLang scheduler.py recv_requests polls with zmq.NOBLOCK and event_loop_overlap runs
  // whatever has come; vLLM EngineCore._process_input_queue wakes on the first request). So an
  // idle engine's first step holds the burst's first request alone. Modelled as order only: a
  // request sent no later than the one before it is ready 1 us after it, far below any step; the
  // front end's own time per request is not known and not charged. Not for an offline job, whose
  // requests are queued at t = 0, nor for static batches.
  static constexpr double kBurstSpacing_s = 1e-6;

  RequestSource& source_;
  const SimOptions& opt_;
  const bool together_;
  std::optional<Request> next_;
  std::deque<Sent> front_;
  double first_arrival_s_ = 0, last_arrival_s_ = 0, user_free_since_ = 0;
  double last_ready_s_ = -std::numeric_limits<double>::infinity();
};

}  // namespace vramplan::sim
