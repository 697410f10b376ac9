#!/usr/bin/env bash
# Session 13's two device calls ran this from a git-ignored folder sweep/ (carried) holding: attnlab
# (gpukit/bin/attnlab from scripts/gpu-kit.sh), gl/ (the kit's .deb files), corpora/ (variants.py
# births/ corpora, births/ from `attnlab corpus --births_only --out_dir births`), run.sh and the job
# lists as jobs.cpu / jobs.gpu. Call 1: `BUDGET=515 bash sweep/device.sh`; call 2 ran
# `GPU_P=3 ./run.sh /dev/null jobs.gpu` (jobs-call2.gpu) with BUDGET=200 instead of the line below.
# Session 14's sweep (../gpu-sweep-s14/) ran it as `BUDGET=535 GPU_P=5 JOBS_CPU=/dev/null bash sweep/device.sh`
# with that folder's variants.py corpora and jobs.gpu (run.sh then took the model's size as an 8th field).
# On the device machine: unpack the Vulkan loader, find NVIDIA's ICD, run the sweep, pack the logs.
cd "$(dirname "$0")"
for f in gl/*.deb; do dpkg -x "$f" /; done; ldconfig
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  [ -f "$f" ] && { export VK_DRIVER_FILES="$f"; break; }; done
[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] && export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
echo "cores $(nproc); $(lscpu | grep 'Model name'); VK_DRIVER_FILES=${VK_DRIVER_FILES:-none}"
nvidia-smi -L
OUTDIR=/tmp/sw BUDGET=${BUDGET:-520} ./run.sh ${JOBS_CPU:-jobs.cpu} ${JOBS_GPU:-jobs.gpu}
tar czf "$OUT/logs.tgz" -C /tmp/sw logs
cp /tmp/sw/summary.txt "$OUT/"
