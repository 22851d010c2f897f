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

}  // namespace vramplan::cli
