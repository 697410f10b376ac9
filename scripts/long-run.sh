#!/usr/bin/env bash
# Runs that outlast a sitting: start a CLI training run in the background at nice 19, or continue it
# from its saved state, with everything it keeps outside the work tree.
#
#   scripts/long-run.sh NAME -- pretrain vanilla wiki.txt --writing_params_path vanilla.pretrain.params
#   scripts/long-run.sh NAME status        # running or not, the last log line (with the time left)
#   scripts/long-run.sh NAME pause|continue|stop
#   scripts/long-run.sh NAME restart -- …  # start again from step 0, not continuing a (damaged) state
#
# The run's folder is ${ATTNLAB_RUNS:-~/.cache/attnlab-runs}/NAME/: `cmd` (the arguments), `attnlab`
# (a copy of the CLI as built when the run last started, so rebuilding the work tree does not touch
# it), `log`, `pid`, `exit` (the exit status once it ends), and the run's files: --writing_params_path
# is moved into the folder (its file name kept), and so is its `.resume` state, which the CLI writes
# atomically at epoch ends (at most every 30 s). Starting a NAME whose folder holds a `.resume` state
# continues from it with `--resume`; a run that finished is not started again; if the folder or its
# state is gone (a new machine), the run says so in the log and starts again from step 0. `stop`
# returns once every process of the run is gone. Input paths are made absolute, so the run can be
# started from anywhere. One start at a time: a start holds `lock` (flock) and hands it to the run,
# which holds it until it ends, so a second start of NAME is refused while the first starts or runs.
# `restart` leaves the saved state out (the CLI keeps it as `.resume.previous` when it first saves).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${ATTNLAB_RUNS:-$HOME/.cache/attnlab-runs}"
say() { printf '[long-run] %s\n' "$*"; }
die() { say "$*" >&2; exit 2; }

[ $# -ge 2 ] || die "usage: $0 NAME [restart] -- <attnlab arguments> | $0 NAME status|pause|continue|stop"
name="$1"; shift
case "$name" in
  ''|*/*|.*) die "NAME must be a plain folder name (no '/', not starting with '.'), got '$name'" ;;
esac
dir="$runs/$name"
# Running: a start or its run holds the lock; or (a folder from before the lock) its process is
# alive and it has not written its exit status (the last thing it does).
running() {
  { [ -f "$dir/lock" ] && ! flock -n "$dir/lock" true; } ||
    { [ -f "$dir/pid" ] && [ ! -f "$dir/exit" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; }
}
# " (pid N)" once a start has written its run's pid.
pid_note() { [ -s "$dir/pid" ] && printf ' (pid %s)' "$(cat "$dir/pid")" || true; }
# Every process of the run: its process group (setsid made the run its leader).
members() { [ -f "$dir/pid" ] && ps -o pid= -g "$(cat "$dir/pid")" 2>/dev/null | tr -s ' \n' ' ' || true; }

case "$1" in
  status)
    [ -d "$dir" ] || die "no run named $name in $runs"
    if running; then say "$name: running$(pid_note); its processes:$(members)"
    elif [ -f "$dir/exit" ]; then say "$name: ended with exit status $(cat "$dir/exit")"
    else say "$name: not running (start it again with the same command to continue)"; fi
    grep -E '^(epoch|saved|error|number|device|\[long-run\])' "$dir/log" 2>/dev/null | tail -n 3 || true
    exit 0 ;;
  pause|continue|stop)
    running || die "$name is not running"
    pid="$(cat "$dir/pid")"
    case "$1" in
      pause) kill -STOP -- "-$pid" 2>/dev/null || kill -STOP "$pid" ;;
      continue) kill -CONT -- "-$pid" 2>/dev/null || kill -CONT "$pid" ;;
      stop)
        kill -CONT -- "-$pid" 2>/dev/null || true
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
        # Return once every process of the run is gone (and the lock free), so a start right after
        # finds it stopped.
        for _ in $(seq 300); do
          kill -0 -- "-$pid" 2>/dev/null || kill -0 "$pid" 2>/dev/null || running || break
          sleep 0.1
        done ;;
    esac
    say "$name: $1 sent to $pid"
    exit 0 ;;
  --) shift ;;
  restart)
    shift; [ "${1:-}" = -- ] || die "give the CLI's arguments after restart --"; shift; fresh=1 ;;
  *) die "unknown action '$1' (status, pause, continue, stop, restart --, or -- and the CLI's arguments)" ;;
esac
[ $# -gt 0 ] || die "give the CLI's arguments after --"
fresh="${fresh:-0}"
running && die "$name is already running or being started$(pid_note); '$0 $name stop' first"

# The arguments: inputs made absolute, the checkpoint moved into the run's folder.
args=() out=""
while [ $# -gt 0 ]; do
  a="$1"; shift
  case "$a" in
    --writing_params_path)
      [ $# -gt 0 ] || die "--writing_params_path needs a value"
      out="$(basename "$1")"; args+=("$a" "$dir/$out"); shift ;;
    --writing_params_path=*)
      out="$(basename "${a#*=}")"; [ -n "$out" ] || die "--writing_params_path needs a value"
      args+=(--writing_params_path "$dir/$out") ;;
    --resume|--resume=*) die "leave --resume out: the script adds it when the run's folder has a state" ;;
    *)
      if [ -e "$a" ] && [[ "$a" != /* ]]; then args+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")")
      else args+=("$a"); fi ;;
  esac
done
[ -n "$out" ] || die "give --writing_params_path: the run's checkpoint and its state go beside it"

mkdir -p "$dir"
# The lock, held from here by this start and then by the run it starts (fd 9 is inherited).
exec 9>>"$dir/lock"
flock -n 9 || die "$name is already running or being started$(pid_note); '$0 $name stop' first"
if [ "$fresh" = 0 ] && [ -f "$dir/exit" ] && [ "$(cat "$dir/exit")" = 0 ] && [ -f "$dir/$out" ] && [ -f "$dir/cmd" ] &&
   [ "$(cat "$dir/cmd")" = "${args[*]}" ]; then
  say "$name already finished (exit status 0): its checkpoint is $dir/$out, its log $dir/log"
  exit 0
fi
# Other arguments under a NAME whose run saved something (a state to continue, a checkpoint) are
# refused; a run that never saved (it failed at once: a misspelled path) does not hold its NAME.
if [ -f "$dir/cmd" ] && [ "$(cat "$dir/cmd")" != "${args[*]}" ]; then
  if [ -n "$(find "$dir" -maxdepth 1 \( -name '*.resume' -o -name "$out" \) -print -quit)" ]; then
    die "$dir holds a run with other arguments ($(cat "$dir/cmd")); use another NAME or remove the folder"
  fi
  say "$name's earlier arguments never saved a state or a checkpoint; starting with these instead"
fi
tmp="$(mktemp "$dir/cmd.XXXXXX")" && printf '%s' "${args[*]}" > "$tmp" && mv "$tmp" "$dir/cmd"

# ATTNLAB_BIN names another build of the CLI (the tests use their debug build).
bin="${ATTNLAB_BIN:-$root/target/release/attnlab}"
if [ -n "${ATTNLAB_BIN:-}" ]; then
  [ -x "$bin" ] || die "ATTNLAB_BIN=$bin is not an executable"
elif [ ! -x "$bin" ] || [ -n "$(find "$root/src" "$root/shaders" "$root/Cargo.toml" -newer "$bin" -print -quit)" ]; then
  say "building the CLI (cargo build --release --bin attnlab)"
  (cd "$root" && cargo build --release --bin attnlab)
fi
tmp="$(mktemp "$dir/attnlab.XXXXXX")" && cp "$bin" "$tmp" && chmod +x "$tmp" && mv "$tmp" "$dir/attnlab"

resume=()
state="$dir/$out.resume"
if [ "$fresh" = 1 ]; then
  note="restarting from step 0 as asked"
  [ -f "$state" ] && note="$note: $state is not continued (the CLI keeps it as $state.previous when it first saves)"
elif [ -f "$state" ]; then
  note="continuing from $state"
  resume=(--resume "$state")
elif grep -q '^epoch ' "$dir/log" 2>/dev/null; then
  note="the saved state $state is gone (removed, or the folder was copied without it), though the log shows"
  note="$note epochs; starting again from step 0"
elif [ -s "$dir/log" ]; then
  note="no saved state in $dir (the run never reached a saved epoch end); starting again from step 0"
else
  note="first start in $dir: starting from step 0 (no run named $name on this machine; a run started on"
  note="$note another machine keeps its state there)"
fi
# Said on the terminal and in the log.
say "$note"
{
  echo "[long-run] $(date -u +%FT%TZ) start at $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "on $(hostname)"
  echo "[long-run] $note"
} >> "$dir/log"
rm -f "$dir/exit"
from=$(($(wc -l < "$dir/log") + 1))  # this start's lines of the log begin here

# setsid: its own process group, so pause/stop reach the CLI and nothing else.
setsid bash -c '
  cd "$1"; shift
  nice -n 19 ./attnlab "$@" >> log 2>&1
  status=$?
  echo "[long-run] $(date -u +%FT%TZ) ended with exit status $status" >> log
  echo $status > exit.tmp && exec mv exit.tmp exit
' _ "$dir" "${args[@]}" "${resume[@]}" < /dev/null > /dev/null 2>&1 &
pid=$!
echo $pid > "$dir/pid"
exec 9>&-  # the run holds the lock now
# A run that fails at once (a misspelled path, a flag out of range: the CLI checks everything before
# it trains) is said here, with its error, not reported as started: wait until it trains or ends.
for _ in $(seq 50); do
  [ -f "$dir/exit" ] && break
  tail -n "+$from" "$dir/log" | grep -q '^number of parameters' && break
  sleep 0.2
done
if [ -f "$dir/exit" ] && [ "$(cat "$dir/exit")" != 0 ]; then
  say "$name: the run ended at once with exit status $(cat "$dir/exit"):"
  tail -n "+$from" "$dir/log" | grep -E '^(error|note)' >&2 || true
  if [ ${#resume[@]} -gt 0 ]; then
    say "to start again from step 0 instead of continuing $state: $0 $name restart -- <the same arguments>" >&2
  fi
  exit 1
fi
say "$name: started (pid $pid), log $dir/log"
