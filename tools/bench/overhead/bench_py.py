#!/usr/bin/env python3
"""fbcount-bench-overhead for Python callers: microseconds per fallback made from Python
through ctypes, 10 Python frames deep (about 30 native frames below), (a) without the shim,
(b) preloaded with recording off, (c) recording (FBCOUNT_DEPTH=32, with the Python frames read
at every event). Each case runs in its own interpreter, several times interleaved; medians.
The cost of recording an event is (c) - (a); its target is 2 us (a fallback costs ms).
Prints a table and, with --json, writes the same rows as data.

usage: bench_py.py --shim LIBFBCOUNT --backend LIBBENCHVKT [--calls N] [--repeat N] [--json F]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
calls = int(sys.argv[2])

def frame(depth):
    if depth:
        return frame(depth - 1)
    t0 = time.perf_counter()
    for _ in range(calls):
        lib.vkt_bench(8)
    return (time.perf_counter() - t0) / calls

frame(1)  # the first calls resolve and warm up
print(frame(9) * 1e6)  # 10 Python frames: frame x 10
"""


def run(backend, calls, env):
    out = subprocess.run([sys.executable, "-c", CHILD, backend, str(calls)], env=env,
                         capture_output=True, text=True, check=True, timeout=300)
    return float(out.stdout.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim", required=True)
    ap.add_argument("--backend", required=True)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    cases = [
        ("(a) no shim", base),
        ("(b) preloaded, recording off", dict(base, LD_PRELOAD=args.shim, FBCOUNT="0")),
        ("(c) recording, depth 32, Python frames",
         dict(base, LD_PRELOAD=args.shim, FBCOUNT_DEPTH="32", FBCOUNT_OUTPUT="none",
              FBCOUNT_QUIET="1")),
    ]
    got = {name: [] for name, _ in cases}
    for _ in range(args.repeat):
        for name, env in cases:
            got[name].append(run(args.backend, args.calls, env))
    med = {name: statistics.median(v) for name, v in got.items()}
    a = med["(a) no shim"]
    load = os.getloadavg()[0]
    print(f"fbcount-bench-overhead (Python): {os.uname().nodename}, {os.cpu_count()} cpus, "
          f"load {load:.1f}; medians of {args.repeat} runs of {args.calls} calls, CPython "
          f"{sys.version.split()[0]}")
    print(f"{'what':40} {'us/call':>9} {'over (a)':>9} {'target':>8}  verdict")
    rows = []
    for name, _ in cases:
        over = med[name] - a
        target = {"(b) preloaded, recording off": 0.002, "(c) recording, depth 32, Python frames": 2.0}.get(name)
        verdict = "" if target is None else ("ok" if over <= target else "MISSED")
        print(f"{name:40} {med[name]:9.3f} {over:9.3f} {target if target else '-':>8}  {verdict}")
        row = {"bench": "overhead-python", "case": name, "value": round(med[name], 4),
               "unit": "us/call", "over_no_shim": round(over, 4)}
        if target:
            row.update(target=target, verdict=verdict)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": f"{os.uname().nodename}, {os.cpu_count()} cpus",
                       "date": time.strftime("%Y-%m-%d"), "load": load, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
