// list_source.hpp — a RequestSource that hands out a fixed list of requests, for the simulator's
// hand-computed tests.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "vramplan/sim/workload.hpp"

namespace vramplan::test {

class ListSource : public sim::RequestSource {
 public:
  explicit ListSource(std::vector<sim::Request> r) : r_(std::move(r)) {}
  std::optional<sim::Request> next() override {
    if (i_ == r_.size()) return std::nullopt;
    return r_[i_++];
  }

 private:
  std::vector<sim::Request> r_;
  std::size_t i_ = 0;
};

}  // namespace vramplan::test
