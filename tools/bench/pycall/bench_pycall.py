#!/usr/bin/env python3
"""bench_pycall: what one small op costs from Python against the same call from C.

The call is vkt.add on two device tensors of 16 floats: the native path, the result freed
when its object goes, and no sync timed: the calls run in batches of 256, each timed alone and
followed by an untimed sync (below libvkt's submission threshold of 512 dispatches), so that a
figure is what recording one call costs, not running earlier ones (which lavapipe does on the
same CPUs). The C figure is vkt-bench-pycall's loop of vkt_add and vkt_tensor_free; the Python
figures are loops of `vkt.add(a, b)` and of `a + b` over the vkt package of the build (the
extension module vkt._vkt), and over each --baseline package (another build's vkt, e.g.
main's ctypes package) in the same run. Every program runs in its own process, C and the
packages alternating, --rounds times; each figure is the fastest loop of --calls calls over
all rounds (--repeat loops a process): on a shared machine the other load only ever adds time,
so the fastest is the closest to the call's own cost (timeit's rule). The loop's own cost (an
empty loop of as many turns) is measured and shown, not subtracted. Target: Python at most
0.3 us a call more than C.

Prints the table; --results FILE writes the rows (tools/bench/results/ format); --doc FILE
rewrites each table between "<!-- pycall:table NAME -->" and "<!-- pycall:end -->" in FILE from
the results file NAME (in tools/bench/results/), after measuring with --results, else at once;
--check-doc FILE only compares (exit 1 when a table differs from its data).

usage: bench_pycall.py [--build DIR] [--baseline NAME=DIR]... [--calls N] [--repeat N]
                       [--rounds N] [--device SEL] [--results FILE] [--commit REV] [--doc FILE]
       bench_pycall.py --check-doc FILE
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(HERE, "..", "results")
sys.path.insert(0, RESULTS_DIR)
import results  # noqa: E402  (tools/bench/results/results.py: the results format)

TARGET_US = 0.3
BLOCK = re.compile(r"(<!-- pycall:table ([\w.-]+) -->\n)(.*?)(<!-- pycall:end -->)", re.S)

# The Python side, in its own interpreter: argv = calls, repeat, device. Prints one JSON line.
CHILD = r"""
import json, sys, time
import numpy as np
import vkt
calls, repeat, device = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] or None
ctx = vkt.Context(device)
a = ctx.tensor(np.arange(16, dtype=np.float32))
b = ctx.tensor(np.arange(16, dtype=np.float32))
add = vkt.add


BATCH = 256  # as vkt-bench-pycall: the calls between two syncs
turns = range(BATCH)


def best(loop):
    out = None
    for r in range(repeat + 1):  # the first round warms up
        spent = 0
        for _ in range(calls // BATCH):
            t0 = time.perf_counter_ns()
            loop()
            spent += time.perf_counter_ns() - t0
            ctx.sync()
        ns = spent / (calls // BATCH * BATCH)
        if r and (out is None or ns < out):
            out = ns
    return out


def call():
    for _ in turns:
        add(a, b)


def operator():
    for _ in turns:
        a + b


def empty():
    for _ in turns:
        pass


vkt.stats_reset()
figures = {"vkt.add": best(call), "a + b": best(operator), "loop": best(empty)}
stats = vkt.stats()
if set(stats) != {"add"} or stats["add"][1] or stats["add"][2]:
    sys.exit(f"not every call ran natively: {stats}")
print(json.dumps({"device": ctx.device_name, "package": vkt.__file__, "ns": figures}))
"""


def run(cmd, env, what):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"bench_pycall: {what} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def python_env(pkg_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("VKT_NATIVE_DISABLE", "LD_PRELOAD")}
    env["PYTHONPATH"] = os.path.abspath(pkg_dir)
    return env


def measure(args, packages):
    """{(case, package): [ns per round]} and {"c": [ns per round]}, and the device."""
    exe = os.path.join(args.build, "tools", "bench", "pycall", "vkt-bench-pycall")
    if args.c_bench:
        exe = args.c_bench
    if not os.access(exe, os.X_OK):
        sys.exit(f"bench_pycall: {exe} not found; build first (ninja -C {args.build})")
    dev = ["--device", args.device] if args.device else []
    figures, device = {}, None
    for i in range(args.rounds):
        c = run([exe, "--calls", str(args.calls), "--repeat", str(args.repeat)] + dev, python_env("."), "C")
        figures.setdefault(("vkt_add", "c"), []).append(c["ns_per_call"])
        device = c["device"]
        for name, pkg in packages:
            r = run([args.python, "-c", CHILD, str(args.calls), str(args.repeat), args.device or ""],
                    python_env(pkg), f"Python ({name})")
            for case, ns in r["ns"].items():
                figures.setdefault((case, name), []).append(ns)
        print(f"  round {i + 1}/{args.rounds}: C {c['ns_per_call']:.0f} ns", file=sys.stderr, flush=True)
    return {k: min(v) for k, v in figures.items()}, device


def rows_of(figures, packages):
    c_us = figures["vkt_add", "c"] / 1000
    rows = [{"bench": "pycall", "case": "c", "package": "-", "size": "16", "value": round(c_us, 4), "unit": "us"}]
    for name, _ in packages:
        loop = figures["loop", name] / 1000
        for case in ("vkt.add", "a + b"):
            us = figures[case, name] / 1000
            rows.append({"bench": "pycall", "case": case, "package": name, "size": "16", "value": round(us, 4),
                         "unit": "us", "peer": "c", "peer_value": round(c_us, 4),
                         "added_us": round(us - c_us, 4), "loop_us": round(loop, 4), "target_added_us": TARGET_US})
    return rows


def render(doc):
    rows = doc["rows"]
    out = [results.header(doc),
           "| call | package | us/call | C us/call | Python - C | of it, the loop | target (+0.3 us) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["case"] == "c":
            continue
        met = "**met**" if r["added_us"] <= r["target_added_us"] else "**missed**"
        out.append(f"| `{r['case']}` | {r['package']} | {r['value']:.3f} | {r['peer_value']:.3f} | "
                   f"{r['added_us']:+.3f} us | {r['loop_us']:.3f} us | {met} |")
    return "\n".join(out) + "\n"


def doc(path, check):
    text = open(path).read()

    def sub(m):
        return m.group(1) + render(results.load(m.group(2))) + m.group(4)

    new = BLOCK.sub(sub, text)
    if not BLOCK.search(text):
        sys.exit(f"bench_pycall: {path} has no <!-- pycall:table FILE --> block")
    if check:
        if new != text:
            print(f"bench_pycall: {path}'s table differs from its data: run bench_pycall.py --doc {path}")
            return 1
        return 0
    with open(path, "w") as f:
        f.write(new)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="meson build directory (default: build)")
    ap.add_argument("--python", default=sys.executable, help="the python for the Python side (default: this one)")
    ap.add_argument("--c-bench", help="the C side's program (default: BUILD/tools/bench/pycall/vkt-bench-pycall)")
    ap.add_argument("--baseline", action="append", default=[], metavar="NAME=DIR",
                    help="also time the vkt package in DIR (a folder holding vkt/), named NAME in the rows")
    ap.add_argument("--calls", type=int, default=51200, help="calls a loop, a multiple of 256 (default 51200)")
    ap.add_argument("--repeat", type=int, default=3, help="loops per process; the best counts (default 3)")
    ap.add_argument("--rounds", type=int, default=5, help="processes per side, alternating (default 5)")
    ap.add_argument("--device", help="libvkt device (as VKT_DEVICE)")
    ap.add_argument("--results", help="write the rows in the results format (tools/bench/results/)")
    ap.add_argument("--commit", help="the commit measured, for the results (default: this checkout's HEAD)")
    ap.add_argument("--doc", help="rewrite this document's tables from the results files they name (after "
                    "measuring, with --results)")
    ap.add_argument("--check-doc", help="only compare this document's table with its data")
    args = ap.parse_args()
    if args.check_doc:
        sys.exit(doc(args.check_doc, check=True))
    if args.doc and not args.results:
        sys.exit(doc(args.doc, check=False))
    if min(args.calls, args.repeat, args.rounds) < 1 or args.calls % 256:
        ap.error("--calls must be a multiple of 256, --repeat and --rounds >= 1")
    packages = [("extension", os.path.join(args.build, "backend", "python"))]
    for b in args.baseline:
        name, sep, path = b.partition("=")
        if not sep or not os.path.exists(os.path.join(path, "vkt", "__init__.py")):
            ap.error(f"--baseline expects NAME=DIR with DIR/vkt/__init__.py, got '{b}'")
        packages.append((name, path))
    figures, device = measure(args, packages)
    rows = rows_of(figures, packages)
    command = "python3 tools/bench/pycall/bench_pycall.py " + " ".join(sys.argv[1:])
    doc_ = {"device": device, "commit": "this run", "date": datetime.date.today().isoformat(), "rows": rows}
    print(f"{args.calls} calls a loop in batches of 256, the fastest of {args.repeat} loops a process and of "
          f"{args.rounds} processes a side\n")
    print(render(doc_))
    if args.results:
        results.write(args.results, device=device, rows=rows, command=command,
                      date=datetime.date.today().isoformat(), commit=args.commit)
        if args.doc:
            doc(args.doc, check=False)


if __name__ == "__main__":
    main()
