#include "exit_codes.hpp"

namespace vramplan::cli {

int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage: return kExitUsage;
    case ErrorKind::InputFile: return kExitInputFile;
    case ErrorKind::UnknownName: return kExitUnknownName;
    case ErrorKind::DoesNotFit: return kExitDoesNotFit;
    case ErrorKind::Io: return kExitIo;
    case ErrorKind::Internal: return kExitInternal;
  }
  return kExitInternal;
}

const std::vector<ErrorExit>& error_exits() {
  static const std::vector<ErrorExit> rows = [] {
    std::vector<ErrorExit> r;
    for (const ErrorKind k : {ErrorKind::Usage, ErrorKind::InputFile, ErrorKind::UnknownName, ErrorKind::DoesNotFit,
                              ErrorKind::Io, ErrorKind::Internal})
      r.push_back({error_kind_name(k), exit_code_for(k)});
    r.push_back({"unrecognised-log", kExitUnrecognisedLog});  // dispatch.cpp: an UnrecognisedLog
    return r;
  }();
  return rows;
}

}  // namespace vramplan::cli
