#!/usr/bin/env bash
# Session 8's one device call (results/gpu-h100/README.md): the kit's tests with a hardware GPU
# required (the new split-K matmul, two-pass column sums and embedding backward among them; the
# `runtime` binary with short caps, to name the test that hung in session 7), then the step
# benchmarks of the kit before these kernels (bin/bench-old, built at 413e099) and after them,
# side by side, the profile of the full 128-row step, PyTorch's 128-row step, and a minute of the
# assignment's pretraining for its measured pace. Run on the device from the repo root with the
# kit carried: `bash results/gpu-h100/session8.sh` (writes $OUT/session8.log).
set -uo pipefail
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
log="$OUT/session8.log"
exec > >(tee -a "$log") 2>&1
K=gpukit
say() { printf '[session8 %s] %s\n' "$(date -u +%T)" "$*"; }

say "a+b: tests (runtime capped at 25 s, then 10 s a test)"
GPUCHECK_BIN_CAP=25 GPUCHECK_TEST_CAP=10 bash "$K/scripts/gpu-check.sh" --stages a,b --budget 300 \
  --tests ops,runtime,model,trajectory,parity,packed,overfit,decode,probe,resume,session,trim

b_old="$K/bin/bench-old"
b_new="$K/bin/bench"
for args in "--step 32 --size assignment --variant vanilla --repeats 5" \
            "--layouts 128 --size assignment --variant vanilla --kind pretrain --repeats 3 --data $K/data" \
            "--layouts 128 --size assignment --variant synthesizer --kind pretrain --repeats 3 --data $K/data"; do
  for b in "$b_old" "$b_new"; do
    say "\$ $(basename "$b") --device gpu $args"
    # shellcheck disable=SC2086 # the arguments are words
    timeout -k 5 60 "$b" --device gpu $args
  done
done
say "profile of the 128-row step, new kernels"
timeout -k 5 60 "$b_new" --device gpu --step 128 --size assignment --variant vanilla --repeats 2 --profile

say "PyTorch CUDA, 128 rows"
timeout -k 5 60 env PYTHONUNBUFFERED=1 python3 "$K/scripts/bench_peers.py" step --size assignment --rows 128 \
  --device cuda --threads "$(nproc)"

say "the assignment's pretraining (vanilla, wiki.txt, packed), 75 s for its pace"
rm -rf /tmp/pace && mkdir -p /tmp/pace
(cd /tmp/pace && timeout -k 5 75 "$OLDPWD/$K/bin/attnlab" pretrain vanilla "$OLDPWD/$K/data/wiki.txt" \
  --device gpu --writing_params_path vanilla.pretrain.params) 2>&1 | tr '\r' '\n' | tail -n 8
say "done"
