#!/usr/bin/env bash
# Regenerates docs/accuracy-perf.md: runs the performance accuracy test with the write switch on.
# Usage: tools/perf_accuracy.sh [build-dir]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
cmake --build "$build" --target vramplan_tests
VRAMPLAN_WRITE_ACCURACY_DOCS=1 "$build/bin/vramplan_tests" --gtest_filter='PerfAccuracy.*'
echo "wrote $root/docs/accuracy-perf.md"
