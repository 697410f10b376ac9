#!/usr/bin/env bash
# Install everything the page and the tests need on Debian/Ubuntu. Idempotent: each step checks
# first and does nothing when its tool is already there, so it is cheap to run every time.
#   apt:   Mesa's Vulkan drivers (lavapipe runs the native tests without a GPU), Chromium, a C linker
#   rust:  rustup + stable toolchain, the wasm32-unknown-unknown target
#   cargo: wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock
#   node:  Node.js 20+ (official build when the distro's is older), playwright-core, axe-core, katex, yaml
#          and webgpu (Dawn for Node) from web/package-lock.json
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

ID=unknown ID_LIKE=""
. /etc/os-release 2>/dev/null || true
case " $ID $ID_LIKE " in
  *" debian "*|*" ubuntu "*) ;;
  *) say "warning: this script knows Debian and Ubuntu; on '$ID' install the equivalents by hand" ;;
esac

# Root for apt: root itself, or sudo. Only asked for when something is actually missing.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else
    say "need root to run: $*"
    say "run this script as root, or install sudo, or run the apt-get line above as root yourself and re-run"
    exit 1
  fi
}

# --- apt packages ----------------------------------------------------------------------------
want=(mesa-vulkan-drivers libvulkan1 ca-certificates curl xz-utils build-essential python3)
# A browser: Debian's "chromium" is a real package; Ubuntu's "chromium-browser" installs the snap.
browser=""
for b in "${CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser /snap/bin/chromium /usr/bin/google-chrome; do
  if [ -n "$b" ] && [ -x "$b" ]; then browser="$b"; break; fi
done
if [ -z "$browser" ]; then
  if [ "$ID" = ubuntu ]; then want+=(chromium-browser); else want+=(chromium); fi
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
  say "apt packages present"
fi
if [ "$ID" = ubuntu ] && [ -z "${CHROMIUM:-}" ]; then
  say "note (Ubuntu): the snap Chromium also needs --enable-unsafe-webgpu for WebGPU (the test passes it)."
  say "  If the snap cannot run here, point the test at another Chrome/Chromium:" \
    "CHROMIUM=/path/to/chrome scripts/test.sh"
fi

# --- Rust ------------------------------------------------------------------------------------
if ! command -v cargo >/dev/null; then
  say "installing Rust with rustup (https://rustup.rs)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  source scripts/env.sh
fi
if ! command -v rustup >/dev/null; then
  say "cargo is here but rustup is not: make sure the wasm32-unknown-unknown target is installed (or use rustup)"
elif ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen-cli must match the wasm-bindgen crate exactly (the glue format changes between versions).
wb=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$wb" ]; then
  # No --locked: its lock file can name versions newer than some registry mirrors carry.
  say "cargo install wasm-bindgen-cli --version $wb (a few minutes)"
  cargo install wasm-bindgen-cli --version "$wb"
else
  say "wasm-bindgen-cli $wb present"
fi

# --- Node.js + playwright-core ---------------------------------------------------------------
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  v=v22.12.0
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) say "no Node.js build for $(uname -m)"; exit 1 ;;
  esac
  say "installing Node.js $v into ~/.local/share/attnlab/node (found: ${node_major:-none}; playwright-core needs 20+)"
  mkdir -p "$HOME/.local/share/attnlab/node"
  curl -fsSL "https://nodejs.org/dist/$v/node-$v-linux-$arch.tar.xz" |
    tar -xJ --strip-components=1 -C "$HOME/.local/share/attnlab/node"
  source scripts/env.sh
fi
# web/package-lock.json: playwright-core (the browser tests), axe-core (the accessibility test,
# web/test/a11y.mjs) and katex (the page's formulas, served from web/node_modules/katex/dist by
# scripts/serve.py), yaml (web/test/workflows.mjs) webgpu (Dawn for Node: web/test/dawn.mjs),
# prettier (web/'s format check) and typescript (the engine client's type check);
# npm ci when any is missing or another version.
# The packages checked, as a JavaScript array for the two `node -p` programs below.
npm_pkgs='["playwright-core", "axe-core", "katex", "yaml", "webgpu", "prettier", "typescript"]'
want=$(node -p 'const p = require("./web/package-lock.json").packages; '"$npm_pkgs"'
  .map((n) => n + "@" + p["node_modules/" + n].version).join(" ")')
have=$(node -p "$npm_pkgs"'.map((n) => {
  try { return n + "@" + require("./web/node_modules/" + n + "/package.json").version } catch { return n + "@none" }
}).join(" ")')
if [ "$have" != "$want" ]; then
  say "npm ci ($want)"
  (cd web && npm ci --no-audit --no-fund)
else
  say "$want present"
fi
say "ready"
