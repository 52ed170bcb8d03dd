#!/bin/bash
# The H200 sweep, run on the GPU machine from the repository root with .gpu
# carried (see gpu_prepare.sh): libvkt's full vkt-bench, then the PyTorch
# anchor, then the merged ratio table, all written under $OUT.
set -o pipefail
out=${OUT:-/tmp/bench-out}
mkdir -p "$out"
for f in .gpu/loader/*.deb; do dpkg -x "$f" /; done
ldconfig
mkdir -p /tmp/gl
for f in .gpu/extra/*.deb; do dpkg -x "$f" /tmp/gl; done
export LD_LIBRARY_PATH=$PWD/.gpu/bench:/tmp/gl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f $icd ] && export VK_DRIVER_FILES=$icd
export PYTHONUNBUFFERED=1
reps=${REPS:-20}
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
    cat .gpu/bench/TREE
} > "$out/env.txt" 2>&1
# The SM clock through the sweep: an idle GPU drops it (345 MHz against 1980 on an H200), which is
# why every row warms up for a time first; the log shows whether that held.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,clocks_event_reasons.active \
    --format=csv -lms 250 > "$out/clocks.csv" 2>&1 &
smi=$!
timeout 300 .gpu/bench/vkt-bench --device NVIDIA --reps "$reps" --json "$out/vkt.json" "$@" 2>&1 | tee "$out/vkt.txt"
echo "vkt-bench exit $?"
timeout 120 python3 tools/bench/vkt/torch_anchor.py --reps "$reps" --json "$out/torch.json" 2>&1 | tee "$out/torch.txt"
echo "torch_anchor exit $?"
kill $smi 2>/dev/null
python3 tools/bench/vkt/ratio.py "$out/vkt.json" "$out/torch.json" -o "$out/table.md"
