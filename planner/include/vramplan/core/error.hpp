// vramplan/core/error.hpp — the one error type of the library.
//
// Every failure the library reports is an Error with a category (ErrorKind). Only the CLI maps
// categories to exit codes (planner/cli/exit_codes.cpp, documented in README.md). The library
// never calls exit(). "Does not fit" is normally a *result*; the DoesNotFit kind exists for the
// `check` command and callers that want it as an error.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace vramplan {

enum class ErrorKind {
  Usage,        //!< bad command-line argument, impossible value or combination
  InputFile,    //!< malformed input file (JSON, GGUF, safetensors, catalogue entry)
  UnknownName,  //!< unknown model / GPU / engine / format / architecture name
  DoesNotFit,   //!< the configuration does not fit (a decision, for `check`)
  Io,           //!< a file or directory cannot be opened or read
  Internal,     //!< a bug in vramplan
};

//! Short stable name of a kind ("usage", "input-file", ...), used in JSON error output.
std::string_view error_kind_name(ErrorKind kind);

//! The message is stored with control characters escaped (core/text.hpp escape_control): names
//! and strings quoted from files or arguments may hold NUL (which would cut what()), newlines or
//! terminal escapes, and every error must print as one harmless line.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string_view message);
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

//! "<file>: <field>: <message>" — the shape of every input-file error message.
//! Empty parts are omitted.
std::string located(std::string_view file, std::string_view field, std::string_view message);

[[noreturn]] void throw_usage(std::string message);
[[noreturn]] void throw_input(std::string_view file, std::string_view field, std::string_view message);
[[noreturn]] void throw_unknown(std::string message);
[[noreturn]] void throw_internal(std::string message);

}  // namespace vramplan
