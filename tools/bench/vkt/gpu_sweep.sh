#!/bin/bash
# The H200 sweep, run on the GPU machine from the repository root with .gpu
# carried (see gpu_prepare.sh): with DOT_KERNELS="big big_vec ..." first dot
# alone with each kernel forced (VKT_DOT_KERNEL), then libvkt's full
# vkt-bench, the PyTorch anchor, and the merged ratio table and results file
# (ops.json, tools/bench/results/ format), all written under $OUT.
set -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bench-out}
mkdir -p "$out"
. "$here/../../../tests/gpu/device-env.sh" .gpu/bench
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
for k in ${DOT_KERNELS:-}; do
    VKT_DOT_KERNEL=$k timeout 120 .gpu/bench/vkt-bench --device NVIDIA --reps "$reps" --ops dot \
        --json "$out/dot-$k.json" > "$out/dot-$k.txt" 2>&1
    echo "dot with VKT_DOT_KERNEL=$k:"
    grep '^| dot' "$out/dot-$k.txt"
done
timeout 300 .gpu/bench/vkt-bench --device NVIDIA --reps "$reps" --json "$out/vkt.json" "$@" 2>&1 | tee "$out/vkt.txt"
echo "vkt-bench exit $?"
timeout 120 python3 "$here/torch_anchor.py" --reps "$reps" --json "$out/torch.json" 2>&1 | tee "$out/torch.txt"
echo "torch_anchor exit $?"
kill $smi 2>/dev/null
python3 "$here/ratio.py" "$out/vkt.json" "$out/torch.json" -o "$out/table.md" --results "$out/ops.json" \
    --command "bash tools/bench/vkt/gpu_sweep.sh $*"
