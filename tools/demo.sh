#!/usr/bin/env bash
# The main job: installs dependencies, builds, then trains the vkt-mlp model
# under the profiler twice — once with dot forced down the fallback path, once
# natively — and shows the census of each and the difference between them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
fb=build/tools/fbcount/fbcount
mlp=build/tools/workload/vkt-mlp
rm -rf demo-out && mkdir -p demo-out
echo "== vkt-mlp with dot forced to the host (VKT_NATIVE_DISABLE=dot) =="
VKT_NATIVE_DISABLE=dot "$fb" run -o demo-out/fallback -- "$mlp" --steps 40 --every 10
echo "== vkt-mlp native =="
"$fb" run -o demo-out/native -- "$mlp" --steps 40 --every 10
echo "== what the fix changed =="
"$fb" diff demo-out/fallback demo-out/native
