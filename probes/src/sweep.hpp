// sweep.hpp — probes as functions of named axes (the nvbench habit, in ~100 lines of our own).
//
// A probe declares its axes ("dtype" = bf16,fp16,fp8_e4m3; "m" = 1..8192); the runner walks their
// Cartesian product and calls the body once per Point. The body either records tagged values with
// units or skips the point with a reason; both end up in the calibration file's measurements, so
// nothing disappears without a trace. `--axis gemm.m=1,64,4096` replaces an axis at run time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramplan::probe {

struct Axis {
  std::string name;
  std::vector<std::string> values;
};

class Point {
 public:
  void set(const std::string& axis, const std::string& value) { values_[axis] = value; }
  const std::string& get_string(const std::string& axis) const;
  std::int64_t get_int(const std::string& axis) const;  //!< throws ProbeError if not an integer
  nlohmann::json to_json() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

//! Axis overrides from the command line: "<probe>.<axis>" -> values.
using AxisOverrides = std::map<std::string, std::vector<std::string>>;

//! Parses "gemm.m=1,64,4096" into overrides; throws vramplan::Error(Usage) when malformed.
void add_axis_override(AxisOverrides& overrides, const std::string& spec);

//! Where a probe writes its records, and the time budget every sweep checks before a point.
class Recorder {
 public:
  Recorder(AxisOverrides overrides, std::chrono::steady_clock::time_point deadline)
      : overrides_(std::move(overrides)), deadline_(deadline) {}

  //! Runs `body` on every point of the product of `axes` (after overrides) for probe `probe`.
  //! Once the deadline has passed, the remaining points are skipped with that reason.
  void sweep(const std::string& probe, std::vector<Axis> axes,
             const std::function<void(const Point&)>& body);

  //! A measured point: values are {"tag": {"value": v, "unit": "s" | "bytes" | "GB/s" | ...}}.
  void record(const std::string& probe, const Point& point, nlohmann::json values);
  void skip(const std::string& probe, const Point& point, const std::string& reason);
  bool out_of_time() const { return std::chrono::steady_clock::now() > deadline_; }

  //! Every record so far, in order (the calibration file's measurements.records).
  const nlohmann::json& records() const { return records_; }
  //! Axis overrides the command line gave that no sweep used (reported as a usage error).
  std::vector<std::string> unused_overrides() const;

 private:
  AxisOverrides overrides_;
  std::map<std::string, bool> used_;
  std::chrono::steady_clock::time_point deadline_;
  nlohmann::json records_ = nlohmann::json::array();
};

//! {"value": v, "unit": unit} — one tagged value of a record.
inline nlohmann::json value(double v, const char* unit) { return {{"value", v}, {"unit", unit}}; }

}  // namespace vramplan::probe
