#!/usr/bin/env bash
# usage: exp.sh NAME EPOCHS BATCH DROPOUT
set -x
cd "${WORK:-/tmp/mp}"  # holds c800/ from `attnlab corpus --out_dir c800` (for the probe)
B=${B:-target/release/attnlab}
N=$1; E=$2; BS=$3; D=$4
S="--n_layer 4 --n_head 8 --n_embd 128 --dropout $D"
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla $S --max_epochs $E --batch_size $BS --probe_corpus_path c800/birth_dev.tsv --writing_params_path $N.pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla $S --reading_params_path $N.pt.params --writing_params_path $N.ft.params
date -u
$B evaluate vanilla $S --reading_params_path $N.ft.params --outputs_path $N.dev.predictions
date -u
