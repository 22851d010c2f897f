// vramplan/plan/bounds.hpp — expected value and upper bound of the non-KV memory components.
//
// The engine gives one expected figure per component. The upper bound adds the largest error the
// accuracy records show for that kind of component on that engine (data/accuracy_bounds.json: per
// engine and component-name prefix, a relative and an absolute margin, each naming the records it
// came from; tests/accuracy/accuracy_bounds_test.cpp recomputes them from the records). A margin
// applies once to the sum of the components it matches (the records measure the sum: vLLM logs
// one activation peak, not its parts). Fit decisions (fit.hpp) use both sides: FITS on the
// bounds, MARGINAL on the expected values only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/memory/component.hpp"

namespace vramplan::plan {

struct ComponentMargin {
  std::string prefix;          //!< component names starting with this ("overhead.cuda_graphs", "weights")
  std::string engine;          //!< "vllm", "sglang", ...; "" = every engine without its own entry
  double relative = 0;         //!< fraction of the expected bytes
  std::uint64_t absolute = 0;  //!< bytes added on top, once per matched group
  std::string source;          //!< the data the margin came from
};

//! One margin applied to the components it matched.
struct MarginUse {
  const ComponentMargin* margin = nullptr;
  bool outside_kv_budget = false;  //!< the matched components' Component::outside_kv_budget
  Bytes expected;                  //!< sum of the matched components
  Bytes extra;                     //!< ceil(relative x expected) + absolute
};

class ErrorBounds {
 public:
  //! No margins: upper == expected.
  ErrorBounds() = default;
  //! Reads data/accuracy_bounds.json (Error(InputFile)/Error(Io) naming the file and pointer).
  static ErrorBounds load(const std::filesystem::path& file);
  explicit ErrorBounds(std::vector<ComponentMargin> margins) : margins_(std::move(margins)) {}

  //! The margins that apply to `engine` ("vllm"): its own entries, and the generic ones for a
  //! prefix it has no entry for.
  ErrorBounds for_engine(const std::string& engine) const;
  //! The longest matching prefix wins (an engine's own entry over a generic one of the same
  //! prefix); nullptr when none matches.
  const ComponentMargin* margin_for(const std::string& component) const;
  //! The margins `parts` use, grouped by margin and by Component::outside_kv_budget.
  std::vector<MarginUse> uses(const std::vector<memory::Component>& parts) const;
  //! Sum of `parts` plus the extra of every margin they use.
  Bytes upper_sum(const std::vector<memory::Component>& parts) const;
  const std::vector<ComponentMargin>& margins() const { return margins_; }

 private:
  std::vector<ComponentMargin> margins_;
};

}  // namespace vramplan::plan
