#!/usr/bin/env python3
"""The README's example outputs, made by the commands themselves from stored dumps.

A generated example is a fenced block between markers that name a folder under
tests/cmd/data (the dumps of the runs the README tells about):
  <!-- example:readme -->
  ```
  $ fbcount report --by site before
  (what it prints)
  ```
  <!-- example:end -->
Every line that starts with "$ " is run with `sh -c` in a copy of that folder (so a command may
write files there; fbcount first on PATH, TZ=UTC, standard error merged into standard output as
a terminal shows both, tables not fitted to any width),
and the lines after it, up to the next "$ " line or the end of the block, are its output.
--check fails (exit 1, with a diff) when a block differs from what the commands print now;
--update rewrites the blocks. Transcripts of live programs (their timings vary) are plain
blocks, outside these markers.

usage: readme_examples.py (--check | --update) FBCOUNT DATA_DIR DOC.md...
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"(<!-- example:([\w./-]+) -->\n```\n)(.*?)(```\n<!-- example:end -->)", re.S)


def regenerate(text, fbcount, data):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FBCOUNT", "COLUMNS"))}
    env["PATH"] = os.path.dirname(os.path.abspath(fbcount)) + os.pathsep + env.get("PATH", "")
    env["TZ"] = "UTC"

    def block(m):
        out = []
        with tempfile.TemporaryDirectory(prefix="fbcount-readme-") as tmp:
            cwd = os.path.join(tmp, "data")
            shutil.copytree(os.path.join(data, m.group(2)), cwd)
            for line in m.group(3).splitlines():
                if not line.startswith("$ "):
                    continue
                p = subprocess.run(["sh", "-c", "exec 2>&1; " + line[2:]], cwd=cwd, env=env,
                                   stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                   timeout=120)
                out.append(line + "\n" + p.stdout)
        return m.group(1) + "".join(out) + m.group(4)
    return BLOCK.sub(block, text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    ap.add_argument("fbcount")
    ap.add_argument("data")
    ap.add_argument("docs", nargs="+")
    args = ap.parse_args()
    drift = False
    for doc in args.docs:
        text = open(doc).read()
        if not BLOCK.search(text):
            sys.exit(f"readme_examples: {doc} has no generated example")
        new = regenerate(text, args.fbcount, args.data)
        if new == text:
            continue
        if args.update:
            open(doc, "w").write(new)
            print(f"readme_examples: rewrote {doc}")
        else:
            drift = True
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       doc, doc + " (as the commands print it)"))
    if drift:
        print("readme_examples: the README's examples differ from what the commands print; run "
              "ninja -C build readme-examples", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
