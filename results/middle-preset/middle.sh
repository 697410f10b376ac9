#!/usr/bin/env bash
# The page's middle preset, run natively with the CLI on the built-in corpus: the shipped model's size
# (4 layers, 8 heads, width 128), 60 pretraining epochs (batch 128, lr 6e-3, dropout 0.1), then the
# pretrained run's 10 finetuning epochs, then the built-in dev set.
set -x
cd "${WORK:-/tmp/mp/mid}"
B=${B:-target/release/attnlab}
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $S --max_epochs 60 --writing_params_path middle_pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $S --reading_params_path middle_pt.params --writing_params_path middle_ft.params
date -u
$B evaluate vanilla $S --reading_params_path middle_ft.params --outputs_path middle.dev.predictions
date -u
