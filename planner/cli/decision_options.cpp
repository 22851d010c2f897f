#include "decision_options.hpp"

#include <cstdlib>

#include "vramplan/core/error.hpp"

namespace vramplan::cli {

std::string engine_spec_of(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--engine" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--engine=", 0) == 0) return args[i].substr(9);
  }
  return "vllm";
}

void add_engine_options(po::options_description& desc, const memory::Engine& engine, std::set<std::string>& declared) {
  for (const auto& o : engine.options()) {
    std::vector<std::string> names = {o.name};
    names.insert(names.end(), o.aliases.begin(), o.aliases.end());
    for (const auto& n : names) {
      if (!declared.insert(n).second) continue;
      if (o.is_switch) desc.add_options()(n.c_str(), po::bool_switch(), o.help.c_str());
      else desc.add_options()(n.c_str(), po::value<std::string>(), (o.help + (n != o.name ? " (= --" + o.name + ")" : "")).c_str());
    }
  }
}

memory::EngineArgs read_engine_args(const po::variables_map& vm, const memory::Engine& engine) {
  memory::EngineArgs args;
  for (const auto& o : engine.options()) {
    std::vector<std::string> names = {o.name};
    names.insert(names.end(), o.aliases.begin(), o.aliases.end());
    for (const auto& n : names) {
      if (!vm.count(n) || vm[n].defaulted()) continue;
      if (o.is_switch) {
        if (vm[n].as<bool>()) args[o.name] = "true";
      } else {
        args[o.name] = vm[n].as<std::string>();
      }
    }
  }
  return args;
}

double parse_fraction(const std::string& text, const std::string& option) {
  std::string t;
  for (const char c : text)
    if (c != ' ') t += c;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  const double v = t.empty() ? -1 : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v >= 0))
    throw_usage(option + ": expected a percentage such as 10% (or a fraction such as 0.1), got '" + text + "'");
  return percent ? v / 100.0 : v;
}

}  // namespace vramplan::cli
