#!/usr/bin/env bash
# Times `vramplan check` as a whole process (target: median < 5 ms). Uses hyperfine when it is
# installed (Debian: apt-get install hyperfine), else 200 runs timed with date +%s%N. Also prints
# the user + sys CPU time per run: on a shared, loaded machine wall time mostly measures waiting.
# usage: tools/bench/time_check.sh [build-dir]   (not part of CI)
set -euo pipefail
build=${1:-build}
model=$(mktemp --suffix=.json)
trap 'rm -f "$model"' EXIT
cat >"$model" <<'JSON'
{"architectures":["LlamaForCausalLM"],"hidden_size":8192,"intermediate_size":28672,"max_position_embeddings":131072,
"model_type":"llama","num_attention_heads":64,"num_hidden_layers":80,"num_key_value_heads":8,"rms_norm_eps":1e-05,
"rope_theta":500000.0,"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":128256}
JSON
cmd=("$build/bin/vramplan" check --model "$model" --gpu h100-sxm-80 -tp 2 --engine vllm --max-model-len 8192)
if command -v hyperfine >/dev/null; then
  stats=$(mktemp --suffix=.json)
  hyperfine -N -i --warmup 10 --runs 200 --export-json "$stats" "${cmd[*]}"
  # The target is on the median; hyperfine's summary shows the mean.
  grep -o '"median": *[0-9.e-]*' "$stats" | awk -F: '{printf "check process: median %.2f ms over 200 runs (hyperfine)\n", $2 * 1000}'
  rm -f "$stats"
  exit 0
fi
times=()
for _ in $(seq 200); do
  t0=$(date +%s%N); "${cmd[@]}" >/dev/null || true; t1=$(date +%s%N)
  times+=($(( (t1 - t0) / 1000 )))
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "check process: median %.2f ms, p90 %.2f ms over %d runs\n", a[int(NR/2)]/1000, a[int(NR*0.9)]/1000, NR}'
# CPU time: a second loop of the command alone (no date processes), user + sys over the runs.
TIMEFORMAT='%U %S'
cpu=$( { time for _ in $(seq 200); do "${cmd[@]}" >/dev/null || true; done; } 2>&1 )
echo "$cpu" | awk '{printf "check process: CPU time (user + sys) %.2f ms per run\n", ($1 + $2) * 1000 / 200}'
