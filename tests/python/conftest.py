"""Shared helpers for the Python package's tests (tests/python, run by tools/test-python.sh).

`cli_json` runs the built `vramplan` executable, the reference the package must equal: VRAMPLAN_EXE
names it (tools/test-python.sh sets it to build/bin/vramplan); without it, build/bin/vramplan of the
source tree is used when it exists, else the comparisons are skipped (the other tests still run).
"""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _executable():
    named = os.environ.get("VRAMPLAN_EXE")
    if named:
        if not os.access(named, os.X_OK):
            raise RuntimeError(f"VRAMPLAN_EXE={named}: not an executable")
        return named
    default = SOURCE_ROOT / "build" / "bin" / "vramplan"
    return str(default) if os.access(default, os.X_OK) else None


@pytest.fixture(scope="session")
def cli_json():
    exe = _executable()
    if exe is None:
        pytest.skip("no vramplan executable to compare with (set VRAMPLAN_EXE or build build/bin/vramplan)")

    def run(*args, expected_exit=0):
        env = {k: v for k, v in os.environ.items() if k not in ("VRAMPLAN_DATA", "COLUMNS")}
        r = subprocess.run([exe, *args, "--json"], capture_output=True, text=True, env=env, check=False)
        assert r.returncode == expected_exit, r.stderr
        return json.loads(r.stdout)

    return run
