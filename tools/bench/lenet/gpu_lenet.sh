#!/bin/bash
# The LeNet sweep on the GPU machine, run from the repository root with .gpu
# carried (tools/bench/vkt/gpu_prepare.sh stages vkt-lenet under .gpu/lbuild):
# the GPU time of a recorded step by kernel at each batch (vkt-lenet --graph
# --profile), then bench_lenet.py's cases next to torch's eager, CUDA-graph
# and torch.compile + CUDA-graph steps, with the rows in lenet.json
# (tools/bench/results/ format), all under $OUT. PROFILE_ONLY=1 stops after
# the profiles; CASES=native,native-graph,... runs those cases only (and torch
# where a native one runs); LIMIT caps bench_lenet.py's seconds (480).
set -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/lenet-out}
mkdir -p "$out"
. "$here/../../../tests/gpu/device-env.sh"
for b in ${BATCHES:-64 256}; do
    timeout 120 .gpu/lbuild/tools/lenet/vkt-lenet --device NVIDIA --batch "$b" --steps 30 --print-every 30 \
        --warm-ms 1500 --graph --profile 20 > "$out/profile-$b.txt" 2>&1
    echo "recorded step at batch $b, exit $?:"
    grep 'mean' "$out/profile-$b.txt"
    grep -A14 '^profile:' "$out/profile-$b.txt"
done
[ -n "${PROFILE_ONLY:-}" ] && exit 0
timeout "${LIMIT:-480}" python3 "$here/bench_lenet.py" --build .gpu/lbuild --python python3 --device NVIDIA \
    --batches "$(echo ${BATCHES:-64 256} | tr ' ' ,)" --steps "${STEPS:-20}" --repeat "${REPEAT:-1}" \
    ${CASES:+--cases "$CASES"} \
    --json "$out/lenet-raw.json" --results "$out/lenet.json" 2>&1 | tee "$out/lenet.txt"
