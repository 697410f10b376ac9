#!/bin/bash
# Finetune a pretrained model of ends.sh again for other finetuning epochs (and seeds), and evaluate
# on the dev questions (session 18): ft-sweep.sh WORK_DIR PT_FILE "SIZE FLAGS"; EPOCHS, FSEEDS lists.
# B: the attnlab binary (default target/release/attnlab of the checkout this script is in).
B=$(realpath "${B:-$(dirname "$0")/../../../target/release/attnlab}")
cd $1 || exit 1
PT=$2; S="$3"
for E in ${EPOCHS:-10 20 30 40}; do for FS in ${FSEEDS:-0}; do
  o=ft-$PT-e$E-s$FS
  $B finetune vanilla notes/wiki.txt $S --seed $FS --max_epochs $E --reading_params_path $PT \
    --finetune_corpus_path notes/birth_places_train.tsv --writing_params_path $o.params > /dev/null 2>&1 || exit 1
  r=$($B evaluate vanilla notes/wiki.txt $S --reading_params_path $o.params \
    --eval_corpus_path notes/birth_dev.tsv --outputs_path $o.dev.predictions 2>&1 | grep Correct | sed 's/Correct: //')
  top=$(sort $o.dev.predictions | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' ',')
  echo "$1 $PT ft_epochs $E ft_seed $FS: $r | $top $(date -u +%T)"
done; done
