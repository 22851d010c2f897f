// exit_codes.hpp — the one table mapping error kinds to process exit codes (README.md § Exit codes).
#pragma once

#include <string_view>
#include <vector>

#include "vramplan/core/error.hpp"

namespace vramplan::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDoesNotFit = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInputFile = 3;
inline constexpr int kExitUnknownName = 4;
inline constexpr int kExitIo = 5;
inline constexpr int kExitMarginal = 6;  // check: fits on the expected values, not on the upper bounds
inline constexpr int kExitUnrecognisedLog = 7;  // reconcile: no line of a known engine log, or none it reads
inline constexpr int kExitInternal = 70;  // EX_SOFTWARE (sysexits.h)

int exit_code_for(ErrorKind kind);

//! One row per error an output's vramplan.error/1 object can name: its "kind" and exit code. The Python
//! module's exception classes mirror these rows (python/vramplan/errors.py; tests/python checks it).
struct ErrorExit {
  std::string_view kind;
  int exit_code;
};
const std::vector<ErrorExit>& error_exits();

}  // namespace vramplan::cli
