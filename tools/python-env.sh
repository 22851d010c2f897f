#!/usr/bin/env bash
# The Python environment the test suite builds and tests the Python module with (docs/python.md):
# a venv (never the system site-packages) holding pytest and the module's build requirements from
# PyPI (pyproject.toml [build-system]: scikit-build-core, pybind11). tools/test.sh configures build/
# with this interpreter and pybind11, so build/ compiles the module with the C++ suite and
# `pip install --no-build-isolation -Cbuild-dir=build .` (tools/test-python.sh) reuses it instead of
# compiling the library a second time.
#   bash tools/python-env.sh VENV    creates VENV if missing; installs what is missing into it
set -euo pipefail
venv=${1:?usage: tools/python-env.sh VENV}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check pytest "scikit-build-core>=0.10" "pybind11>=2.10"
