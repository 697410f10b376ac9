#!/usr/bin/env bash
# Issue 15 item 1: the handout's no-pretraining command, unchanged (auto picks the CPU backend here).
set -x
cd /work/runs
D=/work/shared/data/cs224n-a5
B=/work/runs/bin/attnlab
date -u
/usr/bin/time -v $B finetune vanilla $D/wiki.txt --writing_params_path vanilla.model.params --finetune_corpus_path $D/birth_places_train.tsv
date -u
