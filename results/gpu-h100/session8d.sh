#!/usr/bin/env bash
# Session 8's fourth device call: the per-kernel profile of the assignment's model (`--profile`
# had profiled the tiny model whatever `--size` said; fixed in src/bin/bench.rs) at 128 full rows,
# vanilla and synthesizer, with the host's recording time per step (new in `bench --step`).
# `bash results/gpu-h100/session8d.sh` from the repo root, the kit carried with bin/bench rebuilt.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/session8d.log") 2>&1
K="$PWD/gpukit"
ldconfig -p | grep -q libGLdispatch.so.0 || { for f in "$K"/gl/*.deb; do dpkg -x "$f" /; done; ldconfig; }
for v in vanilla synthesizer; do
  for rows in 32 128; do
    echo "\$ bench --device gpu --step $rows --size assignment --variant $v --repeats 3 --profile"
    timeout -k 5 60 "$K/bin/bench" --device gpu --step "$rows" --size assignment --variant "$v" --repeats 3 --profile
  done
done
