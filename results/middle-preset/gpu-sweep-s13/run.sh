#!/usr/bin/env bash
# Middle-preset sweep (sessions 13-15; the seed, a 9th field, since 15): pretrain (probe every 10 epochs) -> finetune 10 epochs -> dev.
# usage: BUDGET=seconds run.sh JOBFILE_CPU JOBFILE_GPU ; logs in $OUTDIR/logs
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${B:-$here/attnlab}
OUTDIR=${OUTDIR:-$here/out}
mkdir -p "$OUTDIR/logs" "$OUTDIR/w"
export DEADLINE=$(( $(date +%s) + ${BUDGET:-500} ))
job() { # name device corpus epochs batch lr dropout layers-heads-width [seed]
  local n=$1 d=$2 c=$here/corpora/$3 e=$4 bs=$5 lr=$6 dr=$7 sd=${9:-0} S
  IFS=- read -r L H W <<<"${8:-4-8-128}"; S="--n_layer $L --n_head $H --n_embd $W"
  local log=$OUTDIR/logs/$n.log w=$OUTDIR/w/$n left=$(( DEADLINE - $(date +%s) ))
  [ $left -gt 30 ] || { echo "SKIPPED (no time)" >"$log"; return; }
  {
    echo "JOB $n device=$d corpus=$3 epochs=$e batch=$bs lr=$lr dropout=$dr size=${8:-4-8-128} seed=$sd start=$(date -u +%T)"
    local t0=$(date +%s)
    timeout $left $B pretrain vanilla $c/wiki.txt $S --device $d --max_epochs $e --batch_size $bs --learning_rate $lr --dropout $dr --seed $sd --probe_corpus_path $c/birth_dev.tsv --writing_params_path $w.pt.params || { echo "PRETRAIN STOPPED rc=$?"; exit; }
    local t1=$(date +%s)
    left=$(( DEADLINE - t1 ))
    timeout $left $B finetune vanilla $c/wiki.txt $S --device $d --reading_params_path $w.pt.params --finetune_corpus_path $c/birth_places_train.tsv --writing_params_path $w.ft.params || { echo "FINETUNE STOPPED"; exit; }
    timeout $(( DEADLINE - $(date +%s) )) $B evaluate vanilla $c/wiki.txt $S --device $d --reading_params_path $w.ft.params --eval_corpus_path $c/birth_dev.tsv --outputs_path $OUTDIR/logs/$n.dev.predictions
    echo "TIMES pretrain $((t1-t0)) s, all $(( $(date +%s) - t0 )) s"
  } >"$log" 2>&1
}
export -f job; export B OUTDIR here
runpool() { # file parallel threads
  [ -s "$1" ] || return 0
  grep -v '^#' "$1" | RAYON_NUM_THREADS=$3 xargs -P "$2" -L 1 bash -c 'job "$@"' _
}
runpool "${1:-/dev/null}" "${CPU_P:-7}" "${CPU_T:-2}" &
runpool "${2:-/dev/null}" "${GPU_P:-2}" 1 &
wait
{ for f in "$OUTDIR"/logs/*.log; do
    n=$(basename "$f" .log)
    printf '%-14s %s | %s | %s\n' "$n" "$(head -1 "$f" | cut -c1-90)" "$(grep -o 'recall[^|]*' "$f" | tail -1 | cut -c1-60)" "$(grep -E '^Correct' "$f" | tail -1)"
  done; } > "$OUTDIR/summary.txt"
cat "$OUTDIR/summary.txt"
