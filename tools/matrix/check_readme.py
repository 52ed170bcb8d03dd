#!/usr/bin/env python3
"""check_readme — README.md's op support matrix must equal vkt-ops-matrix's output.

The section between <!-- ops-matrix:begin --> and <!-- ops-matrix:end --> is
generated from the gates in code; this check fails (exit 1, with a diff) when
the two drift apart, and --update rewrites the section instead. Exit 2 when the
markers are missing or the program fails.

usage: check_readme.py --program PATH/vkt-ops-matrix [--readme README.md] [--update]
"""
import argparse
import difflib
import os
import subprocess
import sys

BEGIN = "<!-- ops-matrix:begin -->"
END = "<!-- ops-matrix:end -->"


def fail(msg):
    print(f"check_readme: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", required=True, help="the vkt-ops-matrix executable")
    ap.add_argument("--readme", default=os.path.join(here, "..", "..", "README.md"))
    ap.add_argument("--update", action="store_true", help="rewrite the README section from the program")
    args = ap.parse_args()

    try:
        run = subprocess.run([args.program], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        fail(f"cannot run {args.program}: {e}")
    if run.returncode != 0:
        fail(f"{args.program} exited {run.returncode}: {run.stderr.strip()}")
    generated = run.stdout.strip("\n") + "\n"

    try:
        with open(args.readme, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail(f"cannot read {args.readme}: {e}")
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0 or e < b or text.count(BEGIN) != 1 or text.count(END) != 1:
        fail(f"{args.readme} needs exactly one '{BEGIN}' followed by one '{END}'")
    start = b + len(BEGIN)
    current = text[start:e].strip("\n") + "\n"

    if current == generated:
        return 0
    if args.update:
        tmp = args.readme + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            # Blank lines around the table keep markdown from joining it to the markers.
            f.write(text[:start] + "\n\n" + generated + "\n" + text[e:])
        os.replace(tmp, args.readme)
        print(f"check_readme: updated the op support matrix in {args.readme}")
        return 0
    sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), generated.splitlines(True),
                                               "README.md (ops-matrix section)", "vkt-ops-matrix"))
    print("check_readme: README.md's op support matrix is stale; "
          "run `ninja -C <build> ops-matrix-readme` (or this script with --update)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
