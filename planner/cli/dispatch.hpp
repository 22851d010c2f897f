// dispatch.hpp — running a `vramplan` command line as a call: what main() does, and the same into
// strings for the Python module (python/, docs/python.md), which must never print or exit.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace vramplan::cli {

//! Runs `argv` (the command name first, no program name) writing to `out` / `err`, and returns the
//! exit code (exit_codes.hpp). Every error is caught here: one line on `err` ("vramplan: error: ..."),
//! and with --json a vramplan.error/1 object on `out`.
int dispatch(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

struct CapturedRun {
  int exit_code = 0;
  std::string out;  //!< what the command wrote to standard output
  std::string err;  //!< what it wrote to standard error
};

//! dispatch() into strings.
CapturedRun run_captured(const std::vector<std::string>& argv);

//! The options `argv`'s command declares (its engine flags follow --engine when argv gives one),
//! found by running it up to its option parsing. Throws Error as the command would (an unknown
//! command is Usage, an unknown engine UnknownName).
std::vector<OptionInfo> declared_options(const std::vector<std::string>& argv);

}  // namespace vramplan::cli
