#!/usr/bin/env bash
# Issue 15 item 3, the comparison: the same size as the shipped model (4 layers, 8 heads, width 128),
# finetuned from scratch with the handout's no-pretraining settings (75 epochs), on the built-in corpus.
set -x
cd /work/runs
B=/work/runs/bin/attnlab-r3
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $S --writing_params_path builtin_nopt.params
date -u
$B evaluate vanilla $S --reading_params_path builtin_nopt.params --outputs_path builtin_nopt.dev.predictions
date -u
