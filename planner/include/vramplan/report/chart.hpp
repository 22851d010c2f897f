// vramplan/report/chart.hpp — charts as plain data: named series of numbers and the words around
// them (axis titles with units, legend names). The CLI fills them from plan / sim / train results;
// svg_chart.hpp draws them. Nothing here knows what the numbers mean.
#pragma once

#include <string>
#include <vector>

namespace vramplan::report {

//! One legend entry and its values (one per bar, or one per x of a line chart). NaN = no value
//! (a gap in a line).
struct Series {
  std::string name;
  std::vector<double> values;
};

//! Horizontal stacked bars in groups: bar i stacks stacks[k].values[i] for k = 0, 1, ... left to
//! right. A group (one GPU option) has a heading and optionally a limit drawn as a dashed vertical
//! line across its bars (the card's capacity).
struct StackedBarChart {
  struct Group {
    std::string name;     //!< heading above the group's bars
    double limit = 0;     //!< <= 0: no line
  };
  struct Bar {
    std::string label;    //!< at the left of the bar
    std::size_t group = 0;
  };
  std::string value_label;  //!< the value axis' title with its unit, "GiB per GPU (2^30 bytes)"
  std::string unit;         //!< after each bar's total and in the tooltips, "GiB"
  std::string limit_label;  //!< legend entry of the limit lines, "GPU capacity"
  std::vector<Group> groups;
  std::vector<Bar> bars;
  std::vector<Series> stacks;  //!< each has one value per bar, >= 0
};

//! Lines over a shared x axis; every series has one value per x.
struct LineChart {
  std::string x_label, y_label;  //!< axis titles with units
  std::vector<double> x;         //!< ascending
  std::vector<Series> series;
  bool log2_x = false;  //!< x on a log2 scale (batch sizes), ticks at powers of two
};

}  // namespace vramplan::report
