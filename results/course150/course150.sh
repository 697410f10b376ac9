#!/usr/bin/env bash
# Issue 15 item 2, a longer try: the course files, vanilla, 4 layers, 8 heads, width 128 (875,264
# parameters; the code paths are the assignment's), pretrained 150 epochs (course-small/ had 20),
# where the reference's cosine schedule (final_tokens = 200 epochs' worth) is down to 15% of its
# peak, then finetuned 10 epochs (the pretrained run's settings), evaluated on dev and test.
# Binary: release build of main at 314220e. Run at nice 19 beside a CI run and the lead's checks.
# The course data is read from ../shared, never copied.
set -x
cd /work/runs/course150
D=/work/shared/data/cs224n-a5
B=./attnlab-314220e
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $D/wiki.txt $S --max_epochs 150 --writing_params_path pt150.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $D/wiki.txt $S --reading_params_path pt150.params --writing_params_path ft150.params --finetune_corpus_path $D/birth_places_train.tsv
date -u
$B evaluate vanilla $D/wiki.txt $S --reading_params_path ft150.params --eval_corpus_path $D/birth_dev.tsv --outputs_path ft150.dev.predictions
$B evaluate vanilla $D/wiki.txt $S --reading_params_path ft150.params --eval_corpus_path $D/birth_test_inputs.tsv --outputs_path ft150.test.predictions
date -u
