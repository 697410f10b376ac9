#!/usr/bin/env bash
# The shipped course model's first 276 pretraining steps (epochs 1–12 of 650) run again and compared
# with its log, results/course-full/course-vanilla.log, as that run was made:
#   steps 1–138 (epochs 1–6) with the build of its first start, 9fd9733 (its dropout masks were keyed
#   by the flat index, before e186029), built once into ~/.cache/attnlab-repro/ (a git worktree);
#   steps 139–276 (epochs 7–12) with this checkout's release CLI, from the training state that first
#   build saved at step 138, as the run's second start continued from its own.
# Each printed epoch loss must equal the log's (scripts/repro-check.sh compares them). About 15 min on
# 2 cores (the old build included; 10 min once it is cached).
#
#   scripts/repro-course.sh [DATA_DIR]     # default ../shared/data/cs224n-a5; exits 0 on a match
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$root/../shared/data/cs224n-a5}
first=9fd9733
for f in wiki.txt birth_dev.tsv; do
    [ -f "$data/$f" ] || { echo "repro-course: no $data/$f: give the course data folder (skipped)" >&2; exit 2; }
done
data=$(cd "$data" && pwd)
cache=${ATTNLAB_REPRO_CACHE:-$HOME/.cache/attnlab-repro}
old=$cache/$first/target/release/attnlab
if [ ! -x "$old" ]; then
    echo "repro-course: building $first (the run's first start) in $cache/$first" >&2
    mkdir -p "$cache"
    [ -d "$cache/$first/src" ] || git -C "$root" worktree add --detach "$cache/$first" "$first" >&2
    (cd "$cache/$first" && cargo build --release --bin attnlab >&2)
fi
(cd "$root" && cargo build --release --bin attnlab >&2)

# The run as scripts/long-run.sh keeps it: its command and its log, in a scratch runs folder.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The first build had no probe (--probe_corpus_path, which asks the model between epochs and
# changes no training number), so its part runs without one.
mkdir -p "$work/course-vanilla"
cmd="pretrain vanilla $data/wiki.txt --writing_params_path $work/vanilla.pretrain.params"
printf '%s' "$cmd" > "$work/course-vanilla/cmd"
cp "$root/results/course-full/course-vanilla.log" "$work/course-vanilla/log"

echo "repro-course: steps 1–138 with $first" >&2
ATTNLAB_RUNS=$work ATTNLAB_BIN=$old REPRO_KEEP_STATE=$work/step138.resume \
    "$root/scripts/repro-check.sh" course-vanilla 138
echo "repro-course: steps 139–276 with this checkout, from $first's state at step 138" >&2
printf '%s' "$cmd --probe_corpus_path $data/birth_dev.tsv" > "$work/course-vanilla/cmd"
ATTNLAB_RUNS=$work ATTNLAB_BIN=$root/target/release/attnlab \
    "$root/scripts/repro-check.sh" course-vanilla 276 "$work/step138.resume"
