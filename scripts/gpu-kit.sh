#!/usr/bin/env bash
# Everything a bare x86-64 Linux machine with an NVIDIA driver (and no Rust, no network) needs to run
# scripts/gpu-check.sh, built here into the git-ignored folder gpukit/ (or $GPUKIT):
#
#   bin/      attnlab and bench, release, stripped
#   tests.tar.xz  every test binary of `cargo test --release --no-run` (lib, bins, tests/it, tests/ops),
#             stripped, as tests/NAME; one xz stream (they share most of their code)
#   gl/       the Vulkan loader's and libglvnd's .deb files (amd64), unpacked there with `dpkg -x`
#   data/     the course's files from ../shared/data/cs224n-a5 (never committed: gpukit/ is ignored)
#   scripts/  gpu-check.sh (+ gpu-check-lib.sh, its stages), bench_peers.py, parity.py, long-run.sh
#             (copies, so the kit is whole)
#   web/      the page's path for stage f (web/test/dawn.mjs, the page's engine on Dawn): pkg/ (the
#             page's wasm build, scripts/build-web.sh's web/pkg) and webgpu/ (the npm package's
#             index.js, package.json and its linux-x64 dawn.node, stripped, as dawn.node.xz); both
#             git-ignored in the repo, so they travel here
#   node.xz   this machine's Node.js (20 or later), stripped, when it fits: the kit and the repo's
#             tracked files must travel together in 64 MiB (GPUKIT_NODE=yes|no forces it either way;
#             stage f uses the GPU machine's own node where it has one)
#   kit.env   what the binaries have baked in (CARGO_MANIFEST_DIR, CARGO_BIN_EXE_*), the commit,
#             the toolchain and the CPU target; MANIFEST.txt: every file with its size
#
#   scripts/gpu-kit.sh            build the kit (about 60 MiB at most; it says its size)
#
# CPU target: x86-64-v3 (AVX2, FMA, BMI2; every x86-64 server CPU since 2013-2015, and every host an
# H100 or H200 is sold in), not this repo's usual `-C target-cpu=native`: a native build here would
# use AVX-512 and could die with SIGILL on a host (or a VM's CPU model) without it. v3 keeps the
# CPU backend's row kernels vectorised (they need AVX2's per-lane shifts and 32-bit multiplies);
# gemm picks its kernels at run time either way. GPUKIT_TARGET_CPU overrides it (x86-64 for any).
#
# The build goes to $CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release (an explicit --target, so
# its RUSTFLAGS do not touch the usual target/release build).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source scripts/env.sh
kit="${GPUKIT:-$root/gpukit}"
cpu="${GPUKIT_TARGET_CPU:-x86-64-v3}"
triple=x86_64-unknown-linux-gnu
data_src="${GPUKIT_DATA:-$root/../shared/data/cs224n-a5}"
limit_mib=60
say() { printf '[gpu-kit] %s\n' "$*"; }
die() { printf '[gpu-kit] error: %s\n' "$*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] ||
  die "this machine is $(uname -m); the GPU machine is x86-64: build the kit on an x86-64 machine"
command -v cargo >/dev/null || die "cargo not found: run scripts/setup.sh first"
command -v python3 >/dev/null || die "python3 is needed to read cargo's JSON messages"
[ -f "$data_src/wiki.txt" ] && [ -f "$data_src/birth_places_train.tsv" ] && [ -f "$data_src/birth_dev.tsv" ] ||
  die "the course's files are not in $data_src (wiki.txt, birth_places_train.tsv, birth_dev.tsv); set GPUKIT_DATA=DIR"

# 1. Build: the two binaries and every test binary, release, for the portable CPU target.
say "building (release, --target $triple, -C target-cpu=$cpu); this takes a while the first time"
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
RUSTFLAGS="-C target-cpu=$cpu" cargo test --release --no-run --target "$triple" \
  --message-format=json-render-diagnostics >"$json"
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

rm -rf "$kit.new"
mkdir -p "$kit.new"/{bin,tests,gl,data,scripts,web}
# Test binaries are named after their target (tests/ops/main.rs -> tests/ops; the library's unit
# tests -> tests/lib-attnlab; a binary's -> tests/bin-NAME); the two programs go to bin/.
python3 - "$json" "$kit.new" <<'PY'
import json, os, shutil, sys
msgs, kit = sys.argv[1], sys.argv[2]
seen = set()
with open(os.path.join(kit, "artifacts.txt"), "w") as out:
    for line in open(msgs):
        m = json.loads(line)
        if m.get("reason") != "compiler-artifact" or not m.get("executable"):
            continue
        t, exe = m["target"], m["executable"]
        kinds = t["kind"]
        if m["profile"]["test"]:
            name = t["name"] if "test" in kinds else (
                "lib-" if "lib" in kinds or "cdylib" in kinds else "bin-") + t["name"]
            dest = os.path.join(kit, "tests", name)
        elif "bin" in kinds:
            name = t["name"]
            dest = os.path.join(kit, "bin", name)
        else:
            continue
        if dest in seen:
            sys.exit(f"two artifacts would be {dest}")
        seen.add(dest)
        shutil.copy2(exe, dest)
        out.write(f"{os.path.relpath(dest, kit)}\t{exe}\n")
PY
[ -x "$kit.new/bin/attnlab" ] && [ -x "$kit.new/bin/bench" ] || die "cargo built no attnlab or bench binary"
n_tests=$(find "$kit.new/tests" -type f | wc -l)
[ "$n_tests" -gt 0 ] || die "cargo listed no test binaries"
strip --strip-all "$kit.new"/bin/* "$kit.new"/tests/*
# The test binaries (the library's, the programs', it, ops) are mostly the same code (the
# library, wgpu, naga): one xz stream with a dictionary larger than them all stores each shared
# part once.
# gpu-check.sh unpacks it (with xz, or Python's lzma where xz is missing).
# Packing takes minutes on a busy 2-core machine: the last kit's archive is kept when the stripped
# binaries are the same (tests.sha256).
(cd "$kit.new" && sha256sum tests/* | sort -k2) >"$kit.new/tests.sha256"
if [ -f "$kit/tests.tar.xz" ] && cmp -s "$kit/tests.sha256" "$kit.new/tests.sha256"; then
  say "the test binaries are the last kit's: keeping its tests.tar.xz"
  cp "$kit/tests.tar.xz" "$kit.new/tests.tar.xz"
else
  say "packing the test binaries ($(du -sh "$kit.new/tests" | cut -f1)) into tests.tar.xz (minutes)"
  tar -C "$kit.new" -cf - tests | xz -6 -T2 --lzma2=preset=6,dict=256MiB >"$kit.new/tests.tar.xz"
fi
rm -rf "$kit.new/tests"

# 2. The Vulkan loader and the GL vendor-neutral dispatch libraries (the GPU machine has the NVIDIA
# driver and its ICD, not always these): NVIDIA's Vulkan ICD is libGLX_nvidia.so.0, which needs
# libGLdispatch and libGLX from libglvnd; with the loader alone wgpu found no Vulkan driver there
# (2026-11-26, H100: "vulkan drivers/libraries could not be loaded"); with these it found the GPU.
# The device README's list. A repo's .gl/ from its recipe is reused; otherwise apt downloads them
# for amd64 with its own package lists in /tmp/amd64 (the recipe's, so this machine's apt state stays).
gl_pkgs=(libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2)
missing=()
for p in "${gl_pkgs[@]}"; do
  if compgen -G "$root/.gl/${p}_*.deb" >/dev/null; then
    cp "$root"/.gl/"${p}"_*.deb "$kit.new/gl/"
  else
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "downloading the Vulkan loader and GL dispatch libraries (apt-get download ${missing[*]}, amd64)"
  mkdir -p /tmp/amd64/partial
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
  ls /tmp/amd64/*Packages* >/dev/null 2>&1 || apt-get "${o[@]}" update -qq >/dev/null ||
    die "apt-get update failed; put ${missing[*]} (amd64 .deb files) into $root/.gl/ by hand and run again"
  (cd "$kit.new/gl" && apt-get "${o[@]}" download "${missing[@]}" >/dev/null 2>&1) ||
    die "apt-get download ${missing[*]} failed; put them (amd64 .deb files) into $root/.gl/ by hand and run again"
fi
for f in "$kit.new"/gl/*.deb; do dpkg-deb --info "$f" >/dev/null || die "$f is not a readable .deb"; done

# 3. The course's files, the Python peers and the scripts that run there.
cp "$data_src"/wiki.txt "$data_src"/birth_places_train.tsv "$data_src"/birth_dev.tsv "$kit.new/data/"
[ -f "$data_src/birth_test_inputs.tsv" ] && cp "$data_src/birth_test_inputs.tsv" "$kit.new/data/"
cp scripts/gpu-check.sh scripts/gpu-check-lib.sh scripts/bench_peers.py scripts/parity.py scripts/long-run.sh \
  "$kit.new/scripts/"

# 4. The page's path (stage f): the wasm build and Dawn; Node.js where it fits.
[ -f web/pkg/attnlab_bg.wasm ] && [ -f web/pkg/attnlab.js ] || scripts/build-web.sh
mkdir -p "$kit.new/web/pkg" "$kit.new/web/webgpu"
cp web/pkg/attnlab.js web/pkg/attnlab_bg.wasm "$kit.new/web/pkg/"
dawn_dir=web/node_modules/webgpu
[ -f "$dawn_dir/dist/linux-x64/dawn.node" ] || (cd web && npm ci --no-audit --no-fund)
[ -f "$dawn_dir/dist/linux-x64/dawn.node" ] ||
  die "no $dawn_dir/dist/linux-x64/dawn.node after npm ci (web/package.json pins webgpu)"
cp "$dawn_dir/index.js" "$dawn_dir/package.json" "$kit.new/web/webgpu/"
strip --strip-unneeded -o "$kit.new/web/webgpu/dawn.node" "$dawn_dir/dist/linux-x64/dawn.node"
xz -6 -T2 "$kit.new/web/webgpu/dawn.node"
# The kit and the repo's tracked files travel together (64 MiB); Node.js (about 21 MiB packed)
# goes along when the sum stays under $carry_mib MiB.
carry_mib=62
tree_kib=$(( $(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }') / 1024 ))
node_bin="$(command -v node || true)"
node_want="${GPUKIT_NODE:-auto}"
if [ "$node_want" != no ] && [ -n "$node_bin" ]; then
  strip --strip-all -o "$kit.new/node" "$node_bin"
  xz -6 -T2 "$kit.new/node"
  sofar_kib=$(( $(du -sk "$kit.new" | cut -f1) + tree_kib ))
  if [ "$node_want" = auto ] && [ "$sofar_kib" -gt $((carry_mib * 1024)) ]; then
    say "Node.js left out: with it the kit and the repo would be $((sofar_kib / 1024)) MiB (over $carry_mib);" \
      "stage f then needs node on the GPU machine"
    rm -f "$kit.new/node.xz"
  fi
fi

# 5. What the binaries assume: test binaries have CARGO_MANIFEST_DIR (fixtures, scripts) and
# CARGO_BIN_EXE_* (the CLI) baked in as absolute paths of this machine; gpu-check.sh recreates them
# there as links when they are missing.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet 2>/dev/null || commit="$commit+dirty"
{
  echo "KIT_COMMIT=$commit"
  echo "KIT_BUILT=$(date -u +%FT%TZ)"
  echo "KIT_RUSTC='$(rustc -V)'"
  echo "KIT_TARGET_CPU=$cpu"
  echo "KIT_NEEDS_GLIBC=$(objdump -T "$kit.new/bin/attnlab" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV |
    tail -n 1 | sed 's/GLIBC_//')"
  echo "KIT_MANIFEST_DIR=$root"
  echo "KIT_BIN_EXE_attnlab=$target_dir/$triple/release/attnlab"
  echo "KIT_BIN_EXE_bench=$target_dir/$triple/release/bench"
} >"$kit.new/kit.env"
{
  (cd "$kit.new" && find . -type f ! -name MANIFEST.txt -printf '%P\t%s\n' | sort)
  tar -tvJf "$kit.new/tests.tar.xz" | awk '{print "tests.tar.xz:" $6 "\t" $3}'
} >"$kit.new/MANIFEST.txt"

rm -rf "$kit"
mv "$kit.new" "$kit"
size_kib=$(du -sk "$kit" | cut -f1)
say "kit: $kit, $((size_kib / 1024)) MiB ($size_kib KiB), commit $commit, target-cpu $cpu"
(cd "$kit" && du -sh bin tests.tar.xz gl data scripts web/pkg web/webgpu $(ls node.xz 2>/dev/null) | sed 's/^/  /')
say "with the repo's tracked files ($((tree_kib / 1024)) MiB):" \
  "$(((size_kib + tree_kib) / 1024)) MiB of the 64 that travel"
say "$n_tests test binaries: $(tar -tJf "$kit/tests.tar.xz" | sed -n 's|^tests/||p' | grep . | tr '\n' ' ')"
say "loader and GL dispatch: $(cd "$kit/gl" && ls | tr "\n" " ")"
[ "$size_kib" -le $((limit_mib * 1024)) ] && [ $((size_kib + tree_kib)) -le $((63 * 1024)) ] ||
  die "the kit ($((size_kib / 1024)) MiB) and the repo's tracked files ($((tree_kib / 1024)) MiB)" \
    "must travel in 64 MiB (carry): over it; try GPUKIT_NODE=no"
say "run it there with: bash gpukit/scripts/gpu-check.sh (carry: [\"gpukit\"]);" \
  "try it here first: scripts/gpu-check.sh --dry-run"
