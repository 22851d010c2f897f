#!/usr/bin/env bash
# Builds vramplan and runs the whole test suite: ctest, then the Python package's tests.
#   bash tools/test.sh             Release build in build/, ctest, then tools/test-python.sh (pip install .
#                                  into a venv, pytest tests/python)
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
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
# The Python module is not instrumented: the sanitizer build runs the C++ suite only.
if [[ "$build" == build ]]; then
  bash tools/test-python.sh
fi
