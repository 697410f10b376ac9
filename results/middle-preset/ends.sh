#!/usr/bin/env bash
# Where should the middle preset's pretraining end? One pretraining on the birth notes (the preset's
# text, size and settings, batch 116 as in the page), carried on in stages with --resume (the
# schedule counts tokens, so stopping and going on changes nothing), and at the end of each stage
# its model finetuned (the pretrained run's 10 epochs), evaluated on the dev questions and probed.
# BATCH (116) and LR (the assignment's 6e-3) change the pretraining's batch and peak rate, SIZE
# the model ("--n_layer 4 --n_head 8 --n_embd 128", the preset's), DECAY the epoch where the
# pretraining's cosine reaches its floor (--lr_decay_epochs; run.py's 200), FT_EPOCHS and FT_BATCH
# the finetuning's epochs and batches (run.py's 10 and 256; several batches: one finetune each,
# predictions named …-b<batch>); the work folder is
# $WORK/seed$SEED$TAG.
#   B=target/release/attnlab WORK=/tmp/ends SEED=0 ENDS="180 200 220 240 260 280 300" \
#     RAYON_NUM_THREADS=1 results/middle-preset/ends.sh > ends-s0.log 2>&1
B=$(realpath "${B:-target/release/attnlab}")
SEED=${SEED:-0}
W=${WORK:-/tmp/ends}/seed$SEED$TAG
X="--batch_size ${BATCH:-116}"; [ -n "$LR" ] && X="$X --learning_rate $LR"
[ -n "$DECAY" ] && X="$X --lr_decay_epochs $DECAY"
mkdir -p "$W" && cd "$W" || exit 1
S="${SIZE:---n_layer 4 --n_head 8 --n_embd 128} --seed $SEED"
[ -f notes/wiki.txt ] || $B corpus --birth_notes --out_dir notes || exit 1
for E in ${ENDS:-180 200 220 240 260 280 300}; do
  echo "== stage to epoch $E, $(date -u +%T)"
  R=""; [ -f pt.params.resume ] && R="--resume pt.params.resume"
  $B pretrain vanilla notes/wiki.txt $S $X --max_epochs "$E" $R \
    --probe_corpus_path notes/birth_dev.tsv --writing_params_path pt.params 2>&1 | grep --line-buffered -vE "XDG_RUNTIME"
  [ "${PIPESTATUS[0]}" = 0 ] || exit 1
  cp pt.params "pt$E.params"
  for FB in ${FT_BATCH:-256}; do
    P="ends-s$SEED$TAG-$E"; [ -n "$FT_BATCH" ] && P="$P-b$FB"
    $B finetune vanilla notes/wiki.txt $S --reading_params_path "pt$E.params" --max_epochs "${FT_EPOCHS:-10}" \
      --batch_size "$FB" --finetune_corpus_path notes/birth_places_train.tsv --writing_params_path "ft$E.params" > /dev/null 2>&1 || exit 1
    echo "finetuned ${FT_EPOCHS:-10} epochs at batch $FB:"
    $B evaluate vanilla notes/wiki.txt $S --reading_params_path "ft$E.params" \
      --eval_corpus_path notes/birth_dev.tsv --outputs_path "$P.dev.predictions" 2>&1 | grep Correct
  done
  $B probe vanilla notes/wiki.txt $S --reading_params_path "pt$E.params" \
    --eval_corpus_path notes/birth_dev.tsv --predictions_path "$P.dev.predictions" 2>&1 | tail -6
done
echo "== done $(date -u +%T)"
