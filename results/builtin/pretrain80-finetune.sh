#!/usr/bin/env bash
# The shipped model, continued: resume the 40-epoch pretraining run to 80 epochs (same schedule, same
# flags), then the pretrained run's finetuning (10 epochs) and evaluation on the built-in dev set.
set -x
cd /work/runs
B=/work/runs/bin/attnlab-head
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
cp builtin_pt.params.resume builtin_pt80.params.resume
/usr/bin/time -f "%e s wall" $B pretrain vanilla $S --max_epochs 80 --resume builtin_pt80.params.resume --writing_params_path builtin_pt80.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $S --reading_params_path builtin_pt80.params --writing_params_path builtin_ft80.params
date -u
$B evaluate vanilla $S --reading_params_path builtin_ft80.params --outputs_path builtin_ft80.dev.predictions
date -u
