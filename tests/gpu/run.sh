#!/bin/bash
# Runs the staged suites (tests/gpu/stage.sh) on the GPU machine, from the
# repository root with .gpu carried; logs go to $OUT. One line per suite.
. "$(dirname "$0")/device-env.sh" .gpu/tlib
export VKT_NATIVE_DISABLE= VKT_FALLBACK_RESULT=device FBCOUNT_QUIET=1 FBCOUNT_OUTPUT=none
out=${OUT:-/tmp/gpu-tests}
mkdir -p "$out"
cat .gpu/t/TREE
cd .gpu/t || exit 2
fail=0
for t in tests/vkt/test_vkt_* tests/lenet/test_lenet; do
    case $t in *.so) continue ;; esac
    n=$(basename "$t")
    timeout "${T:-200}" "./$t" --jobs 8 > "$out/$n.log" 2>&1 || fail=1
    echo "$n: $(grep -a 'Synthesis' "$out/$n.log" | tail -1)"
    grep -a "FAIL\|want" "$out/$n.log" | head -8
done
exit $fail
