// commands.hpp — the registry of `vramplan` subcommands. Adding a command: write
// cmd_<name>.cpp with a `int run_<name>(const std::vector<std::string>& args)` and add one line to
// the table in commands.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vramplan::cli {

using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFn run;
};

const std::vector<Command>& commands();
const Command* find_command(std::string_view name);

// One declaration per subcommand (defined in cmd_<name>.cpp).
int run_version(const std::vector<std::string>& args);
int run_models(const std::vector<std::string>& args);
int run_inspect(const std::vector<std::string>& args);
int run_gpus(const std::vector<std::string>& args);
int run_plan(const std::vector<std::string>& args);
int run_check(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_explain(const std::vector<std::string>& args);
int run_simulate(const std::vector<std::string>& args);
int run_trial(const std::vector<std::string>& args);
int run_train(const std::vector<std::string>& args);

}  // namespace vramplan::cli
