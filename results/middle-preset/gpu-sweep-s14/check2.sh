#!/usr/bin/env bash
# Session 14, device call 2: the course model's dev evaluation (early-stopping decode) on the H100
# and on the host's CPU, and tests/decode.rs with a hardware GPU required.
cd "$(dirname "$0")"; root=$(cd .. && pwd)
for f in gl/*.deb; do dpkg -x "$f" /; done; ldconfig
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  [ -f "$f" ] && { export VK_DRIVER_FILES="$f"; break; }; done
[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] && export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -e /work/main ] || { mkdir -p /work; ln -s "$root" /work/main; }
mkdir -p /work/main/target/x86_64-unknown-linux-gnu/release && cp attnlab /work/main/target/x86_64-unknown-linux-gnu/release/attnlab
for d in gpu cpu; do
  /usr/bin/time -f "$d evaluate: %e s" timeout 90 ./attnlab evaluate vanilla data/wiki.txt --device $d \
    --reading_params_path ../web/models/course-vanilla.safetensors --eval_corpus_path data/birth_dev.tsv \
    --outputs_path "$OUT/$d.dev.predictions" 2>&1 | grep -v "^step\|^\s*$" | tail -4
done
ATTNLAB_REQUIRE_HARDWARE_GPU=1 timeout 150 ./decode --test-threads 1 2>&1 | tail -12
