#!/usr/bin/env bash
# Session 8's third device call: the finetuning batches' step before and after the new kernels
# (bin/bench-old: the kit at 413e099), PyTorch's synthesizer step at 128 rows, and a minute of the
# synthesizer's pretraining for its pace. `bash results/gpu-h100/session8c.sh` from the repo root.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/session8c.log") 2>&1
K="$PWD/gpukit"
say() { printf '[session8c %s] %s\n' "$(date -u +%T)" "$*"; }
ldconfig -p | grep -q libGLdispatch.so.0 || { for f in "$K"/gl/*.deb; do dpkg -x "$f" /; done; ldconfig; }
for v in vanilla synthesizer; do
  for b in bench-old bench; do
    say "\$ $b --device gpu --layouts 256 --size assignment --variant $v --kind finetune --repeats 3"
    timeout -k 5 60 "$K/bin/$b" --device gpu --layouts 256 --size assignment --variant $v --kind finetune \
      --repeats 3 --data "$K/data"
  done
done
say "PyTorch CUDA, synthesizer, 128 rows"
timeout -k 5 60 env PYTHONUNBUFFERED=1 python3 "$K/scripts/bench_peers.py" step --size assignment \
  --variant synthesizer --rows 128 --device cuda --threads "$(nproc)"
say "the synthesizer's pretraining (wiki.txt, packed), 60 s for its pace"
rm -rf /tmp/pace && mkdir -p /tmp/pace && cd /tmp/pace || exit 1
timeout -k 5 60 "$K/bin/attnlab" pretrain synthesizer "$K/data/wiki.txt" --device gpu \
  --writing_params_path synthesizer.pretrain.params 2>&1 | tr '\r' '\n' | grep -v '^$' | tail -n 4
say "done"
