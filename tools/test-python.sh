#!/usr/bin/env bash
# The Python package's tests (docs/python.md), run by tools/test.sh after ctest: a venv in
# build/venv-python (tools/python-env.sh), `pip install .` into it (scikit-build-core packages
# vramplan._core from build/, where tools/test.sh compiled it with the C++ suite; run alone, this
# script configures build/ and compiles the library and the module there), then pytest
# tests/python, which compares every function's dict with what build/bin/vramplan prints.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/venv-python
bash tools/python-env.sh "$venv"
start=$(date +%s)
# --no-build-isolation + build-dir=build: scikit-build-core configures and builds in build/ (the
# defines below keep what tools/test.sh configured there), where the library and the module are
# already compiled, so only the install into the wheel is left to do.
CMAKE_GENERATOR=Ninja CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/python" -m pip install -q \
  --disable-pip-version-check --no-build-isolation -Cbuild-dir=build \
  -Ccmake.define.VRAMPLAN_BUILD_TESTS=ON -Ccmake.define.VRAMPLAN_BUILD_BENCH=ON \
  -Ccmake.define.VRAMPLAN_BUILD_PROBES=ON .
echo "tools/test-python.sh: pip install . took $(( $(date +%s) - start )) s"
VRAMPLAN_EXE="$PWD/build/bin/vramplan" "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python
