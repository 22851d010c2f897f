#include "vramplan/memory/component.hpp"

#include "vramplan/core/error.hpp"

namespace vramplan::memory {

Bytes sum_bytes(const std::vector<Component>& parts) {
  Bytes total;
  for (const auto& p : parts) total += p.bytes;
  return total;
}

void check_parts_sum(const std::vector<Component>& parts, Bytes total, const std::string& what) {
  const Bytes sum = sum_bytes(parts);
  if (sum != total)
    throw_internal(what + ": parts sum to " + format_exact(sum) + " but the total is " +
                   format_exact(total));
}

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace vramplan::memory
