#!/usr/bin/env bash
# The page's CPU training step on 1 and 2 engines beside the native CPU backend on 1 and 2 threads,
# interleaved configuration by configuration so both see the same load (issue 30's benchmark):
# pretraining on the same corpus, batch and seed (0) in both, the quick preset's model (tiny) at
# 8 x 127 and the assignment's at 8 x 127 and 32 x 127.
#   page:   web/test/bench-workers.mjs (a fresh headless Chromium profile per configuration;
#           median ms/step of the steps after the first two)
#   native: the CLI's pretrain with --max_steps 2 and 2 + STEPS, the difference of the two runs'
#           training times (from their own tokens/s report) / STEPS
# (STEPS, default 10: the assignment's model; the tiny one takes 4 × STEPS).
#
#   scripts/bench_workers.sh URL DATA_DIR [STEPS]
# URL: scripts/serve.py --data DATA_DIR running (cross-origin isolated, as it is by default).
# Builds target/release/attnlab first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
url=${1:?usage: scripts/bench_workers.sh URL DATA_DIR [STEPS]}
data=${2:?usage: scripts/bench_workers.sh URL DATA_DIR [STEPS]}
steps=${3:-10}
cargo build --release --bin attnlab >/dev/null 2>&1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

native() { # size batch threads steps -> ms per step
  local size=$1 batch=$2 threads=$3 steps=$4 flags=()
  [[ $size == tiny ]] && flags=(--tiny)
  local e=()
  for k in 2 $((2 + steps)); do
    # The run's own clock (its last report: counted tokens per second since training began, no
    # start-up or saving): elapsed = k steps x batch x 127 tokens / (tokens/s).
    local tps
    tps=$(RAYON_NUM_THREADS=$threads target/release/attnlab pretrain vanilla "$data/wiki.txt" "${flags[@]}" \
      --device cpu --batch_size "$batch" --max_steps "$k" --seed 0 --writing_params_path "$out/x.params" 2>&1 |
      grep -o '[0-9.]* tokens/s' | tail -1 | cut -d' ' -f1)
    e+=("$(echo "$k * $batch * 127 / $tps" | bc -l)")
  done
  echo "(${e[1]} - ${e[0]}) * 1000 / $steps" | bc -l | xargs printf '%.1f'
}

page() { # size batch engines steps -> median ms per step
  node web/test/bench-workers.mjs "$url" $(($4 + 2)) "$3" "$2" "$1" |
    awk '/engine\(s\):/ {for (i = 1; i <= NF; i++) if ($i == "ms/step") print $(i - 1)}'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "commit $(git rev-parse --short HEAD); $(date -u '+%Y-%m-%d %H:%M UTC')"
printf '%-22s %12s %12s %12s %12s %8s %8s\n' \
  "step" "native 1 thr" "page 1 eng" "native 2 thr" "page 2 eng" "page÷nat" "2 vs 1"
for cfg in "tiny 8" "assignment 8" "assignment 32"; do
  set -- $cfg
  # The tiny step is short: four times the steps.
  s=$steps
  [[ $1 == tiny ]] && s=$((steps * 4))
  load0=$(cut -d' ' -f1 /proc/loadavg)
  n1=$(native "$1" "$2" 1 "$s")
  p1=$(page "$1" "$2" 1 "$s")
  n2=$(native "$1" "$2" 2 "$s")
  p2=$(page "$1" "$2" 2 "$s")
  load1=$(cut -d' ' -f1 /proc/loadavg)
  printf '%-22s %12s %12s %12s %12s %8s %8s   load %s-%s\n' "$1 $2x127" "$n1 ms" "$p1 ms" "$n2 ms" "$p2 ms" \
    "$(echo "$p1 / $n1" | bc -l | xargs printf '%.2f')/$(echo "$p2 / $n2" | bc -l | xargs printf '%.2f')" \
    "$(echo "$p1 / $p2" | bc -l | xargs printf '%.2fx')" "$load0" "$load1"
done
