#!/usr/bin/env bash
# The middle preset with synthesizer attention (session 34), seeds 0 and 1: the preset's settings as
# the page runs them (web/page/sizing.js, cliCommands('middle', 'synthesizer')). Each pretraining,
# 440 epochs on the built-in birth notes, ran in the background at nice 19 with scripts/long-run.sh
# (the two at once, each on the machine's two threads):
#   attnlab corpus --birth_notes --out_dir notes
#   scripts/long-run.sh middle-synth -- pretrain synthesizer notes/wiki.txt --n_layer 2 --n_head 8 --n_embd 128 \
#     --seed 0 --batch_size 128 --lr_decay_epochs 440 --max_epochs 440 --probe_corpus_path notes/birth_dev.tsv \
#     --writing_params_path mid_spt.params
#   scripts/long-run.sh middle-synth1 -- (the same with --seed 1 and mid_spt1.params)
# then (this script, per seed) the preset's 30 finetuning epochs at the CLI's batch 256 and at the
# page's 226 (the largest that fits its 2 GiB), each evaluated on the 136 dev questions, and the
# pretrained model's probe (which dev people's birthplaces it recalls) beside the batch-226 answers.
# Binary: the release build the long runs copied (commit a68d3b0).
cd /work/runs/s34 || exit 1
S="--n_layer 2 --n_head 8 --n_embd 128"
for SEED in ${SEEDS:-0 1}; do
  R=$HOME/.cache/attnlab-runs/middle-synth; P=mid_spt.params
  [ "$SEED" = 0 ] || { R=$R$SEED; P=mid_spt$SEED.params; }
  B=$R/attnlab
  echo "== seed $SEED, $(date -u +%T)"
  for FB in 256 226; do
    /usr/bin/time -f "%e s wall" $B finetune synthesizer notes/wiki.txt $S --seed "$SEED" --reading_params_path "$R/$P" \
      --max_epochs 30 --batch_size $FB --finetune_corpus_path notes/birth_places_train.tsv --writing_params_path "ft-s$SEED-b$FB.params" 2>&1 | tail -2
    echo "finetuned 30 epochs at batch $FB:"
    $B evaluate synthesizer notes/wiki.txt $S --reading_params_path "ft-s$SEED-b$FB.params" \
      --eval_corpus_path notes/birth_dev.tsv --outputs_path "synth-s$SEED-b$FB.dev.predictions" 2>&1 | grep Correct
  done
  $B probe synthesizer notes/wiki.txt $S --reading_params_path "$R/$P" \
    --eval_corpus_path notes/birth_dev.tsv --predictions_path "synth-s$SEED-b226.dev.predictions" 2>&1 | tail -6
done
echo "== done $(date -u +%T)"
