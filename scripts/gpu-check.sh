#!/usr/bin/env bash
# The GPU machine's one command: with the kit from scripts/gpu-kit.sh carried in gpukit/, check and
# time our WGSL on a hardware GPU, everything written to $OUT (log.txt: all output; summary.md: one
# line per stage, written as each ends, so a call cut short still says how far it got).
#
#   scripts/gpu-check.sh [--stages a,b,c,f,d,e] [--budget SECONDS] [--tests NAME,...] [--fresh]
#   scripts/gpu-check.sh --dry-run          (here: lavapipe, tiny sizes, OUT a temp folder if unset)
#   bash gpukit/scripts/gpu-check.sh ...    (the kit's own copy: the same, where the repo has none)
#
# Stages, each time-boxed (seconds: its cap, then whatever is left of --budget, default 540):
#   a  loader   unpack the Vulkan loader from gpukit/gl if the machine has none, find the NVIDIA ICD,
#               print nvidia-smi and our own adapter report, with every matmul kernel timed
#               (`bench --device gpu --tune --info`; a dry run skips the tune)               (60)
#   b  tests    every test binary of the kit, with ATTNLAB_REQUIRE_HARDWARE_GPU=1: a software
#               adapter fails them, so "passed" means the WGSL ran on the hardware GPU; a binary
#               that runs past GPUCHECK_BIN_CAP (150 s) is stopped and its tests are run one by one
#               (GPUCHECK_TEST_CAP, 20 s, each) to name the one that hangs                     (210)
#   c  bench    `bench --device gpu`: matmul GFLOP/s at the GPT's shapes (M = 16256 and /16), the
#               training step (tiny 8 rows; assignment 8, 32, 128, each with the fused attention
#               kernels and with the composed ops; a per-kernel profile), and the step on the
#               course's batches (--layouts 128 pretrain, 256 finetune)                        (120)
#   f  dawn     the page's engine on Dawn, the WebGPU inside Chrome (web/test/dawn.mjs: the page's
#               wasm build and engine calls in Node; the kit carries web/pkg, Dawn and, where it
#               fits, Node.js): self-checks, the step at stage c's sizes with GPU time from
#               timestamp queries, the dev set, 2 epochs of the course's pretraining; run between
#               c and d so the browser's path, native wgpu and PyTorch share one call; skipped
#               where no Node.js or no wasm build is there (GPUCHECK_DAWN_ARGS: other flags)   (150)
#   d  torch    PyTorch's same step and matmuls on CUDA (scripts/bench_peers.py --device cuda);
#               skipped, and not a failure, when torch or CUDA is missing (each call starts
#               torch and CUDA again: about 10 s)                                            (100)
#   e  pretrain the assignment's full pretraining (GPUCHECK_VARIANT: vanilla or synthesizer; wiki.txt,
#               --device gpu) through scripts/long-run.sh, its state in $GPUCHECK_RUNS (default
#               /var/tmp/attnlab-gpu-runs, outside $OUT): stopped when the budget ends, continued by
#               the next call on the same machine; once done, the course's finetune and the dev and
#               test predictions. Its log, checkpoints and predictions are copied to $OUT  (the rest)
# With a hardware GPU required (not --dry-run) and stage a failing, b, c, f and e are skipped.
# --fresh starts the pretraining again from step 0. --tests runs only the named test binaries
# (names as in gpukit/MANIFEST.txt); GPUCHECK_TEST_FILTER, words passed to each (a name filter, or
# --exact NAME, --skip NAME). Exit status: 0 when no stage failed (skips are not failures).
#
# --dry-run: the same stages on whatever adapter is here (lavapipe on a machine without a GPU, the
# hardware requirement off), at tiny sizes: a few test binaries with a filter, --quick and tiny
# benches, torch on the CPU when CUDA is missing, a tiny pretraining of a few steps. Nothing is
# unpacked or linked outside the repo and $OUT. For checking the kit and this script, not the GPU.
set -euo pipefail

# The stages and their helpers live beside this script, in gpu-check-lib.sh (the kit carries both).
gc_lib="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gpu-check-lib.sh"
[ -f "$gc_lib" ] || {
  printf '[gpu-check] error: %s is missing: it goes with gpu-check.sh (gpu-kit.sh copies both)\n' \
    "$gc_lib" >&2
  exit 2
}
# shellcheck source=scripts/gpu-check-lib.sh
source "$gc_lib"

if [ "${1:-}" = __stage ]; then
  cd "$GC_ROOT"
  "stage_$2"
  exit $?
fi

# ---- the driver ----

# Run as scripts/gpu-check.sh (the repo's) or as gpukit/scripts/gpu-check.sh (the kit's copy, which
# matches the kit's binaries): either way the repo root is the folder the kit sits in.
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -f "$here/kit.env" ]; then root="$(cd "$here/.." && pwd)" kit="$here"
else root="$here" kit="$here/gpukit"; fi
cd "$root"
dry=0 stages="a,b,c,f,d,e" budget="" tests="" fresh=0
die() { printf '[gpu-check] error: %s\n' "$*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --stages) stages="${2:?--stages needs a list such as a,b or pretrain}"; shift ;;
    --budget) budget="${2:?--budget needs seconds}"; shift ;;
    --kit) kit="${2:?--kit needs a folder}"; [[ "$kit" = /* ]] || kit="$root/$kit"; shift ;;
    --tests) tests="${2:?--tests needs test binary names}"; shift ;;
    --fresh) fresh=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
stages=$(echo "$stages" | sed 's/loader/a/g; s/tests/b/g; s/bench/c/g; s/torch/d/g; s/pretrain/e/g; s/dawn/f/g' |
  tr ',' ' ')
[[ "$stages" =~ ^[a-f\ ]+$ ]] ||
  die "--stages takes a to f (or loader, tests, bench, torch, pretrain, dawn), comma-separated, got '$stages'"
budget=${budget:-$([ "$dry" = 1 ] && echo 150 || echo 540)}
[[ "$budget" =~ ^[0-9]+$ ]] || die "--budget takes whole seconds, got '$budget'"

[ -f "$kit/kit.env" ] && [ -x "$kit/bin/bench" ] ||
  die "no kit in $kit: build it where Rust is with scripts/gpu-kit.sh, then carry it (run's carry: [\"gpukit\"])"
# shellcheck source=/dev/null
source "$kit/kit.env"

if [ -z "${OUT:-}" ]; then
  [ "$dry" = 1 ] || die "OUT is not set: the device machine sets it; for a try here use --dry-run (or OUT=DIR)"
  OUT="$(mktemp -d /tmp/gpu-check-out.XXXXXX)"
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
start=$(date +%s)
deadline=$((start + budget))
summary="$OUT/summary.md"
rm -f "$OUT"/.tests "$OUT"/.d "$OUT"/.e "$OUT"/.f

main() {
  log "gpu-check: $([ "$dry" = 1 ] && echo 'DRY RUN (software adapter allowed, tiny sizes)' ||
    echo 'hardware GPU required')"
  log "kit: commit $KIT_COMMIT, built $KIT_BUILT, $KIT_RUSTC, target-cpu $KIT_TARGET_CPU;" \
    "stages: $stages; budget $budget s"
  log "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  log "glibc here: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo '?'); the kit needs ${KIT_NEEDS_GLIBC:-?} or later"
  {
    echo "# gpu-check $(date -u +%FT%TZ)$([ "$dry" = 1 ] && echo ' — DRY RUN: not a GPU result')"
    echo
    echo "kit commit $KIT_COMMIT (built $KIT_BUILT, target-cpu $KIT_TARGET_CPU); machine $(uname -m), $(nproc) cores"
    echo
    echo "| stage | result | seconds | detail |"
    echo "|---|---|---:|---|"
  } >"$summary"

  # The loader and the driver: needed by every GPU stage, so done first whatever the stages.
  if [ "$dry" = 0 ]; then
    export ATTNLAB_REQUIRE_HARDWARE_GPU=1
    # The loader and libglvnd's dispatch (NVIDIA's Vulkan ICD, libGLX_nvidia, needs libGLdispatch):
    # with the loader alone the H100 machine gave "vulkan drivers/libraries could not be loaded".
    local lib have_all=1 libs
    libs=$(ldconfig -p 2>/dev/null || true) # whole first (see stage_a)
    for lib in libvulkan.so.1 libGLdispatch.so.0 libGLX.so.0; do
      grep -q "$lib" <<<"$libs" || have_all=0
    done
    if [ "$have_all" = 0 ]; then
      compgen -G "$kit/gl/*.deb" >/dev/null ||
        {
          log "error: no Vulkan loader or GL dispatch (libvulkan.so.1, libGLdispatch.so.0, libGLX.so.0) here" \
            "and no .deb in $kit/gl: rebuild the kit with scripts/gpu-kit.sh"
          exit 1
        }
      log "Vulkan loader or GL dispatch missing here: unpacking $(cd "$kit/gl" && ls | tr '\n' ' ')into /"
      for f in "$kit"/gl/*.deb; do dpkg -x "$f" /; done
      ldconfig
    fi
    if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
      for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
               /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.x86_64.json; do
        [ -f "$f" ] && { export VK_DRIVER_FILES="$f"; break; }
      done
      [ -n "${VK_DRIVER_FILES:-}" ] ||
        log "no NVIDIA ICD file found (looked in /usr/local/nvidia/share and /usr/share, /etc):" \
          "the loader will find no GPU driver"
    fi
    if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] &&
      [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
      export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    fi
  else
    unset ATTNLAB_REQUIRE_HARDWARE_GPU
    for f in "$kit"/gl/*.deb; do
      [ -f "$f" ] || {
        log "dry run: no loader .deb in $kit/gl (the GPU machine needs one unless it has libvulkan.so.1)"; break
      }
      dpkg-deb --info "$f" >/dev/null && log "dry run: $(basename "$f") is readable (not unpacked here)"
    done
  fi

  # The test binaries travel packed (gpu-kit.sh): unpacked outside the kit (which must stay small
  # enough to carry), once per kit. A kit with a plain tests/ folder (tests/it/gpu_kit.rs's) is used as is.
  testbin="$kit/tests"
  if [ ! -d "$testbin" ] && [ -f "$kit/tests.tar.xz" ]; then
    testbin="${TMPDIR:-/tmp}/attnlab-gpukit-tests-$KIT_COMMIT-$(cksum <"$kit/tests.tar.xz" | cut -d' ' -f1)/tests"
    if [ ! -d "$testbin" ]; then
      rm -rf "$testbin.part" && mkdir -p "$testbin.part"
      if command -v xz >/dev/null; then
        tar -C "$testbin.part" -xJf "$kit/tests.tar.xz"
      else
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
          "$kit/tests.tar.xz" "$testbin.part"
      fi
      mv "$testbin.part/tests" "$testbin" && rmdir "$testbin.part"
    fi
    log "$(ls "$testbin" | wc -l) test binaries in $testbin (from the kit's tests.tar.xz)"
  fi
  [ -d "$testbin" ] || log "no test binaries in $kit (tests/ or tests.tar.xz): stage b will fail"

  # Test binaries have this build machine's paths baked in: recreate them as links where missing.
  local p want
  if [ ! -e "$KIT_MANIFEST_DIR" ]; then
    if [ "$dry" = 0 ]; then
      mkdir -p "$(dirname "$KIT_MANIFEST_DIR")"; ln -s "$root" "$KIT_MANIFEST_DIR"
      log "linked $KIT_MANIFEST_DIR -> $root (the tests' CARGO_MANIFEST_DIR)"
    else
      log "dry run: $KIT_MANIFEST_DIR is missing; tests that read the repo's files will fail"
    fi
  fi
  for p in "$KIT_BIN_EXE_attnlab" "$KIT_BIN_EXE_bench"; do
    [ -x "$p" ] && continue
    if [ "$dry" = 0 ]; then
      mkdir -p "$(dirname "$p")"; ln -sf "$kit/bin/$(basename "$p")" "$p"; log "linked $p (the tests' CARGO_BIN_EXE_*)"
    else
      log "dry run: $p is missing; the CLI tests will fail"
    fi
  done
  want="$(realpath -m "$KIT_MANIFEST_DIR/../shared/data/cs224n-a5")"
  if [ ! -e "$want" ] && [ "$dry" = 0 ]; then
    mkdir -p "$(dirname "$want")"; ln -s "$kit/data" "$want"; log "linked $want -> the kit's course files"
  fi

  export GC_TESTBIN="$testbin" GC_ROOT="$root" GC_KIT="$kit" GC_OUT="$OUT" GC_DRY="$dry" GC_TESTS="$tests" \
    GC_FRESH="$fresh"
  export GC_RUNS="${GPUCHECK_RUNS:-/var/tmp/attnlab-gpu-runs}" GC_TEST_FILTER="${GPUCHECK_TEST_FILTER-}"
  export GC_BIN_CAP="${GPUCHECK_BIN_CAP:-150}" GC_TEST_CAP="${GPUCHECK_TEST_CAP:-20}"
  if [ "$dry" = 1 ]; then
    # A few binaries, a few tests each: the mechanics, not the coverage.
    GC_TESTS="${tests:-ops,it}"
    GC_TEST_FILTER="${GPUCHECK_TEST_FILTER-matmul}"
    GC_RUNS="${GPUCHECK_RUNS:-$OUT/.runs}"
  fi
  export RUST_BACKTRACE=1

  local failed=0 gate="" s cap name t0 st detail
  for s in $stages; do
    case "$s" in
      a) name=loader cap=60 ;; b) name=tests cap=210 ;; c) name=bench cap=120 ;;
      d) name=torch cap=100 ;; e) name=pretrain cap=100000 ;; f) name=dawn cap=150 ;;
    esac
    [ "$dry" = 1 ] && case "$s" in a) cap=30 ;; b) cap=60 ;; c) cap=40 ;; d) cap=50 ;; f) cap=120 ;; esac
    t0=$(date +%s)
    local left=$((deadline - t0 - 5))
    [ "$left" -lt "$cap" ] && cap=$left
    if [ -n "$gate" ] && [ "$s" != d ]; then
      echo "| $s $name | skipped | 0 | $gate |" >>"$summary"; log "stage $s ($name): skipped: $gate"; continue
    fi
    if [ "$cap" -lt 15 ]; then
      echo "| $s $name | skipped | 0 | no time left in the budget |" >>"$summary"
      log "stage $s ($name): skipped, no time left"; failed=1; continue
    fi
    log "==== stage $s ($name), at most $cap s"
    st=0
    # The stage's output also goes to its own file, complete when the pipe ends (log.txt is written
    # by the tee at the bottom, which may not have caught up yet).
    GC_DEADLINE=$((t0 + cap)) timeout -k 10 "$cap" bash "$self" __stage "$s" 2>&1 | tee "$OUT/.stage" || st=$?
    detail=""
    case "$s" in
      a) detail=$(grep -m1 -E '^device: |^bench: ' "$OUT/.stage" 2>/dev/null | cut -c1-240 || true)
         if [ "$st" != 0 ] && [ "$dry" = 0 ]; then gate="no hardware GPU adapter (stage a)"; fi ;;
      b) detail=$(awk 'NR > 1 { printf " / " } { printf "%s", $0 }' "$OUT/.tests" 2>/dev/null || true) ;;
      c) detail="bench lines in log.txt" ;;
      d) [ -f "$OUT/.d" ] && [ "$st" = 0 ] && st=skip; detail="see log.txt" ;;
      f) [ -f "$OUT/.f" ] && [ "$st" = 0 ] && st=skip
         detail=$(grep -m1 -E '^\| kernel self-checks|SKIP: ' "$OUT/.stage" 2>/dev/null | cut -c1-200 || true) ;;
      e) detail="pretrain $(cat "$OUT/.e" 2>/dev/null || echo '?'): $(grep -E '^epoch .*left|ended with|continuing' \
           "$OUT/pretrain.log" 2>/dev/null | tail -n 1 || true)" ;;
    esac
    local secs=$(($(date +%s) - t0)) result
    case "$st" in
      0) result=ok ;; skip) result=skipped ;;
      124|137) result="TIMED OUT"; failed=1 ;; *) result="FAILED ($st)"; failed=1 ;;
    esac
    echo "| $s $name | $result | $secs | ${detail//|//} |" >>"$summary"
    log "stage $s ($name): $result in $secs s"
  done
  rm -f "$OUT"/.tests "$OUT"/.d "$OUT"/.e "$OUT"/.f "$OUT"/.stage
  echo >>"$summary"
  echo "total $(($(date +%s) - start)) s of a $budget s budget" >>"$summary"
  log "summary ($summary):"
  cat "$summary"
  return "$failed"
}

set -o pipefail
main 2>&1 | tee "$OUT/log.txt"
