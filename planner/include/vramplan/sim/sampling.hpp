// vramplan/sim/sampling.hpp — the random numbers behind generated workloads, the same on every
// platform.
//
// The std:: distributions (exponential_distribution, gamma_distribution, ...) are specified by
// their output law only: libstdc++, libc++ and MSVC draw different sequences from the same
// engine, so a seed would not reproduce a workload across compilers. The engine
// (std::mt19937_64) is fully specified by the standard; everything above it is written here from
// uniform doubles, so a seed gives the same requests wherever the libm's log / exp / sqrt agree
// (sqrt is exact by IEEE 754; glibc's log and exp are within 1 ulp).
#pragma once

#include <cstdint>
#include <random>

namespace vramplan::sim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  //! Uniform in [0, 1): the top 53 bits of one 64-bit draw, times 2^-53.
  double uniform();
  //! Uniform integer in [low, high] (high - low < 2^32).
  std::uint64_t uniform_int(std::uint64_t low, std::uint64_t high);
  //! Exponential with mean 1: -ln(1 - U).
  double exponential();
  //! Standard normal (Marsaglia's polar method; the second value of each pair is kept for the
  //! next call).
  double normal();
  //! Gamma with the given shape and scale 1 (Marsaglia & Tsang 2000, "A simple method for
  //! generating gamma variables", ACM TOMS 26(3); shape < 1 through Gamma(shape + 1) U^(1/shape)).
  double gamma(double shape);

 private:
  std::mt19937_64 engine_;
  double spare_normal_ = 0;
  bool has_spare_ = false;
};

}  // namespace vramplan::sim
