#!/usr/bin/env python3
"""check_exits.py LIBFBCOUNT EXITS - every exit of a built-in backend row is a function
libfbcount.so defines and exports. EXITS is the build's list of those exits, one a line
(rules/backends/embed.py --exits, from the descriptors rules/meson.build compiles in). The shim
relies on it at load: a preloaded process that declares nothing (no FBCOUNT_EXIT, no
FBCOUNT_BACKEND) has no exit to redirect, so the rows are not even read until a backend is used
(interpose/hooks/declared.c, init.c)."""
import subprocess
import sys


def main():
    lib, listing = sys.argv[1], sys.argv[2]
    with open(listing, encoding="utf-8") as f:
        exits = f.read().split()
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    defined = {p[2] for p in (ln.split() for ln in out.splitlines()) if len(p) == 3 and
               p[1] in "TW"}
    errors = [f"exit {sym} is not a function libfbcount.so exports" for sym in exits
              if sym not in defined]
    if not exits:
        errors.append(f"no exit listed in {listing}")
    for e in errors:
        print("FAIL:", e)
    if errors:
        sys.exit(1)
    print(f"check_exits: {len(exits)} exits of the built-in rows, all the shim's")


if __name__ == "__main__":
    main()
