#!/usr/bin/env bash
# Reproduce the shipped model with the two commands in web/models/builtin-vanilla.json, unchanged
# (built-in corpus, 650 pretraining epochs in one go, 10 finetuning epochs), then evaluate it on the
# built-in dev set. Binary: release build of main at cda0e9f, copied to attnlab-cda0e9f.
# Run at nice 19 beside a helper's builds and browser tests and the lead's CI runs.
set -x
cd /work/runs/repro
B=./attnlab-cda0e9f
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $S --writing_params_path builtin_pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $S --reading_params_path builtin_pt.params --writing_params_path builtin_ft.params
$B corpus --out_dir c800
$B evaluate vanilla $S --reading_params_path builtin_ft.params --eval_corpus_path c800/birth_dev.tsv --outputs_path builtin_ft.dev.predictions
date -u
