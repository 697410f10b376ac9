#!/usr/bin/env bash
# Session 8's fifth device call: the 128 x 128 tiles (shaders/matmul_big.wgsl, 8 x 8 outputs a
# thread) for the tiled choice's large products, against the kernels of call 1 (bin/bench-s8),
# alternating in one call on one machine: the pretraining batches (packed), the 32-row step, and
# the new profile. `bash results/gpu-h100/session8e.sh` from the repo root, the kit carried.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/session8e.log") 2>&1
K="$PWD/gpukit"
ldconfig -p | grep -q libGLdispatch.so.0 || { for f in "$K"/gl/*.deb; do dpkg -x "$f" /; done; ldconfig; }
for args in "--layouts 128 --size assignment --variant vanilla --kind pretrain --repeats 3 --data $K/data" \
            "--layouts 128 --size assignment --variant synthesizer --kind pretrain --repeats 3 --data $K/data" \
            "--step 32 --size assignment --variant vanilla --repeats 5" \
            "--quick --repeats 5"; do
  for b in bench-s8 bench; do
    echo "\$ $b --device gpu $args"
    # shellcheck disable=SC2086 # the arguments are words
    timeout -k 5 40 "$K/bin/$b" --device gpu $args
  done
done
echo "\$ bench --device gpu --step 128 --size assignment --variant vanilla --repeats 3 --profile"
timeout -k 5 40 "$K/bin/bench" --device gpu --step 128 --size assignment --variant vanilla --repeats 3 --profile
