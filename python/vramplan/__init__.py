"""vramplan from Python: each function runs the `vramplan` command of its name and returns the dict
that `vramplan <command> ... --json` prints (docs/python.md).

    import vramplan
    p = vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", engine="vllm", max_model_len=8192)

Keyword arguments are the command's options: ``max_model_len=8192`` is ``--max-model-len=8192``; a
switch takes True (given) or False (left out); a list is repeated for an option that may be given
several times (``tenant``, ``feature``) and comma-joined for the others (``gpu=["l40s", "h200"]``);
None leaves the option out. An option the command does not have raises TypeError naming it. Errors
raise a subclass of vramplan.Error per kind, with the CLI's ``exit_code``. `check` returns its result
for every verdict (FITS, MARGINAL, DOES NOT FIT, UNSUPPORTED): the verdict is in the dict.

The catalogue (data/, models/) is the copy installed with the package, unless VRAMPLAN_DATA names
another folder, as for the executable.
"""

import json
import os

from . import _core
from .errors import (
    DoesNotFitError,
    Error,
    InputFileError,
    InternalError,
    IoError,
    UnknownNameError,
    UnrecognisedLogError,
    UsageError,
    error_for,
)

__all__ = [
    "run", "plan", "check", "sweep", "explain", "simulate", "trial", "train", "inspect", "models", "gpus",
    "reconcile", "version", "Error", "DoesNotFitError", "UsageError", "InputFileError", "UnknownNameError",
    "IoError", "UnrecognisedLogError", "InternalError",
]

_core.look_for_data_in(os.path.dirname(os.path.abspath(__file__)))

# Options that choose the output: the package always asks for JSON and returns it parsed.
_OUTPUT_OPTIONS = {"format", "json", "help", "help-all"}

# (command, engine) -> {long name: (is switch, repeatable)}, as the command's parser declares them.
_declared = {}


def _options_of(command, engine):
    key = (command, engine)
    if key not in _declared:
        argv = [command] + ([f"--engine={engine}"] if engine is not None else [])
        try:
            rows = _core.options(argv)
        except _core.OptionsError:
            return None  # unknown command or engine: running it reports the error as the CLI does
        _declared[key] = {name: (is_switch, repeatable) for name, is_switch, repeatable in rows}
    return _declared[key]


def _text(value):
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _argv(command, options):
    """The command line for `command` with `options` (keyword arguments), checked against the
    options the command declares."""
    engine = options.get("engine")
    declared = _options_of(command, None if engine is None else _text(engine))
    argv = [command]
    for key, value in options.items():
        name = key.replace("_", "-")
        if name in _OUTPUT_OPTIONS:
            raise TypeError(f"vramplan.{command}(): '{key}' chooses the output format; the package always returns the JSON as a dict")
        if declared is not None and name not in declared:
            # Another engine's flag: whose it is and this engine's, as the CLI says it.
            hint = _core.flag_hint(f"--{name}", "vllm" if engine is None else _text(engine)) if "engine" in declared else ""
            raise TypeError(f"vramplan.{command}() got an unexpected keyword argument '{key}' "
                            f"(vramplan {command} has no option --{name}{hint})")
        if value is None:
            continue
        is_switch, repeatable = declared.get(name, (False, False)) if declared is not None else (False, False)
        if is_switch:
            if not isinstance(value, bool):
                raise TypeError(f"vramplan.{command}(): '{key}' is a switch (--{name}): give True or False, not {value!r}")
            if value:
                argv.append(f"--{name}")
            continue
        if isinstance(value, bool):
            raise TypeError(f"vramplan.{command}(): '{key}' takes a value (--{name} VALUE), not {value!r}")
        if isinstance(value, (list, tuple)):
            values = [_text(v) for v in value]
            if repeatable:
                argv.extend(f"--{name}={v}" for v in values)
            else:
                argv.append(f"--{name}={','.join(values)}")
        else:
            argv.append(f"--{name}={_text(value)}")
    argv.append("--json")
    return argv


def run_argv(argv):
    """Runs a command line (command first, --json included or not) and returns its JSON as a dict;
    an error raises its vramplan.Error subclass."""
    if "--json" not in argv:
        argv = list(argv) + ["--json"]
    code, out, err = _core.run([str(a) for a in argv])
    out = out.decode("utf-8", errors="replace")
    err = err.decode("utf-8", errors="replace").strip()
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("schema") == "vramplan.error/1":
        raise error_for(doc["error"]["kind"], doc["error"]["message"], doc.get("exit_code", code))
    if doc is None:
        message = err.removeprefix("vramplan: error: ") if err else f"vramplan {argv[0]} printed no JSON (exit {code})"
        raise error_for(None, message, code if code != 0 else InternalError.exit_code)
    return doc


def run(command, **options):
    """Runs `vramplan <command>` with `options` (keyword arguments, see the module's help) and
    returns its JSON output as a dict."""
    return run_argv(_argv(command, options))


def _command(name, summary):
    def call(**options):
        return run(name, **options)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = (f"vramplan {name}: {summary}\n\nKeyword arguments are `vramplan {name}`'s options "
                    f"(`vramplan {name} --help-all`); returns its --json output as a dict.")
    return call


plan = _command("plan", "per-GPU memory of one configuration (vramplan.plan/1)")
check = _command("check", "the verdict, limits and batch range (vramplan.check/1)")
sweep = _command("sweep", "fitting configurations ranked by rental cost (vramplan.sweep/1)")
explain = _command("explain", "every number of a check with its formula (vramplan.explain/1)")
simulate = _command("simulate", "a serving workload replayed over time (vramplan.simulate/1)")
trial = _command("trial", "the batch trial ladder (vramplan.trial/1)")
train = _command("train", "training memory per GPU (vramplan.train/1)")
inspect = _command("inspect", "architecture, parameters, bytes per role (vramplan.inspect/1)")
models = _command("models", "the model catalogue (vramplan.models/1)")
gpus = _command("gpus", "the GPU catalogue (vramplan.gpus/1)")
reconcile = _command("reconcile", "an engine's start-up log beside the plan (vramplan.reconcile/1)")
version = _command("version", "the version")
