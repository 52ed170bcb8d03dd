#!/usr/bin/env python3
"""check_exits.py LIBFBCOUNT DESCRIPTOR... - every exit of a built-in backend row is a function
libfbcount.so defines and exports. The shim relies on it at load: a preloaded process that
declares nothing (no FBCOUNT_EXIT, no FBCOUNT_BACKEND) has no exit to redirect, so the rows are
not even read until a backend is used (interpose/hooks/declared.c, init.c)."""
import re
import subprocess
import sys


def exits_of(path):
    with open(path, encoding="utf-8") as f:
        return [m.group(1) for m in (re.match(r"exit\s+(\S+)", ln) for ln in f) if m]


def main():
    lib, descriptors = sys.argv[1], sys.argv[2:]
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    defined = {p[2] for p in (ln.split() for ln in out.splitlines()) if len(p) == 3 and
               p[1] in "TW"}
    errors = []
    total = 0
    for d in descriptors:
        for sym in exits_of(d):
            total += 1
            if sym not in defined:
                errors.append(f"{d}: exit {sym} is not a function libfbcount.so exports")
    if not total:
        errors.append("no exit found in the descriptors")
    for e in errors:
        print("FAIL:", e)
    if errors:
        sys.exit(1)
    print(f"check_exits: {total} exits of {len(descriptors)} built-in rows, all the shim's")


if __name__ == "__main__":
    main()
