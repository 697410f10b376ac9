#!/usr/bin/env bash
# The page's middle preset, run natively with the CLI: the shipped model's run (4 layers, 8 heads,
# width 128, the assignment's 650 pretraining epochs, batch 128, lr 6e-3, dropout 0.1, then the
# pretrained run's 10 finetuning epochs) on the built-in corpus's birth sentences alone
# (`attnlab corpus --births_only`: each biography cut to the name and the birth sentence), then the
# built-in dev set. The probe's recall on the first 100 dev people is logged every 10 epochs.
#   B=target/release/attnlab WORK=/tmp/middle results/middle-preset/middle.sh
set -x
B=$(realpath "${B:-target/release/attnlab}")
mkdir -p "${WORK:-/tmp/middle}" && cd "${WORK:-/tmp/middle}" || exit 1
S="--n_layer 4 --n_head 8 --n_embd 128"
$B corpus --births_only --out_dir births
date -u
/usr/bin/time -f "%e s wall" $B pretrain vanilla births/wiki.txt $S --probe_corpus_path births/birth_dev.tsv --writing_params_path middle_pt.params
date -u
/usr/bin/time -f "%e s wall" $B finetune vanilla births/wiki.txt $S --reading_params_path middle_pt.params --finetune_corpus_path births/birth_places_train.tsv --writing_params_path middle_ft.params
date -u
$B evaluate vanilla births/wiki.txt $S --reading_params_path middle_ft.params --eval_corpus_path births/birth_dev.tsv --outputs_path middle.dev.predictions
$B probe vanilla births/wiki.txt --reading_params_path middle_pt.params $S --eval_corpus_path births/birth_dev.tsv --predictions_path middle.dev.predictions
date -u
