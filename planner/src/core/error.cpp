#include "vramplan/core/error.hpp"

#include "vramplan/core/text.hpp"

namespace vramplan {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage: return "usage";
    case ErrorKind::InputFile: return "input-file";
    case ErrorKind::UnknownName: return "unknown-name";
    case ErrorKind::DoesNotFit: return "does-not-fit";
    case ErrorKind::Io: return "io";
    case ErrorKind::Internal: return "internal";
  }
  return "internal";
}

Error::Error(ErrorKind kind, std::string_view message)
    : std::runtime_error(escape_control(message)), kind_(kind) {}

std::string located(std::string_view file, std::string_view field, std::string_view message) {
  std::string out;
  if (!file.empty()) {
    out += file;
    out += ": ";
  }
  if (!field.empty()) {
    out += field;
    out += ": ";
  }
  out += message;
  return out;
}

void throw_usage(std::string message) { throw Error(ErrorKind::Usage, std::move(message)); }

void throw_input(std::string_view file, std::string_view field, std::string_view message) {
  throw Error(ErrorKind::InputFile, located(file, field, message));
}

void throw_unknown(std::string message) { throw Error(ErrorKind::UnknownName, std::move(message)); }

void throw_internal(std::string message) {
  throw Error(ErrorKind::Internal, "internal error (a bug in vramplan): " + std::move(message));
}

}  // namespace vramplan
