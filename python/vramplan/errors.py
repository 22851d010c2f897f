"""Exceptions of the vramplan package: one class per error kind of the command line.

Mirrors planner/cli/exit_codes.cpp (README.md § Exit codes): each class carries the kind that the
CLI's vramplan.error/1 object names and the exit code the CLI would exit with. tests/python checks
that this table and the library's (vramplan._core.error_exits()) are the same.
"""


class Error(Exception):
    """Any error vramplan reports. ``exit_code`` is the CLI's exit code, ``kind`` its error kind."""

    kind = "internal"
    exit_code = 70

    def __init__(self, message, exit_code=None):
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code


class DoesNotFitError(Error):
    """The configuration does not fit (a decision reported as an error)."""

    kind = "does-not-fit"
    exit_code = 1


class UsageError(Error):
    """A bad option, an impossible value or combination."""

    kind = "usage"
    exit_code = 2


class InputFileError(Error):
    """A malformed input file: JSON, GGUF, safetensors, catalogue entry."""

    kind = "input-file"
    exit_code = 3


class UnknownNameError(Error):
    """An unknown name: model, GPU, engine, format, architecture."""

    kind = "unknown-name"
    exit_code = 4


class IoError(Error):
    """A file or folder that cannot be opened or read."""

    kind = "io"
    exit_code = 5


class UnrecognisedLogError(Error):
    """reconcile: the log has no line of a format it reads, or no start-up figure."""

    kind = "unrecognised-log"
    exit_code = 7


class InternalError(Error):
    """A bug in vramplan."""

    kind = "internal"
    exit_code = 70


ERROR_CLASSES = {
    c.kind: c
    for c in (DoesNotFitError, UsageError, InputFileError, UnknownNameError, IoError, UnrecognisedLogError, InternalError)
}


def error_for(kind, message, exit_code=None):
    """The exception for an error kind, or for an exit code when the kind is not known."""
    cls = ERROR_CLASSES.get(kind)
    if cls is None:
        cls = next((c for c in ERROR_CLASSES.values() if c.exit_code == exit_code), Error)
    return cls(message, exit_code)
