#!/usr/bin/env bash
# Issue 15 item 3: the model that ships with the page. Built-in corpus (no corpus path), vanilla,
# 4 layers, 8 heads, width 128; pretrain 40 epochs, then the pretrained finetune (10 epochs), eval on dev.
set -x
cd /work/runs
B=/work/runs/bin/attnlab-r3
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $S --max_epochs 40 --writing_params_path builtin_pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $S --reading_params_path builtin_pt.params --writing_params_path builtin_ft.params
date -u
$B evaluate vanilla $S --reading_params_path builtin_ft.params --outputs_path builtin_ft.dev.predictions
date -u
