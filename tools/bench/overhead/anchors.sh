#!/bin/sh
# anchors.sh BUILD_DIR - the same loop as fbcount-bench-overhead's (a) child, run under
# ltrace -c, uftrace and a perf uprobe on host_result, for a side-by-side per-call cost.
# Prints one "name ns/call" line per tool that is installed and works here.
set -u
B=${1:-build}
BENCH=$B/tools/bench/overhead/fbcount-bench-overhead
LIB=$B/tools/bench/overhead/libfbcount-benchvkt.so
CALLS=${CALLS:-20000}
run() { "$@" --child-loop 1 "$CALLS" 3 2>/dev/null | tail -n 1; }
echo "none $(run "$BENCH")"
if command -v ltrace >/dev/null; then
    echo "ltrace-c $(ltrace -c -o /dev/null -e host_result@* "$BENCH" --child-loop 1 "$CALLS" 3 2>/dev/null | tail -n 1)"
else echo "ltrace not installed"; fi
if command -v uftrace >/dev/null; then
    d=$(mktemp -d)
    echo "uftrace $(uftrace record -d "$d/u" --nest-libcall "$BENCH" --child-loop 1 "$CALLS" 3 2>/dev/null | tail -n 1)"
    rm -rf "$d"
else echo "uftrace not installed"; fi
if command -v perf >/dev/null && perf probe -q -x "$LIB" host_result 2>/dev/null; then
    echo "perf-uprobe $(perf record -q -o /dev/null -e probe_libfbcount:host_result "$BENCH" --child-loop 1 "$CALLS" 3 2>/dev/null | tail -n 1)"
    perf probe -q -d 'probe_libfbcount:*' 2>/dev/null
else echo "perf uprobe: not available here"; fi
