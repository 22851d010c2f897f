#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang, ASan + UBSan) and runs each for a bounded time
# on its seed corpus. Any crash, sanitizer report, uncaught non-vramplan exception, input slower
# than -timeout or run above -rss_limit_mb fails the script; the input is kept under
# build-asan/findings/ and must become a regression test.
#
#   bash tools/fuzz.sh                 every target, FUZZ_SECONDS (default 20) each
#   FUZZ_SECONDS=3600 bash tools/fuzz.sh gguf hf_config     named targets, one hour each
#
# Bounds: FUZZ_SECONDS per target, FUZZ_JOBS targets at a time (default one per core), 10 s per input
# (linear-time parsers take milliseconds; a quadratic path on a large input shows up here), 2 GiB
# of RSS per process.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-20}
if ! command -v clang++ >/dev/null; then
  echo "tools/fuzz.sh: clang++ not found (apt-get install clang)" >&2
  exit 1
fi
# The sanitized build shared with `tools/test.sh --sanitize` (after it, only the fuzz mains link).
build=build-asan
bash tools/configure-sanitized.sh

# Seeds: the real files of the repository each reader is meant for, plus tests/fuzz/seeds/<target>.
seeds_of() {
  case "$1" in
    gguf | safetensors | safetensors_index | tenants | trace | trial_csv | length_histogram) ls tests/fuzz/seeds/"$1"/* ;;
    hf_config) ls models/*.json tests/fixtures/hf/*.json tests/fixtures/hf/*/config.json ;;
    gpu_catalog) ls data/gpus.json tests/fixtures/gpus/*.json ;;
    prices) ls data/prices.json ;;
    quant_formats) ls data/quant_formats.json ;;
    quant_schemes) ls data/quant_schemes.json ;;
    engine_profile) ls data/engines/*.json ;;
    calibration) ls tests/fixtures/calib/*.json ;;
    engine_log) ls tests/fixtures/logs/*/*.log ;;
    diffusion_source) ls models/diffusion/*/source.json tests/fuzz/seeds/diffusion_source/* ;;
    cold_start) ls data/cold_start.json tests/fuzz/seeds/cold_start/* ;;
    perf_defaults) ls data/perf_defaults.json ;;
    *) echo "tools/fuzz.sh: no seeds for target '$1'" >&2; return 1 ;;
  esac
}

targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in tests/fuzz/*_fuzz.cpp; do
    name=$(basename "$f" _fuzz.cpp)
    targets+=("$name")
  done
fi
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"

mkdir -p "$build/findings" "$build/results"
# Every execution writes its input to a scratch file (tests/fuzz/fuzz_support.hpp, under TMPDIR).
# On a disk, right after the link above wrote ~1 GB of binaries, an open() there waited 19 s for the
# journal (the 2026-12-03 CI run: fuzz_prices and fuzz_quant_formats "timeout" inside open(), both
# clean on a rerun), so the fuzzers start after a sync and write their scratch files to memory
# (/dev/shm) when it is there, in a directory of this run removed at exit.
sync
if [[ -d /dev/shm && -w /dev/shm ]]; then
  TMPDIR=$(mktemp -d /dev/shm/vramplan-fuzz.XXXXXX)
  export TMPDIR
  trap 'rm -rf "$TMPDIR"' EXIT
fi
# One target: copy its seeds, fuzz for the bounded time, record ok / FAILED in results/<target>.
run_one() {
  local t=$1 corpus="$build/corpus/$1" log="$build/fuzz_$1.log"
  mkdir -p "$corpus"
  for seed in $(seeds_of "$t"); do cp "$seed" "$corpus/$(echo "$seed" | tr / _)"; done  # paths as names: no clashes
  # -max_len: big enough for the largest seed (data/gpus.json), so mutations can grow catalogues.
  if "$build/bin/fuzz_$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=262144 -print_final_stats=1 -artifact_prefix="$build/findings/$t-" >"$log" 2>&1; then
    runs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz_$t: ok, $runs executions in ${seconds} s" | tee "$build/results/$t"
  else
    { echo "fuzz_$t: FAILED (log: $log)"; grep -m3 -E 'ERROR|SUMMARY|uncaught|timeout|rss' "$log" || true; } | tee "$build/results/$t"
  fi
}
# FUZZ_JOBS targets at a time (default: one per core), each a single fuzzing process.
jobs=${FUZZ_JOBS:-$(nproc)}
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_one "$t" &
done
wait
failed=()
for t in "${targets[@]}"; do grep -q ': ok,' "$build/results/$t" || failed+=("$t"); done
if ((${#failed[@]})); then
  echo "tools/fuzz.sh: findings in ${failed[*]} (inputs under $build/findings/)" >&2
  exit 1
fi
