#!/usr/bin/env bash
# Builds vramplan and runs the whole test suite: ctest, then the Python package's tests.
#   bash tools/test.sh             Release build in build/ (with the Python module), ctest, then
#                                  tools/test-python.sh (pip install . into a venv, pytest tests/python)
#   bash tools/test.sh --sanitize  ASan + UBSan build in build-asan/ (tools/configure-sanitized.sh:
#                                  clang with libFuzzer coverage when installed, else GCC)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
build=build
if [[ "${1:-}" == "--sanitize" ]]; then
  build=build-asan
  bash tools/configure-sanitized.sh
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
  # The Python module is built here too (VRAMPLAN_PYTHON, with the venv's interpreter and pybind11),
  # so tools/test-python.sh's `pip install .` packages this build instead of compiling the library
  # again (CI: ~170 s saved).
  venv=build/venv-python
  bash tools/python-env.sh "$venv"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVRAMPLAN_PYTHON=ON \
    -DPython_EXECUTABLE="$PWD/$venv/bin/python" \
    -Dpybind11_DIR="$("$venv/bin/python" -m pybind11 --cmakedir)" >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
# The Python module is not instrumented: the sanitizer build runs the C++ suite only.
if [[ "$build" == build ]]; then
  bash tools/test-python.sh
fi
