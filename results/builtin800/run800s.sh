#!/usr/bin/env bash
# Synthesizer at the same size on the 800-person corpus: pretrain 200 epochs (where the reference's cosine
# schedule first reaches its floor), finetune 10, evaluate on dev. Run at nice 15 beside other work.
set -x
cd /work/runs/s5
B=/work/runs/bin/attnlab-s5
S="--n_layer 4 --n_head 8 --n_embd 128"
C=c800
date -u
/usr/bin/time -f "%e s wall" $B pretrain synthesizer $C/wiki.txt $S --max_epochs 200 --writing_params_path spt800.params
date -u
/usr/bin/time -f "%e s wall" $B finetune synthesizer $C/wiki.txt $S --reading_params_path spt800.params --finetune_corpus_path $C/birth_places_train.tsv --writing_params_path sft800.params
$B evaluate synthesizer $C/wiki.txt $S --reading_params_path sft800.params --eval_corpus_path $C/birth_dev.tsv --outputs_path sft800.dev.predictions
date -u
