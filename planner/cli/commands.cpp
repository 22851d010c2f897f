#include "commands.hpp"

namespace vramplan::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"version", "print the version of vramplan", run_version},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace vramplan::cli
