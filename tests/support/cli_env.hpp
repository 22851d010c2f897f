// cli_env.hpp — run_cli with a working directory and environment of the test's choosing.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.hpp"

namespace vramplan::test {

//! Where and with what environment the executable runs. COLUMNS is always unset first (the
//! output's width is then the documented non-terminal default), then `env` is applied.
struct CliEnv {
  std::filesystem::path cwd;  //!< empty: the test's own working directory
  std::vector<std::pair<std::string, std::string>> env;
};

//! run_cli (test_support.hpp) in `how`'s directory and environment.
CliResult run_cli(const std::vector<std::string>& args, const CliEnv& how);

}  // namespace vramplan::test
