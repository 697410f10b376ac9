#!/usr/bin/env bash
# Issue 15 item 2, the comparison: the same size (4 layers, 8 heads, width 128) finetuned from scratch
# with the handout's no-pretraining settings (75 epochs) on the course files.
set -x
cd /work/runs
D=/work/shared/data/cs224n-a5
B=/work/runs/bin/attnlab-r3
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $D/wiki.txt $S --writing_params_path course_small_nopt.params --finetune_corpus_path $D/birth_places_train.tsv
date -u
$B evaluate vanilla $D/wiki.txt $S --reading_params_path course_small_nopt.params --eval_corpus_path $D/birth_dev.tsv --outputs_path course_small_nopt.dev.predictions
date -u
