#!/usr/bin/env bash
# The Python package's tests (docs/python.md), run by tools/test.sh after ctest: a venv in
# build/venv-python (never the system site-packages), `pip install .` into it (scikit-build-core and
# pybind11 from PyPI build vramplan._core: a Release unity build of the library alone, in
# build-python/, incremental on a second run), then pytest tests/python, which compares every
# function's dict with what build/bin/vramplan prints for the same options.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/venv-python
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check pytest
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/python" -m pip install -q --disable-pip-version-check .
echo "tools/test-python.sh: pip install . took $(( $(date +%s) - start )) s"
VRAMPLAN_EXE="$PWD/build/bin/vramplan" "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python
