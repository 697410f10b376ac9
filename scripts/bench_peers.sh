#!/usr/bin/env bash
# Our CPU backend beside PyTorch's CPU backend, same machine, same threads, interleaved round by
# round so both see the same load. Prints both numbers and the ratio for: the training step (tiny
# preset 8x127; the assignment's model 8x127 and 32x127; both variants) and matmul GFLOP/s at the
# GPT's shapes (M = 16256 and M/16 = 1016).
#
#   scripts/bench_peers.sh [ROUNDS] [THREADS]        (defaults 3 and the machine's cores)
#   PARTS="layouts" scripts/bench_peers.sh 1          (only some parts: steps, matmul, layouts, decode)
#
# The layouts part: the assignment's step on real batches of the course's files (../shared/data/
# cs224n-a5 when present, else the embedded corpus): span-corruption batches of wiki.txt at
# 128 x 127 and birth_places_train.tsv questions at 256 x 127, padded (the reference's step),
# trimmed (our previous step) and packed (ours now), beside PyTorch's reference step, which always
# runs the full padded batch.
# The decode part: greedy decoding of the first 500 questions of birth_dev.tsv (32 tokens each) by a
# random full-size vanilla model: ours with the key/value cache (and without it, the previous
# path), beside the reference's loop in PyTorch (one question at a time, the whole context each
# step), timed on 100 questions and scaled to 500.
#
# Needs PyTorch: `pip install torch numpy safetensors` (CPU wheels are enough). Without it the script
# says so and exits 0, so nothing else depends on it. Builds `bench` in release mode first, or runs
# the binary named by BENCH (BENCH=/path/to/old/bench compares an older build on the same machine).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
threads=${2:-$(nproc)}
if ! python3 -c 'import torch, safetensors' 2>/dev/null; then
  echo "bench_peers: PyTorch is not installed; skipping (pip install torch numpy safetensors)"
  exit 0
fi
source scripts/env.sh
# BENCH=path runs that `bench` binary (e.g. an older build copied aside, to compare two builds on
# one machine at one time); otherwise the tree's own, built here.
bench=${BENCH:-}
if [ -z "$bench" ]; then
  cargo build --release --bin bench -q
  bench=${CARGO_TARGET_DIR:-target}/release/bench
fi
export RAYON_NUM_THREADS=$threads
ours() { "$bench" --device cpu "$@"; }
peer() { python3 scripts/bench_peers.py "$@" --threads "$threads"; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench: $bench; commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)');" \
  "torch $(python3 -c 'import torch; print(torch.__version__)'); $threads threads; $rounds rounds"
parts=${PARTS:-steps matmul layouts decode}
data=../shared/data/cs224n-a5
[ -f "$data/wiki.txt" ] && [ -f "$data/birth_places_train.tsv" ] || data=""
for r in $(seq "$rounds"); do
  for kind in pretrain:128 finetune:256; do
    case " $parts " in *" layouts "*) ;; *) break ;; esac
    k=${kind%%:*} rows=${kind##*:}
    ours --layouts "$rows" --size assignment --variant vanilla --kind "$k" --repeats 3 ${data:+--data "$data"} |
      awk -v k="$k" -v rows="$rows" '$1 == "vanilla" {
        printf "ours\tstep %s padded %sx127\t%s\n", k, rows, $5
        printf "ours\tstep %s trimmed %sx127 (T %s)\t%s\n", k, rows, $4, $6
        printf "ours\tstep %s packed %sx127 (%s real)\t%s\n", k, rows, $3, $7 }' >> "$out"
    peer step --size assignment --variant vanilla --rows "$rows" --repeats 3 |
      awk -F'\t' -v k="$k" -v rows="$rows" '{ print "torch\tstep " k " padded " rows "x127\t" $2 }' >> "$out"
  done
  case " $parts " in
    *" decode "*)
      ours --decode ${data:+"$data/birth_dev.tsv"} | awk '$1 == "vanilla" {
        printf "ours\tdecode 500 questions, previous path (s)\t%s\n", $2
        printf "ours\tdecode 500 questions (s)\t%s\n", $3 }' >> "$out"
      peer decode ${data:+--tsv "$data/birth_dev.tsv"} --questions 100 | grep 'scaled' |
        awk -F'\t' '{ print "torch\tdecode 500 questions (s)\t" $2 }' >> "$out" ;;
  esac
  case " $parts " in *" steps "*) ;; *) continue ;; esac
  for size in tiny:8 assignment:8 assignment:32; do
    s=${size%%:*} rows=${size##*:}
    for v in vanilla synthesizer; do
      ms=$(ours --step "$rows" --size "$s" --variant "$v" --repeats 3 | awk '/ms\/step/ {print $2}')
      printf 'ours\tstep %s %s %sx127\t%s\n' "$s" "$v" "$rows" "$ms" >> "$out"
      peer step --size "$s" --variant "$v" --rows "$rows" --repeats 3 | sed 's/^/torch\t/' >> "$out"
    done
  done
  case " $parts " in *" matmul "*) ;; *) continue ;; esac
  for m in 16256 1016; do
    flag=""; [ "$m" = 1016 ] && flag="--quick"
    ours $flag --repeats 3 |
      awk -F'|' '/^\| (x|q|att)/ {gsub(/^ +| +$/, "", $2); gsub(/ /, "", $5); print "ours\t" $2 "\t" $5}' >> "$out"
    peer matmul --rows "$m" --repeats 3 | sed 's/^/torch\t/' >> "$out"
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
# Median over rounds of each measurement, then one row per workload: ours, torch, torch/ours for
# times (ms: >1 means we are faster), ours/torch for GFLOP/s (>1 means we are faster).
python3 - "$out" <<'PY'
import collections, statistics, sys
vals = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, name, v = line.rstrip("\n").split("\t")
    vals[(who, name)].append(float(v))
names = list(dict.fromkeys(n for _, n in vals))
print("| workload | ours | PyTorch CPU | ours faster by |")
print("|---|---:|---:|---:|")
for n in names:
    o, t = vals.get(("ours", n)), vals.get(("torch", n))
    if not t and ", previous path" in n:
        t = vals.get(("torch", n.replace(", previous path", "")))
    if not t and " padded " not in n:
        # Our trimmed and packed steps against PyTorch's padded reference step on the same batches.
        t = next((vals.get(("torch", m)) for m in names
                  if m.startswith(n.split(" ")[0] + " " + n.split(" ")[1] + " padded ")
                  and ("torch", m) in vals), None)
    if not o or not t:
        continue
    o, t = statistics.median(o), statistics.median(t)
    if n.startswith("step") or n.startswith("decode"):
        unit = "" if n.startswith("decode") else " (ms/step)"
        print(f"| {n}{unit} | {o:.1f} | {t:.1f} | {t / o:.2f}x |")
    else:
        print(f"| {n} (GFLOP/s) | {o:.1f} | {t:.1f} | {o / t:.2f}x |")
PY
