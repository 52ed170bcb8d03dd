#!/usr/bin/env bash
# The main job: installs dependencies, builds, then trains LeNet-5 (vkt-lenet)
# under the profiler three times — with conv and dot forced down the fallback
# path, with dot alone, and natively — shows what each fix changed in the
# census, and gates the native run as CI would (no fallback allowed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
[ -f build/build.ninja ] || meson setup build -Dtests=false >/dev/null
ninja -C build >/dev/null
fb=build/tools/fbcount/fbcount
lenet=build/tools/lenet/vkt-lenet
args=(--batch 16 --steps 20 --print-every 10)
rm -rf demo-out && mkdir -p demo-out
echo "== LeNet-5 with conv and dot forced to the host (VKT_NATIVE_DISABLE=conv,dot) =="
VKT_NATIVE_DISABLE=conv,dot "$fb" run -o demo-out/before -- "$lenet" "${args[@]}"
echo
echo "== conv fixed, dot still falling back (VKT_NATIVE_DISABLE=dot) =="
VKT_NATIVE_DISABLE=dot "$fb" run -o demo-out/after -- "$lenet" "${args[@]}"
echo
echo "== native =="
"$fb" run -o demo-out/native -- "$lenet" "${args[@]}"
echo
echo "== what the fixes changed: fbcount diff demo-out/before demo-out/native =="
"$fb" diff demo-out/before demo-out/native
echo
echo "== the CI gate: fbcount check --max 0 =="
if "$fb" check --max 0 demo-out/after; then exit 1; fi   # must fail: dot falls back
"$fb" check --max 0 demo-out/native
"$fb" report --format svg -o demo-out/before.svg demo-out/before
echo "flame graph of the first run: demo-out/before.svg"
