#!/usr/bin/env bash
# The test command: installs dependencies, builds in build/ and runs every
# suite; ends with one line "N passed, N failed" read from meson's test log.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh --test || exit 1
if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null || exit 1
else
  meson configure build -Dtests=true >/dev/null || exit 1  # a build the demo set up
fi
ninja -C build || exit 1
meson test -C build --print-errorlogs --num-processes 2
rc=$?
python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif r == "SKIP":
        skipped += 1
    else:
        failed += 1
if skipped:
    print(f"({skipped} suites skipped)")
print(f"{passed} passed, {failed} failed")
PY
exit $rc
