#!/usr/bin/env bash
# Run a logged training run's first steps again and compare the losses with its log.
#
#   scripts/repro-check.sh NAME STEPS [STATE]
#
# NAME is a run of scripts/long-run.sh (its command and log are in ~/.cache/attnlab-runs/NAME/, or
# $ATTNLAB_RUNS/NAME/). The command is run again with this checkout's release CLI ($ATTNLAB_BIN if
# set; the arguments are the run's, split at spaces), in a scratch
# folder, until optimizer step STEPS (--max_steps; the schedule stays the full run's): from step 0,
# or from a saved training state STATE (a copy of the run's `.resume` file taken at an epoch end).
# Each epoch line it prints is compared with the log's line for the same epoch (the last one, as a
# restarted run repeats epochs after its saved state). Prints both losses side by side and exits 1
# if one differs by more than 1e-4 relative (float summation order aside, the run is deterministic
# on one machine and thread count; exact equality is counted and reported). With REPRO_KEEP_STATE
# set to a path, the rerun's training state at its last step is copied there (for a next check).
set -euo pipefail
die() { echo "repro-check: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: scripts/repro-check.sh NAME STEPS [STATE]"
name=$1 steps=$2 state=${3:-}
[[ $steps =~ ^[0-9]+$ ]] && [ "$steps" -gt 0 ] || die "STEPS must be a positive number of optimizer steps, not '$steps'"
dir=${ATTNLAB_RUNS:-$HOME/.cache/attnlab-runs}/$name
[ -f "$dir/cmd" ] && [ -f "$dir/log" ] ||
  die "no run '$name' in $dir (no cmd or log file): start it with scripts/long-run.sh first"
[ -z "$state" ] || [ -f "$state" ] || die "no training state at $state"
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${ATTNLAB_BIN:-$root/target/release/attnlab}
[ -n "${ATTNLAB_BIN:-}" ] || (cd "$root" && cargo build --release --bin attnlab >&2)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The run's arguments, with the checkpoint written into the scratch folder instead.
read -r -a args < "$dir/cmd" || true  # the file has no final newline
out=""
for i in "${!args[@]}"; do
    if [ "${args[$i]}" = "--writing_params_path" ]; then
        out=$scratch/$(basename "${args[$((i + 1))]}")
        args[i + 1]=$out
    fi
done
[ -n "$out" ] || die "$dir/cmd has no --writing_params_path"
extra=(--max_steps "$steps")
if [ -n "$state" ]; then
    cp "$state" "$out.resume"
    extra+=(--resume "$out.resume")
fi
echo "repro-check: $bin ${args[*]} ${extra[*]}" >&2
"$bin" "${args[@]}" "${extra[@]}" > "$scratch/log" 2>&1 || { tail -5 "$scratch/log" >&2; die "the rerun failed"; }
grep -m1 "resuming" "$scratch/log" >&2 || true
if [ -n "${REPRO_KEEP_STATE:-}" ]; then
    [ -f "$out.resume" ] || die "the rerun left no training state ($out.resume) to keep"
    cp "$out.resume" "$REPRO_KEEP_STATE.tmp" && mv "$REPRO_KEEP_STATE.tmp" "$REPRO_KEEP_STATE"
fi

python3 - "$dir/log" "$scratch/log" <<'EOF'
import re, sys
pat = re.compile(r"^epoch (\d+)/\d+: loss ([0-9.]+)")
def epochs(path):
    d = {}
    for line in open(path, errors="replace"):
        if m := pat.match(line):
            d[int(m[1])] = m[2]
    return d
logged, again = epochs(sys.argv[1]), epochs(sys.argv[2])
worst, same, rows = 0.0, 0, []
for e in sorted(again):
    if e not in logged:
        continue
    a, b = float(logged[e]), float(again[e])
    rel = abs(a - b) / max(abs(a), 1e-12)
    worst = max(worst, rel)
    same += logged[e] == again[e]
    verdict = "same" if logged[e] == again[e] else f"rel. diff {rel:.1e}"
    rows.append(f"epoch {e}: log {logged[e]}  again {again[e]}  {verdict}")
if not rows:
    sys.exit("repro-check: the rerun printed no epoch the log has (too few steps for one epoch?)")
print("\n".join(rows))
print(f"{len(rows)} epochs compared: {same} print the same loss, the largest relative difference {worst:.1e}")
sys.exit(1 if worst > 1e-4 else 0)
EOF
