#!/usr/bin/env bash
# The test command: installs dependencies, builds in build/ and runs every suite; ends with one
# line "N passed, N failed" read from meson's test log. The suites must leave nothing behind:
# what appears in /tmp or in the source tree while they run is named and counted as one more
# failure ("leftovers").
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh --test || exit 1
if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null || exit 1
else
  meson configure build -Dtests=true >/dev/null || exit 1  # a build the demo set up
fi
ninja -C build || exit 1
# The tree: files changed, and files not in git (ignored ones too) outside the build folders.
tree() { { git diff --name-only; git ls-files --others; } 2>/dev/null |
         grep -v -E '^build[^/]*/' | sort; }
tmp_before=$(ls -A /tmp | sort)
tree_before=$(tree)
meson test -C build --print-errorlogs --num-processes 2
rc=$?
left=$( (comm -13 <(echo "$tmp_before") <(ls -A /tmp | sort) | sed 's|^|/tmp/|';
         comm -13 <(echo "$tree_before") <(tree)) | sed '/^$/d')
if [ -n "$left" ]; then
  echo "leftovers: the suites left these behind:"
  echo "$left" | sed 's/^/  /'
  rc=1
fi
python3 - build/meson-logs/testlog.json "$( [ -n "$left" ] && echo 1 || echo 0)" <<'PY'
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
failed += int(sys.argv[2])  # the leftovers check
if skipped:
    print(f"({skipped} suites skipped)")
print(f"{passed} passed, {failed} failed")
PY
exit $rc
