# shellcheck shell=bash
# The GPU kit's stages a-e and their helpers, sourced by scripts/gpu-check.sh from its own folder
# (the repo's scripts/, or the kit's gpukit/scripts/, where scripts/gpu-kit.sh copies both) under
# its `set -euo pipefail`; not a command of its own. What each stage does: gpu-check.sh's header.

# ---- the stages (each runs as `gpu-check.sh __stage NAME` under `timeout`, with GC_* set) ----

log() { printf '[gpu-check %s] %s\n' "$(date -u +%T)" "$*"; }

# One command, cut at the stage's deadline (less a margin to finish the stage); prints it first.
run_until_deadline() {
  local left=$((GC_DEADLINE - $(date +%s) - 5))
  [ "$left" -ge 5 ] || { log "no time left for: $*"; return 124; }
  log "\$ $* (at most ${left} s)"
  timeout -k 5 "$left" "$@"
}

stage_a() {
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv || true
  else
    log "nvidia-smi: not on this machine"
  fi
  # ldconfig's list read whole first: `ldconfig -p | grep -m1` under pipefail fails when grep stops
  # before ldconfig has written everything (SIGPIPE), as it did on a loaded machine.
  local libs; libs=$(ldconfig -p 2>/dev/null || true)
  log "Vulkan loader: $(grep -m1 'libvulkan.so.1' <<<"$libs" | sed 's/^[[:space:]]*//' || echo none)"
  log "VK_DRIVER_FILES=${VK_DRIVER_FILES:-(unset)}"
  # A dry run skips the tune: on lavapipe timing the four kernels outran the stage even at one
  # repeat (over 25 s on a quiet EPYC-AVX2, 2 cores), and its path is tested by
  # tests/it/runtime.rs (`the_matmul_kernel_is_timed_and_the_fastest_kept`).
  local tune=(--tune)
  [ "$GC_DRY" = 1 ] && tune=()
  run_until_deadline "$GC_KIT/bin/bench" --device gpu "${tune[@]}" --info
}

# `run_until_deadline` with at most CAP seconds.
run_capped() {
  local cap=$1; shift
  local left=$((GC_DEADLINE - $(date +%s) - 5))
  [ "$left" -lt "$cap" ] && cap=$left
  [ "$cap" -ge 5 ] || { log "no time left for: $*"; return 124; }
  log "\$ $* (at most ${cap} s)"
  timeout -k 5 "$cap" "$@"
}

# A test binary that hung: each of its tests alone, GC_TEST_CAP seconds each, to name the hang.
hung_tests() {
  local bin="$GC_TESTBIN/$1" t st out=""
  while IFS= read -r t; do
    st=0
    run_capped "$GC_TEST_CAP" "$bin" --exact "$t" >>"$GC_OUT/log.txt" 2>&1 || st=$?
    case "$st" in 0) out+="$t ok; " ;; 124|137) out+="$t HUNG; " ;; *) out+="$t FAILED ($st); " ;; esac
    [ $(($(date +%s) + 10)) -lt "$GC_DEADLINE" ] || { out+="(stage deadline)"; break; }
  done < <("$bin" --list --format terse 2>/dev/null | sed -n 's/: test$//p')
  echo "$out"
}

stage_b() {
  local names=() failed=0 name t0 st res
  if [ -n "$GC_TESTS" ]; then
    IFS=, read -r -a names <<<"$GC_TESTS"
  else
    # ops first (the WGSL kernels one by one), then the rest (`it`, every other integration test)
    # by name; not gpu_kit, a binary of its own only in tests/it/gpu_kit.rs's small kit.
    names=(ops)
    while IFS= read -r name; do
      case "$name" in ops|gpu_kit) ;; *) names+=("$name") ;; esac
    done < <(ls "$GC_TESTBIN")
  fi
  local filter=()
  # shellcheck disable=SC2206 # the filter is words: a name, or --exact NAME, or --skip NAME
  [ -n "$GC_TEST_FILTER" ] && filter=($GC_TEST_FILTER)
  : >"$GC_OUT/.tests"
  for name in "${names[@]}"; do
    [ -x "$GC_TESTBIN/$name" ] || {
      log "no test binary $name in $GC_TESTBIN"; echo "$name: missing" >>"$GC_OUT/.tests"; failed=1; continue
    }
    t0=$(date +%s)
    st=0
    # `it`'s gpu_kit tests check this script's dry run, not the GPU: skipped here.
    local skip=()
    [ "$name" = it ] && skip=(--skip gpu_kit::)
    # cwd: the repo root, as under cargo test.
    # Each binary gets at most GC_BIN_CAP seconds (a hang must not eat the stage: on the H100,
    # 2026-11-26, the runtime binary hung past two stage deadlines, naming no test).
    run_capped "$GC_BIN_CAP" "$GC_TESTBIN/$name" "${filter[@]}" "${skip[@]}" 2>&1 | tee "$GC_OUT/.test-out" || st=$?
    res=$(grep -E '^test result:' "$GC_OUT/.test-out" | tail -n 1 |
      sed 's/^test result: [A-Za-z]*\. //; s/; finished in.*//; s/  */ /g' || true)
    case "$st" in
      0) echo "$name: ok, ${res:-?} ($(($(date +%s) - t0)) s)" >>"$GC_OUT/.tests" ;;
      124|137)
        failed=1
        if [ $(($(date +%s) + 20)) -ge "$GC_DEADLINE" ]; then
          echo "$name: TIMED OUT at the stage's deadline" >>"$GC_OUT/.tests"; break
        fi
        echo "$name: HUNG past ${GC_BIN_CAP} s; its tests one by one: $(hung_tests "$name")" >>"$GC_OUT/.tests" ;;
      *)
        echo "$name: FAILED (exit $st), ${res:-no result line} ($(($(date +%s) - t0)) s)" >>"$GC_OUT/.tests"
        failed=1 ;;
    esac
  done
  rm -f "$GC_OUT/.test-out"
  log "test binaries:"; cat "$GC_OUT/.tests"
  return "$failed"
}

# The assignment's steps time the vanilla model's attention both ways in one process (--attention
# both: the fused kernels, then matmul, causal_softmax, dropout and matmul), so the ratio is one GPU's.
stage_c() {
  local b="$GC_KIT/bin/bench" st=0
  local cmds
  if [ "$GC_DRY" = 1 ]; then
    cmds=("--quick --repeats 1"
          "--step 2 --size tiny --variant vanilla --repeats 1 --attention both"
          "--layouts 8 --size tiny --variant vanilla --kind pretrain --repeats 1 --data $GC_KIT/data")
  else
    cmds=("--repeats 10"
          "--tune --repeats 10"
          "--quick --repeats 10"
          "--step 8 --size tiny --repeats 5"
          "--step 8 --size assignment --repeats 5 --attention both"
          "--step 32 --size assignment --repeats 5 --attention both"
          "--step 128 --size assignment --variant vanilla --repeats 5 --attention both"
          "--step 32 --size assignment --variant vanilla --repeats 3 --profile"
          "--layouts 128 --size assignment --variant vanilla --kind pretrain --repeats 3 --data $GC_KIT/data"
          "--layouts 256 --size assignment --variant vanilla --kind finetune --repeats 3 --data $GC_KIT/data")
  fi
  local c
  for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086 # each entry is a list of plain words
    run_until_deadline "$b" --device gpu $c || { st=$?; log "bench $c: exit $st"; [ "$st" = 124 ] && return 124; }
  done
  return "$st"
}

stage_d() {
  local py="$GC_KIT/scripts/bench_peers.py" dev=cuda probe
  # One probe (importing torch takes seconds): "cuda", "nocuda" or "notorch", then the versions.
  probe=$(python3 -c 'import torch
print("cuda" if torch.cuda.is_available() else "nocuda", "torch", torch.__version__, "cuda", torch.version.cuda,
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")' 2>/dev/null || echo notorch)
  log "probe: $probe"
  case "$probe" in
    notorch) log "SKIP: python3 has no torch here"; echo skip >"$GC_OUT/.d"; return 0 ;;
    nocuda*)
      if [ "$GC_DRY" = 1 ]; then
        log "torch has no CUDA here; dry run: the same calls on the CPU, tiny"; dev=cpu
      else
        log "SKIP: torch sees no CUDA device"; echo skip >"$GC_OUT/.d"; return 0
      fi ;;
  esac
  local cmds
  if [ "$GC_DRY" = 1 ]; then
    cmds=("step --size tiny --rows 2 --repeats 1")
  else
    cmds=("matmul --rows 16256 --repeats 10" "matmul --rows 1016 --repeats 10"
          "step --size tiny --rows 8" "step --size assignment --rows 8" "step --size assignment --rows 32"
          "step --size assignment --variant synthesizer --rows 32" "step --size assignment --rows 128")
  fi
  local c
  for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086
    run_until_deadline env PYTHONUNBUFFERED=1 python3 "$py" $c --device "$dev" --threads "$(nproc)" || return $?
  done
  [ "$dev" = cpu ] && echo "skip" >"$GC_OUT/.d"
  return 0
}

stage_e() {
  # GPUCHECK_VARIANT: vanilla (the default) or synthesizer, the table's two pretrained rows.
  local v="${GPUCHECK_VARIANT:-vanilla}"
  case "$v" in
    vanilla|synthesizer) ;;
    *) log "GPUCHECK_VARIANT must be vanilla or synthesizer, not '$v'"; return 1 ;;
  esac
  local name="pretrain-$v" runs="$GC_RUNS" data="$GC_KIT/data" attnlab="$GC_KIT/bin/attnlab"
  local ls="$GC_KIT/scripts/long-run.sh"
  [ -f "$ls" ] || ls="$GC_ROOT/scripts/long-run.sh"
  local size=() ft=()
  if [ "$GC_DRY" = 1 ]; then
    name="dry-pretrain-$v"
    size=(--tiny --batch_size 8 --max_steps 3)
    ft=(--tiny --batch_size 8 --max_steps 2)
  fi
  # GPUCHECK_PRETRAIN_ARGS: other pretraining flags (e.g. "--tiny --max_epochs 4" to try the
  # stop-and-continue path in a dry run); a new run name, so an existing run is left alone.
  if [ -n "${GPUCHECK_PRETRAIN_ARGS:-}" ]; then
    # shellcheck disable=SC2206
    size=($GPUCHECK_PRETRAIN_ARGS); name="$name-custom"
  fi
  local dir="$runs/$name"
  export ATTNLAB_RUNS="$runs" ATTNLAB_BIN="$attnlab"
  if [ "$GC_FRESH" = 1 ] && [ -d "$dir" ]; then
    bash "$ls" "$name" stop 2>/dev/null || true
    sleep 1; rm -rf "$dir"; log "--fresh: removed $dir"
  fi
  mkdir -p "$runs"
  local exit_status=""
  [ -f "$dir/exit" ] && exit_status=$(cat "$dir/exit")
  if [ "$exit_status" != 0 ]; then
    [[ "$(bash "$ls" "$name" status 2>/dev/null || true)" == *': running'* ]] ||
      bash "$ls" "$name" -- pretrain "$v" "$data/wiki.txt" "${size[@]}" --device gpu \
        --writing_params_path "$v.pretrain.params"
    # Wait until it ends or the stage's time is nearly up (30 s kept to stop it and copy).
    local seen="" line
    while [ ! -f "$dir/exit" ] && [ $(($(date +%s) + 30)) -lt "$GC_DEADLINE" ]; do
      sleep 5
      line=$(grep -E '^epoch .*left' "$dir/log" | tail -n 1 || true)
      [ "$line" = "$seen" ] || { echo "$line"; seen=$line; }
    done
    if [ ! -f "$dir/exit" ]; then
      log "the stage's time is up: stopping the pretraining; its state stays in $dir for the next call"
      bash "$ls" "$name" stop || true
      # stop ends the run's whole process group, the wrapper that would write `exit` included.
      for _ in $(seq 20); do kill -0 "$(cat "$dir/pid")" 2>/dev/null || break; sleep 1; done
    fi
  fi
  cp "$dir/log" "$GC_OUT/pretrain.log" 2>/dev/null || true
  exit_status=$(cat "$dir/exit" 2>/dev/null || echo none)
  if [ "$exit_status" != 0 ]; then
    bash "$ls" "$name" status || true
    if [ -f "$dir/$v.pretrain.params.resume" ]; then
      log "pretraining not finished (exit $exit_status); run stage e again on this machine to continue"
      echo "partial" >"$GC_OUT/.e"; return 0
    fi
    log "pretraining failed (exit $exit_status) with no saved state: see pretrain.log"; return 1
  fi
  cp "$dir/$v.pretrain.params" "$GC_OUT/"
  # The course's next steps: finetune on the birth places, predict the dev set.
  if [ ! -f "$dir/$v.finetune.params" ]; then
    local st=0
    run_until_deadline "$attnlab" finetune "$v" "$data/wiki.txt" "${ft[@]}" --device gpu \
      --reading_params_path "$dir/$v.pretrain.params" --finetune_corpus_path "$data/birth_places_train.tsv" \
      --writing_params_path "$dir/$v.finetune.params" >"$dir/finetune.log" 2>&1 || st=$?
    cat "$dir/finetune.log"
    if [ "$st" != 0 ]; then
      log "finetune did not finish (exit $st): run stage e again"
      rm -f "$dir/$v.finetune.params"; cp "$dir/finetune.log" "$GC_OUT/"; return 1
    fi
  fi
  local eval_args=()
  [ "$GC_DRY" = 1 ] && eval_args=(--tiny --max_questions 5)
  # The dev questions (scored), then the test questions where the kit has them (predictions only).
  local split f
  for split in dev test; do
    f="$data/birth_dev.tsv"; [ "$split" = test ] && f="$data/birth_test_inputs.tsv"
    [ -f "$f" ] || { log "no $f: no $split predictions"; continue; }
    run_until_deadline "$attnlab" evaluate "$v" "$data/wiki.txt" "${eval_args[@]}" --device gpu \
      --reading_params_path "$dir/$v.finetune.params" --eval_corpus_path "$f" \
      --outputs_path "$dir/$v.pretrain.$split.predictions" 2>&1 | tee -a "$dir/finetune.log" || true
  done
  cp "$dir/finetune.log" "$GC_OUT/" 2>/dev/null || true
  [ -f "$dir/$v.pretrain.dev.predictions" ] || { log "evaluation wrote no predictions: see finetune.log"; return 1; }
  cp "$dir/$v.finetune.params" "$dir/$v.pretrain.dev.predictions" "$GC_OUT/"
  if [ -f "$dir/$v.pretrain.test.predictions" ]; then cp "$dir/$v.pretrain.test.predictions" "$GC_OUT/"; fi
  echo done >"$GC_OUT/.e"
}

# Unpacks the xz file $1 to $2: with xz, or with Python's lzma where xz is missing.
unxz_to() {
  if command -v xz >/dev/null; then
    xz -dc "$1" >"$2"
  else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$1" "$2"
  fi
}

# The Node.js for stage f: `node` here when it is 20 or later, else the kit's (node.xz, unpacked
# outside the kit once). Prints its path, or nothing.
dawn_node() {
  local n v
  if n=$(command -v node) && v=$("$n" -p 'process.versions.node.split(".")[0]' 2>/dev/null) && [ "$v" -ge 20 ]; then
    echo "$n"; return
  fi
  [ -f "$GC_KIT/node.xz" ] || return 0
  n="${TMPDIR:-/tmp}/attnlab-gpukit-node-$(cksum <"$GC_KIT/node.xz" | cut -d' ' -f1)"
  if [ ! -x "$n" ]; then
    unxz_to "$GC_KIT/node.xz" "$n.part"
    chmod +x "$n.part" && mv "$n.part" "$n"
  fi
  echo "$n"
}

# f: the page's engine on Dawn (web/test/dawn.mjs): the same wasm build and engine calls as the page,
# with Dawn, the WebGPU inside Chrome, on this machine's GPU; the kit's web/pkg and Dawn (the npm
# package webgpu) go into the repo's web/ where it has none (both are git-ignored there).
stage_f() {
  local node web="$GC_ROOT/web"
  if [ ! -f "$web/pkg/attnlab_bg.wasm" ]; then
    if [ -f "$GC_KIT/web/pkg/attnlab_bg.wasm" ] && [ "$GC_DRY" = 0 ]; then
      mkdir -p "$web/pkg" && cp "$GC_KIT"/web/pkg/* "$web/pkg/"; log "web/pkg: the kit's build"
    else
      log "SKIP: no web/pkg here (build it with scripts/build-web.sh; the kit carries it as web/pkg)"
      echo skip >"$GC_OUT/.f"; return 0
    fi
  fi
  local dawn="$web/node_modules/webgpu/dist/linux-x64/dawn.node"
  if [ ! -f "$dawn" ]; then
    if [ -f "$GC_KIT/web/webgpu/dawn.node.xz" ] && [ "$GC_DRY" = 0 ]; then
      mkdir -p "$(dirname "$dawn")"
      cp "$GC_KIT"/web/webgpu/index.js "$GC_KIT"/web/webgpu/package.json "$web/node_modules/webgpu/"
      unxz_to "$GC_KIT/web/webgpu/dawn.node.xz" "$dawn"
      log "web/node_modules/webgpu: the kit's Dawn"
    else
      log "SKIP: no Dawn here (cd web && npm ci; the kit carries it as web/webgpu)"
      echo skip >"$GC_OUT/.f"; return 0
    fi
  fi
  node=$(dawn_node)
  [ -n "$node" ] || {
    log "SKIP: no Node.js 20+ here and none in the kit (node.xz)"; echo skip >"$GC_OUT/.f"; return 0
  }
  log "Node.js: $node ($("$node" --version))"
  local args
  if [ -n "${GPUCHECK_DAWN_ARGS:-}" ]; then
    # shellcheck disable=SC2206 # words of dawn.mjs's flags
    args=($GPUCHECK_DAWN_ARGS)
  elif [ "$GC_DRY" = 1 ]; then
    args=(--quick --rows 1 --eval 1)
  else
    # The native bench's step sizes (stage c) and the course's data, so each row has its native twin.
    args=(--rows 8,128 --repeats 5 --data "$GC_KIT/data" --epochs 2)
  fi
  run_until_deadline "$node" "$web/test/dawn.mjs" "${args[@]}"
}
