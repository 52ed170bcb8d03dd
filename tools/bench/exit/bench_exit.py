#!/usr/bin/env python3
"""fbcount-bench-exit: what the census costs a program at its exit, and how soon its raw form is
on disk.

The program (tests/census/prog.c) makes 10,000 fallbacks through the test backend over S
distinct stacks, prints "ending <CLOCK_MONOTONIC ns>" and calls exit(). The exit's cost is the
time from that stamp to the moment this script reaps it (the same clock), in each configuration,
the configurations interleaved round by round:
  no shim      the program alone
  preloaded    LD_PRELOAD=libfbcount.so, the census written (the default output)
  no output    the same with FBCOUNT_OUTPUT=none (the census named, nothing written)
The cost over the program alone is the median of each round's difference from that round's
own run of the program alone (paired: a slow stretch of a shared machine moves both sides),
with the spread (the middle half of the differences). The named dump says how soon its raw
census landed (raw_census_ns): its median is the raw census's row. Whether glibc's debug
information (Debian's libc6-dbg) is installed is part of each row: it is what made the exit
cost 55 ms before the system's runtime was named by its own symbol tables.
The target: at most 5 ms over the program alone for 10,000 fallbacks, with libc6-dbg.

Prints a table; --json writes the rows (tools/bench/results/, results.py's schema); a
document's tables are blocks <!-- results:exit FILE --> ... <!-- results:end -->: --doc rewrites
them from FILE's rows, --check-doc fails when they differ.

usage: bench_exit.py --shim LIBFBCOUNT --prog CENSUS_PROG [--stacks S,S] [--rounds N]
                     [--device TEXT] [--json FILE]
       bench_exit.py --doc MD | --check-doc MD
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402  (tools/bench/results/results.py: the rows' schema and writer)

TARGET_MS = 5.0
FALLBACKS = 10000


def libc_dbg():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", "libc6-dbg"], capture_output=True,
                       text=True)
    return "install ok installed" in r.stdout


def one_exit(prog, stacks, env, out_dir):
    """ms from the program's "ending" stamp to its reaping, and the dump's raw_census_ns."""
    p = subprocess.Popen([prog, "--fallbacks", str(FALLBACKS), "--stacks", str(stacks),
                          "--stamp", "1"], stdout=subprocess.PIPE, text=True, env=env)
    stamp = None
    for line in p.stdout:
        if line.startswith("ending "):
            stamp = int(line.split()[1])
    p.wait()
    reaped = time.monotonic_ns()
    if p.returncode != 0 or stamp is None:
        sys.exit(f"bench_exit: {prog} exited {p.returncode} without its stamp")
    raw = None
    for path in glob.glob(os.path.join(out_dir, "*.json")):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        if d["total"]["fallbacks"] != FALLBACKS:
            sys.exit(f"bench_exit: {path} counted {d['total']['fallbacks']}, not {FALLBACKS}")
        raw = d.get("raw_census_ns")
        os.unlink(path)
    return (reaped - stamp) / 1e6, raw


def spread(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return q[0], q[2]


def measure(args, stacks, out_dir):
    base = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    shim = dict(base, LD_PRELOAD=args.shim, FBCOUNT_QUIET="1",
                FBCOUNT_OUTPUT=os.path.join(out_dir, "fb.%p.json"))
    confs = [("no shim", base), ("preloaded", shim), ("no output", dict(shim, FBCOUNT_OUTPUT="none"))]
    times = {name: [] for name, _ in confs}
    raws = []
    for _ in range(args.rounds):
        for name, env in confs:
            ms, raw = one_exit(args.prog, stacks, env, out_dir)
            times[name].append(ms)
            if raw is not None:
                raws.append(raw / 1e6)
    dbg = "with libc6-dbg" if libc_dbg() else "without libc6-dbg"
    rows = []
    for name, _ in confs:
        p = results.paired(times[name], times["no shim"])
        row = {"bench": "exit", "case": f"{name}, {dbg}", "size": str(stacks),
               "value": round(statistics.median(times[name]), 4), "unit": "ms",
               "peer": "no shim", "peer_value": round(statistics.median(times["no shim"]), 4),
               "over_ms": round(p["over"], 4), "over_q1": round(p["q1"], 4),
               "over_q3": round(p["q3"], 4), "over_min": round(p["least"], 4)}
        if name != "no shim":
            row["target"] = TARGET_MS
        rows.append(row)
    lo, hi = spread(raws)
    rows.append({"bench": "exit", "case": f"raw census on disk, {dbg}", "size": str(stacks),
                 "value": round(statistics.median(raws), 4), "unit": "ms", "over_q1": round(lo, 4),
                 "over_q3": round(hi, 4)})
    return rows


def render(doc):
    out = [results.header(doc), f"{FALLBACKS:,} fallbacks; a row's figure is the median over the "
           "rounds, the cost over the program alone the median of paired differences (q1 to q3, "
           "and the least: what a machine with nothing else running shows)\n",
           "| case | stacks | exit (median) | over no shim | q1 to q3 | least | target | over/target |",
           "|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        over = f"{r['over_ms']:.2f} ms" if "over_ms" in r else "-"
        q = f"{r['over_q1']:.2f} to {r['over_q3']:.2f} ms" if "over_q1" in r else "-"
        tgt = f"<= {r['target']:.0f} ms" if r.get("target") else "-"
        ratio = f"{r['over_ms'] / r['target']:.2f}" if r.get("target") else "-"
        if r["case"].startswith("raw census"):
            over, q = "-", f"{r['over_q1']:.2f} to {r['over_q3']:.2f} ms"
        least = f"{r['over_min']:.2f} ms" if "over_min" in r else "-"
        out.append(f"| {r['case']} | {r['size']} | {r['value']:.2f} ms | {over} | {q} | {least} | "
                   f"{tgt} | {ratio} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim")
    ap.add_argument("--prog")
    ap.add_argument("--stacks", default="64,1024")
    ap.add_argument("--rounds", type=int, default=21)
    results.bench_options(ap)
    a = ap.parse_args()
    code = results.doc_requested(a, "exit", render)
    if code is not None:
        return code
    if not a.shim or not a.prog:
        ap.error("--shim and --prog are required")
    rows = []
    with tempfile.TemporaryDirectory(prefix="fbcount-bench-exit-") as out_dir:
        for s in (int(x) for x in a.stacks.split(",")):
            rows += measure(a, s, out_dir)
    d = {"device": a.device, "commit": "(this run)", "date": time.strftime("%Y-%m-%d"), "rows": rows}
    print(render(d))
    if a.json:
        command = "tools/bench/exit/bench_exit.py " + " ".join(sys.argv[1:])
        results.write(a.json, a.device, rows, command, time.strftime("%Y-%m-%d"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
