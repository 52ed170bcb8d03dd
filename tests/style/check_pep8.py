#!/usr/bin/env python3
"""Checks that the project's Python follows PEP 8 (pycodestyle, lines up to 120 columns).

The Python here is packages, tests, benchmarks and build helpers alike, read and changed by the
same people; one layout for all of it keeps diffs about code rather than spacing, and a test
keeps it so: a file that drifts fails the suite instead of collecting fixes later.

The files are found here rather than listed in meson, so a new file is checked without anyone
remembering to add it: in a git checkout, every tracked *.py file and every tracked file without
the suffix whose first line is a python shebang; elsewhere (an unpacked release), the same files
found by walking the source tree, skipping hidden folders, __pycache__ and meson build folders.
pycodestyle runs on the Python that runs this script (sys.executable), with its default ignore
list. Without pycodestyle the check fails with a message saying what to install: a style check
that quietly passes where its tool is missing would check nothing.

Usage: check_pep8.py [--list] SOURCE_ROOT
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys

MAX_LINE_LENGTH = 120
SHEBANG = re.compile(rb"#!.*\bpython[0-9.]*\b")


def is_python_script(path):
    """A file without the .py suffix that starts with a python shebang."""
    try:
        with open(path, "rb") as f:
            return bool(SHEBANG.match(f.readline(256)))
    except OSError:
        return False


def git_files(root):
    """Tracked files of the checkout at root, relative to root; None outside a git checkout."""
    try:
        p = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached"], capture_output=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return [f for f in p.stdout.decode("utf-8", "surrogateescape").split("\0") if f]


def is_build_dir(path):
    return any(os.path.exists(os.path.join(path, m)) for m in ("meson-private", "build.ninja"))


def walked_files(root):
    """Files under root, relative to root, without hidden, cache and build folders."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "__pycache__"
                         and not is_build_dir(os.path.join(d, x)))
        out += [os.path.relpath(os.path.join(d, f), root) for f in sorted(files)]
    return out


def python_files(root):
    files = git_files(root)
    how = "tracked by git"
    if files is None:
        files, how = walked_files(root), "found under the source tree"
    found = []
    for f in files:
        path = os.path.join(root, f)
        if os.path.islink(path) or not os.path.isfile(path):
            continue  # a link is checked as its target; a deleted file not at all
        if f.endswith(".py") or is_python_script(path):
            found.append(f)
    return sorted(found), how


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print the files checked")
    ap.add_argument("root", help="the project's source root")
    args = ap.parse_args()

    if importlib.util.find_spec("pycodestyle") is None:
        print(f"check_pep8: pycodestyle is not installed for {sys.executable}, so the Python cannot be "
              "checked; install it (Debian: apt-get install python3-pycodestyle, which tools/deps.sh --test "
              "installs from tools/deps/test-python.txt)", file=sys.stderr)
        return 2
    files, how = python_files(args.root)
    if not files:
        print(f"check_pep8: no Python files {how} in {args.root}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(files))

    cmd = [sys.executable, "-m", "pycodestyle", f"--max-line-length={MAX_LINE_LENGTH}", "--"] + files
    p = subprocess.run(cmd, cwd=args.root, capture_output=True, text=True)
    version = subprocess.run([sys.executable, "-m", "pycodestyle", "--version"], capture_output=True,
                             text=True).stdout.strip()
    if p.returncode == 0 and not p.stdout.strip():
        print(f"check_pep8: {len(files)} Python files {how} follow PEP 8 "
              f"(pycodestyle {version}, max line length {MAX_LINE_LENGTH})")
        return 0
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode == 1:
        problems = [line for line in p.stdout.splitlines() if line.strip()]
        nfiles = len({line.split(":", 1)[0] for line in problems})
        print(f"check_pep8: {len(problems)} PEP 8 violation{'s' * (len(problems) != 1)} in {nfiles} of "
              f"{len(files)} Python files (pycodestyle {version}, max line length {MAX_LINE_LENGTH}), "
              "listed above", file=sys.stderr)
    else:
        print(f"check_pep8: pycodestyle failed (exit {p.returncode})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
