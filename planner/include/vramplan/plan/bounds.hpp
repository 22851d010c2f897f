// vramplan/plan/bounds.hpp — expected value and upper bound of every memory component.
//
// The engine gives one expected figure per component. The upper bound adds the spread the
// accuracy data shows for that kind of component (data/accuracy_bounds.json: per component-name
// prefix, a relative and an absolute margin, each with the data it came from). A fit decision
// states which of the two it used; --conservative decides on the bound.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/memory/component.hpp"

namespace vramplan::plan {

struct ComponentMargin {
  std::string prefix;       //!< component names starting with this ("overhead.cuda_graphs", "weights")
  double relative = 0;      //!< fraction of the expected bytes
  std::uint64_t absolute = 0;  //!< bytes added on top
  std::string source;       //!< the data the margin came from
};

class ErrorBounds {
 public:
  //! No margins: upper == expected.
  ErrorBounds() = default;
  //! Reads data/accuracy_bounds.json (Error(InputFile)/Error(Io) naming the file and pointer).
  static ErrorBounds load(const std::filesystem::path& file);
  explicit ErrorBounds(std::vector<ComponentMargin> margins) : margins_(std::move(margins)) {}

  //! The longest matching prefix wins; nullptr when none matches.
  const ComponentMargin* margin_for(const std::string& component) const;
  //! expected + relative x expected + absolute (rounded up to a byte).
  Bytes upper(const memory::Component& c) const;
  Bytes upper_sum(const std::vector<memory::Component>& parts) const;
  const std::vector<ComponentMargin>& margins() const { return margins_; }

 private:
  std::vector<ComponentMargin> margins_;
};

}  // namespace vramplan::plan
