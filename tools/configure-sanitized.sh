#!/usr/bin/env bash
# Configures build-asan/, the one ASan + UBSan build behind both `tools/test.sh --sanitize` (the
# whole test suite) and tools/fuzz.sh (the libFuzzer targets). With clang installed it is a clang
# build with libFuzzer's coverage in every object (VRAMPLAN_FUZZ), so CI compiles the library
# under the sanitizers once instead of twice (cmake/Warnings.cmake); without clang it is a GCC
# build of the test suite only. Probes (CUDA code is not instrumented) and benchmarks are off.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-DCMAKE_BUILD_TYPE=Debug -DVRAMPLAN_SANITIZE=ON -DVRAMPLAN_BUILD_PROBES=OFF -DVRAMPLAN_BUILD_BENCH=OFF)
if command -v clang++ >/dev/null; then
  flags+=(-DCMAKE_CXX_COMPILER=clang++ -DVRAMPLAN_FUZZ=ON)
fi
cmake -S . -B build-asan -G Ninja "${flags[@]}" >/dev/null
