#!/usr/bin/env bash
# usage: [S="--n_layer L --n_head H --n_embd E"] explore-small.sh NAME CORPUS EPOCHS BATCH [extra pretrain flags]
# (S defaults to the shipped model's size; extra flags go to the pretraining only)
cd "${WORK:-/tmp/mp2}"  # holds cN/ from `attnlab corpus --people N --out_dir cN`
B=${B:-attnlab}
N=$1; C=$2; E=$3; BS=$4; shift 4
S=${S:-"--n_layer 4 --n_head 8 --n_embd 128"}
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $C/wiki.txt $S --max_epochs $E --batch_size $BS "$@" --probe_corpus_path $C/birth_dev.tsv --writing_params_path $N.pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $C/wiki.txt $S --reading_params_path $N.pt.params --finetune_corpus_path $C/birth_places_train.tsv --writing_params_path $N.ft.params
$B evaluate vanilla $C/wiki.txt $S --reading_params_path $N.ft.params --eval_corpus_path $C/birth_dev.tsv --outputs_path $N.dev.predictions
date -u
