#!/usr/bin/env bash
# usage: explore-births.sh NAME CORPUSDIR EPOCHS BATCH [extra pretrain flags]
# The shipped model's size on CORPUSDIR (the course's four files; session 5's runs used birth
# sentences: S1-S4 a Python cut of `attnlab corpus` (s800, s800b), S5 `attnlab corpus --people 200
# --births_only`), the probe every 10 epochs, then the pretrained run's finetune and the dev set.
cd "${WORK:-/tmp/mp3}" || exit 1
B=${B:-attnlab}
N=$1; C=$2; E=$3; BS=$4; shift 4
S="--n_layer 4 --n_head 8 --n_embd 128"
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $C/wiki.txt $S --max_epochs $E --batch_size $BS "$@" --probe_corpus_path $C/birth_dev.tsv --writing_params_path $N.pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $C/wiki.txt $S --reading_params_path $N.pt.params --finetune_corpus_path $C/birth_places_train.tsv --writing_params_path $N.ft.params
$B evaluate vanilla $C/wiki.txt $S --reading_params_path $N.ft.params --eval_corpus_path $C/birth_dev.tsv --outputs_path $N.dev.predictions
date -u
