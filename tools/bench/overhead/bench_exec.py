#!/usr/bin/env python3
"""fbcount-bench-exec: what loading the shim costs every exec, in one run.

A shell-heavy CI under `fbcount run` starts thousands of processes, and most never use a
backend: each pays for loading libfbcount, its constructor and its destructor. Each program
(/bin/true, python3 -c pass) is started EXECS times per round in each configuration, the
configurations interleaved, ROUNDS rounds; the figures are medians of the rounds' mean wall
time per exec (posix_spawn to wait), with the child's CPU time beside it, and the cost over
the program alone is the median of each round's difference from that round's own run of the
program alone (paired: a slow stretch of a shared machine moves both sides of a difference);
the programs run with one Python hash seed and without address-space randomisation:
  no shim              the program alone
  empty preload        LD_PRELOAD of an empty library: what any preload costs (the floor)
  shim's libraries     LD_PRELOAD of the libraries libfbcount links (libunwind ...) alone
  preloaded            LD_PRELOAD=libfbcount.so
  under fbcount run    the same with the environment `fbcount run` gives (a run log line
                       per process, an output folder, quiet)
The target: preloaded at most 0.1 ms over no shim. Wall time on a shared machine is noisy;
where valgrind is installed, the instructions /bin/true runs in each configuration are counted
too (callgrind: the same every run), with the shim's own constructor (fbc_start) and exit
(fbc_stop and the exit handler it leaves) apart. Prints a table; --json writes the same
rows as data (tools/bench/results/, results.py's schema); a document's exec tables are
blocks <!-- results:exec FILE --> ... <!-- results:end -->, made from FILE's rows: --doc
rewrites them, --check-doc fails when they differ.

usage: bench_exec.py --shim LIBFBCOUNT --empty LIBEMPTY [--python PY] [--rounds N]
                     [--execs N] [--device TEXT] [--json FILE]
       bench_exec.py --doc MD | --check-doc MD
"""
import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "results"))
import results  # noqa: E402  (tools/bench/results/results.py: the rows' schema and writer)

TARGET_MS = 0.1


def shim_libraries(shim):
    """The libraries libfbcount.so links, but the C library and the loader (ldd)."""
    out = subprocess.run(["ldd", shim], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m and not re.match(r"(libc|libm|libdl|libpthread|ld-linux)[.-]", m.group(1)):
            libs.append(m.group(2))
    return libs


def configurations(args, run_dir):
    base = {k: v for k, v in os.environ.items() if not k.startswith("FBCOUNT") and k != "LD_PRELOAD"}
    # One hash seed for every run: Python's start-up time otherwise moves with a random one.
    base["PYTHONHASHSEED"] = "0"
    deps = shim_libraries(args.shim)
    confs = [("no shim", base),
             ("empty preload", dict(base, LD_PRELOAD=args.empty))]
    if deps:
        confs.append(("shim's libraries", dict(base, LD_PRELOAD=" ".join(deps))))
    confs += [("preloaded", dict(base, LD_PRELOAD=args.shim)),
              ("under fbcount run", dict(base, LD_PRELOAD=args.shim, FBCOUNT_QUIET="1",
                                         FBCOUNT_OUTPUT=os.path.join(run_dir, "fbcount.%e.%p.json"),
                                         FBCOUNT_RUN_LOG=os.path.join(run_dir, "run.log")))]
    return confs, deps


def spawn_round(argv, env, n):
    """Mean wall ms and child CPU ms per exec of n runs of argv."""
    cpu = 0.0
    t0 = time.perf_counter()
    for _ in range(n):
        pid = os.posix_spawn(argv[0], argv, env)
        _, status, ru = os.wait4(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            sys.exit(f"bench_exec: {' '.join(argv)} failed (status {status:#x})")
        cpu += ru.ru_utime + ru.ru_stime
    return (time.perf_counter() - t0) / n * 1e3, cpu / n * 1e3


def programs(args):
    return [("/bin/true", ["/bin/true"]), ("python3 -c pass", [args.python, "-c", "pass"])]


def same_layout():
    """Address-space randomisation off for the programs started from here on (the persona
    is inherited): where each run's libraries land otherwise moves Python's start-up by
    more than the shim costs. False where the kernel refuses."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    current = libc.personality(0xffffffff)
    return current != -1 and libc.personality(current | 0x0040000) != -1  # ADDR_NO_RANDOMIZE


def measure(args):
    if not same_layout():
        print("bench_exec: address-space randomisation stays on (personality refused)")
    with tempfile.TemporaryDirectory(prefix="fbcount-bench-exec-") as d:
        confs, deps = configurations(args, d)
        got = {(p, c): ([], []) for p, _ in programs(args) for c, _ in confs}
        for r in range(args.rounds):
            for pname, argv in programs(args):
                spawn_round(argv, confs[0][1], 3)  # warm the page cache for this program
                for k in range(len(confs)):
                    cname, env = confs[(k + r) % len(confs)]  # rotated: no configuration always first
                    wall, cpu = spawn_round(argv, env, args.execs)
                    got[(pname, cname)][0].append(wall)
                    got[(pname, cname)][1].append(cpu)
        dumps = [f for f in os.listdir(d) if f.endswith(".json")]
        if dumps:
            sys.exit(f"bench_exec: processes that never used a backend wrote dumps: {dumps}")
    rows = []
    for pname, _ in programs(args):
        alone = got[(pname, "no shim")][0]
        none = statistics.median(alone)
        for cname, _ in confs:
            wall = statistics.median(got[(pname, cname)][0])
            cpu = statistics.median(got[(pname, cname)][1])
            # Paired: each round's figure against the same round's program alone, a few
            # hundred milliseconds apart, so that a slow stretch of the machine moves both.
            over = statistics.median(w - a for w, a in zip(got[(pname, cname)][0], alone))
            row = {"bench": "exec", "case": f"{pname}: {cname}", "size": str(args.execs),
                   "value": round(wall, 4), "unit": "ms/exec", "cpu_ms": round(cpu, 4),
                   "min": round(min(got[(pname, cname)][0]), 4),
                   "peer": "no shim", "peer_value": round(none, 4), "over_ms": round(over, 4)}
            if cname in ("preloaded", "under fbcount run"):
                row["target"] = TARGET_MS
            rows.append(row)
    return rows, deps


def instructions(args, confs):
    """Rows of instructions each program runs per configuration, and the shim's parts in
    /bin/true (callgrind)."""
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        print("bench_exec: valgrind not installed: no instruction counts")
        return []
    rows = []
    with tempfile.TemporaryDirectory(prefix="fbcount-bench-exec-cg-") as d:
        for pname, argv, cname, env in [(p, a, c, e) for p, a in programs(args) for c, e in confs]:
            if cname == "no shim":
                none = None
            out = os.path.join(d, re.sub(r"\W", "_", pname + cname))
            # valgrind passes LD_PRELOAD on to the program it runs.
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv,
                           env=env, capture_output=True, check=True)
            ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                                 capture_output=True, text=True, check=True).stdout
            total = int(re.search(r"([\d,]+) +\(100\.0%\) +PROGRAM TOTALS", ann).group(1).replace(",", ""))
            none = total if none is None else none
            rows.append({"bench": "exec-instructions", "case": f"{pname}: {cname}", "size": "1",
                         "value": total, "unit": "instructions", "peer": "no shim", "peer_value": none,
                         "over": total - none})
            if cname == "preloaded" and pname == "/bin/true":
                for part, funcs in (("shim's constructor", ("fbc_start",)), ("shim's exit", ("fbc_stop", "at_last"))):
                    n = sum(int(m.group(1).replace(",", "")) for f in funcs
                            for m in re.finditer(rf"^ *([\d,]+) +\([\d. ]+%\) +\S+:{f} \[", ann, re.M))
                    rows.append({"bench": "exec-instructions", "case": f"/bin/true: preloaded: {part}",
                                 "size": "1", "value": n, "unit": "instructions"})
    return rows


def render(doc):
    """The RESULTS.md table of one sweep."""
    out = [f"Device: {doc['device']}; commit {doc['commit']}, {doc['date']}. Command: `{doc['command']}`",
           "",
           "| what | device | figure (wall, median) | fastest round | child CPU | over no shim | target | verdict |",
           "|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        if r["unit"] == "instructions":
            continue
        target = f"+{r['target']:.1f} ms" if "target" in r else "—"
        verdict = ("**met**" if r["over_ms"] <= r["target"] else "**missed**") if "target" in r else ""
        out.append(f"| {r['case']} | {doc['device']} | {r['value']:.3f} ms | {r['min']:.3f} ms | "
                   f"{r['cpu_ms']:.3f} ms | {r['over_ms']:+.3f} ms | {target} | {verdict} |")
    counted = [r for r in doc["rows"] if r["unit"] == "instructions"]
    if counted:
        out += ["", "Instructions (callgrind; the same every run):", "",
                "| what | instructions | over no shim |", "|---|---|---|"]
        out += [f"| {r['case']} | {r['value']:,} | {r['over']:+,} |" if "over" in r else
                f"| {r['case']} | {r['value']:,} | |" for r in counted]
    return "\n".join(out) + "\n"


def doc(md, check):
    """Rewrites (or, with check, compares) md's <!-- results:exec FILE --> blocks from their rows,
    through results.py's own block handling."""
    results.RENDERERS["exec"] = render
    argv, sys.argv = sys.argv, ["results.py", "--check" if check else "--update", md]
    try:
        return results.main()
    finally:
        sys.argv = argv


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim")
    ap.add_argument("--empty")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--execs", type=int, default=40)
    ap.add_argument("--device", default=f"this machine, {os.cpu_count()} CPUs")
    ap.add_argument("--json")
    ap.add_argument("--doc")
    ap.add_argument("--check-doc")
    a = ap.parse_args()
    if a.check_doc or a.doc:
        return doc(a.check_doc or a.doc, check=bool(a.check_doc))
    if not a.shim or not a.empty:
        ap.error("--shim and --empty are required to measure")
    if a.rounds < 1 or a.execs < 1:
        ap.error("--rounds and --execs must be at least 1")
    rows, deps = measure(a)
    counted = instructions(a, configurations(a, tempfile.gettempdir())[0])
    load = os.getloadavg()[0]
    print(f"fbcount-bench-exec: {a.device}, load {load:.1f}; medians of {a.rounds} rounds of "
          f"{a.execs} execs; shim's libraries: {', '.join(os.path.basename(x) for x in deps) or 'none'}")
    print(f"{'what':40} {'device':22} {'ms/exec':>8} {'min':>7} {'CPU ms':>7} {'over none':>10} {'target':>8} "
          f"{'ratio':>6}")
    missed = False
    for r in rows:
        target = f"+{r['target']}" if "target" in r else "-"
        if "target" in r and r["over_ms"] > r["target"]:
            target += " MISSED"
            missed = True
        print(f"{r['case']:40} {a.device[:22]:22} {r['value']:8.3f} {r['min']:7.3f} {r['cpu_ms']:7.3f} "
              f"{r['over_ms']:+10.3f} {target:>8} {r['value'] / r['peer_value']:6.2f}")
    for r in counted:
        over = f"{r['over']:+10,}" if "over" in r else f"{'':10}"
        print(f"{r['case']:58} {r['value']:>12,} instructions {over}")
    if missed:
        print(f"bench_exec: over the target of +{TARGET_MS} ms per exec")
    # Paths as the reader's checkout would have them, not this machine's.
    command = shlex.join(os.path.relpath(x) if x.startswith("/") and os.path.exists(x) else x
                         for x in ["tools/bench/overhead/bench_exec.py"] + sys.argv[1:])
    if a.json:
        results.write(a.json, a.device, rows + counted, command, time.strftime("%Y-%m-%d"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
