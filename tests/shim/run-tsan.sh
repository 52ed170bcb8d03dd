#!/bin/sh
# The shim's threading under ThreadSanitizer, in every test run: builds libfbcount, the fake
# backend and the stress program with -fsanitize=thread in a temporary directory and runs the
# stress program (threads recording in and out of scopes, two waves taking over each other's
# census shards, a thread dumping all the while, census signals and checkpoints on the
# dumper thread, process-wide scopes opened and closed). A separate build because sanitizers are
# chosen per build, and a plain program because Criterion's test runner does not start under
# TSan (Criterion issue #274).   usage: run-tsan.sh [CC [BACKENDS_H]]
# BACKENDS_H: the built-in backend rows the build generated (rules/backends.h).
set -eu
cc=${1:-${CC:-cc}}
rows=$(dirname "${2:-$(pwd)/rules/backends.h}")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="-std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=thread -fno-omit-frame-pointer -fno-optimize-sibling-calls"
# shellcheck disable=SC2086
$cc $flags -fPIC -shared -fvisibility=hidden -DFBC_NO_SIGACTION_WRAPPER -DFBC_NO_THREAD_WRAPPER -I"$top/interpose" \
    -I"$top/interpose/hooks" -I"$top/interpose/readers" -I"$top/interpose/triggers" \
    -I"$top/interpose/dump" -I"$top/interpose/record" -I"$top/interpose/redirect" \
    -I"$top/interpose/base" -I"$top/interpose/adapters" -I"$top/rules" \
    -I"$rows" \
    "$top"/interpose/*/*.c "$top"/rules/*.c $(pkg-config --cflags --libs libunwind libdw) \
    -ldl -lpthread -lm \
    -o "$work/libfbcount.so"
# shellcheck disable=SC2086
$cc $flags -fPIC -shared -fvisibility=hidden "$here/fakevkt.c" -o "$work/libfakevkt.so"
# shellcheck disable=SC2086
$cc $flags -I"$top/interpose" -I"$here" "$here/stress.c" -L"$work" -lfbcount -lfakevkt \
    -Wl,-rpath,"$work" -lpthread -o "$work/stress"
# Snapshots (the stress program's census signals) and checkpoints are written for real.
mkdir "$work/dumps"
FBCOUNT=1 FBCOUNT_QUIET=1 FBCOUNT_OUTPUT="$work/dumps/s.%n.json" FBCOUNT_INTERVAL=0.05 \
    TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$work/stress"
written=$(find "$work/dumps" -name '*.json' | wc -l)
if [ "$written" -lt 2 ]; then
  echo "run-tsan: only $written dumps written: snapshots and checkpoints did not run" >&2
  exit 1
fi
echo "run-tsan: the stress program ran clean under ThreadSanitizer ($written dumps written)"
