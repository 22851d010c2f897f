// commands.hpp — the registry of `vramplan` subcommands. Adding a command: write
// cmd_<name>.cpp with a `int run_<name>(const std::vector<std::string>& args)` and add one entry to
// the table in commands.cpp: its summary, the options `--help` shows (the rest are listed by
// `--help-all`) and two examples that run as written (tests/cli/help_test.cpp runs them).
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
  std::vector<std::string_view> main_options;  //!< long names shown by --help, in this order
  std::vector<std::string_view> examples;      //!< two command lines, without the leading "vramplan "
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
//! `sweep --mode train` (cmd_sweep_train.cpp): run_sweep hands over when --mode is train.
int run_sweep_train(const std::vector<std::string>& args);
int run_explain(const std::vector<std::string>& args);
int run_simulate(const std::vector<std::string>& args);
int run_trial(const std::vector<std::string>& args);
int run_train(const std::vector<std::string>& args);
int run_reconcile(const std::vector<std::string>& args);
int run_report(const std::vector<std::string>& args);

}  // namespace vramplan::cli
