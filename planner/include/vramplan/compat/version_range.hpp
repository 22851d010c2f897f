// vramplan/compat/version_range.hpp — the engine releases a compatibility rule holds for
// ("*", ">=0.11", "<0.5", ">=0.4 <0.5"), compared component by component.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vramplan::compat {

class VersionRange {
 public:
  //! Parses "*" or one or two bounds ">=X" / "<X" separated by a space; X is dotted numbers.
  //! Throws Error(Usage) with the text on anything else (the loader relocates it to the file).
  static VersionRange parse(std::string_view text);

  //! True when `version` lies in the range. A version is compared over the components both
  //! sides have, so a series ("4", "0.4") stands for its latest release: "4" >= "4.51".
  //! "" (no version asked) is the newest release: it meets every lower bound and no upper one.
  //! A version that is not dotted numbers (a llama.cpp commit) matches "*" only.
  bool contains(std::string_view version) const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<int> at_least_;  //!< empty: no lower bound
  std::vector<int> below_;     //!< empty: no upper bound
};

}  // namespace vramplan::compat
