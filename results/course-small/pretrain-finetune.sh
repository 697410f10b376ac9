#!/usr/bin/env bash
# Issue 15 item 2 at the size this session could afford: the course files, vanilla, 4 layers, 8 heads,
# width 128 (the code paths are the assignment's; only the size and the pretraining epochs differ).
# Pretrain 20 epochs, finetune 10 (the pretrained run's settings), evaluate dev and test.
set -x
cd /work/runs
D=/work/shared/data/cs224n-a5
B=/work/runs/bin/attnlab-r3
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $D/wiki.txt $S --max_epochs 20 --writing_params_path course_small_pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $D/wiki.txt $S --reading_params_path course_small_pt.params --writing_params_path course_small_ft.params --finetune_corpus_path $D/birth_places_train.tsv
date -u
$B evaluate vanilla $D/wiki.txt $S --reading_params_path course_small_ft.params --eval_corpus_path $D/birth_dev.tsv --outputs_path course_small_ft.dev.predictions
$B evaluate vanilla $D/wiki.txt $S --reading_params_path course_small_ft.params --eval_corpus_path $D/birth_test_inputs.tsv --outputs_path course_small_ft.test.predictions
date -u
