#!/usr/bin/env bash
# R11: R7's settings with seed 1, dropout 0 in both pretraining and finetuning (as the page's form applies it)
cd /tmp/mp9
B=/tmp/mp9/attnlab-s9; S="--n_layer 4 --n_head 8 --n_embd 128"; export XDG_RUNTIME_DIR=/tmp RAYON_NUM_THREADS=1
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla births/wiki.txt $S --max_epochs 200 --batch_size 16 --learning_rate 1e-3 --dropout 0 --seed 1 --probe_corpus_path births/birth_dev.tsv --writing_params_path R11.pt.params
/usr/bin/time -f "%e s wall" $B finetune vanilla births/wiki.txt $S --dropout 0 --seed 1 --reading_params_path R11.pt.params --finetune_corpus_path births/birth_places_train.tsv --writing_params_path R11.ft.params
$B evaluate vanilla births/wiki.txt $S --reading_params_path R11.ft.params --eval_corpus_path births/birth_dev.tsv --outputs_path R11.dev.predictions
date -u
