#!/usr/bin/env bash
# Continue run800.sh's pretraining from its saved state (epoch 400, where the reference's cosine schedule,
# which restarts past final_tokens = 200 x lines x 128, is back at its peak lr) to the assignment's
# 650 epochs (lr back at its floor), then finetune 10 epochs and evaluate on dev.
set -x
cd /work/runs/s5
B=/work/runs/bin/attnlab-s5
S="--n_layer 4 --n_head 8 --n_embd 128"
C=c800
date -u
cp pt800.params.resume pt800_650.params.resume
/usr/bin/time -f "%e s wall" $B pretrain vanilla $C/wiki.txt $S --max_epochs 650 --resume pt800_650.params.resume --writing_params_path pt800_650.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $C/wiki.txt $S --reading_params_path pt800_650.params --finetune_corpus_path $C/birth_places_train.tsv --writing_params_path ft800_650.params
$B evaluate vanilla $C/wiki.txt $S --reading_params_path ft800_650.params --eval_corpus_path $C/birth_dev.tsv --outputs_path ft800_650.dev.predictions
date -u
