#!/usr/bin/env python3
"""Checks the layout of the project's C and C++: clang-format's, short functions, 100 columns.

Three rules, over every tracked C and C++ file (*.c, *.h, *.cc, *.cpp, *.hpp):
- no line longer than 100 columns (characters, not bytes), generated data included;
- no function longer than 80 lines outside tests/ (demo and benchmark mains included): a function
  is counted from its opening brace to its closing one, both in the first column as the tree's
  .clang-format puts them;
- the file is what clang-format makes of it with the tree's .clang-format, except generated data
  (GENERATED, wrapped at 100 columns by its generator instead).
Files in NOT_YET_FORMATTED are exempt from all three while they are being changed elsewhere (an
entry may name a file that change adds); the list only shrinks: an entry whose file already
keeps every rule fails the check, so it is removed when its file is formatted. The format rule
needs clang-format 14 (each version formats a little differently); without it the other two rules
still run, and the test reports itself skipped (exit 77) with the reason when they pass.

Usage: check_c.py [--list] SOURCE_ROOT
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

MAX_COLUMNS = 100
MAX_FUNCTION_LINES = 80
SUFFIXES = (".c", ".h", ".cc", ".cpp", ".hpp")
CLANG_FORMAT_MAJOR = 14

# Files another change is rewriting now: formatted once it lands, then removed from this list.
NOT_YET_FORMATTED = []

# Data written by a script, which wraps it at 100 columns itself (tests/golden/cwrap.py).
GENERATED = re.compile(r"tests/golden/.*\.h")

NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")


def tracked_sources(root):
    p = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached"], capture_output=True)
    if p.returncode != 0:
        return None
    files = p.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted(f for f in files if f.endswith(SUFFIXES)
                  and os.path.isfile(os.path.join(root, f)) and not os.path.islink(os.path.join(root, f)))


def walked_sources(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and not os.path.exists(
            os.path.join(d, x, "meson-private")))
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(SUFFIXES)]
    return sorted(out)


def long_lines(path, lines):
    return [f"{path}:{n}: {len(line)} columns (at most {MAX_COLUMNS})"
            for n, line in enumerate(lines, 1) if len(line) > MAX_COLUMNS]


def function_name(lines, brace):
    """The name before the parameter list that the opening brace at lines[brace] ends."""
    text = " ".join(lines[max(0, brace - 6):brace])
    text = re.sub(r"\([^()]*\)", lambda m: "(" + " " * (len(m.group(0)) - 2) + ")", text)
    names = [m.group(1) for m in NAME.finditer(text)]
    return names[-1] if names else "?"


def long_functions(path, lines):
    out, start = [], None
    for i, line in enumerate(lines):
        if line.rstrip() == "{" and i > 0 and not lines[i - 1].rstrip().endswith(("=", "\\")):
            start = i
        elif start is not None and line.startswith("}"):
            n = i - start + 1
            if n > MAX_FUNCTION_LINES:
                out.append(f"{path}:{start + 1}: {function_name(lines, start)} is {n} lines "
                           f"(at most {MAX_FUNCTION_LINES} outside tests/)")
            start = None
    return out


def find_clang_format():
    """clang-format of the version the tree is formatted with, or (None, why)."""
    for name in (f"clang-format-{CLANG_FORMAT_MAJOR}", "clang-format"):
        exe = shutil.which(name)
        if not exe:
            continue
        v = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.", v)
        if m and int(m.group(1)) == CLANG_FORMAT_MAJOR:
            return exe, None
        why = f"{exe} is {v.strip()}, not {CLANG_FORMAT_MAJOR}"
    else:
        why = "clang-format is not installed (Debian: apt-get install clang-format-14)"
    return None, why


def unformatted(root, exe, files):
    """The files clang-format would change, each with the first line it would change."""
    out = {}
    for i in range(0, len(files), 64):
        p = subprocess.run([exe, "--style=file", "--dry-run", "-Werror", "--ferror-limit=1"]
                           + files[i:i + 64], cwd=root, capture_output=True, text=True)
        for m in re.finditer(r"^(\S+?):(\d+):\d+: error: code should be clang-formatted",
                             p.stderr, re.M):
            out.setdefault(os.path.relpath(os.path.join(root, m.group(1)), root), int(m.group(2)))
        if p.returncode != 0 and not out:
            sys.stderr.write(p.stderr)
            raise SystemExit("check_c: clang-format failed (exit %d)" % p.returncode)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print the files checked")
    ap.add_argument("root", help="the project's source root")
    args = ap.parse_args()
    root = args.root

    files = tracked_sources(root)
    if files is None:
        files = walked_sources(root)
    if not files:
        print(f"check_c: no C or C++ files in {root}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(files))
    allowed = set(NOT_YET_FORMATTED)
    problems, clean = [], set()
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        found = long_lines(f, lines)
        if not f.startswith("tests/"):
            found += long_functions(f, lines)
        if f in allowed:
            if not found:
                clean.add(f)
        else:
            problems += found

    exe, why = find_clang_format()
    if exe:
        checked = [f for f in files if not GENERATED.fullmatch(f)]
        diff = unformatted(root, exe, checked)
        problems += [f"{f}:{line}: differs from clang-format's output (clang-format -i {f})"
                     for f, line in sorted(diff.items()) if f not in allowed]
        clean -= set(diff)
    else:
        clean = set()  # without the formatter, an entry cannot be shown to be stale
    problems += [f"{f}: keeps every rule now; remove it from NOT_YET_FORMATTED in {__file__}"
                 for f in sorted(clean)]
    absent = sorted(allowed - set(files))  # files the change that formats them will add

    if problems:
        print("\n".join(problems))
        print(f"check_c: {len(problems)} problem{'s' * (len(problems) != 1)} in {len(files)} C and "
              f"C++ files, listed above", file=sys.stderr)
        return 1
    rules = f"lines of at most {MAX_COLUMNS} columns, functions of at most {MAX_FUNCTION_LINES} lines"
    if not exe:
        print(f"check_c: {len(files)} C and C++ files keep {rules}; their format was not checked: "
              f"{why}")
        return 77
    print(f"check_c: {len(files)} C and C++ files keep {rules} and clang-format's layout "
          f"({len(allowed) - len(absent)} not yet formatted, {len(absent)} not yet added)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
