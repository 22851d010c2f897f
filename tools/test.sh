#!/usr/bin/env bash
# Builds vramplan and runs the whole test suite: ctest, then the Python package's tests.
#   bash tools/test.sh             Release build in build/, ctest, then tools/test-python.sh (pip install .
#                                  into a venv, pytest tests/python)
#   bash tools/test.sh --sanitize  ASan + UBSan build in build-asan/ (probes off: CUDA code is not
#                                  instrumented)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
build=build
flags=(-DCMAKE_BUILD_TYPE=Release)
if [[ "${1:-}" == "--sanitize" ]]; then
  build=build-asan
  flags=(-DCMAKE_BUILD_TYPE=Debug -DVRAMPLAN_SANITIZE=ON -DVRAMPLAN_BUILD_PROBES=OFF -DVRAMPLAN_BUILD_BENCH=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$build" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
# The Python module is not instrumented: the sanitizer build runs the C++ suite only.
if [[ "$build" == build ]]; then
  bash tools/test-python.sh
fi
