#!/usr/bin/env python3
"""fbcount-bench-modes: what FBCOUNT_MODE=warn costs the calls that fall back, against count.

A Python program on the toy PrivateUse1 device (tests/torch/toydev.cc) calls torch.relu, which
falls back through at::native::cpu_fallback, from SITES distinct lines, CALLS times each, and
times its own calls (time.perf_counter around them, in the process): the first pass, where
every (op, site) pair is new and warn mode has a message to make, and the passes after it.
It runs preloaded (LD_PRELOAD=libfbcount.so) in count and in warn mode, ROUNDS times each,
the modes interleaved round by round; the figures are medians, with the least and the most.
Each row also carries the census's own time for the calls (total.ns over the calls): warn
mode's message is no part of a fallback's time.

Prints a table; --json writes the rows (tools/bench/results/, results.py's schema).

usage: bench_modes.py --shim LIBFBCOUNT --toydev LIBTOYDEV [--python PY] [--rounds N]
                      [--sites N] [--calls N] [--device TEXT] [--json FILE] [--commit C]
"""
import argparse
import datetime
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402  (tools/bench/results/results.py: the rows' schema and writer)

PROGRAM = """\
import sys
import time
import torch
sys.path.insert(0, {tests!r})
import toy
x = torch.ones(64).to(toy.load({toydev!r}))


def work():
{body}


t0 = time.perf_counter_ns()
work()
t1 = time.perf_counter_ns()
for _ in range({calls} - 1):
    work()
t2 = time.perf_counter_ns()
print(t1 - t0, t2 - t1)
"""


def one(a, script, mode, tmp):
    """(first pass ns, later passes ns, the census's ns) of one run in mode."""
    out = os.path.join(tmp, mode)
    os.makedirs(out, exist_ok=True)
    for f in glob.glob(os.path.join(out, "*.json")):
        os.remove(f)
    env = dict(os.environ, LD_PRELOAD=a.shim, FBCOUNT_MODE=mode, FBCOUNT_QUIET="1",
               FBCOUNT_OUTPUT=os.path.join(out, "fbcount.%p.json"))
    p = subprocess.run([a.python, script], env=env, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"bench_modes: {mode} run failed: {p.stderr[-2000:]}")
    first, later = (int(v) for v in p.stdout.split())
    (dump,) = glob.glob(os.path.join(out, "*.json"))
    with open(dump, encoding="utf-8") as f:
        ns = json.load(f)["total"]["ns"]
    return first, later, ns


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim", required=True)
    ap.add_argument("--toydev", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sites", type=int, default=20)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--device", default="vm")
    ap.add_argument("--json")
    ap.add_argument("--commit", help="the shim's commit, where it is not the checkout's HEAD")
    a = ap.parse_args()
    body = "\n".join(f"    torch.relu(x)  # site {i}" for i in range(a.sites))
    runs = {"count": [], "warn": []}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "calls.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(PROGRAM.format(tests=os.path.join(TOP, "tests", "torch"), toydev=a.toydev,
                                   body=body, calls=a.calls))
        for _ in range(a.rounds):
            for mode in runs:
                runs[mode].append(one(a, script, mode, tmp))
    n_first, n_later, n_all = a.sites, a.sites * (a.calls - 1), a.sites * a.calls
    rows = []
    print(f"{'mode':<6} {'first pass ns/call':>22} {'later ns/call':>18} {'census ns/call':>16}")
    for mode, rs in runs.items():
        cols = []
        for k, (idx, n) in enumerate(((0, n_first), (1, n_later), (2, n_all))):
            v = [r[idx] / n for r in rs]
            cols.append(v)
            rows.append({"bench": "modes", "case": mode,
                         "size": ("first pass", "later passes", "census time")[k],
                         "value": round(statistics.median(v)), "unit": "ns/call",
                         "min": round(min(v)), "max": round(max(v)),
                         "sites": a.sites, "calls": a.calls, "rounds": a.rounds})
        print(f"{mode:<6} " + " ".join(f"{statistics.median(v):>10.0f} ({min(v):.0f}-{max(v):.0f})"
                                       for v in cols))
    if a.json:
        results.write(a.json, a.device, rows,
                      f"bench_modes.py --rounds {a.rounds} --sites {a.sites} --calls {a.calls}",
                      datetime.date.today().isoformat(), commit=a.commit)


if __name__ == "__main__":
    main()
