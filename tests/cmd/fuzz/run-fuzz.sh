#!/bin/sh
# Fuzz the dump reader for a bounded time.
#   run-fuzz.sh SECONDS [FUZZER]   run FUZZER (default: build one with clang in a temp dir)
# Seeds are the hand-made dumps in tests/cmd/data; new corpus entries go to a temp dir,
# crashes (if any) to ./fuzz-artifacts/.
set -eu
secs=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fuzzer=${2:-}
if [ -z "$fuzzer" ]; then
    fuzzer=$work/fuzz-dump
    src=$top/tools/fbcount
    rules=$top/rules
    clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined -I"$src" -I"$rules" "$here/fuzz_dump.c" "$src/dump.c" \
        "$src/merge.c" "$src/units.c" "$src/table.c" "$src/flame.c" "$src/text.c" \
        "$src/pool.c" "$src/names.c" "$rules/readfile.c" "$rules/signals.c" \
        $(pkg-config --cflags --libs jansson) -lstdc++ -lm -o "$fuzzer"
fi
mkdir -p "$work/corpus" "$work/seeds" fuzz-artifacts
find "$top/tests/cmd/data" -name '*.json' -exec cp {} "$work/seeds/" \;
exec "$fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -timeout=10 \
    -artifact_prefix=fuzz-artifacts/ -print_final_stats=1 "$work/corpus" "$work/seeds"
