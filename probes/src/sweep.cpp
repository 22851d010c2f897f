#include "sweep.hpp"

#include <charconv>

#include "cuda_check.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::probe {

const std::string& Point::get_string(const std::string& axis) const {
  const auto it = values_.find(axis);
  if (it == values_.end()) throw ProbeError("probe asked for axis '" + axis + "' it did not declare");
  return it->second;
}

std::int64_t Point::get_int(const std::string& axis) const {
  const std::string& text = get_string(axis);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw ProbeError("axis '" + axis + "': '" + text + "' is not an integer");
  return v;
}

void add_axis_override(AxisOverrides& overrides, const std::string& spec) {
  const auto eq = spec.find('=');
  const auto dot = spec.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq || eq + 1 == spec.size())
    throw_usage("--axis '" + spec + "': expected <probe>.<axis>=v1,v2,...");
  std::vector<std::string> values;
  std::size_t start = eq + 1;
  while (start <= spec.size()) {
    const auto comma = spec.find(',', start);
    const auto stop = comma == std::string::npos ? spec.size() : comma;
    if (stop == start) throw_usage("--axis '" + spec + "': empty value");
    values.push_back(spec.substr(start, stop - start));
    start = stop + 1;
  }
  overrides[spec.substr(0, eq)] = std::move(values);
}

void Recorder::sweep(const std::string& probe, std::vector<Axis> axes,
                     const std::function<void(const Point&)>& body) {
  for (auto& axis : axes) {
    const auto it = overrides_.find(probe + "." + axis.name);
    if (it != overrides_.end()) {
      axis.values = it->second;
      used_[it->first] = true;
    }
  }
  // Odometer over the axes: the last axis varies fastest.
  std::vector<std::size_t> index(axes.size(), 0);
  for (const auto& axis : axes)
    if (axis.values.empty()) return;
  while (true) {
    Point point;
    for (std::size_t a = 0; a < axes.size(); ++a) point.set(axes[a].name, axes[a].values[index[a]]);
    if (out_of_time()) skip(probe, point, "time budget exhausted");
    else body(point);
    std::size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++index[a] < axes[a].values.size()) break;
      index[a] = 0;
      if (a == 0) return;
    }
    if (axes.empty()) return;
  }
}

void Recorder::record(const std::string& probe, const Point& point, nlohmann::json values) {
  records_.push_back({{"probe", probe}, {"point", point.to_json()}, {"values", std::move(values)}});
}

void Recorder::skip(const std::string& probe, const Point& point, const std::string& reason) {
  records_.push_back({{"probe", probe}, {"point", point.to_json()}, {"skipped", true},
                      {"skip_reason", reason}});
}

std::vector<std::string> Recorder::unused_overrides() const {
  std::vector<std::string> unused;
  for (const auto& [name, values] : overrides_)
    if (!used_.count(name)) unused.push_back(name);
  return unused;
}

}  // namespace vramplan::probe
