#!/usr/bin/env bash
# Session 8's second device call (results/gpu-h100/README.md), with the kit rebuilt after the first:
# one wgpu instance per process and devices opened one at a time (src/gpu/mod.rs), and the trim
# test comparing as the packed one does. (1) The test binaries that hung whole (runtime in session
# 7; ops and packed in call 1) run whole again, twice each, 30 s cap a run (gpu-check's stage b:
# a binary past its cap has its tests run one by one, 5 s each); trim once. (2) The
# handout's no-pretraining row on the GPU: finetune from scratch, then dev and test predictions.
# Run from the repo root with the kit carried: `bash results/gpu-h100/session8b.sh`.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/session8b.log") 2>&1
K="$PWD/gpukit"
say() { printf '[session8b %s] %s\n' "$(date -u +%T)" "$*"; }

GPUCHECK_BIN_CAP=30 GPUCHECK_TEST_CAP=5 bash "$K/scripts/gpu-check.sh" --stages b --budget 240 \
  --tests runtime,ops,packed,runtime,ops,packed,trim

say "the no-pretraining row on the GPU (the handout's commands, --device gpu)"
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  [ -f "$f" ] && { export VK_DRIVER_FILES="$f"; break; }
done
D="$K/data"
W=/tmp/nopretrain && rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
t0=$(date +%s)
"$K/bin/attnlab" finetune vanilla "$D/wiki.txt" --device gpu \
  --writing_params_path vanilla.model.params --finetune_corpus_path "$D/birth_places_train.tsv" 2>&1 |
  tr '\r' '\n' | grep -v '^$' | awk 'NR % 10 == 1 || /rror|epoch 75/' | tee "$OUT/nopretrain-gpu.train.log"
echo "finetuning: $(($(date +%s) - t0)) s wall" | tee -a "$OUT/nopretrain-gpu.train.log"
for split in dev test; do
  f="$D/birth_dev.tsv"; [ "$split" = test ] && f="$D/birth_test_inputs.tsv"
  t0=$(date +%s)
  "$K/bin/attnlab" evaluate vanilla "$D/wiki.txt" --device gpu \
    --reading_params_path vanilla.model.params --eval_corpus_path "$f" \
    --outputs_path "$OUT/nopretrain-gpu.$split.predictions" 2>&1 | tr '\r' '\n' | tail -n 3
  echo "evaluate $split: $(($(date +%s) - t0)) s wall"
done
say "done"
