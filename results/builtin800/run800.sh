#!/usr/bin/env bash
# Built-in generator at 800 people (attnlab corpus --people 800): pretrain 400 epochs, finetune 10, eval dev;
# and the same size finetuned from scratch (75 epochs). 4 layers, 8 heads, width 128, vanilla.
# Made the corpus first: attnlab corpus --people 800 --out_dir c800  (our generator, seed 0; 545 train, 136 dev, 119 test)
# Binary: release build of main at 3af6c1b (target-cpu=native), copied to /work/runs/bin/attnlab-s5.
set -x
cd /work/runs/s5
B=/work/runs/bin/attnlab-s5
S="--n_layer 4 --n_head 8 --n_embd 128"
C=c800
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $C/wiki.txt $S --finetune_corpus_path $C/birth_places_train.tsv --writing_params_path nopt800.params
$B evaluate vanilla $C/wiki.txt $S --reading_params_path nopt800.params --eval_corpus_path $C/birth_dev.tsv --outputs_path nopt800.dev.predictions
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $C/wiki.txt $S --max_epochs 400 --writing_params_path pt800.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $C/wiki.txt $S --reading_params_path pt800.params --finetune_corpus_path $C/birth_places_train.tsv --writing_params_path ft800.params
$B evaluate vanilla $C/wiki.txt $S --reading_params_path ft800.params --eval_corpus_path $C/birth_dev.tsv --outputs_path ft800.dev.predictions
date -u
