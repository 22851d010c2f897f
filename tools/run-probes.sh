#!/usr/bin/env bash
# The one prepared script for a machine with a GPU: builds vramplan-probe (unless a working one is
# already in the build folder), runs the kernel self-test, runs the full calibration under a
# timeout, and copies the calibration JSON to data/calibration/ named
#   <gpu>-<driver>-cuda<version>-<YYYYMMDD>.json
# (and to $OUT when that is set, as on the device machine).
#
#   bash tools/run-probes.sh                 build in build-probes/, calibrate, copy
#   VRAMPLAN_PROBE_BUILD=dir bash tools/...  use another build folder (e.g. one carried prebuilt:
#                                            the image there may lack Boost/Eigen/nlohmann headers,
#                                            so build here with the same command and carry the folder)
#   VRAMPLAN_PROBE_TIMEOUT=120               seconds for the calibration (it budgets itself 50 s)
#   VRAMPLAN_PROBE_ARGS="--axis gemm.m=1,4096" extra arguments for vramplan-probe
#
# Exit codes: those of vramplan-probe (docs/calibration.md): 69 = no CUDA device, 124 = timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${VRAMPLAN_PROBE_BUILD:-build-probes}
timeout_s=${VRAMPLAN_PROBE_TIMEOUT:-120}
probe="$build/bin/vramplan-probe"

if ! "$probe" --version >/dev/null 2>&1; then
  echo "== building $probe"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVRAMPLAN_BUILD_TESTS=OFF \
    -DVRAMPLAN_BUILD_BENCH=OFF -DVRAMPLAN_BUILD_PROBES=ON >/dev/null
  cmake --build "$build" --target vramplan-probe -j"$(nproc)"
fi
"$probe" --version

work=$(mktemp -d)
echo "== self-test"
set +e
"$probe" --self-test | tee "$work/self-test.txt"
rc=${PIPESTATUS[0]}
set -e
if [[ $rc -ne 0 ]]; then
  echo "self-test exited $rc (69 = no CUDA device, 1 = wrong results); no calibration written" >&2
  exit "$rc"
fi

echo "== calibration (timeout ${timeout_s}s)"
set +e
# shellcheck disable=SC2086  # VRAMPLAN_PROBE_ARGS is a list of words on purpose
timeout "$timeout_s" "$probe" --out-dir "$work" ${VRAMPLAN_PROBE_ARGS:-} >"$work/path.txt" 2> >(tee "$work/probe.log" >&2)
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  echo "vramplan-probe exited $rc (124 = timeout); see $work/probe.log" >&2
  exit "$rc"
fi
written=$(cat "$work/path.txt")
dated="$(basename "$written" .json)-$(date -u +%Y%m%d).json"
mkdir -p data/calibration
cp "$written" "data/calibration/$dated"
echo "== wrote data/calibration/$dated"
if [[ -n "${OUT:-}" ]]; then
  cp "$written" "$OUT/$dated"
  cp "$work/self-test.txt" "$work/probe.log" "$OUT/"
fi
